package provenance

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// lineagesOf is what buildLineages decided, in a comparable form.
func lineagesOf(h *History) []string {
	out := make([]string, 0, len(h.Lineages)+len(h.Notes))
	for _, l := range h.Lineages {
		out = append(out, fmt.Sprintf("%d %+v", l.ID, l.Events))
	}
	for _, n := range h.Notes {
		out = append(out, fmt.Sprintf("note %d %s", n.Seq, n.Message))
	}
	return out
}

// withoutHints builds with buildLineages comparing every block of every
// version, as it did before it trusted the splitter's kept blocks.
func withoutHints(t *testing.T, build func() *History) *History {
	t.Helper()
	lineageHints = false
	defer func() { lineageHints = true }()
	return build()
}

// TestLineageHintsChangeNothing: random changelog histories (appends,
// insertions in the middle, removals, edits, pr-link fixes, swaps,
// duplicates, versions that do not load) give the same lineages whether
// or not buildLineages starts after the blocks the splitter kept.
func TestLineageHintsChangeNothing(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			s := newScripted(t)
			var es []string
			next := 0
			newEntry := func() string {
				next++
				return entry(fmt.Sprintf("k%d", rng.Intn(8)), fmt.Sprintf("change %d", rng.Intn(next+3)), pull(100+next))
			}
			for c := 0; c < 40; c++ {
				text := ""
				switch op := rng.Intn(9); {
				case op < 3 || len(es) < 3:
					es = append(es, newEntry())
				case op == 3:
					es = slices.Insert(es, rng.Intn(len(es)), newEntry())
				case op == 4:
					i := rng.Intn(len(es))
					es = slices.Delete(es, i, i+1)
				case op == 5:
					es[rng.Intn(len(es))] = newEntry() // an edit, or a new entry in place
				case op == 6:
					i, j := rng.Intn(len(es)), rng.Intn(len(es))
					es[i], es[j] = es[j], es[i]
				case op == 7:
					es = append(es, es[rng.Intn(len(es))]) // a duplicate
				default:
					text = file(es...) + "- config-keys: [unclosed\n" // does not load
				}
				if text == "" {
					text = file(es...)
				}
				s.commit(fmt.Sprintf("c%d (#%d)", c, 100+c), map[string]string{"perf-changelog.yaml": text})
			}
			build := func() *History { return s.build(Options{Changelog: true}) }
			want := lineagesOf(withoutHints(t, build))
			got := lineagesOf(build())
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("lineages differ with the hints:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestCorpusLineageHintsChangeNothing is the same on the real history
// (mid-file insertions, three versions that do not load).
func TestCorpusLineageHintsChangeNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the corpus's changelog history twice")
	}
	r, head := openCorpus(t)
	build := func() *History {
		h, err := Build(context.Background(), r, Options{Head: head, Changelog: true})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := lineagesOf(withoutHints(t, build))
	got := lineagesOf(build())
	if len(want) < 700 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d lineages with the hints, %d without; equal: %v", len(got), len(want), reflect.DeepEqual(got, want))
	}
}
