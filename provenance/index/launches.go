package index

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe"
)

// The launch walks of recipes (provenance.LaunchState) are stored as
// they are first asked for, one row per key (launchwire.go): a later question
// resumes the walk where it stopped, so a commit costs the dry runs it
// makes necessary once. A state that does not fit the history asked
// about (another chain, a rewritten one) is walked afresh.

// LaunchState returns the stored launch walk of key, nil when there is
// none or it cannot be read.
func (ix *Index) LaunchState(ctx context.Context, key string) *provenance.LaunchState {
	var data []byte
	if err := ix.db.QueryRowContext(ctx, `SELECT data FROM launch_states WHERE key = ?`, key).Scan(&data); err != nil {
		return nil
	}
	st, err := decodeLaunchState(data)
	if err != nil || st.Key != key {
		return nil
	}
	return st
}

// StoreLaunchState stores a launch walk (replacing the key's), and its
// rows of the query tables launch_changes (each version's changes) and
// launches_at_head (the last version's fields).
func (ix *Index) StoreLaunchState(ctx context.Context, st *provenance.LaunchState) error {
	data, err := encodeLaunchState(st)
	if err != nil {
		return err
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO launch_states(key, data) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET data = excluded.data`, st.Key, data); err != nil {
		return err
	}
	for _, q := range []string{`DELETE FROM launch_changes WHERE key = ?`, `DELETE FROM launches_at_head WHERE key = ?`} {
		if _, err := tx.ExecContext(ctx, q, st.Key); err != nil {
			return err
		}
	}
	ch := newInserter(ctx, tx, "launch_changes", "seq", "sha", "key", "point", "path", "old", "new", "not_known_from")
	var prev *provenance.LaunchVersion
	steps := provenance.LaunchSteps(st.Versions)
	for i := range st.Versions {
		v := &st.Versions[i]
		var seq any
		var n int64
		if err := tx.QueryRowContext(ctx, `SELECT seq FROM commits WHERE sha = ?`, v.Commit).Scan(&n); err == nil {
			seq = n
		}
		for _, c := range steps[i] {
			path, point := recipe.SplitField(c.Path)
			if err := ch.add(seq, v.Commit, st.Key, point, path, orNull(c.Old, c.Kind == "added"), orNull(c.New, c.Kind == "removed"), orNull(c.NotKnownFrom, c.NotKnownFrom == "")); err != nil {
				return err
			}
		}
		prev = v
	}
	if err := ch.flush(); err != nil {
		return err
	}
	if prev != nil {
		at := newInserter(ctx, tx, "launches_at_head", "key", "point", "path", "value", "through")
		for _, k := range slices.Sorted(maps.Keys(prev.Fields)) {
			path, point := recipe.SplitField(k)
			if err := at.add(st.Key, point, path, prev.Fields[k], st.Through); err != nil {
				return err
			}
		}
		if err := at.flush(); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// orNull is v, or NULL for the side of an addition or a removal that has
// no value.
func orNull(v string, null bool) any {
	if null {
		return nil
	}
	return v
}

// WalkLaunches walks and stores the launches of every recipe at rev
// (resuming each stored walk), telling progress of the recipes done.
func (ix *Index) WalkLaunches(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, o Options, progress func(done, total int)) (int, error) {
	h, _, err := ix.History(ctx, r, rev, provenance.PartRecipes, o)
	if err != nil {
		return 0, err
	}
	seq, ok := h.SeqOf(rev)
	if !ok {
		return 0, fmt.Errorf("%s is not in the index", rev)
	}
	keys := h.RecipeKeysAt(seq)
	sweep := recipe.NewSweepCache() // the recipes share the generator and workflow versions
	for i, k := range keys {
		if progress != nil {
			progress(i, len(keys))
		}
		// a memo of its own per recipe: points of two recipes never share
		// a launcher and an environment
		st, err := h.LaunchesFrom(ctx, k, rev, provenance.LaunchOptions{Repo: r, DryRun: o.DryRun, Sweep: sweep}, ix.LaunchState(ctx, k))
		if err != nil {
			if ctx.Err() != nil {
				return i, ctx.Err()
			}
			continue // a key the history cannot place: no launches
		}
		if err := ix.StoreLaunchState(ctx, st); err != nil {
			return i, err
		}
		h.Release(k) // the parses of its versions: memory holds one key's, not the history's
	}
	return len(keys), nil
}
