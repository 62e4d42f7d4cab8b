package changelog

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/pyyaml"
)

// parseStrict is parse_changelog: file-level invariants, then the YAML with
// unique keys, a list root, one "- config-keys:" line per entry, and every
// entry valid. It returns the file (when it parsed) and the findings.
func parseStrict(path string, raw []byte, label string, lineOf bool) (*File, []Finding) {
	var fs []Finding
	add := func(rule string, line int, format string, a ...any) {
		fs = append(fs, Finding{Rule: rule, Severity: Error, File: path, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	if !lineOf {
		// findings about the base file point nowhere in head
		defer func() {
			for i := range fs {
				fs[i].Line = 0
			}
		}()
	}
	if !bytes.HasSuffix(raw, []byte("\n")) {
		add(RuleFinalNewline, countLines(raw), "%s does not end with a newline", label)
		return nil, fs
	}
	for _, c := range []struct {
		b    byte
		rule string
		what string
	}{{'\r', RuleCR, "CR characters"}, {'\t', RuleTab, "tabs"}, {0, RuleNUL, "NUL bytes"}} {
		if i := bytes.IndexByte(raw, c.b); i >= 0 {
			add(c.rule, bytes.Count(raw[:i], []byte("\n"))+1, "%s contains %s", label, c.what)
			return nil, fs
		}
	}
	if !utf8.Valid(raw) {
		i := 0
		for i < len(raw) {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		add(RuleNotUTF8, bytes.Count(raw[:i], []byte("\n"))+1, "%s is not UTF-8: invalid byte %#x at offset %d", label, raw[i], i)
		return nil, fs
	}
	f, root, err := parseWithRoot(path, raw)
	if err != nil {
		lf := atBreakingEntry(loadFailure(path, err, label, nil), raw)
		fs = append(fs, lf)
		return nil, fs
	}
	if root.Kind != pyyaml.Seq {
		add(RuleRootNotList, root.Line, "%s root must be a YAML list", label)
		return nil, fs
	}
	if n := countEntryStarts(string(raw)); n != len(f.Entries) {
		line := 0
		for _, e := range f.Entries {
			if !strings.HasPrefix(f.LineText(e.Line), "- config-keys:") {
				line = e.Line
				break
			}
		}
		add(RuleEntryStart, line, "%s has %d top-level config entries but YAML parsed %d entries (every entry must start with a \"- config-keys:\" line at column 0)%s", label, n, len(f.Entries), bomHint(f.LineText(1)))
		return nil, fs
	}
	for _, e := range f.Entries {
		for _, se := range e.Errors {
			fs = append(fs, Finding{Rule: se.Rule, Severity: Error, File: path, Line: se.Line, Entry: e.Index,
				Message: fmt.Sprintf("%s entry %d fails ChangelogEntry validation: %s", label, e.Index, se.Msg)})
		}
	}
	if len(fs) > 0 {
		return f, fs
	}
	return f, nil
}

// withoutPRLink returns a copy of an entry value without its pr-link key.
func withoutPRLink(v *pyyaml.Value) *pyyaml.Value {
	if v == nil || v.Kind != pyyaml.Map {
		return v
	}
	c := &pyyaml.Value{Kind: pyyaml.Map, Line: v.Line}
	for _, p := range v.Pairs {
		if p.Key.Kind == pyyaml.Str && p.Key.Str == FieldPRLink {
			continue
		}
		c.Pairs = append(c.Pairs, p)
	}
	return c
}

// verifyStrict is the documented byte contract: parse_changelog on base
// and head, compare_entries, validate_raw_change.
func verifyStrict(in *Input) *Report {
	rep := &Report{}
	lk := newLinks(in.Repository)
	if in.Base == nil || in.Head == nil {
		which, rev := "base", in.BaseRev
		if in.Head == nil {
			which, rev = "head", in.HeadRev
		}
		rep.Findings = append(rep.Findings, Finding{Rule: RuleMissingFile, Severity: Error, File: in.Path,
			Message: fmt.Sprintf("could not read %s at %s (%s)", in.Path, rev, which)})
		return rep
	}
	type parsed struct {
		f  *File
		fs []Finding
	}
	baseDone := make(chan parsed, 1)
	go func() {
		f, fs := parseStrict(in.Path, in.Base, "base "+in.Path, false)
		baseDone <- parsed{f, fs}
	}()
	head, hf := parseStrict(in.Path, in.Head, "PR "+in.Path, true)
	bp := <-baseDone
	base, bf := bp.f, bp.fs
	rep.Findings = append(rep.Findings, bf...)
	rep.Findings = append(rep.Findings, hf...)
	rep.Head = head
	if len(bf) > 0 || len(hf) > 0 {
		return rep
	}
	add := func(f Finding) {
		f.File = in.Path
		f.Severity = Error
		rep.Findings = append(rep.Findings, f)
	}
	// compare_entries
	if len(head.Entries) < len(base.Entries) {
		add(Finding{Rule: RuleDeletedEntry, Message: fmt.Sprintf("%s entries were deleted (%d at %s, %d now)", in.Path, len(base.Entries), in.BaseRev, len(head.Entries))})
		return rep
	}
	corrections := 0
	for i, be := range base.Entries {
		he := head.Entries[i]
		if pyyaml.Equal(be.value, he.value) {
			continue
		}
		if !pyyaml.Equal(withoutPRLink(be.value), withoutPRLink(he.value)) {
			add(Finding{Rule: RuleModifiedEntry, Line: he.Line, Entry: he.Index,
				Message: fmt.Sprintf("entry %d changed; existing entries are immutable except for pr-link-only corrections", i+1)})
			return rep
		}
		old, nw := be.PRLink(), he.PRLink()
		if old == nw {
			add(Finding{Rule: RuleReformatted, Line: he.Line, Entry: he.Index,
				Message: fmt.Sprintf("entry %d was reformatted without a semantic change", i+1)})
			return rep
		}
		if !lk.canonical.MatchString(nw) {
			add(Finding{Rule: RulePRFormat, Line: he.FieldLine(FieldPRLink), Entry: he.Index,
				Message: fmt.Sprintf("entry %d pr-link correction is not canonical: %s", i+1, pyQuote(nw))})
			return rep
		}
		corrections++
	}
	additions := head.Entries[len(base.Entries):]
	rep.Added = additions
	if corrections > 0 && len(additions) > 0 {
		add(Finding{Rule: RuleMixedCorrection, Line: additions[0].Line, Entry: additions[0].Index,
			Message: "do not mix historical pr-link corrections with new changelog entries"})
		return rep
	}
	for _, e := range additions {
		if f, bad := checkAddedLink(lk, e, in.PR); bad {
			add(f)
			return rep
		}
	}
	// validate_raw_change
	if f, bad := rawChange(in.Base, in.Head, len(additions), corrections, head); bad {
		add(f)
	}
	return rep
}

// checkAddedLink is validate_added_pr_link.
func checkAddedLink(lk links, e *Entry, pr int) (Finding, bool) {
	link := e.PRLink()
	line := e.FieldLine(FieldPRLink)
	if pr == 0 {
		if !lk.canonical.MatchString(link) {
			rule := RulePRFormat
			if lk.isPlaceholder(link) {
				rule = RulePRPlaceholder
			}
			return Finding{Rule: rule, Line: line, Entry: e.Index,
				Message: fmt.Sprintf("new main-branch entry has invalid pr-link: %s", pyQuote(link))}, true
		}
		return Finding{}, false
	}
	expected := lk.forPR(pr)
	if !lk.isPlaceholder(link) && link != expected {
		rule := RulePRMismatch
		if !lk.canonical.MatchString(link) {
			rule = RulePRFormat
		}
		return Finding{Rule: rule, Line: line, Entry: e.Index,
			Message: fmt.Sprintf("new PR entry must use %s or an XXX placeholder; found %s", pyQuote(expected), pyQuote(link))}, true
	}
	return Finding{}, false
}

func pyQuote(s string) string { return (&pyyaml.Value{Kind: pyyaml.Str, Str: s}).Repr() }

// rawChange is validate_raw_change.
func rawChange(base, head []byte, additions, corrections int, hf *File) (Finding, bool) {
	lineAt := func(off int) int { return bytes.Count(head[:min(off, len(head))], []byte("\n")) + 1 }
	if additions > 0 {
		if !bytes.HasPrefix(head, base) {
			off := commonPrefixLen(base, head)
			return Finding{Rule: RuleHistoryBytes, Line: lineAt(off),
				Message: "appended entries changed historical perf-changelog.yaml bytes; restore the base file byte-for-byte and append at the end"}, true
		}
		suffix := head[len(base):]
		want := []byte("\n- config-keys:")
		if bytes.HasSuffix(base, []byte("\n\n")) {
			want = []byte("- config-keys:")
		}
		if !bytes.HasPrefix(suffix, want) {
			return Finding{Rule: RuleSeparator, Line: lineAt(len(base)),
				Message: "new changelog entries must be separated from history by one empty line and appended at the end"}, true
		}
		starts := entryStartOffsets(head)
		if additions <= len(starts) {
			appended := starts[len(starts)-additions:]
			for _, s := range appended[1:] {
				prefix := head[:s]
				if !bytes.HasSuffix(prefix, []byte("\n\n")) || bytes.HasSuffix(prefix, []byte("\n\n\n")) {
					return Finding{Rule: RuleSeparator, Line: lineAt(s),
						Message: "appended changelog entries must have exactly one empty separator line"}, true
				}
			}
		}
		if bytes.HasSuffix(head, []byte("\n\n")) {
			return Finding{Rule: RuleTrailingBlank, Line: countLines(head),
				Message: "the final appended changelog entry must end with one newline"}, true
		}
		return Finding{}, false
	}
	if corrections > 0 {
		bl, hl := splitKeepEnds(base), splitKeepEnds(head)
		if len(bl) != len(hl) {
			return Finding{Rule: RuleCorrectionLines, Message: "pr-link corrections may not add or delete lines"}, true
		}
		changed := 0
		for i := range bl {
			if bytes.Equal(bl[i], hl[i]) {
				continue
			}
			changed++
			p := []byte("  pr-link:")
			if !(bytes.HasPrefix(bl[i], p) && bytes.HasPrefix(hl[i], p) && bytes.HasSuffix(bl[i], []byte("\n")) && bytes.HasSuffix(hl[i], []byte("\n"))) {
				return Finding{Rule: RuleCorrectionLines, Line: i + 1,
					Message: fmt.Sprintf("historical bytes changed outside a pr-link line at line %d", i+1)}, true
			}
		}
		if changed != corrections {
			return Finding{Rule: RuleCorrectionLines, Message: fmt.Sprintf("expected %d changed pr-link line(s), found %d", corrections, changed)}, true
		}
		return Finding{}, false
	}
	if !bytes.Equal(base, head) {
		return Finding{Rule: RuleHistoryBytes, Line: lineAt(commonPrefixLen(base, head)),
			Message: "changelog diff has no appended entry or pr-link correction; historical whitespace and formatting are immutable"}, true
	}
	return Finding{}, false
}

func commonPrefixLen(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// splitKeepEnds is bytes.splitlines(keepends=True): breaks after \n, \r\n
// and a lone \r.
func splitKeepEnds(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			out = append(out, b[start:i+1])
			start = i + 1
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, b[start:i+1])
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, b[start:])
	}
	return out
}

// bomHint explains an entry line that does not start with "- config-keys:"
// because the file begins with a UTF-8 byte-order mark, which YAML loaders
// skip and a reader does not see.
func bomHint(line string) string {
	if strings.HasPrefix(line, "\ufeff") {
		return "; the file begins with a UTF-8 byte-order mark (U+FEFF): remove it"
	}
	return ""
}
