package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/pflag"

	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// HistoryFlags are the flags every history command shares.
type HistoryFlags struct {
	Repo       string
	Rev        string
	Config     string
	IgnoreRevs []string
	Format     string
	NoIndex    bool
	Offline    bool
	// RevName names Rev in errors when it is not the --rev flag (diff's
	// rev-b argument)
	RevName string
}

// addFlags adds the shared flags; --format only when formats names some.
func (o *HistoryFlags) addFlags(fl *pflag.FlagSet, formats string) {
	repoFlag(fl, &o.Repo)
	fl.StringVar(&o.Rev, "rev", "HEAD", "the `revision` whose state is explained")
	configFlag(fl, &o.Config)
	fl.StringArrayVar(&o.IgnoreRevs, "ignore-rev", nil, "look through this mechanical `commit` (repeatable; adds to ignore-revs in the settings)")
	if formats != "" {
		fl.StringVar(&o.Format, "format", "", "output `format`: "+formats)
	}
	fl.BoolVar(&o.NoIndex, "no-index", false, "read history from git even when an index exists (see perflog index)")
	fl.BoolVar(&o.Offline, "offline", false, "never ask GitHub for the PR of a commit whose subject names none")
}

// history is an opened workspace with the source of its history at --rev
// and, once built, the history itself.
type history struct {
	ws  *workspace
	src *index.Source
	h   *provenance.History
	rev plumbing.Hash
	gh  *gitHub // nil offline; its PR cache is saved on close
}

// openHistory opens the repository and the source of its history at --rev
// (see index.Source): answers come from the index when it has them.
func openHistory(f *Factory, o *HistoryFlags) (*history, error) {
	ws, err := openWorkspace(f, o.Repo, o.Config)
	if err != nil {
		return nil, err
	}
	g := newGitHub(f, ws, o.Offline)
	so := sourceOptions(f, ws, o.Rev)
	so.RevName, so.IgnoreRevs, so.NoIndex = o.RevName, o.IgnoreRevs, o.NoIndex
	if g != nil {
		so.PRs = g
	}
	src, err := index.OpenSource(ws.repo, so)
	if err != nil {
		ws.repo.Close()
		return nil, err
	}
	warnShallow(f, ws)
	return &history{ws: ws, src: src, rev: src.Rev, gh: g}, nil
}

// sourceOptions are the options of the history source of a workspace at
// rev: its warnings and progress on stderr, the factory's dry run.
func sourceOptions(f *Factory, ws *workspace, rev string) index.SourceOptions {
	return index.SourceOptions{Settings: ws.settings, Rev: rev, DryRun: f.dryRun(),
		Warn: func(msg string) { fmt.Fprintf(f.IO.ErrOut, "perflog: %s\n", msg) },
		Progress: func(label string) (func(provenance.Progress), func()) {
			p := progress(f, label)
			return p.update, p.done
		}}
}

// loadHistory opens the repository and builds the history up to --rev.
func loadHistory(ctx context.Context, f *Factory, o *HistoryFlags, parts provenance.Parts, keys ...string) (*history, error) {
	hs, err := openHistory(f, o)
	if err != nil {
		return nil, err
	}
	if hs.h, err = hs.src.History(ctx, parts, keys...); err != nil {
		hs.close()
		return nil, err
	}
	return hs, nil
}

// launches are key's launch versions up to --rev; a key the history does
// not hold at --rev has none (the log says what it can).
func (hs *history) launches(ctx context.Context, key string) ([]provenance.LaunchVersion, error) {
	if seq, ok := hs.h.SeqOf(hs.rev); !ok {
		return nil, nil
	} else if _, ok := hs.h.RecipeAt(key, seq); !ok {
		return nil, nil
	}
	return hs.src.Launches(ctx, hs.h, key)
}

func (hs *history) close() {
	hs.gh.save()
	hs.src.Close()
	hs.ws.repo.Close()
}

// progressLine shows a build's progress on a terminal's stderr.
type progressLine struct {
	f     *Factory
	label string
	start time.Time
	shown bool
	last  time.Time
}

func progress(f *Factory, label string) *progressLine {
	return &progressLine{f: f, label: label, start: time.Now()}
}

func (p *progressLine) update(pr provenance.Progress) {
	if !p.f.IO.IsStderrTTY() || time.Since(p.start) < 300*time.Millisecond || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.f.IO.ErrOut, "\r\x1b[K%s: %s", p.label, progressText(pr))
}

