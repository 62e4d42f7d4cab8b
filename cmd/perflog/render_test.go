package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// TestPrintable: a source excerpt prints escaped where it is not text
// (a binary file, a terminal escape), as it is otherwise.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"ARGS=(--tp 8)":    "ARGS=(--tp 8)",
		"\tcmd \\ ":        "\tcmd \\ ",
		"échelle ✓":        "échelle ✓",
		"$,\xff\xfe x":     `$,\xff\xfe x`,
		"echo \x1b[31mred": `echo \x1b[31mred`,
		"a\rb":             `a\rb`,
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestQueryJSON: query --format json keeps the statement's column order,
// names a repeated column apart instead of dropping one of its values, and
// writes '<', '>' and '&' as they are.
func TestQueryJSON(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	res := &index.Result{Columns: []string{"z", "id", "id", "id_2", "a"},
		Rows: [][]any{{"x -> y & <z>", int64(1), int64(2), nil, 1.5}}}
	w := newResultWriter(&Factory{IO: io}, "json")
	if err := w.header(res.Columns); err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		if err := w.row(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "z": "x -> y & <z>",
    "id": 1,
    "id_3": 2,
    "id_2": null,
    "a": 1.5
  }
]
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || len(rows) != 1 || len(rows[0]) != 5 {
		t.Errorf("%v %v", rows, err)
	}
	if got := uniqueNames([]string{"a", "a", "a"}); !slices.Equal(got, []string{"a", "a_2", "a_3"}) {
		t.Errorf("uniqueNames: %v", got)
	}
}

// TestProgressText: a stage whose total is not known yet shows its count
// alone, never "n/0".
func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		pr   provenance.Progress
		want string
	}{
		{provenance.Progress{Stage: "read", Done: 704}, "704 file versions"},
		{provenance.Progress{Stage: "claims", Done: 3, Total: 40}, "3/40 introducing commits"},
		{provenance.Progress{Stage: "walk", Done: 1200}, "1200 commits"},
		{provenance.Progress{Stage: "recipes", Done: 2, Total: 6}, "2/6 recipes"},
	} {
		if got := progressText(c.pr); got != c.want {
			t.Errorf("%+v: %q, want %q", c.pr, got, c.want)
		}
	}
}

