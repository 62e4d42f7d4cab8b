package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/perflog/perflog/provenance"
)

func newProvenanceCmd(f *Factory) *cobra.Command {
	cmd := groupCmd(&cobra.Command{
		Use:   "provenance <command>",
		Short: "Explain where each recipe field came from",
		Long: `Field-level history of the recipes in the master configs, attributed to
first-parent commits and their PRs. Fields are compared by path and value, not
by line: reformatting, reordering list items, moving the configs between
directories and renaming a key do not steal attribution.`,
	})
	cmd.AddCommand(newBlameCmd(f, nil), newLogCmd(f, nil), newProvDiffCmd(f, nil))
	return cmd
}

// BlameOptions are the parsed flags of `perflog provenance blame`.
type BlameOptions struct {
	Factory *Factory
	HistoryFlags
	Key      string
	NoLaunch bool
}

func newBlameCmd(f *Factory, runF func(context.Context, *BlameOptions) error) *cobra.Command {
	opts := &BlameOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "blame <config-key>",
		Short: "Show since which commit each field of a recipe has held its value",
		Long: `Blame lists every leaf field of a recipe (image, model, runner,
scenarios.fixed-seq-len[0].search-space[1].conc-list, ...) with its value at
--rev and the first-parent commit and PR since which it has held that value.

The fields include what the recipe's points launch (launch.flags.--NAME,
launch.env.NAME, launch.image, ...; "[tp8 dpa 8k1k]" names the points a
field is about where they differ), attributed to the commit that changed
them whichever file it touched. They come from dry runs of the recipe's
history (about 2 s the first time; the index keeps them); --no-launch
leaves them out.

A key that was renamed (a key disappeared while one with a near-identical
recipe appeared in the same commit) is followed to its old name; the renames
are listed. A table on a terminal, tab-separated values otherwise, or
--format json. An unknown key exits 2 with the nearest keys.`,
		Example: `  $ perflog provenance blame dsr1-fp4-mi355x-sglang
  $ perflog provenance blame dsv4-fp4-b200-vllm-agentic-mtp --format json | jq '.fields[] | select(.path=="image")'`,
		Args: argsFor("a config-key"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if err := checkKeyArg(opts.Key); err != nil {
				return err
			}
			if !contains(listFormats, opts.Format) {
				return flagErrorf("invalid --format %q (want table, tsv, json or csv)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return blameRun(cmd.Context(), opts)
		},
	}
	opts.addFlags(cmd.Flags(), "table, tsv, json or csv (default: table on a terminal, else tsv)")
	noLaunchFlag(cmd.Flags(), &opts.NoLaunch)
	return cmd
}

// noLaunchFlag is the --no-launch flag of blame, log and diff.
func noLaunchFlag(fl *pflag.FlagSet, v *bool) {
	fl.BoolVar(v, "no-launch", false, "leave out what the recipe's points launch (launch.* fields: no dry runs)")
}

func blameRun(ctx context.Context, opts *BlameOptions) error {
	hs, err := openHistory(opts.Factory, &opts.HistoryFlags)
	if err != nil {
		return err
	}
	defer hs.close()
	blame := hs.src.BlameLaunch
	if opts.NoLaunch {
		blame = hs.src.Blame
	}
	rep, err := blame(ctx, opts.Key)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		return writeJSON(opts.Factory.IO.Out, rep)
	}
	header := []string{"FIELD", "VALUE", "COMMIT", "PR", "DATE", "EVENT", "SUBJECT"}
	rows := make([][]string, 0, len(rep.Fields))
	var notes onceLines
	for _, fl := range rep.Fields {
		ev := string(fl.Event)
		if fl.Key != "" {
			ev += " (as " + fl.Key + ")"
		}
		subject := fl.Subject
		if boxed(opts.Factory, opts.Format) {
			subject = ellipsize(subject, 60) // a value is never cut
		}
		commit, pr := shortSHA(fl.Commit), prText(fl.PR)
		if g := fl.SetIn; g != nil { // not known which commit of the stretch
			commit, pr = shortSHA(g.From.Commit)+".."+commit, prText(g.From.PR)+".."+pr
			ev += " in range"
			notes.add(fmt.Sprintf("in range: the launch was not known from %s %s until %s %s (%s); a value set in that range is blamed on the range, not on the commit that ended it",
				shortSHA(g.From.Commit), prText(g.From.PR), shortSHA(g.To.Commit), prText(g.To.PR), orUnsaid(g.Reason)))
		}
		for _, g := range fl.NotKnown {
			notes.add(fmt.Sprintf("not known from %s %s until %s %s (%s): a value the same on both sides keeps its older commit",
				shortSHA(g.From.Commit), prText(g.From.PR), shortSHA(g.To.Commit), prText(g.To.PR), orUnsaid(g.Reason)))
		}
		rows = append(rows, []string{fl.Path, fl.Value, commit, pr, dateText(fl.Date), ev, subject})
	}
	if err := printTable(opts.Factory, opts.Format, header, rows, "EVENT", "DATE"); err != nil {
		return err
	}
	errOut := opts.Factory.IO.ErrOut
	printf(errOut, "%s in %s at %s\n", rep.Key, rep.File, shortSHA(rep.Rev))
	for _, r := range rep.Renames {
		printf(errOut, "renamed from %s to %s by %s %s\n", r.From, r.To, shortSHA(r.Commit), prText(r.PR))
	}
	for _, l := range notes.lines {
		printf(errOut, "%s\n", l)
	}
	return nil
}

