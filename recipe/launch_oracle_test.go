package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe/dryrun"
)

// realLaunchFile is what real bash launched for single-node points, with
// recording stubs for every command a GPU machine has (see
// testdata/oracle/README.md).
const realLaunchFile = "../testdata/oracle/real-launch.jsonl.gz"

// realPoint is one point of the real-bash oracle: the point, the
// launcher's exit and the commands the run called, each with the whole
// environment it received (decoded from the file's delta chain).
type realPoint struct {
	PR       int    `json:"pr"`
	Key      string `json:"key"`
	Scenario string `json:"scenario"`
	ISL      any    `json:"isl"`
	OSL      any    `json:"osl"`
	TP       int64  `json:"tp"`
	EP       int64  `json:"ep"`
	DPAttn   bool   `json:"dp_attn"`
	Conc     int64  `json:"conc"`
	Spec     string `json:"spec"`
	KVOff    string `json:"kv_offloading"`
	KVBack   string `json:"kv_backend"`
	Exit     int    `json:"exit"`
	Error    string `json:"error"`
	Node     string `json:"node"`
	Calls    []struct {
		Cmd   string            `json:"cmd"`
		Argv  []string          `json:"argv"`
		Env   map[string]string `json:"env"`
		Unset []string          `json:"env_unset"`
	} `json:"calls"`
}

func (p *realPoint) id() string {
	return fmt.Sprintf("%s|%s|%v|%v|%d|%d|%v|%d|%s|%s|%s", p.Key, p.Scenario, p.ISL, p.OSL, p.TP, p.EP, p.DPAttn, p.Conc, p.Spec, p.KVOff, p.KVBack)
}

// readRealLaunches reads the oracle and resolves each call's environment.
func readRealLaunches(t *testing.T) []*realPoint {
	t.Helper()
	var out []*realPoint
	chain := map[string]map[string]string{} // pr|key → the last call's env
	for _, line := range oracleLines(t, strings.TrimPrefix(realLaunchFile, "../testdata/oracle/"), 16<<20) {
		p := &realPoint{}
		if err := json.Unmarshal([]byte(line), p); err != nil {
			t.Fatal(err)
		}
		ck := strconv.Itoa(p.PR) + "|" + p.Key
		cur := chain[ck]
		for i := range p.Calls {
			c := &p.Calls[i]
			env := map[string]string{}
			for k, v := range cur {
				env[k] = v
			}
			for k, v := range c.Env {
				env[k] = v
			}
			for _, k := range c.Unset {
				delete(env, k)
			}
			c.Env, cur = env, env
		}
		chain[ck] = cur
		out = append(out, p)
	}
	return out
}

// realServer says whether a recorded call starts an inference server (the
// oracle's own reading of its stubs, not perflog's patterns).
func realServer(cmd string, argv []string) bool {
	switch {
	case cmd == "vllm" || cmd == "sglang":
		return len(argv) > 0 && argv[0] == "serve"
	case cmd == "trtllm-serve":
		return true
	case strings.HasPrefix(cmd, "python"):
		for i, a := range argv {
			if a == "-m" && i+1 < len(argv) {
				m := argv[i+1]
				return m == "sglang.launch_server" || strings.HasPrefix(m, "vllm.entrypoints") || strings.HasPrefix(m, "atom.entrypoints")
			}
			if !strings.HasPrefix(a, "-") {
				return false
			}
		}
	}
	return false
}

// oracleOwnEnv are variables whose value only the oracle's run made up
// (its stand-ins for the runner, the job and the container) or the
// harness set.
func oracleOwnEnv(name string) bool {
	for _, p := range []string{"GITHUB_", "RUNNER_", "SLURM_", "ACTIONS_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "CI", "USER", "HOME", "PATH", "HOSTNAME", "PWD", "OLDPWD", "SHLVL", "_":
		return true
	}
	return false
}