// TestTableFitsTerminal: on a terminal a table is one line a row, fits
// the width by shortening its prose columns with an ellipsis, and never
// cuts a path, a value or a hash; off a terminal (TSV) every byte stays.
func TestTableFitsTerminal(t *testing.T) {
	header := []string{"ENTRY", "CONFIG-KEYS", "VERDICT", "WHY"}
	rows := func() [][]string {
		return [][]string{
			{"482", "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache", "mismatch",
				"pr-link points at #1762, but the entry was introduced by #1768 (b6aa4d49dc); #1762 introduced the entry for minimaxm3-fp8-mi355x-vllm-disagg"},
			{"240", "dsv4-fp4-mi355x-sglang", "ok", ""},
		}
	}
	for _, width := range []int{60, 80, 100} {
		io, _, out, _ := iostreams.Test()
		io.SetStdoutTTY(true)
		io.SetTerminalWidth(width)
		if err := printTable(&Factory{IO: io}, "", header, rows()); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if len(lines) != 3+2+1 { // borders, header, two rows
			t.Errorf("width %d: %d lines, want one a row:\n%s", width, len(lines), out)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("width %d: a line of %d columns: %s", width, n, l)
			}
		}
		if !strings.Contains(out.String(), "...") || !strings.Contains(out.String(), "mismatch") {
			t.Errorf("width %d: the prose is not shortened, or a value is:\n%s", width, out)
		}
	}
	// blame: the field path, the value and the hash are never cut, even
	// when they alone are wider than the terminal: a table too wide for
	// it is stacked, FIELD = VALUE on one line, the rest on the next
	blameHeader := []string{"FIELD", "VALUE", "COMMIT", "PR", "DATE", "EVENT", "SUBJECT"}
	blameRow := []string{"scenarios.fixed-seq-len[1].search-space[0].conc-list", "[4, 8, 16, 32, 64, 128, 256]", "c664d653d0",
		"#1431", "2026-05-18", "changed", "Update dsr1-fp4-mi355x-sglang SGLang image to v0.5.12-rocm700-mi35x (#1431)"}
	for _, width := range []int{80, 240} {
		io, _, out, _ := iostreams.Test()
		io.SetStdoutTTY(true)
		io.SetTerminalWidth(width)
		if err := printTable(&Factory{IO: io}, "", blameHeader, [][]string{slices.Clone(blameRow)}); err != nil {
			t.Fatal(err)
		}
		for _, tok := range blameRow[:6] {
			if !strings.Contains(out.String(), tok) {
				t.Errorf("blame at width %d: %s cut:\n%s", width, tok, out)
			}
		}
		if width == 240 {
			if n := strings.Count(out.String(), "\n"); n != 5 || !strings.Contains(out.String(), blameRow[6]) {
				t.Errorf("blame at width 240: want a table of one line a row, the subject whole:\n%s", out)
			}
			continue
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		// FIELD and VALUE are 83 columns together: the value goes below
		if len(lines) != 3+3 || lines[3] != blameRow[0] || lines[4] != "    = "+blameRow[1] || !strings.HasPrefix(lines[5], "    "+blameRow[2]+"  "+blameRow[3]) {
			t.Errorf("blame at width 80: want FIELD, = VALUE, then the commit and the rest:\n%s", out)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > width {
				t.Errorf("blame at width 80: a line of %d columns: %s", n, l)
			}
		}
	}
	// a field and value that fit a line share it
	{
		io, _, out, _ := iostreams.Test()
		io.SetStdoutTTY(true)
		io.SetTerminalWidth(80)
		short := []string{"image", "lmsysorg/sglang:v0.5.12-rocm700-mi35x", "e3435bd084", "#1432", "2026-05-18", "changed", "Update the image"}
		if err := printTable(&Factory{IO: io}, "", blameHeader, [][]string{slices.Clone(blameRow), short}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "\nimage = lmsysorg/sglang:v0.5.12-rocm700-mi35x\n    e3435bd084  #1432  2026-05-18  changed  Update the image\n") {
			t.Errorf("blame at width 80, a short value:\n%s", out)
		}
	}
	// audit's nine columns: at 80 the line and the commit are left out
	// (and the date, when the verdicts are wide), at 160 (and off a
	// terminal) every column stays
	auditHeader := []string{"ENTRY", "LINE", "CONFIG-KEYS", "LINK", "INTRODUCED", "PR", "DATE", "VERDICT", "WHY"}
	auditRow := []string{"482", "3904", "dsv4-fp4-mi355x-sglang-disagg-agentic-hicache", "#1762", "b6aa4d49dc", "#1768", "2026-07-20",
		"mismatch", "pr-link points at #1762, but the entry was introduced by #1768 (b6aa4d49dc)"}
	for _, c := range []struct {
		width int
		tty   bool
		cols  int
	}{{80, true, 7}, {160, true, 9}, {80, false, 9}, {80, true, 6}} {
		io, _, out, _ := iostreams.Test()
		io.SetStdoutTTY(c.tty)
		io.SetTerminalWidth(c.width)
		row := slices.Clone(auditRow)
		if c.cols == 6 {
			row[7] = "placeholder" // a wider verdict: the date goes too
		}
		if err := printTable(&Factory{IO: io}, "", slices.Clone(auditHeader), [][]string{row}, "LINE", "INTRODUCED", "DATE"); err != nil {
			t.Fatal(err)
		}
		first := strings.SplitN(out.String(), "\n", 3)[0]
		if !c.tty {
			if n := len(strings.Split(first, "\t")); n != c.cols || !strings.Contains(out.String(), auditRow[8]) {
				t.Errorf("TSV: %d columns: %s", n, out)
			}
			continue
		}
		if n := strings.Count(first, "┬") + 1; n != c.cols {
			t.Errorf("audit at width %d: %d columns, want %d:\n%s", c.width, n, c.cols, out)
		}
		for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(l); n > c.width {
				t.Errorf("audit at width %d: a line of %d columns: %s", c.width, n, l)
			}
		}
	}
}