// onceLines keeps lines in their first order, each once.
type onceLines struct {
	lines []string
	seen  map[string]bool
}

func (o *onceLines) add(l string) {
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if !o.seen[l] {
		o.seen[l] = true
		o.lines = append(o.lines, l)
	}
}

// orUnsaid is a reason, or says there is none.
func orUnsaid(why string) string {
	if why == "" {
		return "no reason recorded"
	}
	return why
}

// checkKeyArg refuses an empty config-key argument (a shell variable
// that was not set) as a usage error.
func checkKeyArg(k string) error {
	if strings.TrimSpace(k) == "" {
		return flagErrorf("the config key is empty")
	}
	return nil
}

func writeJSON(w io.Writer, v any) error { return jsonEncoder(w).Encode(v) }

// writeJSONList writes what jsonEncoder writes for a list of n items, on
// a line indented by prefix, one item at a time: encoding a long list at
// once (an audit's entries, a query's rows) took megabytes of buffers,
// the whole document and then its indented copy, each of their pages a
// fault in a fresh process.
func writeJSONList(w *bufio.Writer, prefix string, n int, item func(i int) any) error {
	l := newJSONList(w, prefix)
	for i := range n {
		if err := l.add(item(i)); err != nil {
			return err
		}
	}
	return l.close()
}

// jsonList writes a JSON array an item at a time, as writeJSONList lays
// it out, for a list whose length is not known in advance.
type jsonList struct {
	w      *bufio.Writer
	prefix string
	one    bytes.Buffer
	enc    *json.Encoder
	n      int
}

func newJSONList(w *bufio.Writer, prefix string) *jsonList {
	l := &jsonList{w: w, prefix: prefix}
	l.enc = json.NewEncoder(&l.one)
	l.enc.SetIndent(prefix+"  ", "  ") // an item's lines, one level in
	l.enc.SetEscapeHTML(false)
	return l
}

func (l *jsonList) add(item any) error {
	l.one.Reset()
	if err := l.enc.Encode(item); err != nil {
		return err
	}
	if l.n == 0 {
		l.w.WriteByte('[')
	} else {
		l.w.WriteByte(',')
	}
	l.n++
	l.w.WriteString("\n" + l.prefix + "  ")
	_, err := l.w.Write(bytes.TrimSuffix(l.one.Bytes(), []byte("\n")))
	return err
}

