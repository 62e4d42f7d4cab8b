package changelog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// MaxFileSize bounds the changelog perflog checks or appends to, from a
// work tree or a revision: InferenceX's is 0.4 MB after two years. At the
// limit, verify of a change that writes the whole file takes about 12 s
// and 0.8 GB on a 2-core machine.
const MaxFileSize = 32 << 20

// MaxConfigSize bounds a master config: InferenceX's largest is 0.3 MB;
// every recipe of one is parsed and diffed (a change that adds a 30 MB
// config took changelog new 136 s and 6 GB).
const MaxConfigSize = 4 << 20

// ErrTooLarge marks a changelog over MaxFileSize.
var ErrTooLarge = errors.New("too large")

// CheckSize says whether a changelog of n bytes, named what, is within
// MaxFileSize.
func CheckSize(what string, n int) error {
	if n > MaxFileSize {
		return fmt.Errorf("%s is %.1f MB: %w (perflog reads changelogs of up to %d MiB)", what, float64(n)/1e6, ErrTooLarge, MaxFileSize>>20)
	}
	return nil
}

// CheckConfigSize says whether a master config of n bytes, named what, is
// within MaxConfigSize.
func CheckConfigSize(what string, n int) error {
	if n > MaxConfigSize {
		return fmt.Errorf("%s is %.1f MB: %w (perflog reads master configs of up to %d MiB)", what, float64(n)/1e6, ErrTooLarge, MaxConfigSize>>20)
	}
	return nil
}

// AppendResult says what AppendEntries did.
type AppendResult struct {
	// Replaced are the 1-based indexes (in the file before) of this
	// change's own earlier entries that the draft replaced.
	Replaced []int
	// Added is the number of entries appended.
	Added int
	// Unchanged is true when the file already held exactly the draft.
	Unchanged bool
	// Kept are the 1-based indexes of entries that look like this change's
	// own (not at base, naming one of the draft's keys or this PR) but
	// were kept: an entry followed by one that is not this change's own is
	// never removed.
	Kept []int
	// NoBase is set when the changelog at base could not be read: which
	// entries are this change's own cannot be told, so none is replaced.
	// It says why.
	NoBase string
}

// AppendOptions are AppendEntries' inputs besides the file.
type AppendOptions struct {
	// Base is the changelog at the base revision, and HaveBase says it was
	// read: without it (no file at base, or one that does not parse) no
	// entry can be proven this change's own, and the draft is appended.
	Base     []byte
	HaveBase bool
	// PRLink is the draft's pr-link: an added entry that links it is this
	// change's own.
	PRLink string
}

// ErrNotAppendable marks a changelog that an entry cannot be appended to
// without making it invalid (its root is not a list, or the list is
// indented).
var ErrNotAppendable = errors.New("cannot append to the changelog")

// AppendEntries appends drafted entries to a changelog cur. Every byte of
// the file before the appended region is kept, except for this change's
// own earlier entries at the end of the file (entries that the base does
// not have and that list one of the draft's keys or link this PR), which
// are replaced, so running it again updates the entry instead of adding a
// second one. An entry the base has is never touched, and nothing is
// replaced when the base could not be read. One empty line separates
// entries and the file ends with one newline.
//
// The result is checked before it is returned: its bytes start with the
// bytes of cur up to the replaced tail (all of cur when nothing is
// replaced), and it parses as the kept entries followed by the draft's.
func AppendEntries(path string, cur []byte, entries []DraftEntry, opt AppendOptions) ([]byte, *AppendResult, error) {
	res := &AppendResult{}
	var text strings.Builder
	for i, e := range entries {
		if i > 0 {
			text.WriteString("\n")
		}
		text.WriteString(RenderEntry(e))
	}
	head, root, err := parseWithRoot(path, cur)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s does not parse; fix it before appending: %w", ErrNotAppendable, path, err)
	}
	if err := appendable(head, root); err != nil {
		return nil, nil, err
	}
	cut := len(cur) // cur[:cut] is kept byte for byte
	switch {
	case !opt.HaveBase:
		res.NoBase = "the changelog at base could not be read"
	default:
		var bf *File
		if len(bytes.TrimSpace(opt.Base)) == 0 {
			bf = &File{Path: path, Raw: opt.Base, lineStarts: lineStarts(opt.Base)}
		} else if bf, _, err = parseWithRoot(path, opt.Base); err != nil {
			res.NoBase = "the changelog at base does not parse"
			break
		}
		cut = res.ownTail(head, bf, cur, entries, opt.PRLink)
	}
	out := append([]byte(nil), cur[:cut]...)
	switch {
	case len(bytes.TrimSpace(out)) == 0 && cut == len(cur):
		// an empty file, or one of comments and blank lines only: the
		// entry goes after what is there
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, '\n')
		}
	case len(bytes.TrimSpace(out)) == 0:
		// the whole file was this change's own
	case bytes.HasSuffix(out, []byte("\n\n")):
	case bytes.HasSuffix(out, []byte("\n")):
		out = append(out, '\n')
	default:
		out = append(out, '\n', '\n')
	}
	out = append(out, text.String()...)
	res.Added = len(entries)
	res.Unchanged = bytes.Equal(out, cur)
	if err := checkAppend(path, cur, out, cut, head, len(head.Entries)-len(res.Replaced), len(entries)); err != nil {
		return nil, nil, err
	}
	return out, res, nil
}

