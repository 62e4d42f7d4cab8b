package provenance

import (
	"cmp"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/perflog/perflog/config"
)

// Recipe events.
const (
	EvCreated EventKind = "created" // the key appeared
	EvChanged EventKind = "changed" // fields changed
	EvRenamed EventKind = "renamed" // the key replaced a near-identical one
	EvDeleted EventKind = "deleted" // the key disappeared
)

// RecipeEvent is one change of one recipe key at one commit.
type RecipeEvent struct {
	Kind EventKind
	Seq  int
	Key  string
	// From is the previous key of a renamed recipe (on the new key's
	// event); To the new key (on the old key's event).
	From, To string
	// File is the master config holding the key after the event (before
	// it, for a deletion).
	File string
	// Diff holds the field changes (for created: one addition at the root
	// path ""; for deleted: one removal).
	Diff *config.RecipeDiff
}

// KeyHistory is the life of one recipe key.
type KeyHistory struct {
	Key  string
	raw  []rawEvent
	mu   sync.Mutex
	done bool // evs and note are materialised
	evs  []*RecipeEvent
	note []Note
	// above is what EventsAbove last replayed (kept until release)
	above *eventsAbove
}

type eventsAbove struct {
	fork int
	evs  []*RecipeEvent
	note []Note
}

// rawEvent is what the version walk saw of a key; diffs are computed
// when the key's events are first asked for.
type rawEvent struct {
	kind     EventKind
	seq      int
	from, to string
	file     string
	old      *block // the gone key's recipe, for a rename
	b        *block // the recipe after the event (nil: deleted)
}

// Events returns the key's events, oldest first: each commit that created,
// changed (fields, not formatting), renamed or deleted it. A version of the
// recipe that does not load is skipped (the previous one stands) and noted.
func (kh *KeyHistory) Events() []*RecipeEvent {
	kh.mu.Lock()
	defer kh.mu.Unlock()
	if !kh.done {
		kh.materialize()
		kh.done = true
	}
	return kh.evs
}

// release drops the key's materialised events and the parses kept on its
// recipes' blocks; they are made again when next asked for.
func (kh *KeyHistory) release() {
	kh.mu.Lock()
	kh.evs, kh.note, kh.done, kh.above = nil, nil, false, nil
	kh.mu.Unlock()
	for _, r := range kh.raw {
		for _, b := range []*block{r.b, r.old} {
			if b != nil {
				b.forget()
			}
		}
	}
}

func (kh *KeyHistory) materialize() {
	p := newKeyReplay(kh)
	for _, r := range kh.raw {
		p.step(r)
	}
	kh.evs, kh.note = p.evs, p.note
}

// EventsAbove returns the key's events at seqs above fork, and the notes
// of its versions there that do not load: what Events lists there. Unless
// the events are materialised already, it replays only the versions above
// fork, from the state the whole replay has at fork (the last version at
// or before it that loads, or none after a deletion), so that an index
// update reads the versions a few new commits made, not the key's whole
// life. The replay is kept (for the last fork asked) until the key's
// events are released; the events are not materialised by it.
func (kh *KeyHistory) EventsAbove(fork int) ([]*RecipeEvent, []Note) {
	kh.mu.Lock()
	defer kh.mu.Unlock()
	if kh.done {
		i, _ := slices.BinarySearchFunc(kh.evs, fork+1, func(e *RecipeEvent, seq int) int { return cmp.Compare(e.Seq, seq) })
		j, _ := slices.BinarySearchFunc(kh.note, fork+1, func(n Note, seq int) int { return cmp.Compare(n.Seq, seq) })
		return slices.Clip(nilIfEmpty(kh.evs[i:])), slices.Clip(nilIfEmpty(kh.note[j:]))
	}
	if a := kh.above; a != nil && a.fork == fork {
		return a.evs, a.note
	}
	i, _ := slices.BinarySearchFunc(kh.raw, fork+1, func(r rawEvent, seq int) int { return cmp.Compare(r.seq, seq) })
	p := newKeyReplay(kh)
	p.seed(kh.raw[:i])
	for _, r := range kh.raw[i:] {
		p.step(r)
	}
	evs, note := slices.Clip(p.evs), slices.Clip(p.note)
	kh.above = &eventsAbove{fork, evs, note}
	return evs, note
}

