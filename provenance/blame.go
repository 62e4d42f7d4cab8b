package provenance

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
)

// BlameField is one leaf of a recipe with the commit since which it has
// held its value. JSON field names are a public contract.
type BlameField struct {
	Path  string `json:"path"`
	Value string `json:"value"`
	Line  int    `json:"line"`
	CommitRef
	// Event is what that commit did to the field: created (with the
	// recipe), changed, or renamed (the recipe got its current key).
	Event EventKind `json:"event"`
	// Key is the recipe's key at that commit when it differs (renames).
	Key string `json:"key,omitempty"`
	// NotKnown are the stretches, older than the commit, where the
	// recipe's launch was not known, looked through because the value was
	// the same on both sides (launch fields only).
	NotKnown []LaunchGap `json:"not_known,omitempty"`
	// SetIn, when set, is the stretch in which the value was set: the
	// launch was not known before the commit, so blame does not say which
	// commit of the stretch set it (launch fields only).
	SetIn *LaunchGap `json:"set_in,omitempty"`
}

// Rename is a key rename on a recipe's history.
type Rename struct {
	From string `json:"from"`
	To   string `json:"to"`
	CommitRef
}

// BlameReport is the outcome of Blame.
type BlameReport struct {
	Key     string       `json:"key"`
	File    string       `json:"file"`
	Rev     string       `json:"rev"`
	Fields  []BlameField `json:"fields"`
	Renames []Rename     `json:"renames"`
	Notes   []Note       `json:"-"`
}

// UnknownKeyError is returned for a key that does not exist at the
// revision; it wraps ErrUnknownKey.
type UnknownKeyError struct {
	Key string
	// Rev is the revision asked about (an abbreviated commit; "" when
	// unknown).
	Rev string
	// Closest are the nearest keys at the revision.
	Closest []string
	// Gone is set when the key existed before the revision and a commit
	// at or before it ended it: deleted it, or renamed it (To is then
	// the new key).
	Gone *KeyEnd
	// NoRecipes: no master config held a recipe at the revision (a
	// revision older than the configs).
	NoRecipes bool
}

// KeyEnd is the commit that ended a key: deleted it or renamed it.
type KeyEnd struct {
	Kind EventKind // EvDeleted or EvRenamed
	To   string    // the new key of a rename
	CommitRef
}

func (e *UnknownKeyError) Error() string {
	msg := fmt.Sprintf("config key %q does not exist at this revision", e.Key)
	if e.Rev != "" {
		msg = fmt.Sprintf("config key %q does not exist at %s", e.Key, e.Rev)
	}
	if g := e.Gone; g != nil {
		sha := g.Commit[:min(len(g.Commit), 10)]
		by := sha
		if g.PR != nil {
			by += fmt.Sprintf(" (#%d, %s)", *g.PR, g.Date.Format(time.DateOnly))
		} else {
			by += fmt.Sprintf(" (%s)", g.Date.Format(time.DateOnly))
		}
		if g.Kind == EvRenamed && g.To != "" {
			return msg + fmt.Sprintf(": %s renamed it to %s", by, g.To)
		}
		return msg + fmt.Sprintf(": %s deleted it (its last version: --rev %s~1)", by, sha)
	}
	if e.NoRecipes {
		return msg + ": no master config holds a recipe there"
	}
	if len(e.Closest) > 0 {
		msg += "; did you mean " + strings.Join(e.Closest, ", ") + "?"
	}
	return msg
}

// unknownKey is the error for a key that does not exist at seq.
func (h *History) unknownKey(key string, seq int) error {
	keys := h.RecipeKeysAt(seq)
	e := &UnknownKeyError{Key: key, Rev: short(h.Chain[seq]), Closest: config.Closest(key, keys, 3), NoRecipes: len(keys) == 0}
	if kh := h.Keys[key]; kh != nil {
		evs := kh.Events()
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if ev.Seq > seq {
				continue
			}
			if ev.Kind == EvDeleted || (ev.Kind == EvRenamed && ev.To != "") {
				if ref, err := h.Ref(ev.Seq); err == nil {
					e.Gone = &KeyEnd{Kind: ev.Kind, To: ev.To, CommitRef: *ref}
				}
			}
			break
		}
	}
	return e
}

