package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perflog/perflog/internal/pyyaml"
)

// Point is one generated benchmark point of a recipe: a curve (everything
// that is not concurrency) and a concurrency.
type Point struct {
	Curve string // canonical text of the curve's fields
	Conc  int64
}

// expandConc expands a search-space entry's concurrency the generator's way:
// conc-list as written, or conc-start doubling up to and including conc-end.
func expandConc(ss *pyyaml.Value) []int64 {
	if l, ok := ss.Get("conc-list"); ok && l.Kind == pyyaml.Seq {
		var out []int64
		for _, it := range l.Items {
			if it.Kind == pyyaml.Int && it.Int.IsInt64() {
				out = append(out, it.Int.Int64())
			}
		}
		return out
	}
	s, ok1 := ss.Get("conc-start")
	e, ok2 := ss.Get("conc-end")
	if !ok1 || !ok2 || s.Kind != pyyaml.Int || e.Kind != pyyaml.Int || !s.Int.IsInt64() || !e.Int.IsInt64() {
		return nil
	}
	start, end := s.Int.Int64(), e.Int.Int64()
	if start <= 0 || end < start {
		return nil
	}
	var out []int64
	for c := start; ; c *= 2 {
		if c >= end {
			out = append(out, end)
			break
		}
		out = append(out, c)
	}
	return out
}

func without(v *pyyaml.Value, drop ...string) string {
	if v == nil || v.Kind != pyyaml.Map {
		return pyyaml.Canonical(v)
	}
	c := &pyyaml.Value{Kind: pyyaml.Map}
	for _, p := range v.Pairs {
		skip := false
		for _, d := range drop {
			if p.Key.Kind == pyyaml.Str && p.Key.Str == d {
				skip = true
			}
		}
		if !skip {
			c.Pairs = append(c.Pairs, p)
		}
	}
	return pyyaml.Canonical(c)
}

// ScenarioTypes are the scenario types of a recipe (the keys under
// scenarios), as a changelog entry's scenario-type lists them.
var ScenarioTypes = []string{"fixed-seq-len", "agentic-coding"}

// points generates the points of one recipe for the given scenarios.
func points(r *pyyaml.Value, scenarios map[string]bool) []Point {
	top := without(r, "scenarios")
	sc, _ := r.Get("scenarios")
	if sc == nil || sc.Kind != pyyaml.Map {
		return nil
	}
	var out []Point
	for _, p := range sc.Pairs {
		if p.Key.Kind != pyyaml.Str || !scenarios[p.Key.Str] || p.Value.Kind != pyyaml.Seq {
			continue
		}
		for _, item := range p.Value.Items {
			base := top + "|" + p.Key.Str + "|" + without(item, "search-space")
			ss, _ := item.Get("search-space")
			if ss == nil || ss.Kind != pyyaml.Seq {
				continue
			}
			for _, bmk := range ss.Items {
				curve := base + "|" + without(bmk, "conc-list", "conc-start", "conc-end")
				for _, c := range expandConc(bmk) {
					out = append(out, Point{Curve: curve, Conc: c})
				}
			}
		}
	}
	return out
}

// AppendOnlyCheck applies the incumbent's append-only rules to the
// configs selected by append-only entries: every selected config exists at
// base; no unselected config changed; no scenario added, removed or changed
// outside the selection; then, over the generated points, every base point
// is still generated and at least one point is new.
//
// The point model groups by recipe fields as written (the incumbent groups
// generated matrix rows, which carry defaults such as ep: 1); an edit that
// only spells out a default is therefore reported as a change here.
func AppendOnlyCheck(base *Master, baseErr error, head *Master, order []string, selected map[string]map[string]bool) error {
	if base == nil {
		if baseErr != nil {
			return fmt.Errorf("append-only: base master configs: %v", baseErr)
		}
		return fmt.Errorf("append-only requires the base revision's master configs")
	}
	var missing []string
	for _, k := range order {
		if _, ok := base.Recipes[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("append-only requires every selected config to exist in the base revision; missing: %s", pyList(missing))
	}
	all := map[string]bool{}
	for _, k := range base.Keys {
		all[k] = true
	}
	for _, k := range head.Keys {
		all[k] = true
	}
	var unrelated []string
	for k := range all {
		if selected[k] != nil {
			continue
		}
		b, h := base.Recipes[k], head.Recipes[k]
		if (b == nil) != (h == nil) || (b != nil && !b.Equal(h)) {
			unrelated = append(unrelated, k)
		}
	}
	if len(unrelated) > 0 {
		sort.Strings(unrelated)
		return fmt.Errorf("append-only PR changed configs not selected by its changelog entry: %s", pyList(unrelated))
	}
	for _, k := range order {
		allowed := selected[k]
		b, h := base.Recipes[k].raw(), head.Recipes[k].raw()
		bs, _ := b.Get("scenarios")
		hs, _ := h.Get("scenarios")
		bk, hk := scenarioKeys(bs), scenarioKeys(hs)
		if strings.Join(bk, ",") != strings.Join(hk, ",") {
			return fmt.Errorf("append-only added or removed a scenario in config '%s'", k)
		}
		unselected := false
		for _, s := range bk {
			if !allowed[s] {
				unselected = true
			}
		}
		if unselected && without(b, "scenarios") != without(h, "scenarios") {
			return fmt.Errorf("append-only changed config-wide fields that can affect scenarios outside its changelog scope: '%s'", k)
		}
		for _, s := range bk {
			if allowed[s] {
				continue
			}
			x, _ := bs.Get(s)
			y, _ := hs.Get(s)
			if !pyyaml.Equal(x, y) {
				return fmt.Errorf("append-only changed a scenario outside its changelog scope: '%s' / '%s'", k, s)
			}
		}
	}
	baseCurves, headCurves := map[string]map[int64]bool{}, map[string]map[int64]bool{}
	for _, k := range order {
		for _, p := range points(base.Recipes[k].raw(), selected[k]) {
			addPoint(baseCurves, p)
		}
		for _, p := range points(head.Recipes[k].raw(), selected[k]) {
			addPoint(headCurves, p)
		}
	}
	if len(baseCurves) == 0 {
		return fmt.Errorf("append-only requires an existing curve in the base revision")
	}
	added := 0
	for c, concs := range baseCurves {
		h, ok := headCurves[c]
		if !ok {
			return fmt.Errorf("append-only may not remove or modify existing generated recipes")
		}
		var removed []string
		for conc := range concs {
			if !h[conc] {
				removed = append(removed, fmt.Sprint(conc))
			}
		}
		if len(removed) > 0 {
			sort.Strings(removed)
			return fmt.Errorf("append-only may not remove existing concurrency points: [%s]", strings.Join(removed, ", "))
		}
	}
	for c, concs := range headCurves {
		for conc := range concs {
			if !baseCurves[c][conc] {
				added++
			}
		}
	}
	if added == 0 {
		return fmt.Errorf("append-only did not add any generated points")
	}
	return nil
}

func addPoint(m map[string]map[int64]bool, p Point) {
	if m[p.Curve] == nil {
		m[p.Curve] = map[int64]bool{}
	}
	m[p.Curve][p.Conc] = true
}

func scenarioKeys(v *pyyaml.Value) []string {
	if v == nil || v.Kind != pyyaml.Map {
		return nil
	}
	var out []string
	for _, p := range v.Pairs {
		if p.Key.Kind == pyyaml.Str {
			out = append(out, p.Key.Str)
		} else {
			out = append(out, pyyaml.Canonical(p.Key))
		}
	}
	sort.Strings(out)
	return out
}

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = "'" + s + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
