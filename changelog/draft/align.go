package draft

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// manyEnv is how many variables a changed recipe's launch must change
// before they are said by the sibling recipe they align with (fewer are
// listed, as authors list them).
const manyEnv = 12

// envChange is one variable a change sets, changes or removes: the
// values it takes at head (none: removed).
type envChange struct {
	name  string
	heads map[string]bool
}

// launchEnvChanges are the variables a launch diff changes, in its order.
func launchEnvChanges(e *recipe.Effect) []envChange {
	var out []envChange
	at := map[string]int{}
	for _, d := range e.Diffs {
		if d.Kind != "env" || d.Harness() {
			continue
		}
		i, ok := at[d.Name]
		if !ok {
			i = len(out)
			at[d.Name] = i
			out = append(out, envChange{name: d.Name, heads: map[string]bool{}})
		}
		if !d.HeadAbsent {
			out[i].heads[d.Head] = true
		}
	}
	return out
}

// scriptEnvChanges are the variables a script's text exports otherwise
// at head than at base.
func scriptEnvChanges(old, new *named) []envChange {
	var out []envChange
	for _, k := range new.order {
		if ov, was := old.val[k]; !was || ov != new.val[k] {
			out = append(out, envChange{name: k, heads: map[string]bool{new.val[k]: true}})
		}
	}
	for _, k := range old.order {
		if _, ok := new.val[k]; !ok {
			out = append(out, envChange{name: k})
		}
	}
	return out
}

// alignedEnv says a long list of variable changes by the recipe they
// align the changed recipe with: "Align the environment with
// dsv4-fp4-mi355x-sglang: 10 variables as it sets them, 22 it does not
// set removed" (a few set alike are named: "A=1 and B=2 as it sets
// them"). Authors write it so ("Align launcher env vars ... with
// fixed-seq-len sibling"); 36 names in three bullets are a dump a
// maintainer cuts. The sibling is a recipe at head of the same model,
// precision, framework and node layout (siblingCandidates) whose every
// point is dry-run; a variable aligns when the change sets it to the one
// value the sibling's points set it to, or removes one no sibling point
// sets. It returns the bullet and the variables it tells ("" and nil
// when fewer than manyEnv variables changed, or fewer than two in three
// of them align).
func alignedEnv(ch *recipe.Change, key, oldKey string, changes []envChange, o Options) (string, map[string]bool) {
	if len(changes) < manyEnv || o.NoDryRun {
		return "", nil
	}
	head, err := ch.Head.Master()
	if err != nil {
		return "", nil
	}
	me := head.Recipes[key]
	if me == nil {
		return "", nil
	}
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	best, bestSet, bestGone := "", 0, 0
	var bestTold map[string]bool
	for _, k := range siblingCandidates(head, key, oldKey, me) {
		pls, err := ch.Head.DryRunKey(ctx, k, 0, o.DryRun)
		if err != nil || len(pls) == 0 || slices.ContainsFunc(pls, func(pl recipe.PointLaunch) bool {
			return pl.Launch == nil || pl.Launch.Status != dryrun.StatusLaunched
		}) {
			continue
		}
		// the values each variable takes at the sibling's points
		theirs := map[string]map[string]bool{}
		for i := range pls {
			for f, v := range pls[i].Facts() {
				if n, ok := strings.CutPrefix(f, "launch.env."); ok {
					if theirs[n] == nil {
						theirs[n] = map[string]bool{}
					}
					theirs[n][v] = true
				}
			}
		}
		told, set, gone := map[string]bool{}, 0, 0
		for _, c := range changes {
			switch {
			case len(c.heads) == 0 && len(theirs[c.name]) == 0:
				told[c.name] = true
				gone++
			case len(c.heads) == 1 && maps.Equal(c.heads, theirs[c.name]):
				told[c.name] = true
				set++
			}
		}
		if set+gone > bestSet+bestGone {
			best, bestSet, bestGone, bestTold = k, set, gone, told
		}
	}
	if best == "" || 3*(bestSet+bestGone) < 2*len(changes) {
		return "", nil
	}
	var parts []string
	const named = 6 // more set alike are counted
	switch {
	case bestSet > named:
		parts = append(parts, fmt.Sprintf("%d variables as it sets them", bestSet))
	case bestSet > 0:
		var set []string
		for _, c := range changes {
			if bestTold[c.name] && len(c.heads) == 1 {
				for v := range c.heads {
					set = append(set, c.name+"="+v)
				}
			}
		}
		parts = append(parts, joinAnd(set)+" as it sets them")
	}
	if bestGone > 0 {
		parts = append(parts, fmt.Sprintf("%d it does not set removed", bestGone))
	}
	return "Align the environment with " + best + ": " + strings.Join(parts, ", "), bestTold
}

// siblingCandidates are the recipes at head a changed recipe may align
// with: of the same model, precision, framework and node layout, not
// the recipe itself (under either of its keys), those on the same
// hardware and the most alike first, three at most (each is dry-run).
func siblingCandidates(head *config.Master, key, oldKey string, me *config.Recipe) []string {
	type cand struct {
		k string
		s float64
	}
	var cs []cand
	for _, k := range head.Keys {
		r := head.Recipes[k]
		if k == key || k == oldKey || r.ModelPrefix != me.ModelPrefix || r.Precision != me.Precision ||
			r.Framework != me.Framework || r.Multinode != me.Multinode {
			continue
		}
		s := me.Similarity(r)
		if hardware(r.Runner) == hardware(me.Runner) {
			s++ // the same machines ("mi355x", "cluster:mi355x-amds")
		}
		cs = append(cs, cand{k, s})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(b.s, a.s) })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].k)
	}
	return out
}

// hardware is the machine a runner names: "mi355x" of "mi355x",
// "mi355x-amds" and "cluster:mi355x-amds".
func hardware(runner string) string {
	_, r, ok := strings.Cut(runner, ":")
	if !ok {
		r = runner
	}
	h, _, _ := strings.Cut(r, "-")
	return h
}
