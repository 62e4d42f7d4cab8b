package provenance

import (
	"regexp"
	"sort"
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
	// From is the previous key of a renamed recipe.
	From string
	// File is the master config holding the key after the event (before
	// it, for a deletion).
	File string
	// Diff holds the field changes (for created: one addition at the root
	// path ""; for deleted: one removal).
	Diff *config.RecipeDiff
}

// KeyHistory is the life of one recipe key, oldest event first.
type KeyHistory struct {
	Key    string
	Events []RecipeEvent
}

// RenameThreshold is the share of leaves a disappearing and an appearing
// key must have in common, in one commit, to be one recipe renamed.
const RenameThreshold = 0.8

func (b *block) canonical() string {
	b.canonOnce.Do(func() {
		b.load()
		b.canon = config.Canonical(b.val)
	})
	return b.canon
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
// per key, the commits that changed it (see config.Diff for what counts as
// a change; formatting and comments do not). A key that disappears while a
// key with at least RenameThreshold of its leaves appears in the same
// commit was renamed: the new key's history continues the old one's.
func (h *History) buildRecipes() {
	var prev map[string]placedIn
	for _, v := range h.cfgVersions {
		if v.Invalid {
			continue
		}
		cur := v.recipes
		var gone, came []string
		for k, p := range prev {
			if _, ok := cur[k]; !ok {
				gone = append(gone, k)
				continue
			}
			c := cur[k]
			if c.b == p.b || c.b.canonical() == p.b.canonical() {
				continue
			}
			kh := h.keyHistory(k)
			kh.Events = append(kh.Events, RecipeEvent{Kind: EvChanged, Seq: v.Seq, Key: k, File: c.file, Diff: config.Diff(p.b.val, c.b.val)})
		}
		for _, k := range v.order {
			if _, ok := prev[k]; !ok {
				came = append(came, k)
			}
		}
		sort.Strings(gone)
		renamed := pairRenames(gone, came, func(k string) *pyyaml.Value { return prev[k].b.val }, func(k string) *pyyaml.Value { return cur[k].b.val })
		for _, k := range came {
			c := cur[k]
			kh := h.keyHistory(k)
			if old, ok := renamed[k]; ok {
				kh.Events = append(kh.Events, RecipeEvent{Kind: EvRenamed, Seq: v.Seq, Key: k, From: old, File: c.file, Diff: config.Diff(prev[old].b.val, c.b.val)})
				continue
			}
			kh.Events = append(kh.Events, RecipeEvent{Kind: EvCreated, Seq: v.Seq, Key: k, File: c.file, Diff: config.Diff(nil, c.b.val)})
		}
		from := map[string]bool{}
		for _, old := range renamed {
			from[old] = true
		}
		for _, k := range gone {
			kh := h.keyHistory(k)
			ev := RecipeEvent{Kind: EvDeleted, Seq: v.Seq, Key: k, File: prev[k].file, Diff: config.Diff(prev[k].b.val, nil)}
			for n, old := range renamed {
				if old == k {
					ev.Kind, ev.From = EvRenamed, n // renamed away: From names the new key
				}
			}
			kh.Events = append(kh.Events, ev)
		}
		prev = cur
	}
}

// pairRenames pairs disappearing keys with appearing ones whose recipes
// are near-identical, most similar first (ties: the closer name).
func pairRenames(gone, came []string, old, new func(string) *pyyaml.Value) map[string]string {
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
			if s := config.Similarity(old(g), new(c)); s >= RenameThreshold {
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
	ver := h.cfgVersionAt(seq)
	if ver == nil {
		return nil, "", 0, false
	}
	p, ok := ver.recipes[key]
	if !ok {
		return nil, "", 0, false
	}
	p.b.load()
	return p.b.val, p.file, p.line, true
}

// RecipeKeysAt returns the recipe keys at seq in load order.
func (h *History) RecipeKeysAt(seq int) []string {
	if ver := h.cfgVersionAt(seq); ver != nil {
		return ver.order
	}
	return nil
}

// lineOffset returns what to add to the lines of key's recipe nodes at
// seq to get file lines.
func (h *History) lineOffset(key string, seq int) int {
	if ver := h.cfgVersionAt(seq); ver != nil {
		return ver.recipes[key].off
	}
	return 0
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
