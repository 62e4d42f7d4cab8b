package recipe

import (
	"bytes"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/perflog/perflog/config"
)

// Change is what a change base..head did to the recipes: the two
// revisions and the files that differ between them.
type Change struct {
	Base, Head *Rev
	// Changed are the paths that differ (added, modified or deleted).
	Changed []string

	recipes    []RecipeChange
	recipesErr error
	done       bool
}

// NewChange describes base..head given the paths that differ (in any
// order, repeats allowed).
func NewChange(base, head *Rev, changed []string) *Change {
	c := append([]string(nil), changed...)
	sort.Strings(c)
	if base != nil && head != nil && base.sweep == nil && head.sweep == nil {
		// the two sides share most files: what is read of one file (its
		// options, a workflow, a generator) is read once
		sc := NewSweepCache()
		base.sweep, head.sweep = sc, sc
	}
	return &Change{Base: base, Head: head, Changed: slices.Compact(c)}
}

// Kinds of RecipeChange.
const (
	RecipeAdded   = "added"
	RecipeRemoved = "removed"
	RecipeChanged = "changed"
	RecipeRenamed = "renamed"
)

// RecipeChange is one recipe the change changed: its config (Diff) or the
// files that run it (Files).
type RecipeChange struct {
	Key  string
	Kind string // added, removed, changed, renamed
	// OldKey is the key before a rename.
	OldKey string
	// Diff is the structural diff of the recipe (nil when only its files
	// changed; for an added or removed recipe every field).
	Diff *config.RecipeDiff
	// Files are the changed scripts and srt-slurm recipe files that run it.
	Files []string
	// File and Line locate the recipe (at head; at base when removed).
	File string
	Line int
}

// Touched reports whether a path changed.
func (c *Change) Touched(p string) bool {
	i := sort.SearchStrings(c.Changed, p)
	return i < len(c.Changed) && c.Changed[i] == p
}

// Recipes lists the recipes the change changed, in head key order
// (removed ones last).
func (c *Change) Recipes() ([]RecipeChange, error) {
	if c.done {
		return c.recipes, c.recipesErr
	}
	c.done = true
	c.recipes, c.recipesErr = c.compute()
	return c.recipes, c.recipesErr
}

func (c *Change) compute() ([]RecipeChange, error) {
	headKeys, err := c.Head.Keys()
	if err != nil {
		return nil, err
	}
	baseKeys, err := c.Base.Keys()
	if err != nil {
		baseKeys = nil // a base that does not load: every head recipe is new
	}
	inBase := map[string]bool{}
	for _, k := range baseKeys {
		inBase[k] = true
	}
	inHead := map[string]bool{}
	for _, k := range headKeys {
		inHead[k] = true
	}
	memo := config.NewMemo()
	byKey := map[string]*RecipeChange{}
	var order []string
	add := func(rc RecipeChange) *RecipeChange {
		if x, ok := byKey[rc.Key]; ok {
			return x
		}
		order = append(order, rc.Key)
		byKey[rc.Key] = &rc
		return byKey[rc.Key]
	}
	configsTouched := false
	for _, f := range append(c.Head.masterPaths(), c.Base.masterPaths()...) {
		configsTouched = configsTouched || c.Touched(f)
	}
	var gone, came []string
	if configsTouched {
		for _, k := range headKeys {
			if !inBase[k] {
				came = append(came, k)
				continue
			}
			_, ht, hok := c.Head.Text(k)
			_, bt, bok := c.Base.Text(k)
			if hok && bok && bytes.Equal(ht, bt) {
				continue
			}
			h, _, err := c.Head.Recipe(k)
			if err != nil {
				return nil, err
			}
			b, _, err := c.Base.Recipe(k)
			if err != nil || h == nil || b == nil {
				continue
			}
			d := config.DiffMemo(b, h, memo)
			if len(d.Changes) == 0 {
				continue // formatting or comments only
			}
			add(RecipeChange{Key: k, Kind: RecipeChanged, Diff: d, File: h.File, Line: h.Line})
		}
		for _, k := range baseKeys {
			if !inHead[k] {
				gone = append(gone, k)
			}
		}
	}
	val := func(r *Rev) func(string) *config.Recipe {
		return func(k string) *config.Recipe {
			rec, ok, err := r.Recipe(k)
			if err != nil || !ok {
				return nil
			}
			return rec
		}
	}
	headRec, baseRec := val(c.Head), val(c.Base)
	renames := config.PairRenames(gone, came, baseRec, headRec, memo)
	renamedFrom := map[string]bool{}
	for _, k := range came {
		h := headRec(k)
		if h == nil {
			continue
		}
		if old, ok := renames[k]; ok {
			renamedFrom[old] = true
			add(RecipeChange{Key: k, Kind: RecipeRenamed, OldKey: old, Diff: config.DiffMemo(baseRec(old), h, memo), File: h.File, Line: h.Line})
			continue
		}
		add(RecipeChange{Key: k, Kind: RecipeAdded, Diff: config.DiffMemo(nil, h, memo), File: h.File, Line: h.Line})
	}
	// recipes whose scripts or srt-slurm recipe files changed
	if err := c.scriptChanges(headKeys, add); err != nil {
		return nil, err
	}
	var out []RecipeChange
	pos := map[string]int{}
	for i, k := range headKeys {
		pos[k] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return pos[order[i]] < pos[order[j]] })
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	for _, k := range gone {
		if renamedFrom[k] {
			continue
		}
		rc := RecipeChange{Key: k, Kind: RecipeRemoved}
		if b := baseRec(k); b != nil {
			rc.Diff, rc.File, rc.Line = config.DiffMemo(b, nil, memo), b.File, b.Line
		}
		out = append(out, rc)
	}
	return out, nil
}