// progressText says how far a stage is: "n/total what", or "n what"
// while the total is not known (the versions to read are found as the
// walk goes).
func progressText(pr provenance.Progress) string {
	what := "commits"
	switch pr.Stage {
	case "read":
		what = "file versions"
	case "claims":
		what = "introducing commits"
	case "recipes":
		what = "recipes"
	}
	if pr.Total > 0 {
		return fmt.Sprintf("%d/%d %s", pr.Done, pr.Total, what)
	}
	return fmt.Sprintf("%d %s", pr.Done, what)
}

func (p *progressLine) done() {
	if p.shown {
		fmt.Fprint(p.f.IO.ErrOut, "\r\x1b[K")
	}
}

var tsvCellEscaper = strings.NewReplacer("\t", " ", "\n", " ")

// oneLine makes each cell of r one line without tabs, in place.
func oneLine(r []string) {
	for i, c := range r {
		if strings.ContainsAny(c, "\t\n") {
			r[i] = tsvCellEscaper.Replace(c)
		}
	}
}

// writeTSVRow writes r as one line of tab-separated values (in place: its
// cells are made one line first).
func writeTSVRow(w io.Writer, r []string) error {
	oneLine(r)
	_, err := fmt.Fprintln(w, strings.Join(r, "\t"))
	return err
}

// printTable writes rows as a table on a terminal (or with --format
// table) and as tab-separated values otherwise (or with --format tsv). A
// terminal table leaves out the columns named in drop, in their order,
// while it cannot fit the terminal otherwise; TSV and CSV keep them.
func printTable(f *Factory, format string, header []string, rows [][]string, drop ...string) error {
	fullHeader := header
	// what the repository gave is shown escaped, in every format: no cell
	// ends its line (and starts a workflow command in a CI log)
	for _, r := range rows {
		for i, c := range r {
			r[i] = printable(c)
		}
	}
	if format == "csv" {
		w := csv.NewWriter(f.IO.Out)
		w.Write(header)
		w.WriteAll(rows) // flushes
		return w.Error()
	}
	if !boxed(f, format) {
		w := bufio.NewWriter(f.IO.Out)
		writeTSVRow(w, header)
		for _, r := range rows {
			writeTSVRow(w, r)
		}
		return w.Flush()
	}
	full := make([][]string, len(rows))
	for i, r := range rows {
		full[i] = slices.Clone(r)
	}
	header, rows, fits := fitRows(f, slices.Clone(header), rows, drop...)
	w := bufio.NewWriterSize(f.IO.Out, 64<<10) // tablewriter writes each line on its own
	if !fits {
		writeStacked(w, f.IO.TerminalWidth(), fullHeader, full)
		return w.Flush()
	}
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	return w.Flush()
}

// boxed reports whether printTable draws a table for the terminal (the
// only output whose cells may be shortened: TSV, CSV and JSON are read by
// programs, and keep every byte).
func boxed(f *Factory, format string) bool {
	return format == "table" || (format == "" && f.IO.IsStdoutTTY())
}

// ellipsize shortens s to at most n runes, the last three "..." (when n
// leaves room for them).
func ellipsize(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n <= 3 {
		return string(r[:max(n, 0)])
	}
	return string(r[:n-3]) + "..."
}

// prose are the columns of free text (subjects, reasons, key lists,
// descriptions): on a terminal they are shortened with an ellipsis to
// fit; the other columns (paths, values, hashes, dates) are never cut.
var prose = map[string]bool{"SUBJECT": true, "WHY": true, "CONFIG-KEYS": true, "DESCRIPTION": true, "DOC": true, "MESSAGE": true}

// fitRows makes a terminal's table fit its width, one line a row, in
// place: it leaves out the columns named in drop, in their order, while
// the table cannot fit with them, then shortens the prose columns with an
// ellipsis (every column when none is prose: a query's). A table whose
// other columns are wider than the terminal stays wider: a value is never
// cut. TSV, CSV and JSON keep every byte.
func fitRows(f *Factory, header []string, rows [][]string, drop ...string) ([]string, [][]string, bool) {
	for _, r := range rows {
		oneLine(r)
	}
	width := f.IO.TerminalWidth()
	caps, fits := fitColumns(header, rows, width)
	for _, name := range drop {
		if fits {
			break
		}
		if i := slices.Index(header, name); i >= 0 {
			header = slices.Delete(slices.Clone(header), i, i+1)
			for j, r := range rows {
				if i < len(r) {
					rows[j] = slices.Delete(r, i, i+1)
				}
			}
			caps, fits = fitColumns(header, rows, width)
		}
	}
	for _, r := range rows {
		for i, w := range caps {
			if i < len(r) {
				r[i] = ellipsize(r[i], w)
			}
		}
	}
	return header, rows, fits
}

