package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Sync creates the index where there is none, or opens it for writing,
// and brings it to Rev, which its tables then describe, even when Rev is
// older than the head indexed (rebuild: from scratch). The source then
// reads it.
func (s *Source) Sync(ctx context.Context, rebuild bool) (*Stats, error) {
	p := s.o.IndexPath
	if p == "" {
		p = Path(s.Repo)
	}
	if p == "" {
		return nil, fmt.Errorf("%w: the repository has no git directory", ErrNoIndex)
	}
	if s.ix == nil {
		ix, err := Open(p, true)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		s.ix = ix
	}
	o := s.Options()
	o.Rebuild, o.Exact = rebuild, true
	if !rebuild && s.ix.Current(ctx, s.Rev, o) {
		return &Stats{Head: s.Rev, Commits: s.ix.Commits(ctx)}, nil
	}
	update, done := s.progress("indexing history")
	o.Progress = update
	_, st, err := s.ix.Sync(ctx, s.Repo, s.Rev, o)
	done()
	return st, err
}

// Fill fills the claims and findings tables co asks for (a progress
// report under "checking claims").
func (s *Source) Fill(ctx context.Context, co CheckOptions) (*CheckStats, error) {
	update, done := s.progress("checking claims")
	co.Settings, co.Progress, co.DryRun = s.o.Settings, update, s.o.DryRun
	st, err := s.ix.Check(ctx, s.Repo, co)
	done()
	return st, err
}

// Query runs one read-only SQL statement over the tables of the index,
// which is created or brought to Rev first; the claims and findings
// tables are filled first when the statement names them. A damaged index
// (a cache of the history) is rebuilt and the statement asked again, as
// long as no row was given yet (started says whether one was). When the
// statement reads the launch tables and they hold only some recipes,
// Warn says how many and how to fill them.
func (s *Source) Query(ctx context.Context, sql string, started func() bool, columns func([]string) error, row func([]any) error) error {
	co := CheckOptions{Claims: namesTable(sql, "claims"), Findings: namesTable(sql, "findings")}
	ask := func(rebuild bool) error {
		if _, err := s.Sync(ctx, rebuild); err != nil {
			return err
		}
		if co.Claims || co.Findings {
			if _, err := s.Fill(ctx, co); err != nil {
				return err
			}
		}
		if namesTable(sql, "launch_changes") || namesTable(sql, "launches_at_head") {
			s.launchCoverage(ctx)
		}
		return s.ix.QueryEach(ctx, sql, columns, row)
	}
	err := ask(false)
	if errors.Is(err, ErrCorrupt) && !started() {
		s.warn(fmt.Sprintf("%v; rebuilding it", err))
		err = ask(true)
	}
	return err
}

// launchCoverage warns when the launch tables hold the walks of only
// some of the recipes at the indexed head: they are filled as history
// commands walk a recipe, or for all by `perflog index --launches`. (A
// recipe walked is counted whether or not it launched anything: a
// multi-node recipe described from no file has no rows.)
func (s *Source) launchCoverage(ctx context.Context) {
	var walked, recipes int64
	err := s.ix.db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM launch_states WHERE key IN (SELECT key FROM recipes_at_head)),
		(SELECT COUNT(*) FROM recipes_at_head)`).Scan(&walked, &recipes)
	if err != nil || walked >= recipes {
		return
	}
	s.warn(fmt.Sprintf("the launch tables hold %d of the %d recipes at %s: blame and log fill them a recipe at a time; `perflog index --launches` fills them for all",
		walked, recipes, s.Rev.String()[:10]))
}

// namesTable reports whether a statement mentions a table (as a word; a
// false positive only fills the table early).
func namesTable(sql, table string) bool {
	// ASCII case folding keeps the offsets of sql (strings.ToLower would
	// not: some letters change their length)
	low := []byte(sql)
	for i, c := range low {
		if 'A' <= c && c <= 'Z' {
			low[i] = c + 'a' - 'A'
		}
	}
	for i := 0; ; {
		j := bytes.Index(low[i:], []byte(table))
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(table)
		if (at == 0 || !isWordByte(low[at-1])) && (end == len(low) || !isWordByte(low[end])) {
			return true
		}
		i = end
	}
}

// isWordByte reports whether c may continue an SQL identifier (SQLite
// takes any non-ASCII character as a letter).
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