func (l *jsonList) close() error {
	if l.n == 0 {
		_, err := l.w.WriteString("[]")
		return err
	}
	_, err := l.w.WriteString("\n" + l.prefix + "]")
	return err
}

// jsonEncoder is how every command writes JSON: indented, and with '<',
// '>' and '&' as they are (descriptions say "4 -> 64" and "TP & EP"; the
// escapes are for JSON embedded in HTML).
func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}

// LogOptions are the parsed flags of `perflog provenance log`.
type LogOptions struct {
	Factory *Factory
	HistoryFlags
	Key          string
	Since, Until string
	Path         string
	NoLaunch     bool
}

func newLogCmd(f *Factory, runF func(context.Context, *LogOptions) error) *cobra.Command {
	opts := &LogOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "log <config-key>",
		Short: "Show a recipe's field-level change history",
		Long: `Log lists, newest first, every first-parent commit that created, changed,
renamed or deleted a recipe, with its field changes (path: old -> new) and the
changelog entries the commit added or edited that name the key. A commit that
changed the recipe without such an entry is marked "no changelog entry"; a
commit whose entries name the key while the recipe did not change is listed as
"changelog only". A change of what the recipe's points launch (launch.*
fields, see blame) is listed under the commit that made it, as kind
"launch" where the config did not change; each change says which points it
reaches.`,
		Example: `  $ perflog provenance log dsr1-fp4-mi355x-sglang --path image
  $ perflog provenance log dsr1-fp8-mi355x-sglang --path launch.flags
  $ perflog provenance log dsv4-fp4-b200-vllm-agentic-mtp --since 2026-07-01 --format json`,
		Args: argsFor("a config-key"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if err := checkKeyArg(opts.Key); err != nil {
				return err
			}
			if !contains([]string{"", "text", "json"}, opts.Format) {
				return flagErrorf("invalid --format %q (want text or json)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logRun(cmd.Context(), opts)
		},
	}
	opts.addFlags(cmd.Flags(), "text or json")
	noLaunchFlag(cmd.Flags(), &opts.NoLaunch)
	cmd.Flags().StringVar(&opts.Since, "since", "", "only commits on or after this `date` (YYYY-MM-DD, RFC 3339, or \"2 weeks ago\")")
	cmd.Flags().StringVar(&opts.Until, "until", "", "only commits on or before this `date`")
	cmd.Flags().StringVar(&opts.Path, "path", "", "only changes of this `field` (or below it; '*' wildcards)")
	return cmd
}

// parseDate reads a --since or --until date: YYYY-MM-DD (UTC; the end of
// that day with endOfDay), RFC 3339, or as git log takes it, "N units ago"
// (seconds to years) and "yesterday", counted back from now.
func parseDate(flag, s string, endOfDay bool, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, ok := relativeDate(s, now); ok {
		return t, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return time.Time{}, flagErrorf("invalid --%s %q (want YYYY-MM-DD, RFC 3339, or N days/weeks/months ago)", flag, s)
	}
	if endOfDay {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}

// unitsPerYear bounds each unit of relativeDate (rounded up).
var unitsPerYear = map[string]int{"second": 31622400, "minute": 527040, "hour": 8784, "day": 366, "week": 53, "month": 12, "year": 1}

// relativeDate reads "N <unit>[s] ago" ("2 weeks ago", "3.days.ago" as
// git also takes it) and "yesterday".
func relativeDate(s string, now time.Time) (time.Time, bool) {
	f := strings.Fields(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), ".", " "))
	if len(f) == 1 && f[0] == "yesterday" {
		return now.AddDate(0, 0, -1), true
	}
	if len(f) != 3 || f[2] != "ago" {
		return time.Time{}, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return time.Time{}, false
	}
	unit := strings.TrimSuffix(f[1], "s")
	perYear, ok := unitsPerYear[unit]
	if !ok {
		return time.Time{}, false
	}
	if n/perYear > 10000 {
		// further back than any commit (and than time.Duration reaches):
		// the first second of year 1, a bound that holds every date
		return time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), true
	}
	// seconds, minutes and hours as whole days and the rest (a Duration
	// overflows past 292 years)
	for _, u := range []struct {
		name   string
		d      time.Duration
		perDay int
	}{{"second", time.Second, 86400}, {"minute", time.Minute, 1440}, {"hour", time.Hour, 24}} {
		if unit == u.name {
			return now.AddDate(0, 0, -(n / u.perDay)).Add(-time.Duration(n%u.perDay) * u.d), true
		}
	}
	switch unit {
	case "day":
		return now.AddDate(0, 0, -n), true
	case "week":
		return now.AddDate(0, 0, -7*n), true
	case "month":
		return now.AddDate(0, -n, 0), true
	case "year":
		return now.AddDate(-n, 0, 0), true
	}
	return time.Time{}, false
}

