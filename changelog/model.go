// Package changelog models perf-changelog.yaml and judges changes to it.
//
// The model (File, Entry) keeps for every entry its exact byte span, line
// span and raw text, so that callers can attribute, rewrite or append
// without reformatting anything. Values are loaded with PyYAML semantics
// (package pyyaml) because the incumbent gate is Python.
//
// Verify implements the rule profiles of `perflog changelog verify`:
//
//   - gate:   what the incumbent CI enforces (validate_perf_changelog.py
//     main → process_changelog.py): a final newline, no deleted non-blank
//     line in git's diff of the file, the added lines parse as a list of
//     valid entries, no append-only/regular mix, every config-key resolves.
//   - strict: the documented byte contract (parse_changelog,
//     compare_entries, validate_raw_change).
//   - full:   strict made practical (entries aligned by content rather than
//     position, so an insertion is one finding, against the merge-base)
//     plus perflog's own rules.
//
// It reads no git: a change's two revisions are handed to it (NewInput;
// changelog/load reads them from a repository).
//
// Dependencies: config, recipe, recipe/dryrun, recipe/lint, recipe/revfs,
// changelog/claims, internal/pyyaml, internal/xdiff,
// github.com/go-git/go-git/v5 (object ids).
package changelog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/internal/pyyaml"
)

// File is a parsed changelog.
type File struct {
	Path    string
	Raw     []byte
	Entries []*Entry
	// lineStarts[i] is the byte offset of line i+1.
	lineStarts []int
}

// Entry is one top-level list item of the changelog.
type Entry struct {
	// Index is the 1-based position in the file.
	Index int
	// Start and End delimit the entry's bytes [Start, End): from the start
	// of its "- " line to the end of its last non-blank line, newline
	// included. Separator lines belong to no entry.
	Start, End int
	// Line and EndLine are the 1-based first and last lines.
	Line, EndLine int
	// value is the entry as PyYAML constructs it.
	value *pyyaml.Value
	// Fields is the typed content when the entry is schema-valid, else nil.
	Fields *Fields
	// Errors are the entry's schema errors.
	Errors []SchemaError
}

// Raw returns the entry's exact bytes.
func (e *Entry) Raw(f *File) []byte { return f.Raw[e.Start:e.End] }

// FieldLine returns the line of a field's key, or the entry line.
func (e *Entry) FieldLine(field string) int {
	if e.value != nil && e.value.Kind == pyyaml.Map {
		for _, p := range e.value.Pairs {
			if p.Key.Kind == pyyaml.Str && p.Key.Str == field {
				return p.Key.Line
			}
		}
	}
	return e.Line
}

// ConfigKeyLines returns (key, line) for each config-key item.
func (e *Entry) ConfigKeyLines() []KeyAt { return configKeysOf(e.val()) }

// configKeysOf returns (key, line) for each config-key item of an entry
// value.
func configKeysOf(entry *pyyaml.Value) []KeyAt {
	v, ok := entry.Get(FieldConfigKeys)
	if !ok || (v.Kind != pyyaml.Seq && v.Kind != pyyaml.Set) {
		return nil
	}
	var out []KeyAt
	for _, it := range v.Items {
		if s, ok := laxStr(it); ok {
			out = append(out, KeyAt{Key: s, Line: it.Line})
		}
	}
	return out
}

// KeyAt is a config-key and the line it is written on.
type KeyAt struct {
	Key  string
	Line int
}

// PRLink returns the entry's pr-link the way the strict contract reads it:
// str(entry.get("pr-link") or "").
func (e *Entry) PRLink() string { return prLinkOf(e.val()) }

// prLinkOf is Entry.PRLink of an entry value.
func prLinkOf(entry *pyyaml.Value) string {
	v, ok := entry.Get(FieldPRLink)
	if !ok || !v.Truthy() {
		return ""
	}
	if s, ok := laxStr(v); ok {
		return s
	}
	return v.Repr()
}

// Identity is the entry's content identity: config-keys, description and
// flags, with pr-link and YAML formatting ignored. Two entries with equal
// identity say the same thing.
func (e *Entry) Identity() string { return identityOf(e.val()) }

