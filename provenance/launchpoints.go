package provenance

import (
	"maps"
	"slices"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// A launch version's fields merge its points (recipe.LaunchFields): one
// field where every point launches alike, one per configuration or per
// point where they differ. Changes and blame read them back point by
// point (recipe.PointID), so that adding or removing some points never
// moves another point's history, and only where a point's launch is
// known: a point that was not run, or whose run stopped or failed, has no
// value, and the stretch is seen through, never read as a removal and
// then an addition of everything it launches.

// statusPath is the field of a point's state (recipe.Facts).
const statusPath = "launch.status"

// notRun is the state of a point that has no launch fields.
const notRun = "not run"

// LaunchGap is a stretch of commits in which a recipe's launch was not
// known: From is its first commit, To the commit that ended it (the
// launch known again), Reason why it was not known at its start.
type LaunchGap struct {
	From   CommitRef `json:"from"`
	To     CommitRef `json:"to"`
	Reason string    `json:"reason,omitempty"`
}

// versionView reads a version's fields point by point.
type versionView struct {
	v      *LaunchVersion
	ids    []string
	has    map[string]bool
	byPath map[string]*pathView
}

// pathView is one path's fields: the value of every point, or a value by
// qualifier (a configuration, or one point).
type pathView struct {
	all    string
	hasAll bool
	by     map[string]string
}

func newView(v *LaunchVersion) *versionView {
	w := &versionView{v: v, byPath: map[string]*pathView{}, has: map[string]bool{}}
	quals := map[string]bool{}
	for k, x := range v.Fields {
		p, q := recipe.SplitField(k)
		pv := w.byPath[p]
		if pv == nil {
			pv = &pathView{}
			w.byPath[p] = pv
		}
		if q == "" {
			pv.all, pv.hasAll = x, true
			continue
		}
		if pv.by == nil {
			pv.by = map[string]string{}
		}
		pv.by[q] = x
		quals[q] = true
	}
	w.ids = v.Points
	if w.ids == nil { // a version from before points were kept: its qualifiers
		w.ids = slices.Sorted(maps.Keys(quals))
		if len(w.ids) == 0 {
			w.ids = []string{""}
		}
	}
	for _, id := range w.ids {
		w.has[id] = true
	}
	return w
}

// value is what point id launches for path.
func (w *versionView) value(path, id string) (string, bool) {
	pv := w.byPath[path]
	switch {
	case pv == nil:
		return "", false
	case pv.hasAll:
		return pv.all, true
	}
	if x, ok := pv.by[id]; ok {
		return x, true
	}
	x, ok := pv.by[recipe.CurveOfID(id)]
	return x, ok
}

// state is point id's launch state: a launch status, or notRun.
func (w *versionView) state(id string) string {
	if s, ok := w.value(statusPath, id); ok {
		return s
	}
	return notRun
}

// known reports whether point id's launch was read to its end.
func (w *versionView) known(id string) bool {
	s := w.state(id)
	return s == dryrun.StatusLaunched || s == dryrun.StatusDescribed
}

// launchViews builds the views of vs once each, as they are asked for.
type launchViews struct {
	vs    []LaunchVersion
	views []*versionView
}

func newLaunchViews(vs []LaunchVersion) *launchViews {
	return &launchViews{vs: vs, views: make([]*versionView, len(vs))}
}

func (lv *launchViews) at(i int) *versionView {
	if lv.views[i] == nil {
		lv.views[i] = newView(&lv.vs[i])
	}
	return lv.views[i]
}

// launchSteps are the changes each version of vs (oldest first) made:
// each point's fields against the last version that knew the point's
// launch, and each point's state against the version before. The first
// version's fields are all added.
func launchSteps(vs []LaunchVersion, filter string) [][]FieldChange {
	out := make([][]FieldChange, len(vs))
	if len(vs) == 0 {
		return out
	}
	out[0] = launchChanges(nil, &vs[0], filter)
	lv := newLaunchViews(vs)
	last := map[string]int{} // point → the last version that knew its launch
	seen := map[string]bool{}
	for _, id := range lv.at(0).ids {
		seen[id] = true
		if lv.at(0).known(id) {
			last[id] = 0
		}
	}
	// made is, by a change's field (its point aside), old and new value,
	// the last version that made it: points known again after a stretch
	// that bring a change the others made in it made it there too
	made := map[string]int{}
	madeKey := func(c FieldChange) string {
		p, _ := recipe.SplitField(c.Path)
		return p + "\x00" + c.Old + "\x00" + c.New
	}
	for _, c := range out[0] {
		made[madeKey(c)] = 0
	}
	for i := 1; i < len(vs); i++ {
		b := lv.at(i)
		chs := stateChanges(lv.at(i-1), b, filter)
		byPrev := map[int][]string{}
		var fresh, knownIDs []string // points new in this version; those b knows
		for _, id := range b.ids {
			if !seen[id] {
				seen[id] = true
				if b.known(id) {
					fresh = append(fresh, id)
				}
			}
			if !b.known(id) {
				continue
			}
			knownIDs = append(knownIDs, id)
			if j, ok := last[id]; ok {
				byPrev[j] = append(byPrev[j], id)
			}
			last[id] = i
		}
		chs = append(chs, freshChanges(lv.at(i-1), b, fresh, knownIDs, filter)...)
		for _, j := range slices.Sorted(maps.Keys(byPrev)) {
			pcs := pointChanges(lv.at(j), b, byPrev[j], filter)
			if j < i-1 { // not known in between: made at one of those commits
				pcs = slices.DeleteFunc(pcs, func(c FieldChange) bool { m, ok := made[madeKey(c)]; return ok && m > j })
				for k := range pcs {
					pcs[k].NotKnownFrom = vs[j+1].Commit
				}
			}
			chs = append(chs, pcs...)
		}
		slices.SortStableFunc(chs, func(x, y FieldChange) int { return strings.Compare(x.Path, y.Path) })
		out[i] = chs
		for _, c := range chs {
			made[madeKey(c)] = i
		}
	}
	return out
}

// netLaunchChanges are the changes from a to b (either may be nil:
// nothing launched) of the points both know, and the states that differ.
func netLaunchChanges(a, b *LaunchVersion, filter string) []FieldChange {
	if a == nil || b == nil {
		return launchChanges(a, b, filter)
	}
	va, vb := newView(a), newView(b)
	chs := stateChanges(va, vb, filter)
	var ids []string
	for _, id := range vb.ids {
		if va.has[id] && va.known(id) && vb.known(id) {
			ids = append(ids, id)
		}
	}
	chs = append(chs, pointChanges(va, vb, ids, filter)...)
	slices.SortStableFunc(chs, func(x, y FieldChange) int { return strings.Compare(x.Path, y.Path) })
	return chs
}

// freshChanges say what points new in b launch that the recipe's points
// did not all launch in a (the version before), as added: a setting the
// new points bring. A setting they lack is not news, nor is their client
// (their rows say what they are), and nothing is said when a knew no
// point's launch.
func freshChanges(a, b *versionView, fresh, knownIDs []string, filter string) []FieldChange {
	if len(fresh) == 0 || !slices.ContainsFunc(a.ids, a.known) {
		return nil
	}
	var out []FieldChange
	for _, p := range slices.Sorted(maps.Keys(b.byPath)) {
		if p == statusPath || strings.HasPrefix(p, "launch.client.") {
			continue // the client is sized by the point's own row
		}
		var was string
		had := false
		if pa := a.byPath[p]; pa != nil && pa.hasAll {
			was, had = pa.all, true
		}
		var g changeGroups
		for _, id := range fresh {
			if nv, ok := b.value(p, id); ok && !(had && nv == was) {
				g.add(changeKey{config.Added, "", nv}, id)
			}
		}
		out = g.fields(out, p, knownIDs, filter)
	}
	return out
}

// changeKey groups the points a change of a path is the same for.
type changeKey struct {
	kind     config.ChangeKind
	old, new string
}

// changeGroups are the points of each change of a path, in the order the
// changes were first met.
type changeGroups struct {
	order []changeKey
	ids   map[changeKey][]string
}

func (g *changeGroups) add(k changeKey, id string) {
	if g.ids == nil {
		g.ids = map[changeKey][]string{}
	}
	if g.ids[k] == nil {
		g.order = append(g.order, k)
	}
	g.ids[k] = append(g.ids[k], id)
}

// fields appends each change as fields of path, its points named among
// all (qualifiers).
func (g *changeGroups) fields(out []FieldChange, path string, all []string, filter string) []FieldChange {
	for _, k := range g.order {
		out = appendQualified(out, path, k, qualifiers(g.ids[k], all), filter)
	}
	return out
}

// pointChanges are the field changes from a to b of the points ids, which
// both know, merged back into fields: a change every one of ids shares is
// one field; else one per configuration whose every point among ids
// shares it; else one per point.
func pointChanges(a, b *versionView, ids []string, filter string) []FieldChange {
	if len(ids) == 0 {
		return nil
	}
	paths := slices.Collect(maps.Keys(a.byPath))
	for p := range b.byPath {
		if a.byPath[p] == nil {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []FieldChange
	for _, p := range paths {
		if p == statusPath {
			continue // stateChanges
		}
		pa, pb := a.byPath[p], b.byPath[p]
		if pa != nil && pb != nil && pa.hasAll && pb.hasAll && pa.all == pb.all {
			continue
		}
		// a client option that differs between points is not kept
		// (recipe.LaunchFields): its absence is not known to be one
		client := strings.HasPrefix(p, "launch.client.")
		var g changeGroups
		for _, id := range ids {
			ov, oldOK := a.value(p, id)
			nv, newOK := b.value(p, id)
			var k changeKey
			switch {
			case oldOK && newOK && ov != nv:
				k = changeKey{config.Changed, ov, nv}
			case oldOK == newOK || client:
				continue
			case newOK:
				k = changeKey{config.Added, "", nv}
			default:
				k = changeKey{config.Removed, ov, ""}
			}
			g.add(k, id)
		}
		out = g.fields(out, p, ids, filter)
	}
	return out
}

// stateChanges are the points whose launch state differs from a to b,
// among the points both versions have. A state that is not a launch says
// why (LaunchVersion.NotKnown).
func stateChanges(a, b *versionView, filter string) []FieldChange {
	var ids []string
	var g changeGroups
	for _, id := range b.ids {
		if !a.has[id] {
			continue
		}
		ids = append(ids, id)
		sa, sb := a.state(id), b.state(id)
		if sa == sb {
			continue
		}
		if !b.known(id) && b.v.NotKnown != "" {
			sb += " (" + b.v.NotKnown + ")"
		}
		g.add(changeKey{config.Changed, sa, sb}, id)
	}
	return g.fields(nil, statusPath, ids, filter)
}

func appendQualified(out []FieldChange, path string, k changeKey, quals []string, filter string) []FieldChange {
	for _, q := range quals {
		name := path
		if q != "" {
			name = path + "[" + q + "]"
		}
		if filter != "" && !PathMatch(filter, name) {
			continue
		}
		out = append(out, FieldChange{Kind: k.kind, Path: name, Old: k.old, New: k.new, Reach: reach(name, nil)})
	}
	return out
}

// qualifiers names the points of group among all: "" when it is all of
// them; else each configuration whose every point in all is in group;
// else the point.
func qualifiers(group, all []string) []string {
	if len(group) == len(all) {
		return []string{""}
	}
	count := func(ids []string) map[string]int {
		m := map[string]int{}
		for _, id := range ids {
			m[recipe.CurveOfID(id)]++
		}
		return m
	}
	inAll, inGroup := count(all), count(group)
	seen := map[string]bool{}
	var out []string
	for _, id := range group {
		c := recipe.CurveOfID(id)
		q := id
		if c != "" && inGroup[c] == inAll[c] {
			q = c
		}
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}