func logRun(ctx context.Context, opts *LogOptions) error {
	now := time.Now()
	since, err := parseDate("since", opts.Since, false, now)
	if err != nil {
		return err
	}
	until, err := parseDate("until", opts.Until, true, now)
	if err != nil {
		return err
	}
	if !since.IsZero() && !until.IsZero() && since.After(until) {
		return flagErrorf("--since %s is after --until %s: no commit can match", opts.Since, opts.Until)
	}
	hs, err := openHistory(opts.Factory, &opts.HistoryFlags)
	if err != nil {
		return err
	}
	defer hs.close()
	items, err := hs.src.Log(ctx, opts.Key, provenance.LogOptions{Since: since, Until: until, Path: opts.Path}, !opts.NoLaunch)
	if err != nil {
		return err
	}
	if opts.Format == "json" {
		if items == nil {
			items = []provenance.LogItem{}
		}
		return writeJSON(opts.Factory.IO.Out, map[string]any{"key": opts.Key, "rev": hs.rev.String(), "items": items})
	}
	noteCut(opts.Factory, writeLog(opts.Factory.IO.Out, items, opts.Factory.IO.ColorEnabled(), termWidth(opts.Factory)))
	if len(items) == 0 {
		logNothing(ctx, opts, hs, since, until)
	}
	return nil
}

// logNothing says on stderr why a log is empty: what was asked, and for a
// --path that names no field of the recipe, the nearest ones.
func logNothing(ctx context.Context, opts *LogOptions, hs *history, since, until time.Time) {
	var what []string
	if opts.Path != "" {
		what = append(what, fmt.Sprintf("a field matching %q", opts.Path))
	}
	// a relative date says which day it was taken as
	when := func(arg string, t time.Time) string {
		if d := t.Format(time.DateOnly); d != arg {
			return arg + " = " + d
		}
		return arg
	}
	if opts.Since != "" {
		what = append(what, "since "+when(opts.Since, since))
	}
	if opts.Until != "" {
		what = append(what, "until "+when(opts.Until, until))
	}
	msg := fmt.Sprintf("no commit changed %s", opts.Key)
	if len(what) > 0 {
		msg += " (" + strings.Join(what, ", ") + ")"
	}
	errOut := opts.Factory.IO.ErrOut
	fmt.Fprintf(errOut, "%s at %s\n", msg, shortHash(hs.rev))
	if opts.Path == "" {
		return
	}
	h, err := hs.src.History(ctx, provenance.PartRecipes, opts.Key)
	if err != nil {
		return
	}
	if near := h.NearFields(opts.Key, hs.rev, opts.Path, 3); len(near) > 0 {
		fmt.Fprintf(errOut, "%s has no field %q; did you mean %s?\n", opts.Key, opts.Path, strings.Join(near, ", "))
	}
}