// appendable says whether entries can be appended to f at column 0: its
// root is a list (or there is no document yet) whose items start there.
func appendable(f *File, root *pyyaml.Value) error {
	if root == nil || root.Kind == pyyaml.Null {
		return nil
	}
	if root.Kind != pyyaml.Seq {
		return fmt.Errorf("%w: the root of %s is not a list of entries", ErrNotAppendable, f.Path)
	}
	for _, e := range f.Entries {
		if line := f.LineText(e.Line); !strings.HasPrefix(line, "-") {
			return fmt.Errorf("%w: %s:%d: the list of entries is indented; entries are appended at column 0", ErrNotAppendable, f.Path, e.Line)
		}
	}
	return nil
}

// ownTail finds this change's own entries at the end of head (added since
// base and naming one of the draft's keys or its link), records them as
// Replaced and earlier such entries as Kept, and returns where the kept
// bytes end.
func (res *AppendResult) ownTail(head, base *File, cur []byte, entries []DraftEntry, link string) int {
	keys := map[string]bool{}
	for _, e := range entries {
		for _, k := range e.ConfigKeys {
			keys[k] = true
		}
	}
	added := map[*Entry]bool{}
	for _, e := range Align(base, head).Added {
		added[e] = true
	}
	mine := func(e *Entry) bool {
		if !added[e] {
			return false
		}
		if link != "" && e.PRLink() == link {
			return true
		}
		for _, k := range configKeysOf(e.value) {
			if keys[k.Key] {
				return true
			}
		}
		return false
	}
	n := len(head.Entries)
	first := n // the first entry of the own tail
	for first > 0 && mine(head.Entries[first-1]) {
		first--
	}
	for _, e := range head.Entries[:first] {
		if mine(e) {
			res.Kept = append(res.Kept, e.Index)
		}
	}
	if first == n {
		return len(cur)
	}
	for _, e := range head.Entries[first:] {
		res.Replaced = append(res.Replaced, e.Index)
	}
	if first == 0 {
		return head.Entries[0].Start // what precedes the first entry stays
	}
	return head.Entries[first-1].End
}

// checkAppend asserts what AppendEntries promises, whatever its inputs:
// out starts with cur[:cut], and parses as cur's first kept entries, byte
// for byte, followed by added more.
func checkAppend(path string, cur, out []byte, cut int, head *File, kept, added int) error {
	bug := func(what string) error {
		return fmt.Errorf("%w: perflog refused its own result (%s); %s is unchanged. Please report this", ErrNotAppendable, what, path)
	}
	if !bytes.HasPrefix(out, cur[:cut]) {
		return bug("the bytes before the appended entries differ")
	}
	f, root, err := parseWithRoot(path, out)
	if err != nil {
		return bug("the result does not parse: " + err.Error())
	}
	if root == nil || root.Kind != pyyaml.Seq || len(f.Entries) != kept+added {
		return bug(fmt.Sprintf("the result holds %d entries, want %d", len(f.Entries), kept+added))
	}
	for i := range kept {
		if f.Entries[i].Identity() != head.Entries[i].Identity() {
			return bug(fmt.Sprintf("entry %d changed", i+1))
		}
	}
	return nil
}
