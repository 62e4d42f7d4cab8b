package config_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/perflog/perflog/internal/pyyaml"
)

// randomTree makes a recipe-like value: mappings of a few keys, lists of
// mappings, scalars and lists of scalars, with many equal leaves (so that
// subtrees are similar and moves tie).
func randomTree(rng *rand.Rand, depth int) *pyyaml.Value {
	switch n := rng.IntN(10); {
	case depth == 0 || n < 3:
		if rng.IntN(4) == 0 {
			return &pyyaml.Value{Kind: pyyaml.Seq, Items: []*pyyaml.Value{{Kind: pyyaml.Int, Str: fmt.Sprint(rng.IntN(3))}}}
		}
		return &pyyaml.Value{Kind: pyyaml.Str, Str: fmt.Sprint("v", rng.IntN(3))}
	case n < 6:
		v := &pyyaml.Value{Kind: pyyaml.Seq}
		for range 1 + rng.IntN(4) {
			v.Items = append(v.Items, randomMap(rng, depth-1))
		}
		return v
	default:
		return randomMap(rng, depth-1)
	}
}

func randomMap(rng *rand.Rand, depth int) *pyyaml.Value {
	v := &pyyaml.Value{Kind: pyyaml.Map}
	seen := map[string]bool{}
	for range 1 + rng.IntN(4) {
		k := fmt.Sprint("k", rng.IntN(6))
		if !seen[k] {
			seen[k] = true
			v.Pairs = append(v.Pairs, pyyaml.Pair{Key: &pyyaml.Value{Kind: pyyaml.Str, Str: k}, Value: randomTree(rng, depth)})
		}
	}
	return v
}

// mutate copies v with a few edits: subtrees moved under other keys,
// wrapped in a new key, dropped, replaced, lists shuffled.
func mutate(rng *rand.Rand, v *pyyaml.Value) *pyyaml.Value {
	switch v.Kind {
	case pyyaml.Map:
		out := &pyyaml.Value{Kind: pyyaml.Map}
		for _, p := range v.Pairs {
			val := p.Value
			if rng.IntN(3) == 0 {
				val = mutate(rng, val)
			}
			switch rng.IntN(8) {
			case 0: // dropped
				continue
			case 1: // renamed: the subtree moves
				out.Pairs = append(out.Pairs, pyyaml.Pair{Key: &pyyaml.Value{Kind: pyyaml.Str, Str: p.Key.Str + "-moved"}, Value: val})
			case 2: // wrapped
				w := &pyyaml.Value{Kind: pyyaml.Map, Pairs: []pyyaml.Pair{{Key: p.Key, Value: val}}}
				out.Pairs = append(out.Pairs, pyyaml.Pair{Key: &pyyaml.Value{Kind: pyyaml.Str, Str: "wrap"}, Value: w})
			case 3: // replaced
				out.Pairs = append(out.Pairs, pyyaml.Pair{Key: p.Key, Value: randomTree(rng, 2)})
			default:
				out.Pairs = append(out.Pairs, pyyaml.Pair{Key: p.Key, Value: val})
			}
		}
		return out
	case pyyaml.Seq:
		out := &pyyaml.Value{Kind: pyyaml.Seq}
		for _, it := range v.Items {
			if rng.IntN(3) == 0 {
				it = mutate(rng, it)
			}
			out.Items = append(out.Items, it)
		}
		rng.Shuffle(len(out.Items), func(i, j int) { out.Items[i], out.Items[j] = out.Items[j], out.Items[i] })
		return out
	}
	return v
}

// TestMovesChosenLazilyAsScoredAll: on random trees whose subtrees move,
// split and tie, the moves chosen without scoring every candidate are the
// ones chosen after scoring them all (sameBothWays compares the two).
func TestMovesChosenLazilyAsScoredAll(t *testing.T) {
	n := 3000
	if !testcorpus.Long() {
		n = 500
	}
	moved := 0
	for seed := range n {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		old := randomMap(rng, 4)
		d := sameBothWays(t, fmt.Sprint("seed ", seed), old, mutate(rng, old))
		if len(d.Moves) > 0 {
			moved++
		}
	}
	if moved < n/10 {
		t.Fatalf("only %d of %d diffs paired a move: the trees do not test the choice", moved, n)
	}
	t.Logf("%d of %d diffs paired moves", moved, n)
}
