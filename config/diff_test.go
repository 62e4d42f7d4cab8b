package config_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/internal/testcorpus"
)

func load(t *testing.T, doc string) *pyyaml.Value {
	t.Helper()
	v, err := pyyaml.Load([]byte(doc), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// sameBothWays diffs old and new with the differ's shortcuts (equal
// subtrees not walked, moves scored lazily) and the plain way, and fails
// unless the results are equal.
func sameBothWays(t *testing.T, name string, old, new *pyyaml.Value) *config.RecipeDiff {
	t.Helper()
	defer config.WalkEqual(false)
	defer config.ScoreAllMoves(false)
	config.WalkEqual(true)
	config.ScoreAllMoves(true)
	walked, walkedSim := config.DiffValues(old, new), config.Similarity(old, new)
	config.WalkEqual(false)
	config.ScoreAllMoves(false)
	fast, fastSim := config.DiffValues(old, new), config.Similarity(old, new)
	if !reflect.DeepEqual(walked, fast) {
		t.Fatalf("%s: the shortcut changed the diff:\nwalked %+v\nfast   %+v", name, walked, fast)
	}
	if walkedSim != fastSim {
		t.Fatalf("%s: the shortcut changed the similarity: %v, walked %v", name, fastSim, walkedSim)
	}
	return fast
}

// TestDiffShortcutChangesNothing: equal subtrees are not walked, and the
// diffs (changes, moves) and similarities are the ones a walk gives.
func TestDiffShortcutChangesNothing(t *testing.T) {
	cases := []struct{ name, old, new string }{
		{"equal", "a: {b: [1, 2], c: x}\n", "a: {c: x, b: [1, 2]}\n"},
		{"leaf changed", "a: {b: 1, c: x}\n", "a: {b: 2, c: x}\n"},
		{"items reordered", "s: [{tp: 1, c: [4]}, {tp: 2, c: [8]}]\n", "s: [{tp: 2, c: [8]}, {tp: 1, c: [4]}]\n"},
		{"an item moved whole, lists inside", "s: [{x: 0}, {tp: 2, l: [{a: 1}, {a: 2}]}]\n", "s: [{tp: 2, l: [{a: 1}, {a: 2}]}, {x: 1}]\n"},
		{"an item inserted before equal ones", "s: [{tp: 1}, {tp: 2}]\n", "s: [{tp: 0}, {tp: 1}, {tp: 2}]\n"},
		{"restructured", "seq-len-configs: [{isl: 1, osl: 2, search-space: [{tp: 8, c: [1, 2]}]}]\n",
			"scenarios: {fixed-seq-len: [{isl: 1, osl: 2, search-space: [{tp: 8, c: [1, 2]}]}]}\n"},
		{"keys of two kinds", "m: {1: x}\n", "m: {true: x}\n"},
		{"equal as leaves", "m: {a: 1, b: [1, 2]}\n", "m: {a: true, b: [1.0, 2]}\n"},
		{"a list of maps in a list", "a: [[{x: 1}], [{y: 2}]]\n", "a: [[{y: 2}], [{x: 1}]]\n"},
	}
	for _, c := range cases {
		sameBothWays(t, c.name, load(t, c.old), load(t, c.new))
	}
	// the digest tells keys apart as the walk does: a key 1 replaced by a
	// key true is a removal and an addition, not "no change"
	d := sameBothWays(t, "kinds", load(t, "m: {1: x}\n"), load(t, "m: {true: x}\n"))
	if len(d.Changes) != 2 {
		t.Fatalf("key 1 → key true: %+v, want a removal and an addition", d.Changes)
	}
}

// TestDiffShortcutOnTheCorpus: every recipe of consecutive versions of the
// sample's master configs (a sample of them), diffed both ways.
func TestDiffShortcutOnTheCorpus(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	paths := []string{"configs/nvidia-master.yaml", "configs/amd-master.yaml"}
	var versions [][2]plumbing.Hash // per path: consecutive distinct blobs
	last := make([]plumbing.Hash, len(paths))
	err := r.Track(context.Background(), gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: head}, Paths: paths}, func(s gitscan.Step) error {
		for i, b := range s.Blobs {
			if !b.IsZero() && !last[i].IsZero() && b != last[i] {
				versions = append(versions, [2]plumbing.Hash{b, last[i]}) // older, newer
			}
			last[i] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	step := max(1, len(versions)/16)
	if !testcorpus.Long() {
		step = max(1, len(versions)/6)
	}
	recipes := func(h plumbing.Hash) map[string]*config.Recipe {
		data, err := r.ReadBlob(h)
		if err != nil {
			t.Fatal(err)
		}
		m, err := config.LoadMaster([]config.File{{Path: h.String(), Data: data}})
		if err != nil {
			return nil // one of the invalid historical versions
		}
		return m.Recipes
	}
	diffs, changed := 0, 0
	for i := 0; i < len(versions); i += step {
		old, new := recipes(versions[i][0]), recipes(versions[i][1])
		for k, nr := range new {
			if or, ok := old[k]; ok {
				d := sameBothWays(t, fmt.Sprintf("%s at %s", k, versions[i][1]), config.RawOf(or), config.RawOf(nr))
				diffs++
				if len(d.Changes) > 0 {
					changed++
				}
			}
		}
	}
	if diffs < 200 || changed == 0 {
		t.Fatalf("compared %d recipe versions (%d with changes): too few to tell", diffs, changed)
	}
	t.Logf("%d recipe versions diffed both ways, %d with changes", diffs, changed)
}
