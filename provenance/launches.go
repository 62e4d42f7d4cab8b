package provenance

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/recipe"
)

// EvLaunch marks a log item where what the recipe's points launch changed
// while its config did not (a script, a sourced helper, a launcher).
const EvLaunch EventKind = "launch"

// LaunchVersion is what a recipe's points launch from a commit on: the
// fields of recipe.LaunchFields.
type LaunchVersion struct {
	Seq int
	// Key is the recipe's key at that commit (renames).
	Key    string
	Fields map[string]string
}

// LaunchOptions are what a launch history needs beyond the history: the
// repository's files and how to dry-run.
type LaunchOptions struct {
	Repo   *gitscan.Repo
	DryRun recipe.DryRunOptions
	// Progress, when set, is told of the commits walked.
	Progress func(Progress)
}

// Launches lists, oldest first, the versions of what key's points launch
// up to rev: a version at each commit where the launch fields changed,
// whichever file changed them (the recipe, its script, a helper it
// sources, its launcher, runners.yaml).
//
// A recipe's points are dry-run at the first commit of each version of
// its config, then again only at a commit that changed a file the last
// dry run read (recipe.Recorder): one dry run per distinct set of inputs,
// and a commit that touches none of them costs a few tree lookups.
func (h *History) Launches(ctx context.Context, key string, rev plumbing.Hash, o LaunchOptions) ([]LaunchVersion, error) {
	seq, err := h.seqOf(rev)
	if err != nil {
		return nil, err
	}
	if _, _, _, ok := h.RecipeAt(key, seq); !ok {
		return nil, h.unknownKey(key, seq)
	}
	tl := h.keyTimeline(key, seq) // newest first
	type segment struct {
		from int
		key  string
	}
	var segs []segment
	for i := len(tl) - 1; i >= 0; i-- {
		segs = append(segs, segment{tl[i].Seq, tl[i].Key})
	}
	if len(segs) == 0 { // the recipe predates the history examined
		segs = []segment{{0, key}}
	}
	var out []LaunchVersion
	var watch []watched // what the last dry run read
	if o.DryRun.Memo == nil {
		o.DryRun.Memo = recipe.NewDryRunMemo()
	}
	for i, sg := range segs {
		end := seq
		if i+1 < len(segs) {
			end = segs[i+1].from - 1
		}
		v, file, line, ok := h.RecipeAt(sg.key, sg.from)
		if !ok {
			continue
		}
		m := &config.Master{Files: []string{file}, Keys: []string{sg.key},
			Recipes: map[string]*config.Recipe{sg.key: {Key: sg.key, File: file, Line: line, Value: v}}}
		watch = nil // a new version of the config: dry-run again
		for s := sg.from; s <= end; s++ {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if o.Progress != nil && s%64 == 0 {
				o.Progress(Progress{Done: s - segs[0].from, Total: seq - segs[0].from + 1})
			}
			commit := h.Chain[s]
			tree := o.Repo.Tree(commit)
			if watch != nil && unchanged(tree, watch) {
				continue
			}
			rec := recipe.NewRecorder(tree)
			rv := recipe.NewRev(short(commit), rec, h.settings)
			rv.UseMaster(m, nil)
			pls, err := rv.DryRunKey(ctx, sg.key, 0, o.DryRun)
			if err != nil {
				return nil, err
			}
			watch = watchOf(tree, rec.Paths(), rec.Dirs())
			f := recipe.LaunchFields(pls)
			if n := len(out); n > 0 && sameFields(out[n-1].Fields, f) {
				continue
			}
			out = append(out, LaunchVersion{Seq: s, Key: sg.key, Fields: f})
		}
	}
	return out, nil
}

// watched is a path a dry run read with what was there (its object id,
// "" for nothing), or a directory it listed with its names.
type watched struct {
	path  string
	list  bool
	names string
}

func (w *watched) read(t *gitscan.Tree) {
	if w.list {
		w.names = t.PathID(w.path, true)
	} else {
		w.names = t.PathID(w.path, false)
	}
}

func watchOf(t *gitscan.Tree, paths, dirs []string) []watched {
	out := make([]watched, 0, len(paths)+len(dirs))
	for _, p := range paths {
		out = append(out, watched{path: p})
	}
	for _, d := range dirs {
		out = append(out, watched{path: d, list: true})
	}
	for i := range out {
		out[i].read(t)
	}
	return out
}

// unchanged reports whether every watched path holds what it held.
func unchanged(t *gitscan.Tree, ws []watched) bool {
	for _, w := range ws {
		now := watched{path: w.path, list: w.list}
		now.read(t)
		if now != w {
			return false
		}
	}
	return true
}

func sameFields(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// launchAt is the version in force at seq (nil before the first).
func launchAt(vs []LaunchVersion, seq int) *LaunchVersion {
	i := sort.Search(len(vs), func(i int) bool { return vs[i].Seq > seq })
	if i == 0 {
		return nil
	}
	return &vs[i-1]
}

// launchChanges are the field changes from a to b (either may be nil).
func launchChanges(a, b *LaunchVersion, filter string) []FieldChange {
	var af, bf map[string]string
	if a != nil {
		af = a.Fields
	}
	if b != nil {
		bf = b.Fields
	}
	names := map[string]string{}
	for k := range af {
		names[k] = ""
	}
	for k := range bf {
		names[k] = ""
	}
	var out []FieldChange
	for _, k := range recipe.SortedFields(names) {
		if filter != "" && !PathMatch(filter, k) {
			continue
		}
		ov, oldOK := af[k]
		nv, newOK := bf[k]
		switch {
		case oldOK && newOK && ov != nv:
			out = append(out, FieldChange{Kind: config.Changed, Path: k, Old: ov, New: nv, Reach: reach(k, nil)})
		case !oldOK && newOK:
			out = append(out, FieldChange{Kind: config.Added, Path: k, New: nv, Reach: reach(k, nil)})
		case oldOK && !newOK:
			out = append(out, FieldChange{Kind: config.Removed, Path: k, Old: ov, Reach: reach(k, nil)})
		}
	}
	return out
}

// BlameLaunch lists the launch fields of key at rev (see Launches), each
// with the commit since which it has held its value.
func (h *History) BlameLaunch(key string, rev plumbing.Hash, vs []LaunchVersion) ([]BlameField, error) {
	seq, err := h.seqOf(rev)
	if err != nil {
		return nil, err
	}
	cur := launchAt(vs, seq)
	if cur == nil {
		return nil, nil
	}
	last := 0
	for i := range vs {
		if vs[i].Seq <= seq {
			last = i
		}
	}
	var out []BlameField
	for _, k := range recipe.SortedFields(cur.Fields) {
		v := cur.Fields[k]
		j := last
		for j > 0 {
			if w, ok := vs[j-1].Fields[k]; !ok || w != v {
				break
			}
			j--
		}
		ref, err := h.Ref(vs[j].Seq)
		if err != nil {
			return nil, err
		}
		bf := BlameField{Path: k, Value: v, CommitRef: *ref, Event: EvChanged}
		if j == 0 {
			bf.Event = EvCreated
		}
		if vs[j].Key != key {
			bf.Key = vs[j].Key
		}
		out = append(out, bf)
	}
	return out, nil
}

// String renders a version for debugging.
func (v LaunchVersion) String() string {
	return fmt.Sprintf("@%d %s: %d fields", v.Seq, v.Key, len(v.Fields))
}