// writeLog prints log items like git log: a header line per commit, then
// the field changes and the changelog entries.
func writeLog(w io.Writer, items []provenance.LogItem, color bool, width int) (cut bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	for i, it := range items {
		if i > 0 {
			fmt.Fprintln(w)
		}
		what := string(it.Kind)
		switch it.Kind {
		case provenance.EvRenamed:
			what = "renamed from " + it.From
		case provenance.EvChangelog:
			what = "changelog only"
		}
		fmt.Fprintf(w, "%s %s %s %s  %s\n", paint(ansiYellow, shortSHA(it.Commit)), prText(it.PR), dateText(it.Date), paint(ansiBold, printable(what)), printable(it.Subject))
		for _, c := range provenance.GroupChanges(it.Changes) {
			cut = writeChange(w, c, width) || cut
		}
		for _, e := range it.Entries {
			head := fmt.Sprintf("    changelog %s: ", e.Event)
			printf(w, "%s%s\n", head, keyList(e.ConfigKeys, width-len(head)))
			for _, d := range e.Description {
				printf(w, "      - %s\n", d)
			}
		}
		if it.MissingEntry {
			fmt.Fprintf(w, "    %s\n", paint(ansiRed, "no changelog entry in this commit names the key"))
		}
	}
	return cut
}

// keyList joins keys with ", ", summarised to fit room columns when room
// is positive (a terminal): the first keys that fit, then how many more
// ("... and 49 more (52 keys)"). A pipe (room 0) gets every key.
func keyList(keys []string, room int) string {
	all := strings.Join(keys, ", ")
	if room <= 0 || len(all) <= room {
		return all
	}
	var b strings.Builder
	for i, k := range keys {
		tail := fmt.Sprintf(", ... and %d more (%d keys)", len(keys)-i, len(keys))
		sep := ""
		if i > 0 {
			sep = ", "
		}
		if i > 0 && b.Len()+len(sep)+len(k)+len(tail) > room {
			b.WriteString(tail)
			return b.String()
		}
		b.WriteString(sep + k)
	}
	return b.String()
}

// ProvDiffOptions are the parsed flags of `perflog provenance diff`.
type ProvDiffOptions struct {
	Factory    *Factory
	Repo       string
	Config     string
	IgnoreRevs []string
	Format     string
	NoIndex    bool
	Offline    bool
	Key, A, B  string
	NoLaunch   bool
	Bisect     bool
	Point      string
}

