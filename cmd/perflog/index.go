package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
)

// IndexOptions are the parsed flags of `perflog index`.
type IndexOptions struct {
	Factory  *Factory
	Repo     string
	Rev      string
	Config   string
	Rebuild  bool
	Checks   bool
	Launches bool
	Format   string
}

func newIndexCmd(f *Factory, runF func(context.Context, *IndexOptions) error) *cobra.Command {
	opts := &IndexOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build or update the history index (warm answers in milliseconds)",
		Long: `Index builds, or brings up to date, perflog's index of the repository's
structured history: <git common dir>/perflog/index-v1.db, one SQLite file.

Once it exists, changelog audit, provenance blame/log/diff and query read the
history from it and update it incrementally (only commits not yet indexed are
read), so their answers come in milliseconds; --no-index bypasses it, and the
answers are the same either way. A history rewritten under the index (a
force-push, a rebase) is detected and its new suffix indexed; an index of
another perflog schema, of other settings, or damaged, is rebuilt. The query
tables describe the indexed head: index --rev (and query --rev) at an older
commit of the indexed history makes it the head, and the next run at a later
commit indexes the commits above it again.

The claims and findings tables (every entry's claims checked against the
commit that introduced it; the lint of the scripts at head) take half a
minute to fill over InferenceX's history, so an update leaves them to the
first query that names them, or to --checks; after that only new or changed
entries are checked again.

Deleting the file (or the perflog directory) is always safe: the next run of
perflog index builds it again.`,
		Example: `  $ perflog index
  $ perflog index --rebuild
  $ perflog index --checks`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !contains([]string{"", "text", "json"}, opts.Format) {
				return flagErrorf("invalid --format %q (want text or json)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return indexRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Rev, "rev", "HEAD", "index the first-parent history of this `revision`")
	configFlag(fl, &opts.Config)
	fl.BoolVar(&opts.Rebuild, "rebuild", false, "discard the index and build it from scratch")
	fl.BoolVar(&opts.Checks, "checks", false, "also fill the claims and findings tables (query fills them on first use)")
	fl.BoolVar(&opts.Launches, "launches", false, "also dry-run every recipe's launches through history (the launch_changes and launches_at_head tables; minutes on a large repository, then incremental)")
	fl.StringVar(&opts.Format, "format", "", "output `format`: text or json")
	return cmd
}

func indexRun(ctx context.Context, opts *IndexOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	src, err := index.OpenSource(ws.repo, sourceOptions(opts.Factory, ws, opts.Rev))
	if err != nil {
		return err
	}
	defer src.Close()
	warnShallow(opts.Factory, ws)
	st, err := src.Sync(ctx, opts.Rebuild)
	if err != nil {
		return err
	}
	ix := src.Index()
	var cs *index.CheckStats
	if opts.Checks {
		if cs, err = src.Fill(ctx, index.CheckOptions{Claims: true, Findings: true}); err != nil {
			return err
		}
	}
	launches := -1
	if opts.Launches {
		p := progress(opts.Factory, "dry-running launches")
		o := src.Options()
		o.DryRun = opts.Factory.dryRun()
		launches, err = ix.WalkLaunches(ctx, ws.repo, st.Head, o, func(done, total int) { p.update(provenance.Progress{Stage: "recipes", Done: done, Total: total}) })
		p.done()
		if err != nil {
			return err
		}
	}
	path := index.Path(ws.repo)
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		phases := []map[string]any{} // where the time of an update went
		for _, p := range st.Phases {
			phases = append(phases, map[string]any{"name": p.Name, "seconds": p.Duration.Seconds()})
		}
		doc := map[string]any{"path": path, "head": st.Head.String(), "commits": st.Commits,
			"new": st.New, "dropped": st.Dropped, "rebuilt": st.Rebuilt || opts.Rebuild,
			"seconds": st.Duration.Seconds(), "bytes": ix.Size(), "phases": phases, "checks": checksJSON(cs)}
		if launches >= 0 {
			doc["launches"] = map[string]any{"recipes": launches}
		}
		return writeJSON(out, doc)
	}
	what := "up to date"
	switch {
	case opts.Rebuild || st.Rebuilt:
		what = "rebuilt"
	case st.Dropped > 0 && st.New == 0:
		what = fmt.Sprintf("moved back: dropped the %d commit%s above it", st.Dropped, plural(st.Dropped))
	case st.Dropped > 0:
		what = fmt.Sprintf("history rewritten: dropped %d commit%s, indexed %d", st.Dropped, plural(st.Dropped), st.New)
	case st.New > 0:
		what = fmt.Sprintf("indexed %d new commit%s", st.New, plural(st.New))
	}
	fmt.Fprintf(out, "%s at %s: %s (%d commit%s, %s, %.0f ms)\n", opts.Factory.rel(path), shortHash(st.Head), what, st.Commits, plural(st.Commits),
		humanBytes(ix.Size()), st.Duration.Seconds()*1000)
	if launches >= 0 {
		fmt.Fprintf(out, "launches of %d recipe%s walked through history (launch_changes, launches_at_head)\n", launches, plural(launches))
	}
	if cs != nil {
		lint := "findings up to date"
		if cs.Linted {
			lint = "scripts at head linted"
		}
		fmt.Fprintf(out, "checks: claims of %d entr%s checked (%d claim%s), %s\n", cs.Entries, pluralY(cs.Entries), cs.Claims, plural(cs.Claims), lint)
	}
	return nil
}

// checksJSON is what index --checks --format json says of the checks
// (null without --checks).
func checksJSON(cs *index.CheckStats) any {
	if cs == nil {
		return nil
	}
	return map[string]any{"entries": cs.Entries, "claims": cs.Claims, "linted": cs.Linted}
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// QueryOptions are the parsed flags of `perflog query`.
type QueryOptions struct {
	Factory *Factory
	Repo    string
	Rev     string
	Config  string
	Format  string
	Schema  bool
	SQL     string
}

func newQueryCmd(f *Factory, runF func(context.Context, *QueryOptions) error) *cobra.Command {
	opts := &QueryOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "query <sql>",
		Short: "Run SQL over the structured history",
		Long: `Query runs one read-only SQL statement (SQLite's dialect) over the tables of
perflog's history index, building or updating the index first (see perflog
index). --schema lists the tables and their columns.

A statement that names the claims or findings table fills it first (the
first time over a whole history takes about half a minute on InferenceX's;
see perflog index --checks).

A table on a terminal, tab-separated values otherwise, or --format json (an
array of objects) or csv; a BLOB value prints in hex (\x00ff41). Bad SQL, or
a statement that would write, exits 2 with the engine's message. The
statement may only read: SELECT and WITH, and the pragmas that read the
schema (table_info, index_list, ..., also as pragma_* table functions);
writes, ATTACH, transactions and other pragmas are refused, and so is more
than one statement.`,
		Example: `  $ perflog query --schema
  $ perflog query "SELECT key, image FROM recipes_at_head WHERE image LIKE '%:latest' OR image LIKE '%nightly%'"
  $ perflog query "SELECT c.pr, c.date, f.key, f.old, f.new FROM field_changes f JOIN commits c USING (seq)
      WHERE f.path = 'image' AND f.key LIKE '%-mi355x-%' AND c.date >= '2026-07-01' ORDER BY f.seq"
  $ perflog query "SELECT e.position, e.introduced_pr, c.text, c.reason FROM claims c JOIN entries e ON e.id = c.entry
      WHERE c.verdict = 'contradicted'"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Schema {
				return argsFor()(cmd, args)
			}
			return argsFor("an SQL statement")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !contains([]string{"", "table", "tsv", "json", "csv"}, opts.Format) {
				return flagErrorf("invalid --format %q (want table, tsv, json or csv)", opts.Format)
			}
			if len(args) == 1 {
				if strings.TrimSpace(args[0]) == "" {
					return &flagError{err: errors.New("query: no SQL statement"), hint: "Run 'perflog query --schema' for the tables and their columns."}
				}
				opts.SQL = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return queryRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Rev, "rev", "HEAD", "index (and query) the first-parent history of this `revision`")
	configFlag(fl, &opts.Config)
	fl.StringVar(&opts.Format, "format", "", "output `format`: table, tsv, json or csv (default: table on a terminal, else tsv)")
	fl.BoolVar(&opts.Schema, "schema", false, "list the tables and their columns")
	return cmd
}

func queryRun(ctx context.Context, opts *QueryOptions) error {
	if opts.Schema {
		return writeSchema(opts.Factory, opts.Format)
	}
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	src, err := index.OpenSource(ws.repo, sourceOptions(opts.Factory, ws, opts.Rev))
	if err != nil {
		return err
	}
	defer src.Close()
	warnShallow(opts.Factory, ws)
	rw := newResultWriter(opts.Factory, opts.Format)
	err = src.Query(ctx, opts.SQL, func() bool { return rw.started }, rw.header, rw.row)
	if err != nil {
		if index.IsQueryError(err) {
			// the statement, not the command line, is wrong
			return &flagError{err: err, hint: "Run 'perflog query --schema' for the tables and their columns."}
		}
		return err
	}
	return rw.close()
}

// maxTableRows bounds the rows a query's table on a terminal holds (a
// table is laid out once all its rows are in); TSV, CSV and JSON are
// written a row at a time, whatever their length.
const maxTableRows = 100_000

// resultWriter writes a query's rows as they come.
type resultWriter struct {
	f       *Factory
	format  string
	started bool // a row (or the header of a streamed format) was written
	cols    []string
	names   []string
	bw      *bufio.Writer
	cw      *csv.Writer
	json    *jsonList
	rows    [][]string // a table's, until it is laid out
}

func newResultWriter(f *Factory, format string) *resultWriter {
	return &resultWriter{f: f, format: format, bw: bufio.NewWriterSize(f.IO.Out, 64<<10)}
}

func (w *resultWriter) header(cols []string) error {
	w.cols = cols
	switch {
	case w.format == "json":
		w.names = uniqueNames(cols)
		w.json = newJSONList(w.bw, "")
	case w.format == "csv":
		w.cw = csv.NewWriter(w.bw)
		w.started = true
		return w.cw.Write(cols)
	case !boxed(w.f, w.format):
		w.started = true
		return writeTSVRow(w.bw, slices.Clone(cols))
	}
	return nil
}

func (w *resultWriter) row(vals []any) error {
	if w.json != nil {
		w.started = true
		return w.json.add(jsonRow{w.names, vals})
	}
	r := make([]string, len(vals))
	for i, v := range vals {
		r[i] = cell(v)
	}
	switch {
	case w.cw != nil:
		return w.cw.Write(r)
	case !boxed(w.f, w.format):
		return writeTSVRow(w.bw, r)
	}
	if len(w.rows) == maxTableRows {
		return fmt.Errorf("the result has over %d rows: use --format tsv, csv or json (written a row at a time), or LIMIT", maxTableRows)
	}
	w.rows = append(w.rows, r)
	return nil
}

func (w *resultWriter) close() error {
	switch {
	case w.json != nil:
		if err := w.json.close(); err != nil {
			return err
		}
		w.bw.WriteByte('\n')
	case w.cw != nil:
		w.cw.Flush()
		if err := w.cw.Error(); err != nil {
			return err
		}
	case boxed(w.f, w.format):
		return printTable(w.f, w.format, w.cols, w.rows)
	}
	return w.bw.Flush()
}

func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case string:
		return x
	case index.Blob:
		return x.String()
	}
	return fmt.Sprint(v)
}

// jsonRow is a result row as a JSON object whose members keep the
// statement's column order (a map would sort them).
type jsonRow struct {
	names []string
	vals  []any
}

func (r jsonRow) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, n := range r.names {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(n); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := enc.Encode(r.vals[i]); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// uniqueNames names a result's columns for JSON objects: a name the
// statement repeats (SELECT a.id, b.id) gets a suffix, id_2, rather than
// one value hiding the other.
func uniqueNames(cols []string) []string {
	used := make(map[string]bool, len(cols))
	for _, c := range cols {
		used[c] = true
	}
	out := make([]string, len(cols))
	seen := make(map[string]bool, len(cols))
	for i, c := range cols {
		n := c
		for k := 2; seen[n]; k++ {
			if n = fmt.Sprintf("%s_%d", c, k); used[n] {
				n = c // taken by a column of its own: try the next suffix
			}
		}
		seen[n] = true
		out[i] = n
	}
	return out
}

func writeSchema(f *Factory, format string) error {
	if format == "json" {
		return writeJSON(f.IO.Out, map[string]any{"tables": index.Schema})
	}
	var rows [][]string
	for _, t := range index.Schema {
		for _, c := range t.Columns {
			rows = append(rows, []string{t.Name, c.Name, c.Type, c.Doc})
		}
	}
	if format == "tsv" || format == "csv" || (format == "" && !f.IO.IsStdoutTTY()) {
		return printTable(f, format, []string{"TABLE", "COLUMN", "TYPE", "DOC"}, rows)
	}
	for _, t := range index.Schema {
		fmt.Fprintf(f.IO.Out, "%s: %s\n", t.Name, t.Doc)
		header, rows := []string{"COLUMN", "TYPE", "DOC"}, make([][]string, 0, len(t.Columns))
		for _, c := range t.Columns {
			rows = append(rows, []string{c.Name, c.Type, c.Doc})
		}
		header, rows, _ = fitRows(f, header, rows)
		tb := tablewriter.NewTable(f.IO.Out, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
		tb.Header(header)
		if err := tb.Bulk(rows); err != nil {
			return err
		}
		if err := tb.Render(); err != nil {
			return err
		}
		fmt.Fprintln(f.IO.Out)
	}
	return nil
}
