package index

import (
	"context"
	"database/sql"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
)

// writeOutputs refreshes the query tables from a history whose seqs above
// fork are new (fork < 0: everything is new), and records its phases in
// st. The changelog rows are all computed (verdicts depend on the whole
// history) and those that changed written (writeEntries, writeAudit);
// entry events, recipe events and field changes above fork are appended,
// the latter for the keys that changed there.
func writeOutputs(ctx context.Context, tx *sql.Tx, h *provenance.History, fork int, st *Stats, rec *recipeJob) error {
	if rec == nil {
		rec = startRecipes(h, fork)
	}
	defer rec.stop()
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

	// changelog: entries (every lineage), their keys and events, and the
	// audit at head as the audit command prints it
	rep, err := h.Audit(provenance.AuditOptions{})
	if err != nil {
		return err
	}
	st.lap("audit")
	if err := writeEntries(ctx, tx, h, rep, fork < 0); err != nil {
		return err
	}
	// events are only appended above where they are settled (lineage ids
	// are assigned in history order, so the ones below are as stored):
	// fork, or before it when the changelog did not load there (see
	// EventsSettledAt); the tables hold rows above that only after a
	// rewritten history or then (the deletes scan the tables)
	above := fork < 0 || st.Dropped > 0
	evFork := fork
	if fork >= 0 {
		evFork = h.EventsSettledAt(fork)
	}
	if above || evFork < fork {
		if _, err := tx.ExecContext(ctx, `DELETE FROM entry_events WHERE seq > ?`, evFork); err != nil {
			return err
		}
	}
	if above {
		// checked claims are kept by entry id, which a rewritten history
		// may give to another entry; they are checked again on demand
		for _, q := range []string{`DELETE FROM claims`, `DELETE FROM claims_checked`, `DELETE FROM meta WHERE name = 'claims-head'`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	insEv := newInserter(ctx, tx, "entry_events", "entry", "seq", "sha", "kind", "pr_link", "from_link", "note", "fingerprint")
	for _, l := range h.Lineages {
		for _, ev := range l.Events {
			if ev.Seq <= evFork {
				continue
			}
			var note any
			if ev.Unloadable {
				note = "the changelog did not load at this commit"
			}
			if err := insEv.add(l.ID, ev.Seq, sha(ev.Seq), string(ev.Kind), ev.PRLink, ev.From, note, ev.Identity); err != nil {
				return err
			}
		}
	}
	if err := insEv.flush(); err != nil {
		return err
	}
	if err := writeAudit(ctx, tx, rep); err != nil {
		return err
	}
	st.lap("entries")

	// recipes: events and field changes above fork for the keys that
	// changed there, and the rows at head (recipes_at_head, fields_at_head,
	// blame_cache) of every key at head on a full build, of the changed
	// keys otherwise
	if above {
		for _, q := range []string{`DELETE FROM recipe_events WHERE seq > ?`, `DELETE FROM field_changes WHERE seq > ?`} {
			if _, err := tx.ExecContext(ctx, q, fork); err != nil {
				return err
			}
		}
	}
	changed := rec.changed
	if fork < 0 {
		for _, q := range []string{`DELETE FROM recipes_at_head`, `DELETE FROM fields_at_head`, `DELETE FROM blame_cache`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	} else {
		for _, k := range changed {
			for _, q := range []string{`DELETE FROM recipes_at_head WHERE key = ?`, `DELETE FROM fields_at_head WHERE key = ?`, `DELETE FROM blame_cache WHERE key = ?`} {
				if _, err := tx.ExecContext(ctx, q, k); err != nil {
					return err
				}
			}
		}
	}
	w := &recipeWriter{
		re: newInserter(ctx, tx, "recipe_events", "key", "seq", "sha", "kind", "from_key", "to_key", "file", "missing_entry"),
		fc: newInserter(ctx, tx, "field_changes", "key", "seq", "sha", "kind", "path", "old_path", "old", "new"),
		r: newInserter(ctx, tx, "recipes_at_head", "key", "file", "line", "image", "model", "model_prefix", "runner", "precision",
			"framework", "multinode"),
		f: newInserter(ctx, tx, "fields_at_head", "key", "path", "value"),
		b: newInserter(ctx, tx, "blame_cache", "key", "data"),
	}
	if err := w.write(h, rec); err != nil {
		return err
	}
	// every key's file and line at head (cheap: nothing is parsed), when
	// a master config changed above fork or a rewritten history dropped
	// commits there (a full build wrote them above)
	switch {
	case fork < 0:
		return nil
	case st.Dropped > 0: // the stored places are the dropped head's
		return updatePlaces(ctx, tx, h.KeyPlaces(head))
	case h.ConfigChangedAfter(fork):
		return updatePlaces(ctx, tx, h.KeyPlacesSince(fork))
	}
	return nil
}

// updatePlaces sets the file and line of the recipes_at_head rows whose
// place differs from places (an edit moves the recipes below it).
func updatePlaces(ctx context.Context, tx *sql.Tx, places map[string]provenance.KeyPlace) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, file, line FROM recipes_at_head`)
	if err != nil {
		return err
	}
	var moved []string
	for rows.Next() {
		var k, file string
		var line int
		if err := rows.Scan(&k, &file, &line); err != nil {
			rows.Close()
			return err
		}
		if pl, ok := places[k]; ok && (pl.File != file || pl.Line != line) {
			moved = append(moved, k)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range moved {
		pl := places[k]
		if _, err := tx.ExecContext(ctx, `UPDATE recipes_at_head SET file = ?, line = ? WHERE key = ?`, pl.File, pl.Line, k); err != nil {
			return err
		}
	}
	return nil
}

// keyBatch is how many keys are computed, written and released at once.
const keyBatch = 64

// recipeJob computes the rows of the recipe tables, a batch of keys at a
// time, on the other cores while the index is being written: the events
// above fork of the keys that changed there and the rows at head of the
// keys at head (all of them on a full write). A batch's events are
// materialised and its rows at head prepared on all cores; the writer
// takes the batches in key order; a written batch's events are released,
// so that a long history is never held parsed whole. Releases run on the
// producer's goroutine between two batches: a release drops parses a
// computation may be reading (a renamed key's old recipe).
type recipeJob struct {
	h    *provenance.History
	fork int
	// prev holds the stored blames at fork of changed keys, when the
	// stored rows at head are fork's (see provenance.History.BlameAbove)
	prev              map[string]*provenance.BlameReport
	changed           []string // keys with events above fork (and the also keys), sorted
	keys              []string // keys to compute, in write order
	isChanged, isHead map[string]bool
	out               chan computed
	written           chan struct{} // one token per batch written
	quit              chan struct{} // closed by stop
	done              chan struct{} // closed when the producer has returned
	stopOnce          sync.Once
}

// computed is one batch and its rows at head.
type computed struct {
	batch []string
	outs  []keyRows
}

// startRecipes starts computing the recipe rows of h above fork (fork < 0:
// everything), taking the keys also as changed there (the keys the
// commits a rewritten history dropped changed). The History must not
// change until the job is stopped.
func startRecipes(h *provenance.History, fork int, also ...string) *recipeJob {
	return startRecipesFrom(h, fork, nil, also...)
}

// startRecipesFrom is startRecipes with the stored blames at fork of the
// keys changed above it (nil: none usable).
func startRecipesFrom(h *provenance.History, fork int, prev map[string]*provenance.BlameReport, also ...string) *recipeJob {
	changed := h.KeysChangedAfter(fork)
	if len(also) > 0 {
		changed = append(changed, also...)
		slices.Sort(changed)
		changed = slices.Compact(changed)
	}
	j := &recipeJob{h: h, fork: fork, changed: changed, prev: prev,
		out: make(chan computed, 1), quit: make(chan struct{}), done: make(chan struct{})}
	atHead := j.changed
	if fork < 0 {
		atHead = h.RecipeKeysAt(len(h.Chain) - 1)
	}
	j.isChanged = make(map[string]bool, len(j.changed))
	for _, k := range j.changed {
		j.isChanged[k] = true
	}
	j.isHead = make(map[string]bool, len(atHead))
	j.keys = append([]string(nil), atHead...)
	for _, k := range atHead {
		j.isHead[k] = true
	}
	for _, k := range j.changed {
		if !j.isHead[k] {
			j.keys = append(j.keys, k)
		}
	}
	j.written = make(chan struct{}, len(j.keys)/keyBatch+1)
	go j.produce()
	return j
}

func (j *recipeJob) produce() {
	defer close(j.done)
	defer close(j.out)
	head := len(j.h.Chain) - 1
	// an update replays only the changed keys' versions above fork (on
	// all cores, before the blames made from the stored ones ask whether
	// one of them does not load)
	if j.fork >= 0 {
		parallel(len(j.changed), func(i int) {
			if kh := j.h.Keys[j.changed[i]]; kh != nil {
				kh.EventsAbove(j.fork)
			}
		})
	}
	var sent [][]string // sent and not released yet, oldest first
	// release waits for the oldest sent batch to be written and releases
	// it; a batch already written is released even when the job stops
	release := func() bool {
		select {
		case <-j.written:
		default:
			select {
			case <-j.written:
			case <-j.quit:
				return false
			}
		}
		j.h.Release(sent[0]...)
		sent = sent[1:]
		return true
	}
	for lo := 0; lo < len(j.keys); lo += keyBatch {
		for len(sent) >= 2 { // at most two batches held: one written, one computed
			if !release() {
				return
			}
		}
		batch := j.keys[lo:min(lo+keyBatch, len(j.keys))]
		outs := make([]keyRows, len(batch))
		parallel(len(batch), func(i int) {
			k := batch[i]
			if j.isHead[k] {
				outs[i] = headRows(j.h, k, head, j.prev[k], j.fork)
			}
			if kh := j.h.Keys[k]; kh != nil && j.isChanged[k] && j.fork < 0 {
				kh.Events()
			}
		})
		select {
		case j.out <- computed{batch, outs}:
			sent = append(sent, batch)
		case <-j.quit:
			return
		}
	}
	for len(sent) > 0 {
		if !release() {
			return
		}
	}
}

// stop ends the job and waits for its producer (which may be computing a
// batch); safe to call more than once.
func (j *recipeJob) stop() {
	j.stopOnce.Do(func() { close(j.quit) })
	<-j.done
}

// recipeWriter writes the recipe tables.
type recipeWriter struct{ re, fc, r, f, b *inserter }

// write writes the rows the job computes, batch by batch in key order.
func (w *recipeWriter) write(h *provenance.History, j *recipeJob) error {
	for c := range j.out {
		for i, k := range c.batch {
			if j.isChanged[k] {
				if err := w.events(h, k, j.fork); err != nil {
					return err
				}
			}
			if j.isHead[k] {
				if err := w.head(k, c.outs[i]); err != nil {
					return err
				}
			}
		}
		j.written <- struct{}{}
	}
	for _, in := range []*inserter{w.re, w.fc, w.r, w.f, w.b} {
		if err := in.flush(); err != nil {
			return err
		}
	}
	return nil
}

// events writes the recipe events and field changes of key above fork
// (none for a key h does not know: one only the commits a rewritten
// history dropped had).
func (w *recipeWriter) events(h *provenance.History, k string, fork int) error {
	kh := h.Keys[k]
	if kh == nil {
		return nil
	}
	var evs []*provenance.RecipeEvent
	if fork >= 0 {
		evs, _ = kh.EventsAbove(fork) // the versions above fork only
	} else {
		evs = kh.Events()
	}
	for _, e := range evs {
		if e.Seq <= fork {
			continue
		}
		sha := h.Chain[e.Seq].String()
		missing := e.Kind != provenance.EvDeleted && e.To == "" && len(h.NamedBy(e.Seq, k, e.From)) == 0
		if err := w.re.add(k, e.Seq, sha, string(e.Kind), nullable(e.From), nullable(e.To), e.File, missing); err != nil {
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
			if err := w.fc.add(k, e.Seq, sha, string(c.Kind), c.Path, nullable(oldPath), nullable(c.Old), nullable(c.New)); err != nil {
				return err
			}
		}
	}
	return nil
}

// head writes the rows of key at head (none when the key is not there).
func (w *recipeWriter) head(k string, o keyRows) error {
	if o.err != nil {
		return o.err
	}
	if o.recipe == nil {
		return nil
	}
	if err := w.r.add(o.recipe...); err != nil {
		return err
	}
	for _, f := range o.fields {
		if err := w.f.add(k, f.Path, f.Value); err != nil {
			return err
		}
	}
	return w.b.add(k, o.blame)
}

// keyRows are the rows of one key at head: its recipes_at_head row (nil
// when the key is not at head), its fields and its encoded blame.
type keyRows struct {
	recipe []any
	fields []config.Field
	blame  []byte
	err    error
}

// headRows computes the rows of key k at head; its blame from prev, the
// stored one at fork, when that gives Blame's answer (BlameAbove).
func headRows(h *provenance.History, k string, head int, prev *provenance.BlameReport, fork int) keyRows {
	v, ok := h.RecipeAt(k, head)
	if !ok {
		return keyRows{}
	}
	str := func(f string) any {
		if x, ok := v.Setting(f); ok {
			return x
		}
		return nil
	}
	var mn any
	if _, ok := v.Setting("multinode"); ok {
		mn = v.Multinode
	}
	out := keyRows{recipe: []any{k, v.File, v.Line, str("image"), str("model"), str("model-prefix"), str("runner"),
		str("precision"), str("framework"), mn}, fields: v.Fields()}
	b, ok, err := h.BlameAbove(k, prev, fork)
	if err == nil && !ok {
		b, err = h.Blame(k, h.Head)
	}
	if err != nil {
		return keyRows{err: err}
	}
	// lines are stored relative to the key's line: other recipes moving
	// the key around do not make them stale
	for i := range b.Fields {
		b.Fields[i].Line -= v.Line
	}
	out.blame, out.err = encodeBlame(b)
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

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
