package config

import (
	"sort"
	"strings"
)

// A key that disappears and a key that appears in the same change are one
// recipe renamed when their recipes share RenameThreshold of their leaves
// (similarityMemo), or RenameNamedThreshold when the names are close too (one
// extends the other, as -agentic became -agentic-hicache, or they are
// within a quarter of their length in edits).
const (
	RenameThreshold      = 0.8
	RenameNamedThreshold = 0.5
)

// NamesClose reports whether two keys are close names (see
// RenameNamedThreshold).
func NamesClose(a, b string) bool {
	if strings.HasPrefix(a, b) || strings.HasPrefix(b, a) {
		return true
	}
	return Distance(a, b)*4 <= max(len(a), len(b))
}

// PairRenames pairs keys that disappeared (gone, recipes from old) with
// keys that appeared (came, recipes from new): the most similar pairs
// first, closer names breaking ties, each key used once. A nil recipe
// (one that does not load) pairs with nothing. It returns new key → old
// key.
func PairRenames(gone, came []string, old, new func(string) *Recipe, memo *Memo) map[string]string {
	out := map[string]string{}
	if len(gone) == 0 || len(came) == 0 {
		return out
	}
	type cand struct {
		g, c string
		s    float64
		d    int
	}
	var cs []cand
	for _, g := range gone {
		a := old(g).raw()
		if a == nil {
			continue
		}
		for _, c := range came {
			b := new(c).raw()
			if b == nil {
				continue
			}
			s := similarityMemo(a, b, memo)
			if s >= RenameThreshold || (s >= RenameNamedThreshold && NamesClose(g, c)) {
				cs = append(cs, cand{g, c, s, Distance(g, c)})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].s != cs[j].s {
			return cs[i].s > cs[j].s
		}
		return cs[i].d < cs[j].d
	})
	usedG := map[string]bool{}
	for _, c := range cs {
		if usedG[c.g] || out[c.c] != "" {
			continue
		}
		usedG[c.g] = true
		out[c.c] = c.g
	}
	return out
}