// nilIfEmpty is s, or nil when s is empty (as a replay that found
// nothing returns).
func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}

// keyReplay turns a key's versions into its events, one version at a
// time: last is the recipe the next version is diffed against, seen
// whether the key exists. A key's versions are parsed with their own memos
// (see block.value), dropped with the replay.
type keyReplay struct {
	kh   *KeyHistory
	ch   *chunks
	memo *config.Memo
	last *config.Recipe
	seen bool
	evs  []*RecipeEvent
	note []Note
}

func newKeyReplay(kh *KeyHistory) *keyReplay {
	return &keyReplay{kh: kh, ch: newChunks(), memo: config.NewMemo()}
}

// seed sets the state step would have after the versions raw: the last of
// them that sets it is either a deletion or a rename away (no recipe) or a
// recipe that loads; one that does not load leaves the state as it was.
func (p *keyReplay) seed(raw []rawEvent) {
	for i := len(raw) - 1; i >= 0; i-- {
		r := raw[i]
		if r.b == nil {
			return
		}
		if v, err := r.b.value(p.ch); err == nil {
			p.last, p.seen = config.NewRecipe(p.kh.Key, "", 0, v), true
			return
		}
	}
}

// step replays one version.
func (p *keyReplay) step(r rawEvent) {
	kh := p.kh
	var val *config.Recipe
	if r.b != nil {
		v, err := r.b.value(p.ch)
		if err != nil {
			p.note = append(p.note, Note{Seq: r.seq, Path: r.file, Message: fmt.Sprintf("recipe %s does not load: %v", kh.Key, err)})
			return
		}
		val = config.NewRecipe(kh.Key, "", 0, v)
	}
	e := &RecipeEvent{Kind: r.kind, Seq: r.seq, Key: kh.Key, From: r.from, To: r.to, File: r.file}
	switch {
	case r.kind == EvDeleted || (r.kind == EvRenamed && r.to != ""):
		if !p.seen {
			return
		}
		e.Diff = config.DiffMemo(p.last, nil, p.memo)
	case r.kind == EvRenamed:
		var old *config.Recipe
		if v, err := r.old.value(p.ch); err == nil {
			old = config.NewRecipe(r.from, "", 0, v)
		}
		e.Diff = config.DiffMemo(old, val, p.memo)
	case !p.seen:
		e.Kind, e.Diff = EvCreated, config.DiffMemo(nil, val, p.memo)
	default:
		e.Diff = config.DiffMemo(p.last, val, p.memo)
		if len(e.Diff.Changes) == 0 && len(e.Diff.Moves) == 0 {
			p.last = val // formatting or comments only
			return
		}
	}
	p.last, p.seen = val, r.b != nil // a deletion: the next version creates the key again
	p.evs = append(p.evs, e)
}

// Rename thresholds (see config.PairRenames).
const (
	RenameThreshold      = config.RenameThreshold
	RenameNamedThreshold = config.RenameNamedThreshold
)

func (h *History) keyHistory(k string) *KeyHistory {
	kh := h.Keys[k]
	if kh == nil {
		if h.memo == nil {
			h.memo = config.NewMemo()
		}
		kh = &KeyHistory{Key: k}
		h.Keys[k] = kh
	}
	return kh
}

// recipeState follows the recipes of the master config slots through
// their versions: each slot's blocks, and per key its block and file (the
// first slot holding a key wins, as the gate's merge rejects duplicates
// across files; inside a file the last occurrence wins, as in PyYAML).
type recipeState struct {
	h      *History
	cur    [][]*block
	paths  []string
	byKey  []map[string]*block
	slots  map[string][]int // per key: the slots whose byKey has it, ascending
	counts []map[string]int // per slot: how many blocks each key has
	next   []int            // per slot: index of its next version
	want   map[string]bool
	mid    map[string]*block // advance's scratch: the last block of each key in a version's new text
	midN   map[string]int    // and how many
}

