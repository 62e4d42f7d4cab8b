package recipe

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
)

func openCorpus(t testing.TB) *gitscan.Repo {
	t.Helper()
	r, _ := testcorpus.Open(t, nil)
	return r
}

// corpusChange builds the Change of a first-parent commit.
func corpusChange(t testing.TB, r *gitscan.Repo, n gitscan.Node) *Change {
	t.Helper()
	s := &config.Settings{}
	var parent plumbing.Hash
	if len(n.Parents) > 0 {
		parent = n.Parents[0]
	}
	fcs, err := r.ChangedFiles(parent, n.Hash)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, fc := range fcs {
		paths = append(paths, fc.Path)
	}
	return NewChange(NewRev("base", r.Tree(parent), s), NewRev("head", r.Tree(n.Hash), s), paths)
}

// TestChangedRecipesMatchWholeParse checks the block-wise config diff of
// Change.Recipes against whole-file parses diffed key by key, on a
// sample of the corpus commits that touched a master config.
func TestChangedRecipesMatchWholeParse(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("corpus walk: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r := openCorpus(t)
	head, _ := r.Resolve("main")
	commits, keys, seen := 0, 0, 0
	err := r.FirstParent(context.Background(), gitscan.WalkOptions{From: head}, func(n gitscan.Node) error {
		if len(n.Parents) == 0 {
			return nil
		}
		c := corpusChange(t, r, n)
		touched := false
		for _, p := range c.Changed {
			touched = touched || strings.HasSuffix(p, "-master.yaml")
		}
		if !touched {
			return nil
		}
		if seen++; seen%8 != 0 {
			return nil // a sample: whole-file parses are slow
		}
		got, err := c.Recipes()
		bm, berr := c.Base.Master()
		hm, herr := c.Head.Master()
		if herr != nil {
			return nil // a head that does not load: Recipes may fail as well
		}
		if err != nil {
			return fmt.Errorf("%s: %v", n.Hash, err)
		}
		var want []string
		if berr == nil {
			for _, k := range hm.Keys {
				if b, ok := bm.Recipes[k]; ok {
					if d := config.Diff(b.Raw(), hm.Recipes[k].Raw()); len(d.Changes) > 0 {
						want = append(want, k+" changed")
					}
				} else {
					want = append(want, k+" new")
				}
			}
			for _, k := range bm.Keys {
				if _, ok := hm.Recipes[k]; !ok {
					want = append(want, k+" removed")
				}
			}
		}
		var have []string
		for _, rc := range got {
			if rc.Diff == nil {
				continue // scripts only
			}
			switch rc.Kind {
			case RecipeChanged:
				have = append(have, rc.Key+" changed")
			case RecipeAdded:
				have = append(have, rc.Key+" new")
			case RecipeRemoved:
				have = append(have, rc.Key+" removed")
			case RecipeRenamed:
				have = append(have, rc.Key+" new", rc.OldKey+" removed")
			}
		}
		sort.Strings(want)
		sort.Strings(have)
		if berr == nil && strings.Join(want, "\n") != strings.Join(have, "\n") {
			t.Errorf("%s: block-wise\n%s\nwhole\n%s", n.Hash, strings.Join(have, "\n"), strings.Join(want, "\n"))
		}
		commits++
		keys += len(have)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d commits, %d recipe changes", commits, keys)
	if commits < 90 || keys < 100 {
		t.Fatalf("compared %d commits, %d changes: the corpus walk missed history", commits, keys)
	}
}

// TestResolveCorpusHead: at the corpus head at least 95% of the
// single-node recipes resolve to an existing script (issue target), every
// resolved path exists, and the known misses are only the ones listed.
func TestResolveCorpusHead(t *testing.T) {
	r := openCorpus(t)
	head, _ := r.Resolve("main")
	rev := NewRev("main", r.Tree(head), &config.Settings{})
	keys, err := rev.Keys()
	if err != nil {
		t.Fatal(err)
	}
	sn, hit := 0, 0
	var misses []string
	for _, k := range keys {
		runs, err := rev.Runs(k)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 || runs[0].Multinode {
			continue
		}
		sn++
		ok := true
		for _, run := range runs {
			if run.Script == "" {
				ok = false
			} else if !Exists(rev.Files, run.Script) {
				t.Errorf("%s resolves to %s, which does not exist", k, run.Script)
			}
		}
		if ok {
			hit++
		} else {
			misses = append(misses, k)
		}
	}
	rate := float64(hit) / float64(sn)
	t.Logf("single-node keys resolved: %d/%d (%.1f%%), misses %v", hit, sn, 100*rate, misses)
	if sn < 100 || rate < 0.95 {
		t.Fatalf("resolved %d/%d single-node keys (%.1f%%), want >= 95%%; misses %v", hit, sn, 100*rate, misses)
	}
}
