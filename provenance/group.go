package provenance

import (
	"strings"

	"github.com/perflog/perflog/recipe"
)

// GroupChanges merges, for a reader, the launch changes that differ only
// in the points they name: "--ep-size[tp4 ep4 1k1k conc 1]: + 4" and the
// same change at conc 2 become one change of "launch.flags.--ep-size"
// whose Reach reads "only tp4 ep4 1k1k conc 1, 2". A change the others do
// not share, and every change of a config field, is kept as it is, in
// order (a merged change stands where its first one stood). The changes a
// log or diff stores (and its JSON) stay one per point or configuration;
// this is how the report and the text of a log show them.
func GroupChanges(chs []FieldChange) []FieldChange {
	type key struct {
		path, old, new, oldPath, notKnownFrom string
		kind                                  string
	}
	type group struct {
		first FieldChange
		quals []string
	}
	var order []*group
	byKey := map[key]*group{}
	for _, c := range chs {
		base, q, ok := pointOf(c.Path)
		if !ok {
			order = append(order, &group{first: c})
			continue
		}
		k := key{base, c.Old, c.New, c.OldPath, c.NotKnownFrom, string(c.Kind)}
		if g := byKey[k]; g != nil {
			g.quals = append(g.quals, q)
			continue
		}
		g := &group{first: c, quals: []string{q}}
		byKey[k] = g
		order = append(order, g)
	}
	out := make([]FieldChange, 0, len(order))
	for _, g := range order {
		c := g.first
		if len(g.quals) > 1 {
			c.Path, _, _ = pointOf(c.Path)
			c.Reach = "only " + joinPoints(g.quals)
		}
		out = append(out, c)
	}
	return out
}

// pointOf splits a launch change's path into the setting and the point
// or configuration it names ("launch.flags.--tp[tp8 8k1k]": "launch.flags.--tp",
// "tp8 8k1k"); ok is false for a path that names none, or is not a
// launch's.
func pointOf(path string) (base, point string, ok bool) {
	if !strings.HasPrefix(path, "launch.") || !strings.HasSuffix(path, "]") {
		return path, "", false
	}
	i := strings.LastIndexByte(path, '[')
	if i < 0 {
		return path, "", false
	}
	return path[:i], path[i+1 : len(path)-1], true
}

// joinPoints names points and configurations in a line, the
// concurrencies of one configuration together: "tp4 1k1k conc 1, 2;
// tp8 8k1k".
func joinPoints(quals []string) string {
	var curves []string
	concs := map[string][]string{}
	for _, q := range quals {
		c := recipe.CurveOfID(q)
		if c == q { // a configuration, not a point
			curves = append(curves, q)
			continue
		}
		if concs[c] == nil {
			curves = append(curves, c)
		}
		concs[c] = append(concs[c], strings.TrimPrefix(strings.TrimSpace(q[len(c):]), "conc "))
	}
	parts := make([]string, 0, len(curves))
	for _, c := range curves {
		if n := concs[c]; n != nil {
			parts = append(parts, strings.TrimSpace(c+" conc "+strings.Join(n, ", ")))
		} else {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "; ")
}
