package index

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
)

// ErrNotCached means the index holds no stored answer for the question
// (another revision, other ignore-revs): compute it from the history.
var ErrNotCached = errors.New("not cached")

// The audit and the blame of every recipe at the indexed head are stored
// as the commands print them (computed by provenance.History.Audit and
// Blame when the index is updated, with the settings' ignore-revs): the
// warm answer to the most common questions is one query.

// current checks that the index is at rev with these settings.
func (ix *Index) current(ctx context.Context, rev plumbing.Hash, o Options) error {
	// an index that does not open or read (damaged, not a database) is
	// not trusted: the caller reads git, and its sync rebuilds the index
	notCached := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ErrNotCached
	}
	conn, err := ix.db.Conn(ctx)
	if err != nil {
		return notCached()
	}
	defer conn.Close()
	if ok, err := ix.valid(ctx, conn, o.fingerprint()); err != nil || !ok {
		return notCached()
	}
	head, err := getMeta(ctx, conn, "head")
	if err != nil {
		return notCached()
	}
	ig, err := getMeta(ctx, conn, "ignore")
	if err != nil {
		return notCached()
	}
	if head != rev.String() || ig != ignoreKey(o.IgnoreRevs) {
		return ErrNotCached
	}
	return nil
}

// Current reports whether the index is at rev with these settings (then
// Query needs no Sync).
func (ix *Index) Current(ctx context.Context, rev plumbing.Hash, o Options) bool {
	return ix.current(ctx, rev, o) == nil
}

// Commits returns the number of commits indexed (0 when unknown).
func (ix *Index) Commits(ctx context.Context) int {
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM commits`).Scan(&n); err != nil {
		return 0
	}
	return n
}

// Empty reports whether the index holds no commit (as a new index does,
// or one that cannot be read). Unlike Commits, it reads one row, not the
// whole table.
func (ix *Index) Empty(ctx context.Context) bool {
	var n int
	err := ix.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM commits)`).Scan(&n)
	return err != nil || n == 0
}

// CachedAudit returns the stored audit when the index is at rev.
func (ix *Index) CachedAudit(ctx context.Context, rev plumbing.Hash, o Options) (*provenance.AuditReport, error) {
	if err := ix.current(ctx, rev, o); err != nil {
		return nil, err
	}
	rep, err := readAudit(ctx, ix.db)
	if err != nil || rep == nil {
		return nil, ErrNotCached
	}
	return rep, nil
}

// CachedBlame returns the stored blame of key when the index is at rev;
// an unknown key gives *provenance.UnknownKeyError, as Blame does.
func (ix *Index) CachedBlame(ctx context.Context, rev plumbing.Hash, key string, o Options) (*provenance.BlameReport, error) {
	if err := ix.current(ctx, rev, o); err != nil {
		return nil, err
	}
	var data []byte
	err := ix.db.QueryRowContext(ctx, `SELECT data FROM blame_cache WHERE key = ?`, key).Scan(&data)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotCached // unreadable: the caller reads git
	}
	if err == nil {
		rep, err := decodeBlame(data)
		if err != nil {
			return nil, ErrNotCached
		}
		if rep.Fields == nil {
			rep.Fields = []provenance.BlameField{}
		}
		if rep.Renames == nil {
			rep.Renames = []provenance.Rename{}
		}
		// stored when the key last changed: the fields still hold at rev,
		// where the key now sits
		rep.Rev = rev.String()
		var line int
		if err := ix.db.QueryRowContext(ctx, `SELECT file, line FROM recipes_at_head WHERE key = ?`, key).Scan(&rep.File, &line); err != nil {
			return nil, ErrNotCached
		}
		for i := range rep.Fields {
			rep.Fields[i].Line += line
		}
		return rep, nil
	}
	keys, err := queryList[string](ctx, ix.db, `SELECT key FROM recipes_at_head`)
	if err != nil {
		return nil, ErrNotCached
	}
	if len(keys) == 0 || slices.Contains(keys, key) {
		return nil, ErrNotCached // a recipe at head without its stored blame: read git
	}
	// a key that existed once: the history says what ended it
	var n int
	if err := ix.db.QueryRowContext(ctx, `SELECT count(*) FROM recipe_events WHERE key = ?`, key).Scan(&n); err != nil || n > 0 {
		return nil, ErrNotCached
	}
	return nil, &provenance.UnknownKeyError{Key: key, Rev: rev.String()[:10], Closest: config.Closest(key, keys, 3)}
}