// TestParseDate: --since and --until take dates, RFC 3339 instants and,
// as git log does, "N units ago" and "yesterday".
func TestParseDate(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		in       string
		endOfDay bool
		want     time.Time
	}{
		{"2026-07-01", false, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-07-01", true, time.Date(2026, 7, 1, 23, 59, 59, 999999999, time.UTC)},
		{"2026-07-01T12:00:00+02:00", false, time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)},
		{"2 weeks ago", false, time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC)},
		{"1 week ago", true, time.Date(2026, 11, 27, 10, 30, 0, 0, time.UTC)},
		{"3.days.ago", false, time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)},
		{"5 Hours Ago", false, time.Date(2026, 12, 4, 5, 30, 0, 0, time.UTC)},
		{"6 months ago", false, time.Date(2026, 6, 4, 10, 30, 0, 0, time.UTC)},
		{"1 year ago", false, time.Date(2025, 12, 4, 10, 30, 0, 0, time.UTC)},
		{"yesterday", false, time.Date(2026, 12, 3, 10, 30, 0, 0, time.UTC)},
		// beyond time.Duration (292 years): before every commit, not after
		{"10000000000 seconds ago", false, time.Date(1710, 1, 14, 16, 43, 20, 0, time.UTC)},
		{"9223372036854775807 seconds ago", false, time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
		{"99999999999 hours ago", false, time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
		{"9223372036854775807 years ago", false, time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
	} {
		got, err := parseDate("since", c.in, c.endOfDay, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("parseDate(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"2026-07", "two weeks ago", "2 fortnights ago", "-1 days ago", "ago", "2 weeks"} {
		if _, err := parseDate("since", bad, false, now); err == nil || !strings.Contains(err.Error(), "invalid --since") {
			t.Errorf("parseDate(%q): %v", bad, err)
		}
	}
}

// FuzzParseDate: any text is a date or a usage error, never a panic, and
// a relative date is never after now.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2 weeks ago", "10000000000 seconds ago", "2026-07-01", "yesterday", "9223372036854775807 years ago", "1.month.ago"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 4, 10, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseDate("since", s, false, now)
		if err != nil {
			return
		}
		if _, ok := relativeDate(s, now); ok && got.After(now) {
			t.Fatalf("%q is %v, after now", s, got)
		}
	})
}