func (e *UnknownKeyError) Unwrap() error { return ErrUnknownKey }

func (h *History) seqOf(rev plumbing.Hash) (int, error) {
	if rev.IsZero() {
		rev = h.Head
	}
	seq, ok := h.seq[rev]
	if !ok {
		return 0, fmt.Errorf("%s: %w of %s", short(rev), ErrNotOnChain, short(h.Head))
	}
	return seq, nil
}

// keyTimeline returns the events of key at or before seq, newest first,
// following renames back to the key's previous names.
func (h *History) keyTimeline(key string, seq int) []*RecipeEvent {
	var out []*RecipeEvent
	k, limit := key, seq
	for hops := 0; k != "" && hops < 64; hops++ {
		kh := h.Keys[k]
		next := ""
		if kh != nil {
			evs := kh.Events()
			for i := len(evs) - 1; i >= 0; i-- {
				e := evs[i]
				if e.Seq > limit {
					continue
				}
				out = append(out, e)
				if e.Kind == EvCreated {
					break
				}
				if e.Kind == EvRenamed && e.From != "" {
					next, limit = e.From, e.Seq-1
					break
				}
			}
		}
		k = next
	}
	return out
}

// Blame lists every leaf field of a recipe at a revision with the commit
// since which it has held its value continuously. Fields are followed
// through list re-orderings, moved subtrees and key renames (see
// config.Diff and RecipeEvent); a change made by an ignored commit is
// looked through: the field is then attributed to the commit that set
// the value the ignored commit replaced.
func (h *History) Blame(key string, rev plumbing.Hash) (*BlameReport, error) {
	seq, err := h.seqOf(rev)
	if err != nil {
		return nil, err
	}
	v, ok := h.RecipeAt(key, seq)
	if !ok {
		return nil, h.unknownKey(key, seq)
	}
	rep := &BlameReport{Key: key, File: v.File, Rev: h.Chain[seq].String(), Fields: []BlameField{}, Renames: []Rename{}}
	fields := v.Fields()
	ts := newTracks(fields)
	tl := h.keyTimeline(key, seq)
	seen := map[string]bool{}
	for _, e := range tl {
		if kh := h.Keys[e.Key]; kh != nil && !seen[e.Key] {
			seen[e.Key] = true
			for _, n := range kh.note {
				if n.Seq <= seq {
					n.Commit = h.Chain[n.Seq]
					rep.Notes = append(rep.Notes, n)
				}
			}
		}
	}
	if err := h.follow(ts, tl, rep); err != nil {
		return nil, err
	}
	off := h.lineOffset(key, seq)
	for i, f := range fields {
		t := ts[i]
		if !t.done {
			// the recipe predates the history examined
			t.ev = &RecipeEvent{Kind: EvCreated, Seq: 0, Key: key}
			if len(tl) > 0 {
				t.ev.Key = tl[len(tl)-1].Key
			}
		}
		bf, err := h.blameField(key, f, off, t)
		if err != nil {
			return nil, err
		}
		rep.Fields = append(rep.Fields, bf)
	}
	return rep, nil
}