func (h *History) newRecipeState() *recipeState {
	n := len(h.cfg)
	st := &recipeState{h: h, cur: make([][]*block, n), paths: make([]string, n), byKey: make([]map[string]*block, n),
		slots: map[string][]int{}, counts: make([]map[string]int, n), next: make([]int, n),
		want: map[string]bool{}, mid: map[string]*block{}, midN: map[string]int{}}
	for i := range st.byKey {
		st.byKey[i] = map[string]*block{}
		st.counts[i] = map[string]int{}
	}
	return st
}

// lookup returns key's block and file in the current state (the first
// file that has it).
func (st *recipeState) lookup(k string) (*block, string, int) {
	if ss := st.slots[k]; len(ss) > 0 {
		return st.byKey[ss[0]][k], st.paths[ss[0]], ss[0]
	}
	return nil, "", -1
}

// wholeRebuild makes advance scan the file for every touched key, as it
// did before it knew when the new text holds all of a key's blocks; the
// tests turn it on to compare.
var wholeRebuild = false

// set makes b key's block in slot s.
func (st *recipeState) set(s int, k string, b *block) {
	if _, ok := st.byKey[s][k]; !ok {
		ss := st.slots[k]
		i, _ := slices.BinarySearch(ss, s)
		st.slots[k] = slices.Insert(ss, i, s)
	}
	st.byKey[s][k] = b
}

// unset removes key from slot s.
func (st *recipeState) unset(s int, k string) {
	if _, ok := st.byKey[s][k]; !ok {
		return
	}
	delete(st.byKey[s], k)
	ss := st.slots[k]
	if i, found := slices.BinarySearch(ss, s); found {
		st.slots[k] = slices.Delete(ss, i, i+1)
	}
}

// advance applies the versions that begin at seq and returns the keys
// they touch; a version that does not load is noted and skipped.
func (st *recipeState) advance(seq int) []string {
	var touched []string
	for s, sl := range st.h.cfg {
		if st.next[s] >= len(sl.vers) || sl.vers[st.next[s]].Seq != seq {
			continue
		}
		v := &sl.vers[st.next[s]]
		st.next[s]++
		if v.Err != "" { // (noted by configNotes)
			continue
		}
		old := st.cur[s][v.P : len(st.cur[s])-int(v.S)]
		mine := len(touched) // this slot's touched keys are touched[mine:]
		cnt := st.counts[s]
		for _, b := range old {
			touched = append(touched, b.key)
			cnt[b.key]--
		}
		clear(st.mid)
		clear(st.midN)
		for _, b := range v.Mid {
			touched = append(touched, b.key)
			cnt[b.key]++
			st.mid[b.key] = b // the last one, as in the file
			st.midN[b.key]++
		}
		st.cur[s] = v.applyInPlace(st.cur[s]) // the state owns its lists
		if v.Path != "" {
			st.paths[s] = v.Path
		}
		// the touched keys of this slot are set again; a key has its last
		// block in the file (a key may occur twice). When every block of
		// every touched key is in the new text, that is the last of them
		// there; else the file is scanned for them
		whole := wholeRebuild
		for _, k := range touched[mine:] {
			if n := cnt[k]; n != st.midN[k] {
				whole = true
			} else if n == 0 {
				delete(cnt, k)
			}
		}
		if !whole {
			for _, k := range touched[mine:] {
				if b := st.mid[k]; b != nil {
					st.set(s, k, b)
				} else {
					st.unset(s, k)
				}
			}
			continue
		}
		clear(st.want)
		for _, k := range touched[mine:] {
			st.unset(s, k)
			st.want[k] = true
		}
		for _, b := range st.cur[s] {
			if st.want[b.key] {
				st.set(s, b.key, b)
			}
		}
	}
	return touched
}