func TestEllipsize(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer text", 10, "a longe..."},
		{"ééééééééééé", 10, "ééééééé..."},
		{"abcdef", 3, "abc"},
		{"abcdef", 0, ""},
	} {
		if got := ellipsize(c.in, c.n); got != c.want {
			t.Errorf("ellipsize(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// writeAuditJSON streams the entries, and writes what encoding the whole
// document at once writes.
func TestWriteAuditJSON(t *testing.T) {
	pr := 12
	ref := provenance.CommitRef{Commit: "e976e2e28e", PR: &pr, Date: time.Date(2026, 7, 1, 22, 59, 29, 0, time.FixedZone("", 9*3600)), Subject: `Tune "k1" <TP & EP> (#12)`}
	entries := []provenance.AuditEntry{
		{Index: 1, Line: 1, ConfigKeys: []string{"a-*", "b"}, PRLink: "https://x/pull/12", PRLinkPR: &pr, Introduced: &ref,
			Events: []provenance.AuditEvent{{Type: provenance.EvIntroduced, CommitRef: ref, Note: "4 -> 64 ✓"}}, Verdict: "ok"},
		{Index: 2, Line: 9, Verdict: "no-pr", Reason: "no link"},
		{Index: 3, ConfigKeys: []string{}, Events: []provenance.AuditEvent{}, Verdict: "mismatch",
			Claims: []claims.Result{{Entry: 3, Line: 4, Keys: []string{"k"}, Verdict: "confirmed"}}},
	}
	for _, es := range [][]provenance.AuditEntry{entries, entries[:1], {}} {
		res := auditResult{Rev: "1fe5131ba9e3", File: `perf "changelog".yaml`, Entries: es,
			Summary: map[provenance.Verdict]int{"ok": 1, "no-pr": 1}, Notes: []noteJSON{{Commit: "ab", File: "f", Message: "m <x>"}}}
		var want, got bytes.Buffer
		if err := jsonEncoder(&want).Encode(res); err != nil {
			t.Fatal(err)
		}
		if err := writeAuditJSON(&got, res); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("%d entries: streamed\n%s\nwant\n%s", len(es), got.String(), want.String())
		}
	}
}

// writeJSONList writes a query's rows as encoding the whole list does.
func TestWriteJSONList(t *testing.T) {
	names := []string{"seq", "subject", "pr"}
	all := [][]any{{int64(1), `Tune "k1" <TP & EP>`, nil}, {int64(2), "ünïcode\n", int64(7)}, {int64(3), "", 2.5}}
	for n := 0; n <= len(all); n++ {
		rows := make([]jsonRow, n)
		for i := range rows {
			rows[i] = jsonRow{names, all[i]}
		}
		var want bytes.Buffer
		if err := jsonEncoder(&want).Encode(rows); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		bw := bufio.NewWriter(&got)
		if err := writeJSONList(bw, "", n, func(i int) any { return rows[i] }); err != nil {
			t.Fatal(err)
		}
		bw.WriteByte('\n')
		bw.Flush()
		if got.String() != want.String() {
			t.Fatalf("%d rows: streamed\n%s\nwant\n%s", n, got.String(), want.String())
		}
	}
}

// TestLogValuesFitTerminal: on a terminal a log's long value is shortened
// to its line (and the caller told, to say so); a pipe gets every byte.
func TestLogValuesFitTerminal(t *testing.T) {
	long := strings.Repeat("{isl: 1024, osl: 1024, search-space: [{tp: 8, conc-start: 1}]}, ", 20)
	for _, c := range []provenance.FieldChange{
		{Kind: "added", New: long},
		{Kind: "changed", Path: "launch.flags.--compilation-config", Old: long, New: long + "x"},
	} {
		var b strings.Builder
		if !writeChange(&b, c, 80) {
			t.Errorf("%s: a value of %d characters was not shortened", c.Kind, len(long))
		}
		if n := utf8.RuneCountInString(strings.TrimRight(b.String(), "\n")); n > 80 {
			t.Errorf("%s: a line of %d columns: %s", c.Kind, n, b.String())
		}
		b.Reset()
		if writeChange(&b, c, 0) || !strings.Contains(b.String(), long) {
			t.Errorf("%s: a pipe's value was shortened: %s", c.Kind, b.String())
		}
	}
	var b strings.Builder
	if writeChange(&b, provenance.FieldChange{Kind: "changed", Path: "image", Old: "a:1", New: "a:2"}, 80) || b.String() != "    image: a:1 -> a:2\n" {
		t.Errorf("a short change: %q", b.String())
	}
}

// TestMarkdownChangelogPathIsInert: the changelog's path comes from the
// repository's settings; in the suggested entry's sentence it is a code
// span, whatever it holds.
func TestMarkdownChangelogPathIsInert(t *testing.T) {
	rep := &changelog.Report{
		Head:      &changelog.File{Path: "perf` <img src=x onerror=alert(1)> @octocat ![t](https://evil.example) `.yaml"},
		Suggested: []changelog.DraftEntry{{ConfigKeys: []string{"k1"}, Description: []string{"x"}, PRLink: "https://github.com/o/r/pull/1"}},
	}
	var b strings.Builder
	if err := writeMarkdown(&b, rep, verifyHeader{}, ""); err != nil {
		t.Fatal(err)
	}
	if m := markdownActive.FindString(codeSpan.ReplaceAllString(b.String(), "")); m != "" || strings.Contains(codeSpan.ReplaceAllString(b.String(), ""), "<img") {
		t.Errorf("markdown a reader's browser acts on (%q):\n%s", m, b.String())
	}
	if !strings.Contains(b.String(), "Append this to `perf' <img") {
		t.Errorf("the path is not named:\n%s", b.String())
	}
}

// TestGitHubAnnotationsAreInert: a workflow command's message and
// properties keep no control character a log viewer or terminal acts
// on; a message's lines stay lines.
func TestGitHubAnnotationsAreInert(t *testing.T) {
	var b strings.Builder
	writeGitHub(&b, []changelog.Finding{{Rule: "config-keys/unknown", Severity: changelog.Error, File: "perf\x1b[2J-changelog.yaml", Line: 3,
		Message: "unknown key \"k\x1b]52;c;SGVsbG8=\x07\"", Details: []string{"a\rb"}}})
	out := b.String()
	if strings.ContainsFunc(strings.TrimSuffix(out, "\n"), func(r rune) bool { return r < 0x20 }) {
		t.Errorf("a control character: %q", out)
	}
	if want := `::error file=perf\x1b[2J-changelog.yaml,line=3,title=config-keys/unknown::unknown key "k\x1b]52;c;SGVsbG8=\a"%0A- a\rb` + "\n"; out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}