// BlameAbove is Blame of key at Head computed from prev, the key's blame
// at seq fork (as Blame gave it there, with the same ignore-revs), and the
// key's events above fork alone: a field those events do not set has the
// attribution prev gives the field it was at fork, and the renames prev
// lists are kept as far back as Blame's walk would still go. So an index
// update does not replay a changed recipe's whole life. It reports false
// where that would not be Blame's answer: the key created, renamed or
// deleted above fork, a version of any recipe there that does not load
// (Blame lists the notes of the keys the recipe had), a field prev does
// not list.
func (h *History) BlameAbove(key string, prev *BlameReport, fork int) (*BlameReport, bool, error) {
	head := len(h.Chain) - 1
	kh := h.Keys[key]
	if prev == nil || prev.Key != key || kh == nil || fork < 0 || fork >= head || h.recipeFailsAbove(fork) {
		return nil, false, nil
	}
	v, ok := h.RecipeAt(key, head)
	if !ok {
		return nil, false, nil
	}
	evs, _ := kh.EventsAbove(fork)
	tl := make([]*RecipeEvent, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind != EvChanged {
			return nil, false, nil
		}
		tl = append(tl, evs[i])
	}
	rep := &BlameReport{Key: key, File: v.File, Rev: h.Chain[head].String(), Fields: []BlameField{}, Renames: []Rename{}, Notes: prev.Notes}
	fields := v.Fields()
	ts := newTracks(fields)
	if err := h.follow(ts, tl, rep); err != nil {
		return nil, false, err
	}
	was := make(map[string]*BlameField, len(prev.Fields))
	for i := range prev.Fields {
		was[prev.Fields[i].Path] = &prev.Fields[i]
	}
	// Blame's walk goes on below fork until the last field left is
	// attributed: it lists the renames it passes until then
	closing := head + 1
	off := h.lineOffset(key, head)
	for i, f := range fields {
		t := ts[i]
		if t.done {
			bf, err := h.blameField(key, f, off, t)
			if err != nil {
				return nil, false, err
			}
			rep.Fields = append(rep.Fields, bf)
			continue
		}
		p := was[t.cur]
		if p == nil {
			return nil, false, nil
		}
		seq, ok := h.seq[plumbing.NewHash(p.Commit)]
		if !ok {
			return nil, false, nil
		}
		closing = min(closing, seq)
		bf := *p
		bf.Path, bf.Value, bf.Line = f.Path, f.Value, f.Line+off
		rep.Fields = append(rep.Fields, bf)
	}
	for _, r := range prev.Renames {
		seq, ok := h.seq[plumbing.NewHash(r.Commit)]
		if !ok {
			return nil, false, nil
		}
		if seq >= closing {
			rep.Renames = append(rep.Renames, r)
		}
	}
	return rep, true, nil
}

// recipeFailsAbove reports whether a version of a recipe above fork does
// not load (memoized: BlameAbove asks it for every changed key).
func (h *History) recipeFailsAbove(fork int) bool {
	h.mu.Lock()
	fails, known := h.unloadedAbove[fork]
	h.mu.Unlock()
	if known {
		return fails
	}
	for _, k := range h.KeysChangedAfter(fork) {
		if _, notes := h.Keys[k].EventsAbove(fork); len(notes) > 0 {
			fails = true
			break
		}
	}
	h.mu.Lock()
	if h.unloadedAbove == nil {
		h.unloadedAbove = map[int]bool{}
	}
	h.unloadedAbove[fork] = fails
	h.mu.Unlock()
	return fails
}

// track follows one field of a recipe back through its events: cur is its
// path in the version being examined; ev the event that set it, once done.
type track struct {
	cur  string
	done bool
	ev   *RecipeEvent
}

func newTracks(fields []config.Field) []track {
	ts := make([]track, len(fields))
	for i, f := range fields {
		ts[i].cur = f.Path
	}
	return ts
}

