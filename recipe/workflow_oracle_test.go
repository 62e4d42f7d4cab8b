package recipe

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe/dryrun"
)

// wfPoint is a point of the workflow oracle with the environment its
// launcher starts with.
type wfPoint struct {
	pr                                                      int
	key, scenario, isl, osl, tp, ep, dpa, conc, spec, kvOff string
	env                                                     map[string]string
}

func (p *wfPoint) id() string {
	spec := p.spec
	if spec == "" {
		spec = "none"
	}
	return strings.Join([]string{p.key, p.scenario, p.isl, p.osl, p.tp, p.ep, p.dpa, p.conc, spec, p.kvOff}, "|")
}

// readWorkflowOracle reads testdata/oracle/workflow-env.tsv.gz (see its
// README): one row per point and variable.
func readWorkflowOracle(t *testing.T) []*wfPoint {
	t.Helper()
	var out []*wfPoint
	byID := map[string]*wfPoint{}
	for _, line := range oracleLines(t, "workflow-env.tsv.gz", 1<<20)[1:] { // (a header first)
		c := strings.Split(line, "\t")
		if len(c) != 16 {
			t.Fatalf("row of %d columns: %q", len(c), line)
		}
		pr, _ := strconv.Atoi(c[0])
		p := &wfPoint{pr: pr, key: c[2], scenario: c[3], isl: c[4], osl: c[5], tp: c[6], ep: c[7], dpa: c[8], conc: c[9], spec: c[10], kvOff: c[11]}
		id := c[0] + "|" + p.id()
		if q, ok := byID[id]; ok {
			p = q
		} else {
			p.env = map[string]string{}
			byID[id] = p
			out = append(out, p)
		}
		p.env[c[14]] = strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(c[15])
	}
	return out
}

// oracleValue is the oracle's value as perflog writes it: a secret is
// "<secret>", the runner's name perflog's runner, and what only a run
// knows (github.*, vars.*) unknown.
func oracleValue(v, runner string) (string, bool) {
	v = strings.ReplaceAll(v, "{runner.name}", runner)
	if strings.HasPrefix(v, "{secrets.") && strings.HasSuffix(v, "}") {
		return "<secret>", true
	}
	if strings.Contains(v, "{github.") || strings.Contains(v, "{vars.") {
		return v, false // what a run alone knows: perflog says unknown
	}
	return v, true
}

// TestPointEnvAgainstTheWorkflowOracle: at 33 revisions, every change of
// what InferenceX's workflows give a single-node launcher, the
// environment perflog gives 393 points is what an oracle built without
// perflog's code evaluated from that revision's workflows and generator
// (testdata/oracle/README.md): the same variables with the same values.
func TestPointEnvAgainstTheWorkflowOracle(t *testing.T) {
	want := readWorkflowOracle(t)
	r, head := testcorpus.Open(t, nil)
	byPR := commitsByPR(t, r, head)
	wf := NewSweepCache()
	revs := map[int]*Rev{}
	count := map[string]int{}
	shown := map[string]int{}
	note := func(class, msg string) {
		count[class]++
		if shown[class] < 40 {
			shown[class]++
			t.Logf("%s: %s", class, msg)
		}
	}
	for _, w := range want {
		rev, ok := revs[w.pr]
		if !ok {
			commit, ok := byPR[w.pr]
			if !ok {
				t.Fatalf("#%d is not on the sample's history", w.pr)
			}
			rev = NewRev(strconv.Itoa(w.pr), r.Tree(commit), nil)
			rev.UseSweepCache(wf)
			revs[w.pr] = rev
		}
		pts, err := rev.LaunchPoints(w.key)
		if err != nil {
			t.Fatalf("#%d %s: %v", w.pr, w.key, err)
		}
		var p *LaunchPoint
		for i := range pts {
			q := &pts[i]
			g := wfPoint{key: q.Key, scenario: q.Scenario, tp: strconv.FormatInt(q.TP, 10), ep: strconv.FormatInt(q.EP, 10),
				dpa: strconv.FormatBool(q.DPAttn), conc: strconv.FormatInt(q.Conc, 10), spec: q.Spec, kvOff: q.KVOffloading}
			if q.Scenario == "fixed-seq-len" {
				g.isl, g.osl = strconv.FormatInt(q.ISL, 10), strconv.FormatInt(q.OSL, 10)
			}
			wid := *w
			if wid.scenario == "agentic-coding" && wid.spec == "" {
				wid.spec = q.Spec // the generator wrote no spec-decoding on agentic points before #2183
			}
			if g.id() == wid.id() {
				p = q
				break
			}
		}
		if p == nil {
			note("point not listed", "#"+strconv.Itoa(w.pr)+" "+w.id())
			continue
		}
		count["points"]++
		for _, name := range sortedKeys(w.env) {
			if strings.HasPrefix(w.env[name], "{invalid") {
				// #258: the oracle ran the generator without
				// --run-evals, so its points had no run-eval and the
				// boolean input got null; the sweep ran it with
				// --run-evals (process_changelog.py), which writes
				// run-eval on every point, false on those not picked for
				// an eval, as perflog's points (benchmarks, not evals) are
				count["invalid in the oracle's run"]++
				continue
			}
			v, known := oracleValue(w.env[name], p.Runner)
			got, ok := p.Env[name]
			switch {
			case !ok:
				note("variable missing", "#"+strconv.Itoa(w.pr)+" "+w.key+" "+name+" = "+w.env[name])
			case !known && strings.Contains(got, dryrun.UnknownMarker):
				count["unknown to both"]++
			case !known:
				note("known to perflog only", "#"+strconv.Itoa(w.pr)+" "+w.key+" "+name+" = "+strconv.Quote(got)+", the oracle: "+w.env[name])
			case got != v:
				note("wrong value", "#"+strconv.Itoa(w.pr)+" "+w.key+" "+p.Label()+": "+name+" = "+strconv.Quote(got)+", the workflow gives "+strconv.Quote(v))
			default:
				count["same"]++
			}
		}
		for _, name := range sortedKeys(p.Env) {
			if _, ok := w.env[name]; ok || isRunnerOwn(name) {
				continue
			}
			note("variable extra", "#"+strconv.Itoa(w.pr)+" "+w.key+" "+name+" = "+p.Env[name])
		}
	}
	classes := make([]string, 0, len(count))
	for c := range count {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("%s: %d", c, count[c])
	}
	if count["points"] != len(want) || count["wrong value"] > 0 || count["variable missing"] > 0 || count["variable extra"] > 0 || count["known to perflog only"] > 0 {
		t.Errorf("%d of %d points compared; %d wrong values, %d variables missing, %d extra, %d known to perflog only",
			count["points"], len(want), count["wrong value"], count["variable missing"], count["variable extra"], count["known to perflog only"])
	}
}

func isRunnerOwn(name string) bool {
	if name == "RUNNER_NAME" {
		return true
	}
	for _, k := range runnerOwn {
		if k == name {
			return true
		}
	}
	return false
}