// writeStacked writes a table that does not fit the terminal however its
// prose is shortened (its paths and values are too wide) a row in two
// lines: the first column alone (with the VALUE beside it, when that is
// the second column: "FIELD = VALUE", or below it when the two do not fit
// a line), then the others indented, two
// spaces apart, aligned, the prose shortened to what the line leaves. A
// path, hash or value is never cut: one wider than the terminal wraps.
func writeStacked(w io.Writer, width int, header []string, rows [][]string) {
	const indent, gap, minProse = 4, 2, 12
	lead := 1
	if len(header) > 2 && header[1] == "VALUE" {
		lead = 2
	}
	for _, r := range rows {
		oneLine(r)
	}
	pad := make([]int, len(header))
	for i := lead; i < len(header); i++ {
		pad[i] = twwidth.Width(header[i])
		for _, r := range rows {
			if i < len(r) {
				pad[i] = max(pad[i], twwidth.Width(r[i]))
			}
		}
	}
	first := func(r []string) string {
		if lead == 2 && len(r) > 1 {
			if l := r[0] + " = " + r[1]; twwidth.Width(l) <= width {
				return l
			}
			return r[0] + "\n" + strings.Repeat(" ", indent) + "= " + r[1] // too wide beside its field
		}
		return r[0]
	}
	rest := func(r []string) string {
		var b strings.Builder
		b.WriteString(strings.Repeat(" ", indent))
		for i := lead; i < len(r); i++ {
			c := r[i]
			if i > lead {
				b.WriteString(strings.Repeat(" ", gap))
			}
			if prose[header[i]] {
				c = ellipsize(c, max(width-twwidth.Width(b.String()), minProse))
			}
			b.WriteString(c)
			if i < len(r)-1 && !prose[header[i]] {
				b.WriteString(strings.Repeat(" ", max(pad[i]-twwidth.Width(c), 0)))
			}
		}
		return strings.TrimRight(b.String(), " ")
	}
	fmt.Fprintln(w, first(header))
	fmt.Fprintln(w, rest(header))
	fmt.Fprintln(w, strings.Repeat("─", max(min(width, 80), 1)))
	for _, r := range rows {
		fmt.Fprintln(w, first(r))
		fmt.Fprintln(w, rest(r))
	}
}

// fitColumns returns the widths to cap the prose columns of a table at so
// that it fits width terminal columns (nil when it fits as it is, or when
// width is 0: no limit). The prose columns share what the others leave,
// equally, down to minCap. fits reports whether the table, so capped,
// fits.
func fitColumns(header []string, rows [][]string, width int) (caps map[int]int, fits bool) {
	const minCap = 12
	if width <= 0 || len(header) == 0 {
		return nil, true
	}
	shrink := make([]bool, len(header))
	anyProse := false
	for i, h := range header {
		shrink[i] = prose[h]
		anyProse = anyProse || shrink[i]
	}
	natural := make([]int, len(header))
	for i, h := range header {
		natural[i] = twwidth.Width(h)
		if !anyProse {
			shrink[i] = true
		}
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(natural) {
				natural[i] = max(natural[i], twwidth.Width(c))
			}
		}
	}
	budget := width - (3*len(header) + 1) // borders and padding
	sum := func(c int) (n int) {
		for i, w := range natural {
			if shrink[i] {
				w = min(w, max(c, twwidth.Width(header[i])))
			}
			n += w
		}
		return n
	}
	if sum(math.MaxInt) <= budget {
		return nil, true
	}
	c := slices.Max(natural)
	for c > minCap && sum(c) > budget {
		c--
	}
	caps = map[int]int{}
	for i, w := range natural {
		if shrink[i] && w > max(c, twwidth.Width(header[i])) {
			caps[i] = max(c, twwidth.Width(header[i]))
		}
	}
	return caps, sum(c) <= budget
}

func shortSHA(s string) string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

func prText(pr *int) string {
	if pr == nil {
		return "-"
	}
	return fmt.Sprintf("#%d", *pr)
}

func dateText(t time.Time) string { return t.Format("2006-01-02") }
