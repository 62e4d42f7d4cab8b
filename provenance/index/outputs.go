package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/gob"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
)

// writeOutputs refreshes the query tables from a history whose seqs above
// fork are new (fork < 0: everything is new). The changelog tables are
// rewritten whole (a few thousand rows: verdicts depend on the whole
// history); recipe events and field changes above fork are appended for
// the keys that changed there.
func writeOutputs(ctx context.Context, tx *sql.Tx, h *provenance.History, fork int, o Options) error {
	head := len(h.Chain) - 1
	sha := func(seq int) string { return h.Chain[seq].String() }

	// notes
	if _, err := tx.ExecContext(ctx, `DELETE FROM notes`); err != nil {
		return err
	}
	insN := newInserter(ctx, tx, "notes", "seq", "sha", "file", "message")
	for _, n := range h.Notes {
		if err := insN.add(n.Seq, sha(n.Seq), n.Path, n.Message); err != nil {
			return err
		}
	}
	if err := insN.flush(); err != nil {
		return err
	}

	// changelog: entries (every lineage), their keys and events
	for _, q := range []string{`DELETE FROM entries`, `DELETE FROM entry_keys`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	// events are only appended above fork (lineage ids are assigned in
	// history order, so the ones below fork are as stored)
	if _, err := tx.ExecContext(ctx, `DELETE FROM entry_events WHERE seq > ?`, fork); err != nil {
		return err
	}
	rep, err := h.Audit(provenance.AuditOptions{})
	if err != nil {
		return err
	}
	atHead := map[int]provenance.AuditEntry{}
	for i, e := range h.EntriesAt(head) {
		if e.Lin != nil {
			atHead[e.Lin.ID] = rep.Entries[i]
		}
	}
	insEntry := newInserter(ctx, tx, "entries", "id", "alive", "position", "line", "config_keys", "description", "pr_link", "pr_link_pr",
		"introduced_sha", "introduced_pr", "introduced_date", "verdict", "reason")
	insKey := newInserter(ctx, tx, "entry_keys", "entry", "config_key")
	insEv := newInserter(ctx, tx, "entry_events", "entry", "seq", "sha", "kind", "pr_link", "from_link", "note")
	for _, l := range h.Lineages {
		last := l.Events[len(l.Events)-1]
		keys, _ := json.Marshal(last.Keys)
		desc, _ := json.Marshal(last.Description)
		var pos, line, linkPR, introSHA, introPR, introDate, verdict, reason any
		ae, alive := atHead[l.ID]
		if alive {
			pos, line, verdict, reason = ae.Index, ae.Line, string(ae.Verdict), ae.Reason
			if ae.PRLinkPR != nil {
				linkPR = *ae.PRLinkPR
			}
			if ae.Introduced != nil {
				introSHA, introDate = ae.Introduced.Commit, ae.Introduced.Date.Format(time.RFC3339)
				if ae.Introduced.PR != nil {
					introPR = *ae.Introduced.PR
				}
			}
		}
		if err := insEntry.add(l.ID, alive, pos, line, string(keys), string(desc), last.PRLink, linkPR,
			introSHA, introPR, introDate, verdict, reason); err != nil {
			return err
		}
		for _, k := range last.Keys {
			if err := insKey.add(l.ID, k); err != nil {
				return err
			}
		}
		for _, ev := range l.Events {
			if ev.Seq <= fork {
				continue
			}
			var note any
			if ev.Unloadable {
				note = "the changelog did not load at this commit"
			}
			if err := insEv.add(l.ID, ev.Seq, sha(ev.Seq), string(ev.Kind), ev.PRLink, ev.From, note); err != nil {
				return err
			}
		}
	}
	for _, in := range []*inserter{insEntry, insKey, insEv} {
		if err := in.flush(); err != nil {
			return err
		}
	}

	// the audit at head, as the audit command prints it
	if data, err := encode(rep); err != nil {
		return err
	} else if _, err := tx.ExecContext(ctx, `INSERT INTO answers(name, data) VALUES('audit', ?)
		ON CONFLICT(name) DO UPDATE SET data=excluded.data`, data); err != nil {
		return err
	}

	// recipes: events and field changes above fork, for the keys that
	// changed there
	for _, q := range []string{`DELETE FROM recipe_events WHERE seq > ?`, `DELETE FROM field_changes WHERE seq > ?`} {
		if _, err := tx.ExecContext(ctx, q, fork); err != nil {
			return err
		}
	}
	touched := h.KeysChangedAfter(fork)
	h.Materialize(touched...)
	insRE := newInserter(ctx, tx, "recipe_events", "key", "seq", "sha", "kind", "from_key", "to_key", "file", "missing_entry")
	insFC := newInserter(ctx, tx, "field_changes", "key", "seq", "sha", "kind", "path", "old_path", "old", "new")
	for _, k := range touched {
		for _, e := range h.Keys[k].Events() {
			if e.Seq <= fork {
				continue
			}
			missing := e.Kind != provenance.EvDeleted && e.To == "" && len(h.NamedBy(e.Seq, k, e.From)) == 0
			if err := insRE.add(k, e.Seq, sha(e.Seq), string(e.Kind), nullable(e.From), nullable(e.To), e.File, missing); err != nil {
				return err
			}
			if e.Diff == nil {
				continue
			}
			for _, c := range e.Diff.Changes {
				oldPath := ""
				if c.OldPath != c.Path {
					oldPath = c.OldPath
				}
				if err := insFC.add(k, e.Seq, sha(e.Seq), string(c.Kind), c.Path, nullable(oldPath), nullable(c.Old), nullable(c.New)); err != nil {
					return err
				}
			}
		}
	}
	if err := insRE.flush(); err != nil {
		return err
	}
	if err := insFC.flush(); err != nil {
		return err
	}

	// recipes at head: rows of the touched keys (all of them on a full
	// build) are replaced
	if fork < 0 {
		touched = h.RecipeKeysAt(head)
		for _, q := range []string{`DELETE FROM recipes_at_head`, `DELETE FROM fields_at_head`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	if fork < 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM blame_cache`); err != nil {
			return err
		}
	} else {
		for _, k := range touched {
			for _, q := range []string{`DELETE FROM recipes_at_head WHERE key = ?`, `DELETE FROM fields_at_head WHERE key = ?`, `DELETE FROM blame_cache WHERE key = ?`} {
				if _, err := tx.ExecContext(ctx, q, k); err != nil {
					return err
				}
			}
		}
	}
	// each key's rows are prepared on all cores (the blame is most of the
	// work), then written in key order
	outs := make([]keyRows, len(touched))
	parallel(len(touched), func(i int) { outs[i] = headRows(h, touched[i], head) })
	insR := newInserter(ctx, tx, "recipes_at_head", "key", "file", "line", "image", "model", "model_prefix", "runner", "precision", "framework", "multinode")
	insF := newInserter(ctx, tx, "fields_at_head", "key", "path", "value")
	insB := newInserter(ctx, tx, "blame_cache", "key", "data")
	for i, k := range touched {
		o := outs[i]
		if o.err != nil {
			return o.err
		}
		if o.recipe == nil {
			continue
		}
		if err := insR.add(o.recipe...); err != nil {
			return err
		}
		for _, f := range o.fields {
			if err := insF.add(k, f.Path, f.Value); err != nil {
				return err
			}
		}
		if err := insB.add(k, o.blame); err != nil {
			return err
		}
	}
	for _, in := range []*inserter{insR, insF, insB} {
		if err := in.flush(); err != nil {
			return err
		}
	}
	// every key's file and line at head (cheap: nothing is parsed), when
	// a master config changed above fork (a full build wrote them above)
	if fork < 0 || !h.ConfigChangedAfter(fork) {
		return nil
	}
	for k, pl := range h.KeyPlaces(head) {
		if _, err := tx.ExecContext(ctx, `UPDATE recipes_at_head SET file = ?, line = ? WHERE key = ?`, pl.File, pl.Line, k); err != nil {
			return err
		}
	}
	return nil
}

// keyRows are the rows of one key at head: its recipes_at_head row (nil
// when the key is not at head), its fields and its encoded blame.
type keyRows struct {
	recipe []any
	fields []config.Field
	blame  []byte
	err    error
}

func headRows(h *provenance.History, k string, head int) keyRows {
	v, file, line, ok := h.RecipeAt(k, head)
	if !ok {
		return keyRows{}
	}
	str := func(f string) any {
		if x, ok := v.Get(f); ok {
			return config.Render(x)
		}
		return nil
	}
	var mn any
	if x, ok := v.Get("multinode"); ok {
		mn = x.Truthy()
	}
	out := keyRows{recipe: []any{k, file, line, str("image"), str("model"), str("model-prefix"), str("runner"),
		str("precision"), str("framework"), mn}, fields: config.Flatten(v)}
	b, err := h.Blame(k, h.Head)
	if err != nil {
		return keyRows{err: err}
	}
	// lines are stored relative to the key's line: other recipes moving
	// the key around do not make them stale
	for i := range b.Fields {
		b.Fields[i].Line -= line
	}
	out.blame, out.err = encode(b)
	return out
}

// parallel runs f(0..n-1) on all cores.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// encode stores a stored answer (gob: an order of magnitude faster to
// decode than JSON).
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
