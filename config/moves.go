package config

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/perflog/perflog/internal/pyyaml"
)

// moveNode is a removed (or added) subtree that may be one end of a move.
type moveNode struct {
	change int // index into the differ's changes of the enclosing change
	path   string
	v      *pyyaml.Value
}

// candidate pairs rem[r] and add[a]; bound is the larger leaf count, the
// most the pair can score. A pair scores its similarity times its bound:
// the largest subtree is preferred, so that an enclosing list moved whole
// beats its items matched one by one.
type candidate struct{ r, a, bound int }

// pickMoves chooses the moves among cands (listed in (r, a) order): the
// candidate that scores highest (ties in (r, a) order) if its similarity
// reaches MoveThreshold, then the next highest that overlaps no subtree
// chosen, and so on (a variable so that the tests can put the answer of
// scoring every candidate first beside it: see export_test.go).
var pickMoves = (*differ).pickLazily

// pickLazily chooses without scoring every candidate: candidates are
// scored in order of their bound, only while one could still beat or tie
// the best scored one, and a candidate that overlaps a chosen subtree is
// never scored. When a restructure moves a large subtree, its pair is
// chosen first and the pairs of its hundreds of parts are never measured
// (scoring them all made a restructure such as seq-len-configs →
// scenarios the slowest diff of a history).
func (d *differ) pickLazily(rem, add []moveNode, cands []candidate) [][2]int {
	slices.SortStableFunc(cands, func(x, y candidate) int { return cmp.Compare(y.bound, x.bound) })
	usedR, usedA := map[string]bool{}, map[string]bool{}
	pool := &scoredHeap{}
	var pairs [][2]int
	for next := 0; ; {
		for next < len(cands) && (pool.Len() == 0 || float64(cands[next].bound) >= (*pool)[0].score) {
			c := cands[next]
			next++
			if overlapsAny(usedR, rem[c.r].path) || overlapsAny(usedA, add[c.a].path) {
				continue // it could not be chosen (the chosen stay chosen)
			}
			if s := d.similarity(rem[c.r].v, add[c.a].v); s >= MoveThreshold {
				heap.Push(pool, scored{c, s * float64(c.bound)})
			}
		}
		if pool.Len() == 0 {
			return pairs
		}
		best := heap.Pop(pool).(scored)
		if r, a := rem[best.r].path, add[best.a].path; !overlapsAny(usedR, r) && !overlapsAny(usedA, a) {
			usedR[r], usedA[a] = true, true
			pairs = append(pairs, [2]int{best.r, best.a})
		}
	}
}

// overlapsAny reports whether p is, contains or lies in a path of used.
func overlapsAny(used map[string]bool, p string) bool {
	for u := range used {
		if HasPathPrefix(p, u) || HasPathPrefix(u, p) {
			return true
		}
	}
	return false
}

// scored is a candidate and its score.
type scored struct {
	candidate
	score float64
}

// scoredHeap pops the highest score first, ties in (r, a) order.
type scoredHeap []scored

func (h scoredHeap) Len() int { return len(h) }
func (h scoredHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	if h[i].r != h[j].r {
		return h[i].r < h[j].r
	}
	return h[i].a < h[j].a
}
func (h scoredHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *scoredHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *scoredHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