func newProvDiffCmd(f *Factory, runF func(context.Context, *ProvDiffOptions) error) *cobra.Command {
	opts := &ProvDiffOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "diff <config-key> <rev-a> <rev-b>",
		Short: "List what changed a recipe between two revisions (bisect assist)",
		Long: `Diff lists, oldest first, every field change of a recipe and every changelog
entry naming it in rev-a..rev-b (first-parent history of rev-b, rev-a
excluded), with PRs, then the net difference: the short list to read before
re-running a GPU benchmark to find a regression. When rev-a is not a
first-parent ancestor of rev-b their merge-base is used; a rev-a that comes
after rev-b is an error (exit 2), not an empty range.

Changes include what the recipe's points launch (launch.* fields: server
options, variables, image, from a dry run at each commit that changed a
file on the launch path), each with the points it reaches. --bisect lists
instead the commits that changed what the points run (not the benchmark
client's options, not the changelog alone) in the order to rerun them: the
middle one first, each rerun halving the commits still suspect.`,
		Example: `  $ perflog provenance diff dsr1-fp4-mi355x-sglang v1.0 main
  $ perflog provenance diff dsr1-fp4-mi355x-sglang GOOD BAD --bisect`,
		Args: argsFor("a config-key", "revision A", "revision B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.A, opts.B = args[0], args[1], args[2]
			if err := checkKeyArg(opts.Key); err != nil {
				return err
			}
			if !contains([]string{"", "text", "json"}, opts.Format) {
				return flagErrorf("invalid --format %q (want text or json)", opts.Format)
			}
			if opts.Point != "" && !opts.Bisect {
				return flagErrorf("--point needs --bisect")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return provDiffRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	configFlag(fl, &opts.Config)
	fl.StringArrayVar(&opts.IgnoreRevs, "ignore-rev", nil, "look through this mechanical `commit` (repeatable)")
	fl.StringVar(&opts.Format, "format", "", "output `format`: text or json")
	fl.BoolVar(&opts.NoIndex, "no-index", false, "read history from git even when an index exists (see perflog index)")
	fl.BoolVar(&opts.Offline, "offline", false, "never ask GitHub for the PR of a commit whose subject names none")
	noLaunchFlag(fl, &opts.NoLaunch)
	fl.BoolVar(&opts.Bisect, "bisect", false, "list the commits to rerun, in the order to rerun them (rev-a good, rev-b bad)")
	fl.StringVar(&opts.Point, "point", "", "with --bisect: only changes that reach this `configuration` (e.g. \"tp8 8k1k\")")
	return cmd
}

func provDiffRun(ctx context.Context, opts *ProvDiffOptions) error {
	hf := &HistoryFlags{Repo: opts.Repo, Rev: opts.B, RevName: "rev-b", Config: opts.Config, IgnoreRevs: opts.IgnoreRevs,
		NoIndex: opts.NoIndex, Offline: opts.Offline}
	hs, err := loadHistory(ctx, opts.Factory, hf, provenance.PartsAll, opts.Key)
	if err != nil {
		return err
	}
	defer hs.close()
	a, err := hs.ws.repo.Resolve(opts.A)
	if err != nil {
		return fmt.Errorf("rev-a: %w", err)
	}
	// rev-a after rev-b would be an empty range: say so instead
	after := &flagError{err: fmt.Errorf("rev-a %s is after rev-b %s", opts.A, opts.B),
		hint: fmt.Sprintf("Give the older revision first: perflog provenance diff %s %s %s", opts.Key, opts.B, opts.A)}
	note := ""
	if sa, ok := hs.h.SeqOf(a); ok {
		if sb, _ := hs.h.SeqOf(hs.rev); sa > sb {
			return after
		}
	} else {
		mb, err := hs.ws.repo.MergeBase(a, hs.rev)
		if err != nil {
			return fmt.Errorf("%s has no common history with %s: %w", opts.A, opts.B, err)
		}
		if mb == hs.rev {
			return after
		}
		if _, ok := hs.h.SeqOf(mb); !ok {
			return fmt.Errorf("%s: %w of %s", opts.A, provenance.ErrNotOnChain, opts.B)
		}
		note = fmt.Sprintf("%s is not a first-parent ancestor of %s; using their merge-base %s", opts.A, opts.B, shortHash(mb))
		a = mb
	}
	var launches []provenance.LaunchVersion
	if !opts.NoLaunch {
		if launches, err = hs.launches(ctx, opts.Key); err != nil {
			return err
		}
	}
	if note != "" {
		fmt.Fprintln(opts.Factory.IO.ErrOut, "note: "+note)
	}
	if opts.Bisect {
		return writeBisect(opts, hs.h, a, hs.rev, launches)
	}
	rep, err := hs.h.KeyDiff(opts.Key, a, hs.rev, launches)
	if err != nil {
		return err
	}
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		return writeJSON(out, rep)
	}
	printf(out, "%s: %d commit%s in %s..%s\n", rep.Key, len(rep.Items), plural(len(rep.Items)), shortSHA(rep.From), shortSHA(rep.To))
	width, cut := termWidth(opts.Factory), false
	if len(rep.Items) > 0 {
		fmt.Fprintln(out)
		cut = writeLog(out, rep.Items, opts.Factory.IO.ColorEnabled(), width)
	}
	fmt.Fprintf(out, "\nnet change %s..%s:\n", shortSHA(rep.From), shortSHA(rep.To))
	if len(rep.Net) == 0 {
		fmt.Fprintln(out, "    (none)")
	}
	for _, c := range provenance.GroupChanges(rep.Net) {
		cut = writeChange(out, c, width) || cut
	}
	noteCut(opts.Factory, cut)
	return nil
}

// writeBisect writes the commits of good..bad to rerun, in order.
func writeBisect(opts *ProvDiffOptions, h *provenance.History, good, bad plumbing.Hash, launches []provenance.LaunchVersion) error {
	rep, err := h.Bisect(opts.Key, good, bad, launches, opts.Point)
	if err != nil {
		return err
	}
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		return writeJSON(out, rep)
	}
	n := len(rep.Candidates)
	if n == 0 {
		printf(out, "%s: no commit in %s..%s changed what its points run\n", rep.Key, shortSHA(rep.Good), shortSHA(rep.Bad))
		return nil
	}
	printf(out, "%s: %d commit%s in %s..%s changed what its points run; rerun in this order (each halves the suspects):\n",
		rep.Key, n, plural(n), shortSHA(rep.Good), shortSHA(rep.Bad))
	byOrder := make([]provenance.Candidate, n)
	for _, c := range rep.Candidates {
		byOrder[c.Order-1] = c
	}
	color := opts.Factory.IO.ColorEnabled()
	for _, c := range byOrder {
		fmt.Fprintf(out, "\n%d. ", c.Order)
		writeLog(out, []provenance.LogItem{c.LogItem}, color, termWidth(opts.Factory))
	}
	return nil
}

