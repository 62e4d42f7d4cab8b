package changelog

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/xdiff"
)

// diffLine is one line of `git diff` output as the incumbent's Python loop
// reads it, with the head (or base) line it came from.
type diffLine struct {
	text    string
	oldLine int // 1-based line in base, 0 if none
	newLine int // 1-based line in head, 0 if none
}

// gitDiffOutput reproduces the lines process_changelog.get_added_lines
// iterates over: `git diff base head -- file` (default options: Myers,
// indent heuristic, 3 lines of context) captured with text=True, i.e.
// decoded as UTF-8 with universal newlines (\r\n and \r become \n), then
// split on "\n". Headers are included because the loop must skip them.
// ok is false when the output would not decode as UTF-8, which crashes the
// incumbent.
func gitDiffOutput(base, head []byte, baseExists, headExists bool) (lines []diffLine, binary, ok bool) {
	if baseExists == headExists && bytes.Equal(base, head) {
		return nil, false, true
	}
	if isBinary(base) || isBinary(head) {
		return nil, true, true
	}
	r := xdiff.Diff(base, head)
	var out []diffLine
	emit := func(prefix string, l xdiff.Line, oldLine, newLine int) {
		out = append(out, diffLine{text: prefix + string(l), oldLine: oldLine, newLine: newLine})
	}
	// headers (skipped by the loop, but "---"/"+++" must be present)
	out = append(out, diffLine{text: "diff --git a/f b/f\n"})
	if baseExists {
		out = append(out, diffLine{text: "--- a/f\n"})
	} else {
		out = append(out, diffLine{text: "--- /dev/null\n"})
	}
	if headExists {
		out = append(out, diffLine{text: "+++ b/f\n"})
	} else {
		out = append(out, diffLine{text: "+++ /dev/null\n"})
	}
	// the edit script in output order: in each change block deletions come
	// before additions; context is 3 common lines around each block, and
	// blocks closer than 2*3 common lines share a hunk
	type op struct {
		kind     byte
		old, new int
	}
	var ops []op
	n1, n2 := len(r.OldLines), len(r.NewLines)
	for i, j := 0, 0; i < n1 || j < n2; {
		switch {
		case i < n1 && r.Old[i]:
			ops = append(ops, op{'-', i, -1})
			i++
		case j < n2 && r.New[j]:
			ops = append(ops, op{'+', -1, j})
			j++
		default:
			ops = append(ops, op{' ', i, j})
			i++
			j++
		}
	}
	const ctx = 3
	shown := make([]bool, len(ops))
	// a common line is shown when a change is at most ctx ops before or
	// after it; blocks closer than 2*ctx common lines thus share a hunk
	for k, last := 0, -1; k < len(ops); k++ {
		if ops[k].kind != ' ' {
			last = k
			shown[k] = true
		} else if last >= 0 && k-last <= ctx {
			shown[k] = true
		}
	}
	for k, next := len(ops)-1, -1; k >= 0; k-- {
		if ops[k].kind != ' ' {
			next = k
		} else if next >= 0 && next-k <= ctx {
			shown[k] = true
		}
	}
	inHunk := false
	for k, o := range ops {
		if !shown[k] {
			inHunk = false
			continue
		}
		if !inHunk {
			out = append(out, diffLine{text: "@@ hunk @@\n"})
			inHunk = true
		}
		switch o.kind {
		case '-':
			emit("-", r.OldLines[o.old], o.old+1, 0)
		case '+':
			emit("+", r.NewLines[o.new], 0, o.new+1)
		default:
			emit(" ", r.OldLines[o.old], o.old+1, o.new+1)
		}
	}
	// the last line of either side may lack a newline
	var res []diffLine
	for _, l := range out {
		if !utf8.ValidString(l.text) {
			return nil, false, false
		}
		t := strings.ReplaceAll(l.text, "\r\n", "\n")
		t = strings.ReplaceAll(t, "\r", "\n")
		noNL := !strings.HasSuffix(t, "\n")
		t = strings.TrimSuffix(t, "\n")
		for _, part := range strings.Split(t, "\n") {
			res = append(res, diffLine{text: part, oldLine: l.oldLine, newLine: l.newLine})
		}
		if noNL {
			res = append(res, diffLine{text: `\ No newline at end of file`})
		}
	}
	return res, false, true
}

// isBinary is git's buffer_is_binary: a NUL in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string {
	return strings.TrimFunc(s, pyIsSpace)
}

func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
