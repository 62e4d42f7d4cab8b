package changelog

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"

	"github.com/perflog/perflog/config"
)

// Fixable are the rules whose findings `perflog changelog fix` repairs:
// the byte contract of an append-only file, and a new entry's placeholder
// link once the PR is known.
var Fixable = map[string]bool{
	RuleNotAtEnd: true, RuleSeparator: true, RuleHistoryBytes: true, RuleFinalNewline: true,
	RuleTrailingBlank: true, RuleReformatted: true, RuleDeletedLine: true, RulePRPlaceholder: true,
}

// FixOptions say what a repair may use.
type FixOptions struct {
	// Repository is the GitHub repository canonical links point to.
	Repository string
	// PR, when not 0, is this change's pull request: its new entries'
	// placeholder links are set to its canonical link.
	PR int
	// Path and BaseRev name the file and the base revision in messages
	// (defaults: perf-changelog.yaml, "BASE").
	Path, BaseRev string
}

// FixResult is a repaired changelog and what was repaired.
type FixResult struct {
	Bytes []byte
	// Repairs say each repair, in a sentence; none when the file needs
	// none.
	Repairs []string
	// Notes say what was left as it was, and why (a placeholder link
	// while the PR is not known).
	Notes []string
}

// FixRefusal is a repair fix will not make: it would have to choose
// what the file says. The file is left as it is.
type FixRefusal struct{ Reason string }

func (r *FixRefusal) Error() string { return "cannot fix perf-changelog.yaml: " + r.Reason }

// Fix repairs what a change did to the changelog's bytes and a machine
// can repair without choosing what the file says: the change's own
// entries moved to the end, in their order; one empty line before each
// and one final newline; the history's bytes restored from base (a
// whitespace line, a deleted trailing line, a reformatted entry), keeping
// a pr-link correction; a new entry's placeholder link set to the PR's
// when it is known. An entry of base that is gone or whose content
// changed is refused (*FixRefusal).
func Fix(base, head []byte, o FixOptions) (*FixResult, error) {
	refuse := func(format string, a ...any) error { return &FixRefusal{Reason: fmt.Sprintf(format, a...)} }
	path, baseRev := cmp.Or(o.Path, config.DefaultChangelog), cmp.Or(o.BaseRev, "BASE")
	b, err := parseSide("base", base)
	if err != nil {
		return nil, refuse("the base's changelog does not parse: %v", err)
	}
	h, err := parseSide("work tree", head)
	if err != nil {
		var c *MergeConflict
		if errors.As(err, &c) {
			return nil, refuse("%s", c.Reason)
		}
		return nil, err
	}
	// the base's entries, in order, among the work tree's
	used := make([]bool, len(h.f.Entries))
	at := make([]int, len(b.f.Entries))
	j := 0
	for i, be := range b.f.Entries {
		for j < len(h.f.Entries) && h.f.Entries[j].Identity() != be.Identity() {
			j++
		}
		if j == len(h.f.Entries) {
			return nil, refuse("entry %d of the base (%s) is gone from the file or its content changed; fix restores bytes, not content: restore it by hand (git show %s:%s)", i+1, entryName(be), baseRev, path)
		}
		at[i], used[j] = j, true
		j++
	}
	var res FixResult
	lk := newLinks(o.Repository)
	// history: base's bytes, with the pr-link corrections the work tree made
	out := append([]byte(nil), base...)
	for i := len(b.f.Entries) - 1; i >= 0; i-- {
		be, he := b.f.Entries[i], h.f.Entries[at[i]]
		if be.PRLink() == he.PRLink() {
			continue
		}
		block, err := replacePRLink(out[be.Start:be.End], he.PRLink())
		if err != nil {
			return nil, refuse("entry %d: %v", i+1, err)
		}
		out = append(out[:be.Start:be.Start], append(block, out[be.End:]...)...)
	}
	history := out
	var added []*Entry
	lastOld := -1
	if n := len(at); n > 0 {
		lastOld = at[n-1]
	}
	moved := 0
	for k, e := range h.f.Entries {
		if used[k] {
			continue
		}
		added = append(added, e)
		if k < lastOld {
			moved++
		}
	}
	if moved > 0 {
		res.Repairs = append(res.Repairs, fmt.Sprintf("moved %s of this change to the end, after the %d entries of the base, in the base's bytes", count(moved, "new entry", "new entries"), len(b.f.Entries)))
	}
	// the new entries after hist: one empty line before each, one newline
	// at the end; links set when setLinks
	assemble := func(hist []byte, setLinks bool) ([]byte, error) {
		var blocks [][]byte
		for _, e := range added {
			block := append([]byte(nil), e.Raw(h.f)...)
			if setLinks && o.PR > 0 && lk.isPlaceholder(e.PRLink()) {
				if block, err = replacePRLink(block, lk.forPR(o.PR)); err != nil {
					return nil, refuse("new entry %d: %v", e.Index, err)
				}
			}
			if !bytes.HasSuffix(block, []byte("\n")) {
				block = append(block, '\n')
			}
			blocks = append(blocks, block)
		}
		out := append([]byte(nil), hist...)
		if len(blocks) == 0 {
			return out, nil
		}
		switch {
		case blank(out):
			out = out[:0]
		case bytes.HasSuffix(out, []byte("\n\n")):
		case bytes.HasSuffix(out, []byte("\n")):
			out = append(out, '\n')
		default:
			out = append(out, '\n', '\n')
		}
		return append(out, bytes.Join(blocks, []byte("\n"))...), nil
	}
	out, err = assemble(history, true)
	if err != nil {
		return nil, err
	}
	if moved == 0 {
		// the bytes before the first new entry are the history's
		end := len(head)
		if len(added) > 0 {
			end = added[0].Start
		}
		hist := bytes.TrimRight(head[:end], "\n")
		// (blank lines, spaces among them, between the history and the
		// new entries are a separator's, not the history's)
		same := bytes.Equal(hist, bytes.TrimRight(history, "\n"))
		if len(added) > 0 {
			same = bytes.Equal(bytes.TrimRight(hist, " \t\r\n"), bytes.TrimRight(history, " \t\r\n"))
		}
		if !same {
			line := bytes.Count(hist[:commonPrefixLen(hist, history)], []byte("\n")) + 1
			res.Repairs = append(res.Repairs, fmt.Sprintf("restored the history's bytes from the base (the first difference is at line %d)", line))
		}
		// what follows the history: the separators and the final newline
		canon := append(append([]byte(nil), hist...), history[len(bytes.TrimRight(history, "\n")):]...)
		if len(added) > 0 {
			canon, _ = assemble(append(append([]byte(nil), hist...), '\n'), false)
		}
		if !bytes.Equal(canon, head) {
			res.Repairs = append(res.Repairs, "one empty line before each new entry, and one newline at the end")
		}
	}
	for _, e := range added {
		switch {
		case !lk.isPlaceholder(e.PRLink()):
		case o.PR > 0:
			res.Repairs = append(res.Repairs, fmt.Sprintf("set the pr-link of the new entry for %s to %s (was %s)", entryName(e), lk.forPR(o.PR), e.PRLink()))
		default:
			res.Notes = append(res.Notes, fmt.Sprintf("the new entry for %s keeps its pr-link %s: this change's PR is not known (pass --pr N)", entryName(e), e.PRLink()))
		}
	}
	if bytes.Equal(out, head) {
		res.Repairs = nil
	} else if len(res.Repairs) == 0 { // (spaces the history ended with, say)
		res.Repairs = append(res.Repairs, "restored the history's bytes from the base")
	}
	res.Bytes = out
	return &res, nil
}

// count says n things: "1 entry", "2 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
