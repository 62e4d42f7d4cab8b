package index

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Table documents one table or view of the query schema. The names are a
// public contract: add, never rename.
type Table struct {
	Name    string   `json:"name"`
	Doc     string   `json:"doc"`
	Columns []Column `json:"columns"`
}

// Column documents one column.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Doc  string `json:"doc"`
}

// Schema lists the tables and views `perflog query` offers. (The index
// also holds meta, blocks, answers, snapshot, blame_cache, launch_states
// and claims_checked: perflog's own storage, not a contract.)
var Schema = []Table{
	{"commits", "every first-parent commit of the indexed history, oldest first", []Column{
		{"seq", "INTEGER", "position on the first-parent chain (0 = root)"},
		{"sha", "TEXT", "commit id"},
		{"author", "TEXT", "author name"}, {"email", "TEXT", "author email"},
		{"date", "TEXT", "author date, RFC 3339"},
		{"subject", "TEXT", "first line of the message"},
		{"pr", "INTEGER", "pull request number (NULL when the subject names none)"},
		{"pr_source", "TEXT", "where pr came from: subject"},
	}},
	{"entries", "every changelog entry that ever existed (one row per entry's life; see changelog audit)", []Column{
		{"id", "INTEGER", "entry id (stable while history is not rewritten)"},
		{"alive", "INTEGER", "1 when the entry is in the changelog at the indexed head"},
		{"position", "INTEGER", "1-based index in the file at head (NULL when gone)"},
		{"line", "INTEGER", "first line in the file at head"},
		{"config_keys", "TEXT", "JSON list of its config-keys (last version)"},
		{"description", "TEXT", "JSON list of its description bullets (last version)"},
		{"pr_link", "TEXT", "its pr-link (last version)"},
		{"pr_link_pr", "INTEGER", "the PR number the link names (alive entries)"},
		{"introduced_sha", "TEXT", "commit that introduced its current content (alive entries)"},
		{"introduced_pr", "INTEGER", "that commit's PR"},
		{"introduced_date", "TEXT", "that commit's date"},
		{"verdict", "TEXT", "ok, corrected, relanded, edited, backfilled, placeholder, no-pr, mismatch (alive entries)"},
		{"reason", "TEXT", "why, for verdicts other than ok"},
		{"fingerprint", "TEXT", "content identity of its last version: config-keys, description and flags, not pr-link or formatting (hex)"},
	}},
	{"entry_keys", "config-keys of each entry (last version), one row each; globs as written", []Column{
		{"entry", "INTEGER", "entries.id"}, {"config_key", "TEXT", "a config-key or glob"},
	}},
	{"entry_events", "the lifecycle of every entry", []Column{
		{"entry", "INTEGER", "entries.id"}, {"seq", "INTEGER", "commits.seq"}, {"sha", "TEXT", "commit id"},
		{"kind", "TEXT", "introduced, pr-link-changed, edited, removed, reverted, re-added"},
		{"pr_link", "TEXT", "the pr-link after the event (before, for a removal)"},
		{"from_link", "TEXT", "the pr-link before a pr-link change"},
		{"note", "TEXT", "set when the changelog did not load at that commit"},
		{"fingerprint", "TEXT", "content identity of the entry's version after the event (before it, for a removal): equal fingerprints, equal content"},
	}},
	{"recipe_events", "every commit that created, changed, renamed or deleted a recipe", []Column{
		{"key", "TEXT", "recipe key"}, {"seq", "INTEGER", "commits.seq"}, {"sha", "TEXT", "commit id"},
		{"kind", "TEXT", "created, changed, renamed, deleted"},
		{"from_key", "TEXT", "previous key (renamed, on the new key)"}, {"to_key", "TEXT", "new key (renamed, on the old key)"},
		{"file", "TEXT", "master config holding the key"},
		{"missing_entry", "INTEGER", "1 when no changelog entry of that commit names the key"},
	}},
	{"field_changes", "field-level changes of recipes (an added or removed subtree is one row)", []Column{
		{"key", "TEXT", "recipe key"}, {"seq", "INTEGER", "commits.seq"}, {"sha", "TEXT", "commit id"},
		{"kind", "TEXT", "added, removed, changed"},
		{"path", "TEXT", "field path, e.g. image or scenarios.fixed-seq-len[0].search-space[1].conc-list (\"\" = the whole recipe)"},
		{"old_path", "TEXT", "path before, when a list item or subtree moved"},
		{"old", "TEXT", "value before (YAML flow style)"}, {"new", "TEXT", "value after"},
	}},
	{"recipes_at_head", "every recipe at the indexed head", []Column{
		{"key", "TEXT", "recipe key"}, {"file", "TEXT", "master config"}, {"line", "INTEGER", "line of the key"},
		{"image", "TEXT", ""}, {"model", "TEXT", ""}, {"model_prefix", "TEXT", ""}, {"runner", "TEXT", ""},
		{"precision", "TEXT", ""}, {"framework", "TEXT", ""}, {"multinode", "INTEGER", ""},
	}},
	{"fields_at_head", "every leaf field of every recipe at the indexed head", []Column{
		{"key", "TEXT", "recipe key"}, {"path", "TEXT", "field path"}, {"value", "TEXT", "value (YAML flow style)"},
	}},
	{"notes", "versions that did not load (the previous one stands for them)", []Column{
		{"seq", "INTEGER", "commits.seq"}, {"sha", "TEXT", "commit id"}, {"file", "TEXT", "file"}, {"message", "TEXT", "why"},
	}},
	{"claims", "the description claims of every entry at the indexed head, each checked against the commit that introduced the entry (changelog audit --claims all); filled on first use by query, or by index --checks", []Column{
		{"entry", "INTEGER", "entries.id"},
		{"bullet", "INTEGER", "0-based index of the bullet in the description"},
		{"kind", "TEXT", "image, env, flag, conc, parallel, seq-len, spec-decoding, kv-cache, append-only"},
		{"text", "TEXT", "the part of the bullet the claim was read from"},
		{"name", "TEXT", "the variable, flag, image or feature named"},
		{"negated", "INTEGER", "1 when the claim says it is removed, dropped or disabled"},
		{"value", "TEXT", "the value claimed"}, {"from_value", "TEXT", "the old value of a \"from A to B\" claim"},
		{"verdict", "TEXT", "confirmed, contradicted, unverified"},
		{"reason", "TEXT", "why"},
		{"sha", "TEXT", "the commit checked against (the one that introduced the entry)"},
		{"evidence", "TEXT", "JSON list of {file, line, text, rev}: rev head is that commit, base its first parent"},
		{"data", "TEXT", "the claim as changelog audit --claims --format json prints it, without entry and line (see entries.position and entries.line)"},
	}},
	{"findings", "the recipe-script lint of the indexed head (lint --rev), severities as configured; filled on first use by query, or by index --checks", []Column{
		{"rule", "TEXT", "rule id, e.g. recipe/array-clobber"}, {"severity", "TEXT", "error, warning, info"},
		{"file", "TEXT", "script"}, {"line", "INTEGER", "line in it"},
		{"config_key", "TEXT", "the recipe whose point the finding is about"},
		{"message", "TEXT", ""}, {"source", "TEXT", "the offending line"},
	}},
	{"launch_changes", "what recipes' points launch, changed commit by commit (launch.* fields of provenance blame); filled for the recipes provenance was asked about, or for all by index --launches", []Column{
		{"seq", "INTEGER", "commits.seq of the commit that made the change"}, {"sha", "TEXT", "that commit"},
		{"key", "TEXT", "the recipe's key"},
		{"point", "TEXT", "the points the field is about: a configuration (\"tp8 dpa 8k1k\", \"... conc 64\"), \"\" for all of them"},
		{"path", "TEXT", "the field: launch.flags.--NAME, launch.env.NAME, launch.image, launch.status, ..."},
		{"old", "TEXT", "the value before (NULL: not launched so)"}, {"new", "TEXT", "the value after (NULL: no longer)"},
		{"not_known_from", "TEXT", "NULL, or the first commit of a stretch where the points' launch was not known: the change was made at one of the commits from it to sha"},
	}},
	{"launches_at_head", "what each walked recipe's points launch at the end of its walk (through)", []Column{
		{"key", "TEXT", ""}, {"point", "TEXT", "as in launch_changes"}, {"path", "TEXT", ""}, {"value", "TEXT", ""},
		{"through", "TEXT", "the commit the walk reached (the indexed head once index --launches ran)"},
	}},
	{"entry_prs", "view: alive entries with the commit that introduced them", []Column{
		{"entry", "INTEGER", "entries.id"}, {"position", "INTEGER", ""}, {"verdict", "TEXT", ""},
		{"pr_link_pr", "INTEGER", ""}, {"introduced_pr", "INTEGER", ""}, {"sha", "TEXT", ""}, {"date", "TEXT", ""}, {"subject", "TEXT", ""},
	}},
	{"latest_entries", "view: each recipe at head with the last entry of the changelog that names it (a config-key or a glob)", []Column{
		{"key", "TEXT", "recipe key"}, {"entry", "INTEGER", "entries.id"}, {"position", "INTEGER", "its position in the file"},
		{"pr", "INTEGER", "the PR that introduced it"},
	}},
}