// writeChange writes a field change on a line, with the points it reaches
// when its path does not name them (a search-space row's field, a launch
// setting changed alike at several points: provenance.GroupChanges); on a
// terminal (width > 0) a value too long for the line is shortened with an
// ellipsis, and cut says so (a pipe and --format json get every byte).
func writeChange(w io.Writer, c provenance.FieldChange, width int) (cut bool) {
	p := orRecipe(c.Path)
	where := ""
	if c.Reach != "" && c.Reach != "all points" && !(strings.HasPrefix(c.Path, "launch.") && strings.HasSuffix(c.Path, "]")) {
		where = "  (" + c.Reach + ")"
	}
	if c.NotKnownFrom != "" {
		where += "  (made at one of the commits " + shortSHA(c.NotKnownFrom) + "..here: the launch was not known)"
	}
	room := width - utf8.RuneCountInString("    "+p+": "+where)
	fit := func(v string, n int) string {
		if width <= 0 || utf8.RuneCountInString(v) <= max(n, minValueRoom) {
			return v
		}
		cut = true
		return ellipsize(v, max(n, minValueRoom))
	}
	switch c.Kind {
	case "added":
		printf(w, "    %s: + %s%s\n", p, fit(c.New, room-2), where)
	case "removed":
		printf(w, "    %s: - %s%s\n", p, fit(c.Old, room-2), where)
	default:
		printf(w, "    %s: %s -> %s%s\n", p, fit(c.Old, (room-4)/2), fit(c.New, (room-4)/2), where)
	}
	if c.OldPath != "" {
		printf(w, "      (was %s)\n", c.OldPath)
	}
	return cut
}

// minValueRoom is the least of a value a terminal's log shows.
const minValueRoom = 16

// noteCut says on stderr that values were shortened to fit the terminal.
func noteCut(f *Factory, cut bool) {
	if cut {
		fmt.Fprintln(f.IO.ErrOut, "perflog: long values shortened to fit the terminal (...); --format json or a pipe shows them whole")
	}
}

func orRecipe(p string) string {
	if p == "" {
		return "(recipe)"
	}
	return p
}

// termWidth is the terminal's width when standard output is one, else 0
// (a pipe gets every byte).
func termWidth(f *Factory) int {
	if !f.IO.IsStdoutTTY() {
		return 0
	}
	if w := f.IO.TerminalWidth(); w > 0 {
		return w
	}
	return 80
}
