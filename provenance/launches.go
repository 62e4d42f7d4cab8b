package provenance

import (
	"context"
	"maps"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// EvLaunch marks a log item where what the recipe's points launch changed
// while its config did not (a script, a sourced helper, a launcher).
const EvLaunch EventKind = "launch"

// LaunchVersion is what a recipe's points launch from a commit on: the
// fields of recipe.LaunchFields.
type LaunchVersion struct {
	Seq    int    `json:"-"`
	Commit string `json:"commit"`
	// Key is the recipe's key at that commit (renames).
	Key    string            `json:"key"`
	Fields map[string]string `json:"fields"`
	// Points are the recipe's points at the commit, by their parameters
	// (recipe.PointID); NotKnown says why some of them launch nothing
	// perflog could read ("" when every point launched). A point whose
	// launch is not known has no value of its own here: it is neither a
	// change nor a removal, and its history is seen through the stretch.
	Points   []string `json:"points,omitempty"`
	NotKnown string   `json:"not_known,omitempty"`
}

// LaunchOptions are what a launch history needs beyond the history: the
// repository's files and how to dry-run.
type LaunchOptions struct {
	Repo   *gitscan.Repo
	DryRun dryrun.Options
	// Progress, when set, is told of the commits walked.
	Progress func(Progress)
	// Sweep, when set, is shared by the walks of several recipes
	// (each walk makes one of its own otherwise).
	Sweep *recipe.SweepCache
}

// Launches lists, oldest first, the versions of what key's points launch
// up to rev: a version at each commit where the launch fields changed,
// whichever file changed them (the recipe, its script, a helper it
// sources, its launcher, runners.yaml).
//
// A recipe's points are dry-run at the first commit of each version of
// its config, then again only at a commit that changed a file the last
// dry run read (revfs.Recorder): one dry run per distinct set of inputs,
// and a commit that touches none of them costs a few tree lookups.
func (h *History) Launches(ctx context.Context, key string, rev plumbing.Hash, o LaunchOptions) ([]LaunchVersion, error) {
	st, err := h.LaunchesFrom(ctx, key, rev, o, nil)
	if err != nil {
		return nil, err
	}
	return st.Versions, nil
}

// LaunchFactsVersion names how launches are dry-run and read as fields;
// it changes with either, and a stored walk of another version is walked
// again.
const LaunchFactsVersion = "21"

// LaunchState is a launch walk that can be resumed: the versions up to
// Through and what its last dry run read. An index stores it, so a new
// commit costs only the dry runs it makes necessary.
type LaunchState struct {
	// Version is LaunchFactsVersion when the walk was made.
	Version  string          `json:"version"`
	Key      string          `json:"key"`
	Through  string          `json:"through"`
	Versions []LaunchVersion `json:"versions"`
	Watch    []Watched       `json:"watch"`
	// Blame are the launch fields' blame at Through (BlameLaunch), once
	// asked for.
	Blame []BlameField `json:"blame,omitempty"`
	// Log is the key's whole log at Through with these launches (Log with
	// no Path and no After, newest first), once asked for.
	Log []LogItem `json:"log,omitempty"`
}

// LaunchesFrom is Launches resumed from prev, a walk of the same key that
// went through an earlier commit of the chain (nil, or one that does not
// fit this history: from the start).
func (h *History) LaunchesFrom(ctx context.Context, key string, rev plumbing.Hash, o LaunchOptions, prev *LaunchState) (*LaunchState, error) {
	seq, err := h.seqOf(rev)
	if err != nil {
		return nil, err
	}
	if h.recipeValueAt(key, seq) == nil {
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
	st := &LaunchState{Version: LaunchFactsVersion, Key: key, Through: rev.String()}
	if vs, ok := h.walkedPast(key, seq, prev); ok {
		// no Watch: a walk to an older commit is not resumed; the
		// further one is kept (index.Source.walk)
		st.Versions = vs
		return st, nil
	}
	var watch []Watched // what the last dry run read
	done := -1          // the seqs up to it are walked
	if through, ok := h.resumable(key, seq, prev); ok {
		st.Versions = prev.Versions
		for i := range st.Versions {
			st.Versions[i].Seq, _ = h.SeqOf(plumbing.NewHash(st.Versions[i].Commit))
		}
		watch, done = prev.Watch, through
	}
	if o.DryRun.Memo == nil {
		o.DryRun.Memo = dryrun.NewMemo()
	}
	if o.DryRun.Sandbox == nil { // the walk's dry runs share what they parse
		o.DryRun.Sandbox = dryrun.InProcess()
	}
	sweep := o.Sweep
	if sweep == nil {
		sweep = recipe.NewSweepCache()
	}
	for i, sg := range segs {
		end := seq
		if i+1 < len(segs) {
			end = segs[i+1].from - 1
		}
		if end <= done {
			continue
		}
		v, ok := h.RecipeAt(sg.key, sg.from)
		if !ok {
			continue
		}
		m := &config.Master{Files: []string{v.File}, Keys: []string{sg.key}, Recipes: map[string]*config.Recipe{sg.key: v}}
		from := sg.from
		if from <= done {
			from = done + 1 // resumed inside this version of the config
		} else {
			watch = nil // a new version of the config: dry-run again
		}
		for s := from; s <= end; s++ {
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
			rec := revfs.NewRecorder(tree)
			rv := recipe.NewRev(short(commit), rec, h.settings)
			rv.UseMaster(m, nil)
			rv.UseSweepCache(sweep)
			pls, err := rv.DryRunKey(ctx, sg.key, 0, o.DryRun)
			if err != nil {
				return nil, err
			}
			watch = watchOf(tree, rec.Paths(), rec.Dirs())
			f := recipe.LaunchFields(pls)
			ids, notKnown := recipe.LaunchPoints(pls)
			if n := len(st.Versions); n > 0 {
				last := &st.Versions[n-1]
				if maps.Equal(last.Fields, f) && slices.Equal(last.Points, ids) && last.NotKnown == notKnown {
					continue
				}
			}
			st.Versions = append(st.Versions, LaunchVersion{Seq: s, Commit: commit.String(), Key: sg.key, Fields: f,
				Points: ids, NotKnown: notKnown})
		}
	}
	st.Watch = watch
	return st, nil
}

// walkedPast returns prev's versions up to seq when prev walked key's
// launches on this chain through seq and beyond (an index brought to a
// later commit, a branch's, then asked about an older one): what a walk
// to seq finds, without a dry run.
func (h *History) walkedPast(key string, seq int, prev *LaunchState) ([]LaunchVersion, bool) {
	if prev == nil || prev.Version != LaunchFactsVersion || prev.Key != key {
		return nil, false
	}
	if t, ok := h.SeqOf(plumbing.NewHash(prev.Through)); !ok || t <= seq {
		return nil, false
	}
	var out []LaunchVersion
	for _, v := range prev.Versions {
		s, ok := h.SeqOf(plumbing.NewHash(v.Commit))
		if !ok {
			return nil, false
		}
		if s <= seq {
			v.Seq = s
			out = append(out, v)
		}
	}
	return out, true
}

// resumable reports whether prev can be resumed at seq: the same key, its
// Through and every version's commit on this chain at or before seq, and
// no version of the recipe's config after Through (the walk then starts
// that version afresh anyway). through is Through's seq.
func (h *History) resumable(key string, seq int, prev *LaunchState) (through int, ok bool) {
	if prev == nil || prev.Version != LaunchFactsVersion || prev.Key != key || prev.Watch == nil {
		return 0, false
	}
	t, ok := h.SeqOf(plumbing.NewHash(prev.Through))
	if !ok || t > seq {
		return 0, false
	}
	for _, v := range prev.Versions {
		if s, ok := h.SeqOf(plumbing.NewHash(v.Commit)); !ok || s > t {
			return 0, false
		}
	}
	return t, true
}

// Watched is a path a dry run read with what was there (its object id,
// "" for nothing), or a directory it listed with its names.
type Watched struct {
	Path string `json:"path"`
	List bool   `json:"list,omitempty"`
	ID   string `json:"id"`
}

func (w *Watched) read(t *gitscan.Tree) { w.ID = t.PathID(w.Path, w.List) }

func watchOf(t *gitscan.Tree, paths, dirs []string) []Watched {
	out := make([]Watched, 0, len(paths)+len(dirs))
	for _, p := range paths {
		out = append(out, Watched{Path: p})
	}
	for _, d := range dirs {
		out = append(out, Watched{Path: d, List: true})
	}
	for i := range out {
		out[i].read(t)
	}
	return out
}

// unchanged reports whether every watched path holds what it held.
func unchanged(t *gitscan.Tree, ws []Watched) bool {
	for _, w := range ws {
		now := Watched{Path: w.Path, List: w.List}
		now.read(t)
		if now != w {
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

// LaunchChanges are the field changes from launch version a to b
// (either may be nil: nothing launched), point by point: a point's
// fields where both know its launch, and its state where that differs.
func LaunchChanges(a, b *LaunchVersion) []FieldChange { return netLaunchChanges(a, b, "") }

// LaunchSteps are the changes each of vs made (oldest first; see
// launchSteps): what an index stores as a recipe's launch changes.
func LaunchSteps(vs []LaunchVersion) [][]FieldChange { return launchSteps(vs, "") }

// launchChanges are the field changes from a to b (either may be nil).
func launchChanges(a, b *LaunchVersion, filter string) []FieldChange {
	var af, bf map[string]string
	if a != nil {
		af = a.Fields
	}
	if b != nil {
		bf = b.Fields
	}
	names := slices.Collect(maps.Keys(af))
	for k := range bf {
		if _, ok := af[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var out []FieldChange
	for _, k := range names {
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
// with the commit since which it has held its value. A field is followed
// point by point (recipe.PointID): the points it covers now, back to the
// first version where one of them launched something else, or where none
// of them existed. A stretch where none of its points' launch was known
// is seen through when the value is the same on its far side (NotKnown);
// when it is not, or nothing was known before the stretch, the value was
// set somewhere in it, and SetIn says so rather than crediting the commit
// that made the launch known again.
func (h *History) BlameLaunch(key string, rev plumbing.Hash, vs []LaunchVersion) ([]BlameField, error) {
	seq, err := h.seqOf(rev)
	if err != nil {
		return nil, err
	}
	last := -1
	for i := range vs {
		if vs[i].Seq <= seq {
			last = i
		}
	}
	if last < 0 {
		return nil, nil
	}
	lv := newLaunchViews(vs)
	cur := lv.at(last)
	var out []BlameField
	for _, k := range slices.Sorted(maps.Keys(vs[last].Fields)) {
		v := vs[last].Fields[k]
		path, q := recipe.SplitField(k)
		var ids []string
		for _, id := range cur.ids {
			if (q == "" || q == id || q == recipe.CurveOfID(id)) && (path == statusPath || cur.known(id)) {
				ids = append(ids, id)
			}
		}
		since, gapLo := last, -1 // gapLo..since-1: versions where none of ids was known
		var seen []LaunchGap
		born := true // the walk ended where the points began (not at another value)
		for j := last; j > 0; j-- {
			w := lv.at(j - 1)
			present, knownN, same := 0, 0, true
			for _, id := range ids {
				if !w.has[id] {
					continue
				}
				present++
				if path != statusPath && !w.known(id) {
					continue
				}
				x, ok := w.value(path, id)
				knownN++
				if !ok || x != v {
					same = false
				}
			}
			if present == 0 {
				break
			}
			if knownN == 0 {
				gapLo = j - 1
				continue
			}
			if !same {
				born = false
				break
			}
			if gapLo >= 0 {
				g, err := h.launchGap(vs, gapLo, since)
				if err != nil {
					return nil, err
				}
				seen = append(seen, *g)
				gapLo = -1
			}
			since = j - 1
		}
		ref, err := h.Ref(vs[since].Seq)
		if err != nil {
			return nil, err
		}
		bf := BlameField{Path: k, Value: v, CommitRef: *ref, Event: EvChanged, NotKnown: seen}
		switch {
		case gapLo >= 0:
			from, err := h.Ref(vs[gapLo].Seq)
			if err != nil {
				return nil, err
			}
			bf.SetIn = &LaunchGap{From: *from, To: *ref, Reason: vs[gapLo].NotKnown}
		case born && since == 0:
			bf.Event = EvCreated
		}
		if vs[since].Key != key {
			bf.Key = vs[since].Key
		}
		out = append(out, bf)
	}
	return out, nil
}

// launchGap is the stretch of versions lo to hi-1 of vs: from the first
// commit of lo until hi's, the commit that ended it, and why the launch
// was not known at its start.
func (h *History) launchGap(vs []LaunchVersion, lo, hi int) (*LaunchGap, error) {
	from, err := h.Ref(vs[lo].Seq)
	if err != nil {
		return nil, err
	}
	to, err := h.Ref(vs[hi].Seq)
	if err != nil {
		return nil, err
	}
	return &LaunchGap{From: *from, To: *to, Reason: vs[lo].NotKnown}, nil
}
