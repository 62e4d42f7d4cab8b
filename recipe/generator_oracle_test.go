package recipe

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
)

// genPoint is a point as the repository's sweep generator lists it.
type genPoint struct {
	key, scenario, isl, osl, tp, ep, dpa, conc, spec, kvOff, kvBackend string
	maxLen, exp                                                        string
}

func (p genPoint) id() string {
	return strings.Join([]string{p.key, p.scenario, p.isl, p.osl, p.tp, p.ep, p.dpa, p.conc, p.spec, p.kvOff, p.kvBackend}, "|")
}

// readGeneratorPoints reads testdata/oracle/generator-points.tsv.gz: by
// PR, the points the repository's own generate_sweep_configs.py lists at
// that revision (recorded without perflog's code).
func readGeneratorPoints(t *testing.T) map[int][]genPoint {
	t.Helper()
	out := map[int][]genPoint{}
	for _, line := range oracleLines(t, "generator-points.tsv.gz", 1<<20)[1:] { // (a header first)
		c := strings.Split(line, "\t")
		if len(c) < 15 {
			t.Fatalf("short row %q", line)
		}
		pr, _ := strconv.Atoi(c[0])
		out[pr] = append(out[pr], genPoint{c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12], c[13]})
	}
	return out
}

// perflogPoints lists the single-node points perflog gives a key at a
// commit, as the generator would write them.
func perflogPoints(t *testing.T, r *gitscan.Repo, commit plumbing.Hash, key string, wf *SweepCache) []genPoint {
	rev := NewRev(commit.String()[:10], r.Tree(commit), nil)
	rev.UseSweepCache(wf)
	// the generator's own max-model-len and exp-name, as perflog's table
	// carries them: the workflow may pass others (2025's schedulers
	// wrote theirs; TestPointEnvAgainstTheWorkflowOracle checks those)
	rev.wfRead = true
	pts, err := rev.LaunchPoints(key)
	if err != nil {
		t.Fatalf("%s at %s: %v", key, commit, err)
	}
	var out []genPoint
	for _, p := range pts {
		if p.Multinode {
			continue
		}
		g := genPoint{key: key, scenario: p.Scenario, tp: fmt.Sprint(p.TP), ep: fmt.Sprint(p.EP), dpa: fmt.Sprint(p.DPAttn),
			conc: fmt.Sprint(p.Conc), spec: p.Spec, maxLen: p.Env["MAX_MODEL_LEN"], exp: p.Env["EXP_NAME"]}
		if p.Scenario == "fixed-seq-len" {
			g.isl, g.osl = fmt.Sprint(p.ISL), fmt.Sprint(p.OSL)
		} else {
			g.kvOff, g.kvBackend = p.KVOffloading, p.KVBackend
		}
		out = append(out, g)
	}
	return out
}

// TestPointsAgainstTheGenerator: at 51 revisions over the history, the
// single-node points perflog lists for every recipe (93,187) are the
// points the repository's own sweep generator lists, and each gets the
// generator's max-model-len and exp-name. Long (PERFLOG_LONG_TESTS).
func TestPointsAgainstTheGenerator(t *testing.T) {
	if os.Getenv("PERFLOG_LONG_TESTS") == "" {
		t.Skip("long: set PERFLOG_LONG_TESTS=1")
	}
	want := readGeneratorPoints(t)
	r, head := testcorpus.Open(t, nil)
	byPR := commitsByPR(t, r, head)
	wf := NewSweepCache()
	prs := make([]int, 0, len(want))
	for pr := range want {
		prs = append(prs, pr)
	}
	sort.Ints(prs)
	count := map[string]int{}
	shown := map[string]int{}
	note := func(class, msg string) {
		count[class]++
		if shown[class] < 3 {
			shown[class]++
			t.Logf("%s: %s", class, msg)
		}
	}
	for _, pr := range prs {
		commit, ok := byPR[pr]
		if !ok {
			t.Fatalf("#%d is not on the sample's first-parent history", pr)
		}
		keys := map[string][]genPoint{}
		for _, g := range want[pr] {
			keys[g.key] = append(keys[g.key], g)
		}
		for key, gs := range keys {
			have := map[string]genPoint{}
			for _, p := range perflogPoints(t, r, commit, key, wf) {
				have[p.id()] = p
			}
			for _, g := range gs {
				p, ok := have[g.id()]
				if !ok {
					note("point missing", fmt.Sprintf("#%d %s", pr, g.id()))
					continue
				}
				delete(have, g.id())
				count["points"]++
				if g.maxLen != "" && p.maxLen != g.maxLen {
					note("max-model-len", fmt.Sprintf("#%d %s: %s, the generator %s", pr, g.id(), p.maxLen, g.maxLen))
				}
				if g.exp != "" && p.exp != g.exp {
					note("exp-name", fmt.Sprintf("#%d %s: %s, the generator %s", pr, g.id(), p.exp, g.exp))
				}
			}
			for id := range have {
				note("point extra", fmt.Sprintf("#%d %s", pr, id))
			}
		}
	}
	t.Logf("%d revisions: %v", len(prs), count)
	for _, class := range []string{"point missing", "point extra", "max-model-len", "exp-name"} {
		if count[class] > 0 {
			t.Errorf("%d %s", count[class], class)
		}
	}
}

// commitsByPR maps the PR numbers of the sample's first-parent commits to
// their newest commit.
func commitsByPR(t *testing.T, r *gitscan.Repo, head plumbing.Hash) map[int]plumbing.Hash {
	t.Helper()
	byPR := map[int]plumbing.Hash{}
	err := r.FirstParent(context.Background(), gitscan.WalkOptions{From: head}, func(n gitscan.Node) error {
		if c, err := r.Commit(n.Hash); err == nil {
			if pr, ok := c.PR(); ok {
				if _, seen := byPR[pr]; !seen {
					byPR[pr] = n.Hash
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byPR
}
