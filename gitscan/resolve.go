package gitscan

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// resolveSimple resolves the revisions users type most (HEAD, a branch,
// tag or remote branch, a full sha, each optionally followed by ~N, ^ and
// ^N) from the refs and perflog's own object reader. go-git's
// ResolveRevision reads the commit through its object storage, which
// decodes the whole pack index first: a third of a warm command's time.
// ok is false for anything else, and whenever the answer is not a commit,
// so that go-git decides, with its messages, every case this does not
// plainly handle.
func (r *Repo) resolveSimple(rev string) (plumbing.Hash, bool) {
	base, ops := splitRevOps(rev)
	if base == "" || !plainRefName(base) {
		return plumbing.ZeroHash, false
	}
	var h plumbing.Hash
	if len(base) == 40 {
		h, _ = parseHex([]byte(base))
	}
	if h.IsZero() {
		for _, rule := range plumbing.RefRevParseRules {
			ref, err := r.repo.Reference(plumbing.ReferenceName(fmt.Sprintf(rule, base)), true)
			if err == nil && ref.Type() == plumbing.HashReference {
				h = ref.Hash()
				break
			}
		}
	}
	if h.IsZero() {
		return plumbing.ZeroHash, false
	}
	h, ok := r.peelToCommit(h)
	for _, op := range ops {
		if !ok {
			return plumbing.ZeroHash, false
		}
		h, ok = r.applyRevOp(h, op)
	}
	return h, ok
}

// revOp is one ~N (first parent N times) or ^N (the Nth parent) suffix.
type revOp struct {
	tilde bool
	n     int
}

// splitRevOps splits "main~2^2" into "main" and its suffixes; base is ""
// when the suffixes are not all ~N and ^N.
func splitRevOps(rev string) (string, []revOp) {
	i := strings.IndexAny(rev, "~^")
	if i < 0 {
		return rev, nil
	}
	base, rest := rev[:i], rev[i:]
	var ops []revOp
	for rest != "" {
		op := revOp{tilde: rest[0] == '~', n: 1}
		rest = rest[1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 0 {
			n, err := strconv.Atoi(rest[:j])
			if err != nil || j > 6 {
				return "", nil
			}
			op.n = n
		}
		if rest = rest[j:]; rest != "" && rest[0] != '~' && rest[0] != '^' {
			return "", nil // ^{...}, @{...}, :path and the like
		}
		ops = append(ops, op)
	}
	return base, ops
}

// plainRefName reports whether s can only be a ref name or a hash: no
// revision syntax (@{...}, :/, ranges) and nothing git forbids in a ref.
func plainRefName(s string) bool {
	if s[0] == '-' || s[0] == '/' || s[0] == '.' || strings.HasSuffix(s, "/") ||
		strings.HasSuffix(s, ".lock") || strings.Contains(s, "..") || strings.Contains(s, "//") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// peelToCommit follows annotated tags to the commit they name.
func (r *Repo) peelToCommit(h plumbing.Hash) (plumbing.Hash, bool) {
	for range 8 {
		t, data, err := r.obj.read(h)
		if err != nil {
			return plumbing.ZeroHash, false
		}
		switch t {
		case plumbing.CommitObject:
			return h, true
		case plumbing.TagObject:
			line, _, _ := bytes.Cut(data, []byte("\n"))
			target, ok := bytes.CutPrefix(line, []byte("object "))
			if !ok {
				return plumbing.ZeroHash, false
			}
			if h, ok = parseHex(target); !ok {
				return plumbing.ZeroHash, false
			}
		default:
			return plumbing.ZeroHash, false
		}
	}
	return plumbing.ZeroHash, false
}

func (r *Repo) applyRevOp(h plumbing.Hash, op revOp) (plumbing.Hash, bool) {
	steps := op.n
	if !op.tilde {
		if op.n == 0 {
			return h, true
		}
		steps = 1
	}
	for range steps {
		t, data, err := r.obj.read(h)
		if err != nil || t != plumbing.CommitObject {
			return plumbing.ZeroHash, false
		}
		c, err := parseCommitHeader(data)
		if err != nil {
			return plumbing.ZeroHash, false
		}
		nth := 1
		if !op.tilde {
			nth = op.n
		}
		if nth > len(c.parents) {
			return plumbing.ZeroHash, false
		}
		h = c.parents[nth-1]
	}
	return h, true
}