// guessedMachine says whether a dry run took a branch on what the machine
// holds (a path outside the tree taken as present): real bash, on the
// recording's machine, may take the other.
func guessedMachine(l *dryrun.Launch) bool {
	for _, u := range l.Unknowns {
		if strings.Contains(u.What, "outside the revision's tree") {
			return true
		}
	}
	return false
}

// TestLaunchesAgainstRealBash compares the dry run of each point with what
// real bash launched for it (issue 45 point 5): the server's command line
// word for word, and every variable of its environment that the workflow
// and the scripts set (not the oracle's stand-ins for the runner, the job
// and the container). Differences are logged by class; the agreement is
// guarded from below.
func TestLaunchesAgainstRealBash(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("a dry run of every recorded point: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	want := readRealLaunches(t)
	r, head := testcorpus.Open(t, nil)
	byPR := commitsByPR(t, r, head)
	wf := NewSweepCache()
	memo := dryrun.NewMemo()
	revs := map[int]*Rev{}
	points := map[string][]LaunchPoint{}
	count := map[string]int{}
	type tally struct{ same, unknown, differs, guessed int }
	perPR := map[int]*tally{}
	shown := map[string]int{}
	limit := 25
	if os.Getenv("PERFLOG_ORACLE_ALL") != "" {
		limit = 1 << 30 // every difference, for a reader
	}
	note := func(class, msg string) {
		count[class]++
		if shown[class] < limit {
			shown[class]++
			t.Logf("%s: %s", class, msg)
		}
	}
	for _, w := range want {
		rev, ok := revs[w.PR]
		if !ok {
			commit, ok := byPR[w.PR]
			if !ok {
				t.Fatalf("#%d is not on the sample's history", w.PR)
			}
			rev = NewRev(strconv.Itoa(w.PR), r.Tree(commit), nil)
			rev.UseSweepCache(wf)
			revs[w.PR] = rev
		}
		pk := strconv.Itoa(w.PR) + "|" + w.Key
		pts, ok := points[pk]
		if !ok {
			pts, _ = rev.LaunchPoints(w.Key)
			points[pk] = pts
		}
		var p *LaunchPoint
		for i := range pts {
			q := &pts[i]
			g := realPoint{Key: q.Key, Scenario: q.Scenario, ISL: "", OSL: "", TP: q.TP, EP: q.EP, DPAttn: q.DPAttn, Conc: q.Conc,
				Spec: q.Spec, KVOff: q.KVOffloading, KVBack: q.KVBackend}
			if q.Scenario == "fixed-seq-len" {
				g.ISL, g.OSL = float64(q.ISL), float64(q.OSL)
			}
			wid := *w
			if wid.Spec == "none" && q.Spec == "" {
				wid.Spec = ""
			}
			if g.id() == wid.id() {
				p = q
				break
			}
		}
		label := fmt.Sprintf("#%d %s", w.PR, w.id())
		if p == nil {
			note("point not listed", label)
			continue
		}
		var real []int
		for i, c := range w.Calls {
			if realServer(c.Cmd, c.Argv) {
				real = append(real, i)
			}
		}
		l := rev.DryRunPoint(context.Background(), p, dryrun.Options{Memo: memo})
		if l == nil {
			l = &dryrun.Launch{Status: "not run", Reason: p.Note}
		}
		switch {
		case len(real) == 0 && len(l.Servers) == 0:
			count["no server, both"]++
			continue
		case len(real) == 0:
			note("a server real bash did not start", fmt.Sprintf("%s (exit %d %s): %s", label, w.Exit, w.Error, strings.Join(l.Servers[0].Argv, " ")))
			continue
		case len(l.Servers) == 0:
			note("no server in the dry run", fmt.Sprintf("%s: real bash ran %s %s; the dry run: %s %s", label, w.Calls[real[0]].Cmd, strings.Join(w.Calls[real[0]].Argv, " "), l.Status, l.Reason))
			continue
		}
		pc := perPR[w.PR]
		if pc == nil {
			pc = &tally{}
			perPR[w.PR] = pc
		}
		got := l.Servers[0]
		rc := w.Calls[real[0]]
		if path.Base(got.Argv[0]) == rc.Cmd && slices.Equal(got.Argv[1:], rc.Argv) {
			pc.same++
			count["argv same"]++
		} else if strings.Contains(strings.Join(got.Argv, " "), dryrun.UnknownMarker) {
			pc.unknown++
			note("argv unknown to the dry run", label+": "+strings.Join(got.Argv, " "))
		} else if guessedMachine(l) {
			pc.guessed++
			note("argv differs where the dry run guessed the machine", fmt.Sprintf("%s\n   real: %s %s\n   dry:  %s", label, rc.Cmd, strings.Join(rc.Argv, " "), strings.Join(got.Argv, " ")))
		} else {
			pc.differs++
			note("argv differs", fmt.Sprintf("%s\n   real: %s %s\n   dry:  %s", label, rc.Cmd, strings.Join(rc.Argv, " "), strings.Join(got.Argv, " ")))
		}
		for _, name := range sortedKeys(rc.Env) {
			if oracleOwnEnv(name) {
				continue
			}
			if strings.HasPrefix(rc.Env[name], "{invalid") {
				count["invalid in the oracle's run"]++ // #258's run-eval: see the workflow oracle
				continue
			}
			v, ok := got.Env[name]
			switch {
			case !ok:
				note("env missing in the dry run", fmt.Sprintf("%s: %s=%s", label, name, rc.Env[name]))
			case strings.Contains(v, dryrun.UnknownMarker):
				count["env unknown to the dry run"]++
			case v == "<secret>" && strings.HasPrefix(rc.Env[name], "SECRET_"):
				count["env same"]++
			case v != rc.Env[name]:
				note("env differs", fmt.Sprintf("%s: %s = %q, real bash %q", label, name, v, rc.Env[name]))
			default:
				count["env same"]++
			}
		}
		for _, name := range sortedKeys(got.Env) {
			if _, ok := rc.Env[name]; ok || oracleOwnEnv(name) {
				continue
			}
			if strings.Contains(got.Env[name], dryrun.UnknownMarker) {
				count["env unknown to the dry run"]++ // set or not by what the machine has (a find in the image)
				continue
			}
			note("env only in the dry run", fmt.Sprintf("%s: %s=%s", label, name, got.Env[name]))
		}
	}
	classes := make([]string, 0, len(count))
	for c := range count {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	for _, class := range classes {
		t.Logf("%-40s %d", class, count[class])
	}
	var prs []int
	for pr := range perPR {
		prs = append(prs, pr)
	}
	slices.Sort(prs)
	for _, pr := range prs {
		pc := perPR[pr]
		known := pc.same + pc.differs
		t.Logf("#%-5d argv same %4d, differs %d, unknown to the dry run %d, differs where it guessed the machine %d", pr, pc.same, pc.differs, pc.unknown, pc.guessed)
		if known > 0 && float64(pc.same) < 0.99*float64(known) {
			t.Errorf("#%d: %d of %d command lines the dry run knows are not what real bash launched (the goal: 99%% the same)", pr, pc.differs, known)
		}
	}
	envBad := count["env differs"] + count["env missing in the dry run"] + count["env only in the dry run"]
	if envAll := envBad + count["env same"]; envAll == 0 || float64(envBad) > 0.002*float64(envAll) {
		t.Errorf("%d of %d server variables differ from what real bash passed (the floor: 0.2%%)", envBad, envAll)
	}
	if count["argv same"] < 5800 {
		t.Errorf("only %d command lines the same (5,854 measured): the recording, the matching of points or the dry run broke", count["argv same"])
	}
	if n := count["no server in the dry run"]; n > 0 {
		// a launch real bash made that the dry run stopped before (a
		// guard it failed): worse than an unknown value
		t.Errorf("%d points real bash launched have no server in the dry run", n)
	}
}