// follow walks the timeline tl (newest first) until every track is done,
// listing on rep the renames it passes.
func (h *History) follow(ts []track, tl []*RecipeEvent, rep *BlameReport) error {
	open := 0
	for _, t := range ts {
		if !t.done {
			open++
		}
	}
	for _, e := range tl {
		if open == 0 {
			break
		}
		if e.Kind == EvRenamed && e.From != "" {
			ref, err := h.Ref(e.Seq)
			if err != nil {
				return err
			}
			rep.Renames = append(rep.Renames, Rename{From: e.From, To: e.Key, CommitRef: *ref})
		}
		for i := range ts {
			t := &ts[i]
			if t.done {
				continue
			}
			if e.Kind == EvCreated {
				t.done, t.ev = true, e
				open--
				continue
			}
			c, hit := changeAt(e.Diff, t.cur)
			if !hit {
				t.cur = e.Diff.OldPath(t.cur)
				continue
			}
			if h.ignore[e.Seq] {
				if c.Kind == config.Changed {
					t.cur = c.OldPath
					continue
				}
				if old, ok := lookThrough(e.Diff, t.cur, c); ok {
					t.cur = old
					continue
				}
			}
			t.done, t.ev = true, e
			open--
		}
	}
	return nil
}

// blameField is the blame of field f (of key, whose first line is off
// lines down its file) by the event of its done track t.
func (h *History) blameField(key string, f config.Field, off int, t track) (BlameField, error) {
	bf := BlameField{Path: f.Path, Value: f.Value, Line: f.Line + off}
	ref, err := h.Ref(t.ev.Seq)
	if err != nil {
		return bf, err
	}
	bf.CommitRef, bf.Event = *ref, t.ev.Kind
	if t.ev.Kind == EvRenamed && changeHits(t.ev.Diff, t.cur) {
		bf.Event = EvChanged
	}
	if t.ev.Key != key {
		bf.Key = t.ev.Key
	}
	return bf, nil
}

func changeHits(d *config.RecipeDiff, p string) bool {
	_, ok := changeAt(d, p)
	return ok
}

// changeAt finds the change that set the field at path p (in the new
// version): a changed leaf at p, or an added subtree enclosing p.
func changeAt(d *config.RecipeDiff, p string) (config.Change, bool) {
	if d == nil {
		return config.Change{}, false
	}
	for _, c := range d.Changes {
		switch c.Kind {
		case config.Changed:
			if c.Path == p {
				return c, true
			}
		case config.Added:
			if config.HasPathPrefix(p, c.Path) {
				return c, true
			}
		}
	}
	return config.Change{}, false
}

// lookThrough maps a field added by an ignored commit to the leaf the
// commit removed with the same value and the longest common path suffix
// (a restructure renames containers, not leaves).
func lookThrough(d *config.RecipeDiff, p string, added config.Change) (string, bool) {
	var want string
	for _, f := range added.Leaves() {
		if f.Path == p {
			want = f.Value
		}
	}
	best, bestScore := "", 0
	for _, c := range d.Changes {
		if c.Kind != config.Removed {
			continue
		}
		for _, f := range c.Leaves() {
			old := f.Path
			if f.Value != want {
				continue
			}
			if s := commonSuffix(p, old); s > bestScore {
				best, bestScore = old, s
			}
		}
	}
	return best, bestScore > 0
}

var segment = regexp.MustCompile(`[^.\[\]]+`)

// commonSuffix counts the trailing path segments (list indexes ignored)
// two paths share.
func commonSuffix(a, b string) int {
	sa, sb := segment.FindAllString(a, -1), segment.FindAllString(b, -1)
	n := 0
	for i, j := len(sa)-1, len(sb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if isIndex(sa[i]) && isIndex(sb[j]) {
			continue
		}
		if sa[i] != sb[j] {
			break
		}
		n++
	}
	return n
}

func isIndex(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// PathMatch reports whether a field path matches a --path filter: the
// path itself or one of its ancestors, or a pattern with '*' (any run of
// characters) matching the path.
func PathMatch(filter, p string) bool {
	if filter == "" {
		return true
	}
	if strings.Contains(filter, "*") {
		return globMatch(filter, p)
	}
	return config.HasPathPrefix(p, filter) || config.HasPathPrefix(filter, p)
}