// Result is the outcome of a query.
type Result struct {
	Columns []string
	Rows    [][]any // nil, int64, float64, string, Blob
}

// Blob is a BLOB value of a query's result (x'..' literals, zeroblob,
// CAST(.. AS BLOB)). Its text, in every output format, is PostgreSQL's
// hex form: \x and two hex digits a byte, so that no byte is lost or
// printed raw to a terminal.
type Blob []byte

func (b Blob) String() string { return `\x` + hex.EncodeToString(b) }

// MarshalJSON writes the hex form as a JSON string.
func (b Blob) MarshalJSON() ([]byte, error) { return json.Marshal(b.String()) }

// Query runs one read-only SQL statement. The connection is put in
// query_only mode, and an authorizer lets the statement do nothing but
// read: any write, ATTACH (which creates files), transaction control or
// pragma other than a read-only one fails with the engine's message
// ("not authorized"). query_only alone can be turned off by the query
// itself, and lets ATTACH create a file. More than one statement is an
// error: the driver would run them all and show the last.
func (ix *Index) Query(ctx context.Context, q string) (*Result, error) {
	var res *Result
	err := ix.QueryEach(ctx, q, func(cols []string) error {
		res = &Result{Columns: cols, Rows: [][]any{}}
		return nil
	}, func(row []any) error {
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// QueryEach runs a read-only statement as Query does, handing over the
// columns once and then each row as it is read (a row is the callee's to
// keep), so that a long result is never held whole. It stops at the first
// error of a callback, or when ctx is done.
func (ix *Index) QueryEach(ctx context.Context, q string, columns func([]string) error, row func([]any) error) error {
	if err := oneStatement(q); err != nil {
		return &QueryError{err}
	}
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return ix.corrupt(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA query_only = ON`); err != nil {
		return ix.corrupt(err)
	}
	defer conn.ExecContext(context.Background(), `PRAGMA query_only = OFF`)
	if err := authorize(conn, readOnly); err != nil {
		return err
	}
	// the connection goes back to the pool, which writes too
	defer authorize(conn, nil)
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return ix.queryErr(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return ix.queryErr(err)
	}
	if err := columns(cols); err != nil {
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return ix.queryErr(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = Blob(b) // Scan copied it
			}
		}
		if err := row(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ix.queryErr(err)
	}
	return nil
}

// queryErr is a statement's error: the index's damage, or the statement's.
func (ix *Index) queryErr(err error) error {
	if IsCorrupt(err) {
		return ix.corrupt(err)
	}
	return &QueryError{err}
}

// ErrCorrupt marks an index SQLite finds damaged; `perflog index
// --rebuild` makes a new one (the index is a cache of the history).
var ErrCorrupt = errors.New("the index is damaged")

// corrupt wraps a damaged index's error with ErrCorrupt and its path.
func (ix *Index) corrupt(err error) error {
	if !IsCorrupt(err) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrCorrupt, ix.path, err)
}

// IsCorrupt says whether err is SQLite's report of a damaged or foreign
// file.
func IsCorrupt(err error) bool {
	if errors.Is(err, ErrCorrupt) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// QueryError is an error of the SQL engine (bad SQL, a write attempt).
type QueryError struct{ Err error }

func (e *QueryError) Error() string {
	msg := e.Err.Error()
	switch {
	case strings.Contains(msg, "attempt to write a readonly database"):
		msg += " (queries are read-only)"
	case strings.Contains(msg, "not authorized"):
		msg += " (queries are read-only: SELECT, WITH, and the pragmas that read the schema)"
	}
	return "query: " + msg
}

func (e *QueryError) Unwrap() error { return e.Err }

// IsQueryError reports whether err is the engine rejecting a query.
func IsQueryError(err error) bool {
	var qe *QueryError
	return errors.As(err, &qe)
}

// Size returns the bytes the index occupies on disk.
func (ix *Index) Size() int64 {
	var n int64
	for _, p := range []string{ix.path, ix.path + "-wal"} {
		if fi, err := statFile(p); err == nil {
			n += fi
		}
	}
	return n
}

func statFile(p string) (int64, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// authorize installs fn as the connection's authorizer (nil removes it).
func authorize(conn *sql.Conn, fn sqlite.AuthorizerFn) error {
	return conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("the SQLite driver cannot restrict a query (%T)", dc)
		}
		return r.RegisterAuthorizer(fn)
	})
}

// readPragmas are the pragmas a query may use: they only read (the
// schema, mostly; as statements or as pragma_* table functions).
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "function_list": true, "pragma_list": true,
	"collation_list": true, "database_list": true, "compile_options": true, "module_list": true,
}

// readOnly is the authorizer of a query: reads only.
func readOnly(action sqlite.AuthorizerActionCode, arg1, _, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead, sqlite.AuthFunction, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		if readPragmas[strings.ToLower(arg1)] {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// errStatements is a query of more than one statement.
var errStatements = errors.New("one SQL statement at a time")

// oneStatement reports whether q holds more than one statement: a
// semicolon outside string literals, quoted names and comments, followed
// by more than blanks and comments.
func oneStatement(q string) error {
	ended := false // a statement ended at a semicolon
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '-' && strings.HasPrefix(q[i:], "--"):
			if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(q)
			}
			continue
		case c == '/' && strings.HasPrefix(q[i:], "/*"):
			if j := strings.Index(q[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(q)
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			continue
		}
		if ended {
			return errStatements
		}
		switch c {
		case ';':
			ended = true
		case '\'', '"', '`', '[':
			end := c
			if c == '[' {
				end = ']'
			}
			// a doubled quote inside is the quote itself: skipping to the
			// next one and going on scans it as a new quoted part
			if j := strings.IndexByte(q[i+1:], end); j >= 0 {
				i += j + 1
			} else {
				i = len(q)
			}
		}
	}
	return nil
}
