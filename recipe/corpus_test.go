package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
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
					if d := config.Diff(b, hm.Recipes[k]); len(d.Changes) > 0 {
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
			} else if !revfs.Exists(rev.Files, run.Script) {
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

// TestDryRunCorpusHead: at the sample's head, the single-node points
// reach a server launch (issue: ≥ 95 %); each miss is listed with why.
func TestDryRunCorpusHead(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	rev := NewRev("main", r.Tree(head), nil)
	keys, err := rev.Keys()
	if err != nil {
		t.Fatal(err)
	}
	pls, err := rev.DryRunKeys(context.Background(), keys, 0, dryrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// a second run (sourced files now functions, scripts parsed) launches
	// exactly the same (a plain run re-runs every 8th key, the long run all)
	var sub []string
	for i, k := range keys {
		if testcorpus.Long() || i%8 == 0 {
			sub = append(sub, k)
		}
	}
	again, err := rev.DryRunKeys(context.Background(), sub, 0, dryrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var first []PointLaunch
	for _, pl := range pls {
		if slices.Contains(sub, pl.Point.Key) {
			first = append(first, pl)
		}
	}
	if a, b := mustJSON(t, first), mustJSON(t, again); len(again) == 0 || a != b {
		t.Errorf("a second dry run of %d keys of the head differs from the first (%d points)", len(sub), len(again))
	}
	counts := map[string]int{}
	run, launched := 0, 0      // single-node points, those that launched
	recipes, described := 0, 0 // multi-node points with a recipe file here, those described
	for _, pl := range pls {
		if !pl.Point.Multinode {
			run++
		} else if pl.Point.Recipe != "" {
			recipes++
		}
		if pl.Launch == nil {
			note := pl.Point.Note
			if strings.Contains(note, "upstream srt-slurm") {
				note = "multi-node: the srt-slurm recipe comes from the upstream srt-slurm repository"
			}
			counts["not dry-run: "+note]++
			continue
		}
		switch pl.Launch.Status {
		case dryrun.StatusLaunched:
			launched++
			continue
		case dryrun.StatusDescribed:
			described++
			continue
		}
		counts[pl.Point.Key+" "+pl.Launch.Status+": "+pl.Launch.Reason]++
	}
	rate := float64(launched) / float64(run)
	t.Logf("%d points, %d single-node, %d launched (%.1f %%)", len(pls), run, launched, 100*rate)
	for k, n := range counts {
		t.Logf("%4d %s", n, k)
	}
	if run < 1000 || rate < 0.95 {
		t.Errorf("%d of %d single-node points launched", launched, run)
	}
	t.Logf("%d multi-node points with a recipe file in the repository, %d described", recipes, described)
	if recipes < 400 || float64(described) < 0.95*float64(recipes) {
		t.Errorf("%d of %d multi-node points with a recipe file described", described, recipes)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
