package config

import (
	"cmp"
	"slices"

	"github.com/perflog/perflog/internal/pyyaml"
)

// WalkEqual switches the differ's shortcut for equal subtrees off (true)
// or on, for the tests of package config_test.
func WalkEqual(on bool) { walkEqual = on }

// ScoreAllMoves makes the differ score every candidate move before it
// chooses (true), as it did before it chose lazily, or not.
func ScoreAllMoves(on bool) {
	pickMoves = (*differ).pickLazily
	if on {
		pickMoves = (*differ).pickAll
	}
}

// pickAll scores every candidate, then chooses in order of score.
func (d *differ) pickAll(rem, add []moveNode, cands []candidate) [][2]int {
	var cs []scored
	for _, c := range cands {
		if s := d.similarity(rem[c.r].v, add[c.a].v); s >= MoveThreshold {
			cs = append(cs, scored{c, s * float64(c.bound)})
		}
	}
	slices.SortStableFunc(cs, func(x, y scored) int { return cmp.Compare(y.score, x.score) })
	usedR, usedA := map[string]bool{}, map[string]bool{}
	var pairs [][2]int
	for _, c := range cs {
		r, a := rem[c.r].path, add[c.a].path
		if overlapsAny(usedR, r) || overlapsAny(usedA, a) {
			continue
		}
		usedR[r], usedA[a] = true, true
		pairs = append(pairs, [2]int{c.r, c.a})
	}
	return pairs
}

// Similarity is the share of leaves a and b have in common once aligned
// (unchanged leaves over the leaves of the larger one; 1 for equal
// values), for the tests of package config_test.
func Similarity(a, b *pyyaml.Value) float64 { return similarityMemo(a, b, nil) }

// DiffValues is Diff of two loaded values.
func DiffValues(old, new *pyyaml.Value) *RecipeDiff { return diffValues(old, new, nil) }

// RawOf is r's loaded YAML.
func RawOf(r *Recipe) *pyyaml.Value { return r.raw() }