// identityOf is Entry.Identity of an entry value.
func identityOf(entry *pyyaml.Value) string {
	h := sha256.New()
	if entry == nil || entry.Kind != pyyaml.Map {
		h.Write([]byte(pyyaml.Canonical(entry)))
	} else {
		var parts []string
		for _, p := range entry.Pairs {
			if p.Key.Kind == pyyaml.Str && p.Key.Str == FieldPRLink {
				continue
			}
			parts = append(parts, pyyaml.Canonical(p.Key)+"="+pyyaml.Canonical(p.Value))
		}
		sort.Strings(parts)
		h.Write([]byte(strings.Join(parts, "\x00")))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// LineOf returns the 1-based line holding byte offset off.
func (f *File) LineOf(off int) int {
	return sort.Search(len(f.lineStarts), func(i int) bool { return f.lineStarts[i] > off })
}

// LineText returns line n (1-based) without its newline.
func (f *File) LineText(n int) string {
	if n < 1 || n > len(f.lineStarts) {
		return ""
	}
	start := f.lineStarts[n-1]
	end := len(f.Raw)
	if n < len(f.lineStarts) {
		end = f.lineStarts[n] - 1
	}
	if start > end {
		return ""
	}
	return strings.TrimRight(string(f.Raw[start:end]), "\r\n")
}

// NumLines returns the number of lines.
func (f *File) NumLines() int { return len(f.lineStarts) }

func lineStarts(raw []byte) []int {
	starts := []int{0}
	for i, c := range raw {
		if c == '\n' && i+1 < len(raw) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Parse loads a changelog with the repository's UniqueKeyLoader semantics
// and splits it into entries. The error says where the YAML does not
// load (the file is still returned, with no entries); a root that is not a
// list yields no entries and no error.
func Parse(path string, raw []byte) (*File, error) {
	f, _, err := parseWithRoot(path, raw)
	return f, err
}

// parseWithRoot is Parse, with the loaded root (nil when it does not
// load). The error is a *pyyaml.Error when the YAML does not load.
func parseWithRoot(path string, raw []byte) (*File, *pyyaml.Value, error) {
	f := &File{Path: path, Raw: raw, lineStarts: lineStarts(raw)}
	root, err := pyyaml.Load(raw, pyyaml.Options{UniqueKeys: true})
	if err != nil {
		return f, nil, err
	}
	if root.Kind == pyyaml.Seq {
		f.Entries = f.split(root.Items)
	}
	return f, root, nil
}

// split computes entry spans from the item nodes' lines: an entry starts at
// the line of its "-" and ends at the last non-blank line before the next
// entry's start.
func (f *File) split(items []*pyyaml.Value) []*Entry {
	starts := make([]int, len(items))
	for i, it := range items {
		l := it.Line
		// the item's node may start after its "-" (e.g. "-\n  key: v"):
		// walk back to the line whose first non-space is the dash
		for l > 1 && !dashLine(f.LineText(l)) {
			l--
		}
		starts[i] = l
	}
	entries := make([]*Entry, len(items))
	for i, it := range items {
		startLine := starts[i]
		endLine := f.NumLines()
		if i+1 < len(items) {
			endLine = starts[i+1] - 1
		}
		for endLine > startLine && strings.TrimSpace(f.LineText(endLine)) == "" {
			endLine--
		}
		start := f.lineStarts[startLine-1]
		end := len(f.Raw)
		if endLine < len(f.lineStarts) {
			end = f.lineStarts[endLine]
		}
		e := &Entry{Index: i + 1, Start: start, End: end, Line: startLine, EndLine: endLine, value: it}
		e.Fields, e.Errors = validate(it)
		entries[i] = e
	}
	return entries
}

// splitBlocks reads a file that does not load as a whole block by block
// (each from a "- config-keys:" line to the next): every block that loads
// on its own is an entry, indexed by its block. A history with one
// mis-indented entry still says which entries it holds.
func (f *File) splitBlocks() []*Entry {
	offs := entryStartOffsets(f.Raw)
	var out []*Entry
	for i, off := range offs {
		end := len(f.Raw)
		if i+1 < len(offs) {
			end = offs[i+1]
		}
		parts := [][2]int{{off, end}}
		if _, err := ParseEntry(f.Raw[off:end]); err != nil {
			parts = f.nestedStarts(off, end) // an entry indented under this one
		}
		for _, p := range parts {
			if e := f.blockEntry(p[0], p[1]); e != nil {
				e.Index = len(out) + 1
				out = append(out, e)
			}
		}
	}
	return out
}

// nestedStarts cuts raw[off:end] at its indented "- config-keys:" lines.
func (f *File) nestedStarts(off, end int) [][2]int {
	var cuts []int
	for l := f.LineOf(off) + 1; l <= f.LineOf(end-1); l++ {
		if t := f.LineText(l); strings.HasPrefix(strings.TrimLeft(t, " "), "- config-keys:") && t[0] == ' ' {
			cuts = append(cuts, f.lineStarts[l-1])
		}
	}
	var out [][2]int
	for i, at := range append([]int{off}, cuts...) {
		to := end
		if i < len(cuts) {
			to = cuts[i]
		}
		out = append(out, [2]int{at, to})
	}
	return out
}

// blockEntry is the entry raw[off:end] holds, read on its own (dedented
// by its first line's indentation); nil when it does not load.
func (f *File) blockEntry(off, end int) *Entry {
	text := string(f.Raw[off:end])
	e, err := ParseEntry([]byte(text))
	if ind := len(text) - len(strings.TrimLeft(text, " ")); err != nil && ind > 0 {
		// the whole entry indented, or only its first line (#1767's)
		lines := strings.SplitAfter(text, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, strings.Repeat(" ", ind))
		}
		if e, err = ParseEntry([]byte(strings.Join(lines, ""))); err != nil {
			e, err = ParseEntry([]byte(text[ind:]))
		}
	}
	if err != nil {
		return nil
	}
	startLine := f.LineOf(off)
	endLine := f.LineOf(end - 1)
	for endLine > startLine && strings.TrimSpace(f.LineText(endLine)) == "" {
		endLine--
	}
	e.Line, e.EndLine, e.Start, e.End = startLine, endLine, off, len(f.Raw)
	if endLine < len(f.lineStarts) {
		e.End = f.lineStarts[endLine]
	}
	return e
}

func dashLine(s string) bool {
	t := strings.TrimLeft(s, " ")
	return t == "-" || strings.HasPrefix(t, "- ")
}

// splitLinesPy splits like Python's str.splitlines(), which also breaks on
// \v \f \x1c \x1d \x1e \x85 \u2028 \u2029 (and \r, \r\n).
func splitLinesPy(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if s[i] >= 0x80 {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		brk := false
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			brk = true
		case '\r':
			brk = true
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
		}
		if brk {
			out = append(out, s[start:i])
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// countEntryStarts counts lines starting with "- config-keys:" the way
// parse_changelog does.
func countEntryStarts(text string) int {
	n := 0
	for _, l := range splitLinesPy(text) {
		if strings.HasPrefix(l, "- config-keys:") {
			n++
		}
	}
	return n
}

var entryStartLine = []byte("- config-keys:")

// entryStartOffsets returns the offsets of lines matching
// (?m)^- config-keys:[^\r\n]*\n in raw.
func entryStartOffsets(raw []byte) []int {
	var out []int
	for off := 0; off < len(raw); {
		line := raw[off:]
		nl := bytes.IndexByte(line, '\n')
		if nl < 0 {
			break
		}
		if bytes.HasPrefix(line, entryStartLine) && bytes.IndexByte(line[:nl], '\r') < 0 {
			out = append(out, off)
		}
		off += nl + 1
	}
	return out
}

// stringsOf returns the string items of a list field of an entry value
// (config-keys, description, scenario-type); non-strings are skipped.
func stringsOf(entry *pyyaml.Value, field string) []string {
	v, ok := entry.Get(field)
	if !ok {
		return nil
	}
	if s, ok := laxStr(v); ok {
		return []string{s}
	}
	var out []string
	for _, it := range v.Items {
		if s, ok := laxStr(it); ok {
			out = append(out, s)
		}
	}
	return out
}

// Strings returns the string items of a list field of the entry
// (config-keys, description, scenario-type); non-strings are skipped.
func (e *Entry) Strings(field string) []string { return stringsOf(e.val(), field) }

// val is the entry's value; nil for no entry (an entry text that does not
// load: see ParseEntry), which every reading of it takes as empty.
func (e *Entry) val() *pyyaml.Value {
	if e == nil {
		return nil
	}
	return e.value
}

// ParseEntry loads one entry's text (a YAML list of one item, as the
// changelog holds it) the way Parse loads each entry of a file; the entry
// is numbered 1 and its lines count from the text's first.
func ParseEntry(text []byte) (*Entry, error) {
	v, err := pyyaml.Load(text, pyyaml.Options{UniqueKeys: true})
	if err != nil {
		return nil, err
	}
	if v.Kind != pyyaml.Seq || len(v.Items) != 1 {
		return nil, errors.New("not a single list item")
	}
	it := v.Items[0]
	e := &Entry{Index: 1, Line: it.Line, EndLine: it.Line, End: len(text), value: it}
	e.Fields, e.Errors = validate(it)
	return e, nil
}

// ParseDraft reads entries a person wrote for `changelog new` to append
// (a YAML list of entries): each must be schema-valid.
func ParseDraft(data []byte) ([]DraftEntry, error) {
	v, err := pyyaml.Load(data, pyyaml.Options{})
	if err != nil {
		return nil, fmt.Errorf("the edited entry is not valid YAML: %w", err)
	}
	if v.Kind == pyyaml.Null {
		return nil, errors.New("the edited file is empty: cancelled")
	}
	if v.Kind != pyyaml.Seq {
		return nil, errors.New("the edited file must hold a YAML list of entries")
	}
	var out []DraftEntry
	for _, it := range v.Items {
		fl, errs := validate(it)
		if len(errs) > 0 {
			return nil, fmt.Errorf("the edited entry is not valid: line %d: %s", errs[0].Line, errs[0].Msg)
		}
		out = append(out, DraftEntry{ConfigKeys: fl.ConfigKeys, Description: fl.Description, PRLink: fl.PRLink, AppendOnly: fl.AppendOnly})
	}
	return out, nil
}