// scriptChanges adds the head recipes run by a changed script or
// srt-slurm recipe file. Candidates are found by text first (the block
// names the script's model code and precision, or the recipe file), so
// that only they are parsed and resolved.
func (c *Change) scriptChanges(headKeys []string, add func(RecipeChange) *RecipeChange) error {
	var changed []string
	for _, p := range c.Changed {
		if strings.HasPrefix(p, "benchmarks/") && (strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			changed = append(changed, p)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	for _, k := range headKeys {
		if _, text, ok := c.Head.Text(k); ok && !mayRun(text, changed) {
			continue
		}
		drivers, err := c.Head.Drivers(k)
		if err != nil {
			return err
		}
		// a script the base ran that the head no longer has as one (it was
		// deleted, or replaced by a link or a submodule) is changed too
		if _, ok, _ := c.Base.Recipe(k); ok {
			if bd, err := c.Base.Drivers(k); err == nil {
				for _, d := range bd {
					if !slices.Contains(drivers, d) {
						drivers = append(drivers, d)
					}
				}
			}
		}
		var hit []string
		for _, d := range drivers {
			if c.Touched(d) {
				hit = append(hit, d)
			}
		}
		if len(hit) == 0 {
			continue
		}
		rec, ok, err := c.Head.Recipe(k)
		if err != nil || !ok {
			continue
		}
		rc := add(RecipeChange{Key: k, Kind: RecipeChanged, File: rec.File, Line: rec.Line})
		rc.Files = append(rc.Files, hit...)
	}
	return nil
}

// mayRun is a cheap text filter: could a recipe whose block is text run
// one of the changed files? A script's name starts with the model code and
// precision; an srt-slurm recipe file is named in CONFIG_FILE.
func mayRun(text []byte, changed []string) bool {
	for _, p := range changed {
		base := strings.TrimSuffix(path.Base(p), path.Ext(p))
		if strings.HasSuffix(p, ".sh") {
			parts := strings.SplitN(base, "_", 3)
			if len(parts) < 2 || (bytes.Contains(text, []byte(parts[0])) && bytes.Contains(text, []byte(parts[1]))) {
				return true
			}
			continue
		}
		if bytes.Contains(text, []byte(base)) {
			return true
		}
	}
	return false
}

func (r *Rev) masterPaths() []string {
	if r.load() != nil {
		return nil
	}
	var out []string
	for _, f := range r.files {
		out = append(out, f.Path)
	}
	return out
}
