package provenance

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/pyyaml"
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
	once sync.Once
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
	kh.once.Do(kh.materialize)
	return kh.evs
}

func (kh *KeyHistory) materialize() {
	var last *block
	for _, r := range kh.raw {
		if r.b != nil {
			r.b.load()
			if r.b.err != nil {
				kh.note = append(kh.note, Note{Seq: r.seq, Path: r.file, Message: fmt.Sprintf("recipe %s does not load: %v", kh.Key, r.b.err)})
				continue
			}
		}
		e := &RecipeEvent{Kind: r.kind, Seq: r.seq, Key: kh.Key, From: r.from, To: r.to, File: r.file}
		switch {
		case r.kind == EvDeleted || (r.kind == EvRenamed && r.to != ""):
			if last == nil {
				continue
			}
			e.Diff = config.Diff(last.val, nil)
		case r.kind == EvRenamed:
			r.old.load()
			e.Diff = config.Diff(r.old.val, r.b.val)
		case last == nil:
			e.Kind, e.Diff = EvCreated, config.Diff(nil, r.b.val)
		default:
			e.Diff = config.Diff(last.val, r.b.val)
			if len(e.Diff.Changes) == 0 && len(e.Diff.Moves) == 0 {
				last = r.b // formatting or comments only
				continue
			}
		}
		last = r.b
		kh.evs = append(kh.evs, e)
	}
}

// A key that disappears and a key that appears in the same commit are one
// recipe renamed when their recipes share RenameThreshold of their leaves,
// or RenameNamedThreshold when the names are close too (one extends the
// other, as -agentic became -agentic-hicache, or they are within a
// quarter of their length in edits).
const (
	RenameThreshold      = 0.8
	RenameNamedThreshold = 0.5
)

func namesClose(a, b string) bool {
	if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		return true
	}
	return config.Distance(a, b)*4 <= max(len(a), len(b))
}

func (h *History) keyHistory(k string) *KeyHistory {
	kh := h.Keys[k]
	if kh == nil {
		kh = &KeyHistory{Key: k}
		h.Keys[k] = kh
	}
	return kh
}

// buildRecipes walks the master config versions oldest first and records,
// per key, the commits whose text of the recipe changed; what changed is
// computed per key on demand (KeyHistory.Events). A key that disappears
// while a key with a near-identical recipe appears in the same commit was
// renamed: the new key's history continues the old one's. Only the
// recipes involved in such a commit are parsed here.
func (h *History) buildRecipes() {
	var prev map[string]placedIn
	for _, v := range h.cfgVersions {
		if v.Invalid {
			continue
		}
		cur := v.recipes
		var gone, came []string
		for k, p := range prev {
			c, ok := cur[k]
			if !ok {
				gone = append(gone, k)
				continue
			}
			if c.b != p.b {
				kh := h.keyHistory(k)
				kh.raw = append(kh.raw, rawEvent{kind: EvChanged, seq: v.Seq, file: c.file, b: c.b})
			}
		}
		for _, k := range v.order {
			if _, ok := prev[k]; !ok {
				came = append(came, k)
			}
		}
		sort.Strings(gone)
		renamed := pairRenames(gone, came, func(k string) *block { return prev[k].b }, func(k string) *block { return cur[k].b })
		for _, k := range came {
			c := cur[k]
			kh := h.keyHistory(k)
			if old, ok := renamed[k]; ok {
				kh.raw = append(kh.raw, rawEvent{kind: EvRenamed, seq: v.Seq, from: old, file: c.file, old: prev[old].b, b: c.b})
				continue
			}
			kh.raw = append(kh.raw, rawEvent{kind: EvCreated, seq: v.Seq, file: c.file, b: c.b})
		}
		to := map[string]string{}
		for n, old := range renamed {
			to[old] = n
		}
		for _, k := range gone {
			kh := h.keyHistory(k)
			ev := rawEvent{kind: EvDeleted, seq: v.Seq, file: prev[k].file}
			if n, ok := to[k]; ok {
				ev.kind, ev.to = EvRenamed, n
			}
			kh.raw = append(kh.raw, ev)
		}
		prev = cur
	}
}

// pairRenames pairs disappearing keys with appearing ones whose recipes
// are near-identical, most similar first (ties: the closer name).
func pairRenames(gone, came []string, old, new func(string) *block) map[string]string {
	out := map[string]string{}
	if len(gone) == 0 || len(came) == 0 {
		return out
	}
	type cand struct {
		g, c string
		s    float64
		d    int
	}
	var cs []cand
	for _, g := range gone {
		for _, c := range came {
			a, b := old(g), new(c)
			a.load()
			b.load()
			if a.err != nil || b.err != nil {
				continue
			}
			s := config.Similarity(a.val, b.val)
			if s >= RenameThreshold || (s >= RenameNamedThreshold && namesClose(g, c)) {
				cs = append(cs, cand{g, c, s, config.Distance(g, c)})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].s != cs[j].s {
			return cs[i].s > cs[j].s
		}
		return cs[i].d < cs[j].d
	})
	usedG := map[string]bool{}
	for _, c := range cs {
		if usedG[c.g] || out[c.c] != "" {
			continue
		}
		usedG[c.g] = true
		out[c.c] = c.g
	}
	return out
}

// RecipeAt returns the recipe of key at seq (the newest loadable version
// at or before seq), with the master config file holding it.
func (h *History) RecipeAt(key string, seq int) (v *pyyaml.Value, file string, line int, ok bool) {
	p, ok := h.placedAt(key, seq)
	if !ok {
		return nil, "", 0, false
	}
	return p.b.val, p.file, int(p.line), true
}

// placedAt finds key's recipe at seq; a version of it that does not load
// gives way to the newest older one that does.
func (h *History) placedAt(key string, seq int) (placedIn, bool) {
	ver := h.cfgVersionAt(seq)
	if ver == nil {
		return placedIn{}, false
	}
	if _, ok := ver.recipes[key]; !ok {
		return placedIn{}, false
	}
	for i := len(h.cfgVersions) - 1; i >= 0; i-- {
		v := &h.cfgVersions[i]
		if v.Seq > seq || v.Invalid {
			continue
		}
		p, ok := v.recipes[key]
		if !ok {
			return placedIn{}, false
		}
		if p.b.load(); p.b.err == nil {
			return p, true
		}
	}
	return placedIn{}, false
}

// RecipeKeysAt returns the recipe keys at seq in load order.
func (h *History) RecipeKeysAt(seq int) []string {
	if h.headKeys != nil && seq == len(h.Chain)-1 {
		return h.headKeys
	}
	if ver := h.cfgVersionAt(seq); ver != nil {
		return ver.order
	}
	return nil
}

// lineOffset returns what to add to the lines of key's recipe nodes at
// seq to get file lines.
func (h *History) lineOffset(key string, seq int) int {
	p, _ := h.placedAt(key, seq)
	return int(p.off)
}

func (h *History) cfgVersionAt(seq int) *cfgVersion {
	var out *cfgVersion
	for i := range h.cfgVersions {
		if h.cfgVersions[i].Seq > seq {
			break
		}
		if !h.cfgVersions[i].Invalid {
			out = &h.cfgVersions[i]
		}
	}
	return out
}

var globs sync.Map // pattern → *regexp.Regexp

func globMatch(pattern, key string) bool {
	re, ok := globs.Load(pattern)
	if !ok {
		re, _ = globs.LoadOrStore(pattern, config.GlobRegexp(pattern))
	}
	return re.(*regexp.Regexp).MatchString(key)
}