// cfgSeqsAbove lists the seqs above fork at which some slot has a
// version, ascending.
func (h *History) cfgSeqsAbove(fork int) []int {
	var out []int
	for _, sl := range h.cfg {
		i, _ := slices.BinarySearchFunc(sl.vers, fork+1, func(v version, seq int) int { return cmp.Compare(v.Seq, seq) })
		for _, v := range sl.vers[i:] {
			out = append(out, v.Seq)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// buildRecipes walks the master config versions oldest first and records,
// per key, the commits whose text of the recipe changed; what changed is
// computed per key on demand (KeyHistory.Events). A key that disappears
// while a key with a near-identical recipe appears in the same commit was
// renamed: the new key's history continues the old one's. Only the
// recipes involved in such a commit are parsed here.
func (h *History) buildRecipes() {
	h.Notes = append(h.Notes, h.configNotes()...)
	h.lastTouched = map[string]int{}
	h.replayRecipes(h.newRecipeState(), -1)
}

// resumeRecipes is buildRecipes for a history that extends base, whose
// recipe history is known (restored from a snapshot, or built), from
// base's head on: base's keys and the state at its head are taken over,
// and only the versions above it are replayed (not every version of
// every master config, as an update did). fork is base's head, the last
// seq both share.
func (h *History) resumeRecipes(base *History, fork int) {
	h.Notes = append(h.Notes, h.configNotes()...)
	for k, kh := range base.Keys {
		h.Keys[k] = &KeyHistory{Key: k, raw: slices.Clip(kh.raw)} // appended to as a copy
	}
	h.lastTouched = maps.Clone(base.lastTouched)
	h.replayRecipes(h.stateFromLists(fork), fork)
}

// configNotes notes the master config versions that do not load, by seq
// then file (as the replay meets them).
func (h *History) configNotes() []Note {
	var out []Note
	for _, sl := range h.cfg { // file by file, then stably by seq
		for i := range sl.vers {
			if v := &sl.vers[i]; v.Err != "" {
				out = append(out, Note{Seq: v.Seq, Commit: h.Chain[v.Seq], Path: v.Path, Message: "does not load: " + v.Err})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Note) int { return cmp.Compare(a.Seq, b.Seq) })
	return out
}

// stateFromLists is the state the replay has after the versions up to
// seq, made from the files' lists of blocks at seq without replaying
// them.
func (h *History) stateFromLists(seq int) *recipeState {
	st := h.newRecipeState()
	for s, sl := range h.cfg {
		for i := range sl.vers {
			v := &sl.vers[i]
			if v.Seq > seq {
				break
			}
			st.next[s]++
			if v.Err != "" {
				continue
			}
			st.cur[s] = v.applyInPlace(st.cur[s])
			if v.Path != "" {
				st.paths[s] = v.Path
			}
		}
		for _, b := range st.cur[s] {
			st.counts[s][b.key]++
			st.set(s, b.key, b) // the last occurrence wins
		}
	}
	return st
}

// replayRecipes applies the master config versions above fork to st,
// recording each key's changes (see buildRecipes).
func (h *History) replayRecipes(st *recipeState, fork int) {
	type before struct {
		b    *block
		file string
	}
	// per commit, cleared for the next: the touched keys before and after
	// it, and the renames by old key
	touched, after, to := map[string]before{}, map[string]before{}, map[string]string{}
	var keys, ks []string
	for _, seq := range h.cfgSeqsAbove(fork) {
		clear(touched)
		clear(after)
		clear(to)
		keys = keys[:0]
		// what the touched keys were before this commit
		probe := func(ks []string) {
			for _, k := range ks {
				if _, ok := touched[k]; !ok {
					b, f, _ := st.lookup(k)
					touched[k] = before{b, f}
					keys = append(keys, k)
				}
			}
		}
		// the keys a version touches are known before applying it
		for s, sl := range h.cfg {
			if st.next[s] < len(sl.vers) && sl.vers[st.next[s]].Seq == seq {
				v := &sl.vers[st.next[s]]
				if v.Err != "" {
					continue
				}
				ks = ks[:0]
				for _, b := range st.cur[s][v.P : len(st.cur[s])-int(v.S)] {
					ks = append(ks, b.key)
				}
				for _, b := range v.Mid {
					ks = append(ks, b.key)
				}
				probe(ks)
			}
		}
		st.advance(seq)
		var gone, came []string
		for _, k := range keys {
			h.lastTouched[k] = seq
			b, f, _ := st.lookup(k)
			after[k] = before{b, f}
			old := touched[k]
			switch {
			case old.b == nil && b == nil:
			case old.b == nil:
				came = append(came, k)
			case b == nil:
				gone = append(gone, k)
			case old.b != b:
				kh := h.keyHistory(k)
				kh.raw = append(kh.raw, rawEvent{kind: EvChanged, seq: seq, file: f, b: b})
			}
		}
		sort.Strings(gone)
		renamed, known := h.renames[seq]
		if !known {
			renamed = pairRenames(gone, came, func(k string) *block { return touched[k].b }, func(k string) *block { return after[k].b }, h.memo)
			if len(gone) > 0 && len(came) > 0 {
				// kept even when empty: "no renames here" is a decision
				// too, which a restored history need not make again
				if renamed == nil {
					renamed = map[string]string{}
				}
				h.renames[seq] = renamed
			}
		}
		for _, k := range came {
			a := after[k]
			kh := h.keyHistory(k)
			if old, ok := renamed[k]; ok {
				kh.raw = append(kh.raw, rawEvent{kind: EvRenamed, seq: seq, from: old, file: a.file, old: touched[old].b, b: a.b})
				continue
			}
			kh.raw = append(kh.raw, rawEvent{kind: EvCreated, seq: seq, file: a.file, b: a.b})
		}
		for n, old := range renamed {
			to[old] = n
		}
		for _, k := range gone {
			kh := h.keyHistory(k)
			ev := rawEvent{kind: EvDeleted, seq: seq, file: touched[k].file}
			if n, ok := to[k]; ok {
				ev.kind, ev.to = EvRenamed, n
			}
			kh.raw = append(kh.raw, ev)
		}
	}
	// the state after the last version is the state at Head, which blame
	// and the index's rows at head ask for: stateAt would replay it all
	h.mu.Lock()
	h.state, h.stateSeq = st, len(h.Chain)-1
	h.mu.Unlock()
}

// pairRenames pairs disappearing keys with appearing ones whose recipes
// are near-identical, most similar first (ties: the closer name).
func pairRenames(gone, came []string, old, new func(string) *block, memo *config.Memo) map[string]string {
	val := func(get func(string) *block) func(string) *config.Recipe {
		return func(k string) *config.Recipe {
			b := get(k)
			b.load()
			if b.err != nil {
				return nil
			}
			return config.NewRecipe(k, "", 0, b.val)
		}
	}
	return config.PairRenames(gone, came, val(old), val(new), memo)
}

// RecipeAt returns the recipe of key at seq, with the master config file
// holding it and the line of its key; a version of the recipe that does
// not load gives way to the newest older one that does.
func (h *History) RecipeAt(key string, seq int) (*config.Recipe, bool) {
	p, file, ok := h.placedAt(key, seq, true)
	if !ok {
		return nil, false
	}
	return config.NewRecipe(key, file, int(p.line), p.b.full()), true
}

// NearFields helps a path filter that matched nothing: when the recipe
// key at rev has no field the filter names, it lists the n field paths
// closest to it; nil when a field matches (it just did not change) or the
// recipe is not at rev.
func (h *History) NearFields(key string, rev plumbing.Hash, filter string, n int) []string {
	seq, ok := h.SeqOf(rev)
	if !ok {
		return nil
	}
	v := h.recipeValueAt(key, seq)
	if v == nil {
		return nil
	}
	var paths []string
	for _, f := range v.Fields() {
		if PathMatch(filter, f.Path) || config.HasPathPrefix(f.Path, filter) {
			return nil
		}
		paths = append(paths, f.Path)
	}
	return config.Closest(filter, paths, n)
}

// recipeValueAt is RecipeAt's recipe alone: its line, which needs the
// file at seq read again from git, is not looked for (a report's logs of
// every recipe spend half their time there otherwise).
func (h *History) recipeValueAt(key string, seq int) *config.Recipe {
	if p, _, ok := h.placedAt(key, seq, false); ok {
		return config.NewRecipe(key, "", 0, p.b.full())
	}
	return nil
}

// stateAt is the state after the master config versions up to seq (the
// last one asked for is kept: blame and the index ask for the head again
// and again). The state must not be modified.
func (h *History) stateAt(seq int) *recipeState {
	h.mu.Lock()
	if h.stateSeq == seq && h.state != nil {
		st := h.state
		h.mu.Unlock()
		return st
	}
	h.mu.Unlock()
	st := h.stateFromLists(seq)
	h.mu.Lock()
	h.state, h.stateSeq = st, seq
	h.mu.Unlock()
	return st
}

// placedAt finds key's recipe at seq and its position in its file.
func (h *History) placedAt(key string, seq int, line bool) (placed, string, bool) {
	st := h.stateAt(seq)
	b, file, s := st.lookup(key)
	if b == nil {
		return placed{}, "", false
	}
	if b.load(); b.err != nil {
		// the newest older version of the recipe that loads, placed where
		// the key is at seq (where KeyPlaces puts it too)
		b = nil
		if kh := h.Keys[key]; kh != nil {
			for i := len(kh.raw) - 1; i >= 0; i-- {
				r := kh.raw[i]
				if r.seq <= seq && r.b != nil {
					if r.b.load(); r.b.err == nil {
						b = r.b
						break
					}
				}
			}
		}
		if b == nil {
			return placed{}, "", false
		}
	}
	if !line {
		return placed{b: b}, file, true
	}
	// the key's line in the version of its file at seq
	var at *version
	for i := range h.cfg[s].vers {
		v := &h.cfg[s].vers[i]
		if v.Seq > seq {
			break
		}
		if v.Err == "" {
			at = v
		}
	}
	p := placed{b: b}
	if at != nil {
		if ps, err := h.placedOf(at.Blob, mapFile); err == nil {
			for _, q := range ps {
				if q.b.key == key {
					p.line, p.off = q.line, q.off // the last occurrence wins
				}
			}
		}
	}
	return p, file, true
}

// ConfigChangedAfter reports whether a master config file has a version
// beginning above seq after.
func (h *History) ConfigChangedAfter(after int) bool {
	for _, sl := range h.cfg {
		if sl.changedAfter(after) {
			return true
		}
	}
	return false
}

// changedAfter reports whether the slot has a version after seq.
func (sl *slot) changedAfter(seq int) bool {
	n := len(sl.vers)
	return n > 0 && sl.vers[n-1].Seq > seq
}

// KeyPlace is where a recipe key is written at a revision.
type KeyPlace struct {
	File string
	Line int
}

// KeyPlaces returns the file and line of every recipe key at seq (reading
// the master config files at seq; nothing is parsed).
func (h *History) KeyPlaces(seq int) map[string]KeyPlace { return h.keyPlaces(seq, nil) }

// KeyPlacesSince is KeyPlaces(Head) for the keys whose place may differ
// from theirs at seq fork: the keys of the master config files changed
// after fork, and the keys a change after fork touched (one that left a
// file, or came into one, unchanged, may change files). Only the files
// holding one of them are read.
func (h *History) KeyPlacesSince(fork int) map[string]KeyPlace {
	head := len(h.Chain) - 1
	st := h.stateAt(head)
	want := map[string]bool{}
	for k, sq := range h.lastTouched {
		if sq > fork {
			want[k] = true
		}
	}
	for s, sl := range h.cfg {
		if sl.changedAfter(fork) {
			for k := range st.byKey[s] {
				want[k] = true
			}
		}
	}
	return h.keyPlaces(head, want)
}

// keyPlaces is KeyPlaces for the keys in want (all when nil), reading
// only the files that hold one of them at seq.
func (h *History) keyPlaces(seq int, want map[string]bool) map[string]KeyPlace {
	out := map[string]KeyPlace{}
	var st *recipeState
	if want != nil {
		st = h.stateAt(seq)
	}
	for s := len(h.cfg) - 1; s >= 0; s-- { // the first file holding a key wins
		if st != nil && !holdsAny(st.byKey[s], want) {
			continue
		}
		var at *version
		for i := range h.cfg[s].vers {
			v := &h.cfg[s].vers[i]
			if v.Seq > seq {
				break
			}
			if v.Err == "" {
				at = v
			}
		}
		if at == nil || at.Blob.IsZero() {
			continue
		}
		ps, err := h.placedOf(at.Blob, mapFile)
		if err != nil {
			continue
		}
		for _, p := range ps { // the last occurrence wins
			if want == nil || want[p.b.key] {
				out[p.b.key] = KeyPlace{File: at.Path, Line: int(p.line)}
			}
		}
	}
	return out
}

// holdsAny reports whether keys has one of want.
func holdsAny(keys map[string]*block, want map[string]bool) bool {
	if len(keys) > len(want) {
		for k := range want {
			if keys[k] != nil {
				return true
			}
		}
		return false
	}
	for k := range keys {
		if want[k] {
			return true
		}
	}
	return false
}

// RecipeKeysAt returns the recipe keys at seq in load order.
func (h *History) RecipeKeysAt(seq int) []string {
	if h.headFiles != nil && seq == len(h.Chain)-1 {
		return h.headKeysOf(h.headFiles)
	}
	return keysInOrder(h.stateAt(seq).cur)
}

// keysInOrder lists the keys of the slots' lists once each, in load order.
func keysInOrder(lists [][]*block) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, b := range l {
			if !seen[b.key] {
				seen[b.key] = true
				out = append(out, b.key)
			}
		}
	}
	return out
}

// lineOffset returns what to add to the lines of key's recipe nodes at
// seq to get file lines.
func (h *History) lineOffset(key string, seq int) int {
	p, _, _ := h.placedAt(key, seq, true)
	return int(p.off)
}

func globMatch(pattern, key string) bool { return config.GlobMatch(pattern, key) }

// Materialize computes the events (KeyHistory.Events) of the given keys,
// or of every key, on all cores: what an index of the history needs.
func (h *History) Materialize(keys ...string) {
	ch := make(chan *KeyHistory)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for kh := range ch {
				kh.Events()
			}
		}()
	}
	if len(keys) == 0 {
		for _, kh := range h.Keys {
			ch <- kh
		}
	}
	for _, k := range keys {
		if kh := h.Keys[k]; kh != nil {
			ch <- kh
		}
	}
	close(ch)
	wg.Wait()
}

// Release drops the materialised events of keys (see Materialize) and the
// parses of their recipes: a caller going through every key of a long
// history releases each batch it is done with, so that memory holds a
// batch rather than the history. They are made again when asked for.
// Nothing may be reading these keys meanwhile.
func (h *History) Release(keys ...string) {
	for _, k := range keys {
		if kh := h.Keys[k]; kh != nil {
			kh.release()
		}
	}
}

// KeysWrittenAfter lists, sorted, the keys of the recipes written anew
// (new or changed blocks) by master config versions above seq after,
// including those that do not load. Unlike KeysChangedAfter it needs only
// the versions, so it answers for a history restored as a Build's base.
func (h *History) KeysWrittenAfter(after int) []string {
	seen := map[string]bool{}
	for _, sl := range h.cfg {
		for i := len(sl.vers) - 1; i >= 0 && sl.vers[i].Seq > after; i-- {
			for _, b := range sl.vers[i].Mid {
				seen[b.key] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// KeysChangedAfter lists, sorted, the keys with a recipe change at a seq
// above after (every key when after < 0).
func (h *History) KeysChangedAfter(after int) []string {
	var out []string
	for k, kh := range h.Keys {
		for _, r := range kh.raw {
			if r.seq > after {
				out = append(out, k)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
