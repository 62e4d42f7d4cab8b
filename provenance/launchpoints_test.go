package provenance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/perflog/perflog/gitscan"
)

// gapRecipe is a recipe with a 1k1k and an 8k1k row; its script launches
// a --context-length sized by the point and a --mem-fraction-static.
func gapRecipe(rows string) string {
	return `k1-fp8-b200-sglang:
  image: lmsysorg/sglang:v1
  model: m1
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
` + rows
}

const (
	row1k = "    - { isl: 1024, osl: 1024, search-space: [ { tp: 8, conc-start: 4, conc-end: 8 } ] }\n"
	row8k = "    - { isl: 8192, osl: 1024, search-space: [ { tp: 8, conc-start: 4, conc-end: 8 } ] }\n"
	// row8kTP4 adds a TP4 row to row8k
	row8kTP4 = "    - { isl: 8192, osl: 1024, search-space: [ { tp: 8, conc-start: 4, conc-end: 8 }, { tp: 4, conc-list: [4] } ] }\n"
)

func gapScript(mem string) string {
	return "#!/bin/bash\nif [ \"$TP\" = 4 ]; then export SGLANG_TP4=1; fi\n" +
		"python3 -m sglang.launch_server --model-path \"$MODEL\" --tp $TP --context-length $((ISL + OSL + 20))" +
		" --mem-fraction-static " + mem + "\n"
}

const (
	gapLauncher = "#!/bin/bash\nbash \"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}.sh\"\n"
	gapScriptAt = "benchmarks/single_node/fixed_seq_len/k1_fp8_b200_sglang.sh"
)

// gapLog is the log of the tests' recipe with its launches.
func gapLog(t *testing.T, s *scripted) []LogItem {
	t.Helper()
	h := s.build(Options{Parts: PartsAll})
	vs, err := h.Launches(context.Background(), "k1-fp8-b200-sglang", s.head(), LaunchOptions{Repo: gitscan.FromRepository(s.r)})
	if err != nil {
		t.Fatal(err)
	}
	items, err := h.Log("k1-fp8-b200-sglang", LogOptions{Launches: vs})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// gapMaster is the master config of these tests' recipe.
const gapMaster = ".github/configs/nvidia-master.yaml"

// gapStart is the first commit of these tests: the recipe with rows, its
// runner, launcher and script, and an empty helper.
func gapStart(rows, launcher string) map[string]string {
	return map[string]string{
		gapMaster:                      gapRecipe(rows),
		".github/configs/runners.yaml": "b200:\n- b200-nb_0\n",
		"runners/launch_b200-nb.sh":    launcher,
		"benchmarks/benchmark_lib.sh":  "#!/bin/bash\n",
		gapScriptAt:                    gapScript("0.8"),
	}
}

// TestLaunchHistoryUnknownIsNotAbsent: a stretch where the recipe's
// launch was not known (its launcher gone) is no change of what it
// launches. A value the same on both sides keeps its older commit, and
// blame names the stretch it looked through; a value that differs was
// set somewhere in the stretch, and blame says so instead of crediting
// the commit that made the launch known again. Removing some points moves
// no other point's blame, and is no launch change.
func TestLaunchHistoryUnknownIsNotAbsent(t *testing.T) {
	s := newScripted(t)
	s.commit("add k1 (#1)", gapStart(row1k+row8k, gapLauncher))
	s.commit("drop the launcher (#2)", map[string]string{"runners/launch_b200-nb.sh": ""})
	s.commit("tune while broken (#3)", map[string]string{gapScriptAt: gapScript("0.9")})
	s.commit("restore the launcher (#4)", map[string]string{"runners/launch_b200-nb.sh": gapLauncher})
	s.commit("deprecate 1k1k (#5)", map[string]string{gapMaster: gapRecipe(row8k)})
	s.commit("add a TP4 row (#6)", map[string]string{gapMaster: gapRecipe(row8kTP4)})
	head := s.head()
	h := s.build(Options{Parts: PartsAll})
	vs, err := h.Launches(context.Background(), "k1-fp8-b200-sglang", head, LaunchOptions{Repo: gitscan.FromRepository(s.r)})
	if err != nil {
		t.Fatal(err)
	}
	blame, err := h.BlameLaunch("k1-fp8-b200-sglang", head, vs)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]BlameField{}
	for _, f := range blame {
		got[f.Path] = f
	}
	pr := func(f BlameField) int {
		if f.PR == nil {
			return 0
		}
		return *f.PR
	}
	if tp4 := got["launch.env.SGLANG_TP4[tp4 8k1k]"]; tp4.Value != "1" || pr(tp4) != 6 {
		t.Errorf("SGLANG_TP4 of the new row: %+v", tp4)
	}
	ctx, ok := got["launch.flags.--context-length"]
	if !ok {
		t.Fatalf("no --context-length field once only 8k1k is left: %v", blame)
	}
	if ctx.Value != "9236" || pr(ctx) != 1 || ctx.SetIn != nil || len(ctx.NotKnown) != 1 || pr2(ctx.NotKnown[0].From.PR) != 2 || pr2(ctx.NotKnown[0].To.PR) != 4 ||
		!strings.Contains(ctx.NotKnown[0].Reason, "not run") {
		t.Errorf("--context-length: %+v", ctx)
	}
	mem := got["launch.flags.--mem-fraction-static"]
	if mem.Value != "0.9" || mem.SetIn == nil || pr2(mem.SetIn.From.PR) != 2 || pr2(mem.SetIn.To.PR) != 4 || mem.Event != EvChanged {
		t.Errorf("--mem-fraction-static: %+v (set in %+v)", mem, mem.SetIn)
	}
	if srv := got["launch.server"]; pr(srv) != 1 || srv.Event != EvCreated {
		t.Errorf("launch.server: %+v", srv)
	}

	items, err := h.Log("k1-fp8-b200-sglang", LogOptions{Launches: vs})
	if err != nil {
		t.Fatal(err)
	}
	byPR := map[int]LogItem{}
	for _, it := range items {
		byPR[pr2(it.PR)] = it
	}
	changes := func(n int) (out []string) {
		for _, c := range byPR[n].Changes {
			if strings.HasPrefix(c.Path, "launch.") {
				s := c.Path + " " + c.Old + " -> " + c.New
				if c.NotKnownFrom != "" {
					s += " (not known from " + c.NotKnownFrom[:7] + ")"
				}
				out = append(out, s)
			}
		}
		return out
	}
	drop := s.commits["drop the launcher (#2)"].String()[:7]
	for n, want := range map[int][]string{
		2: {"launch.status launched -> not run (4 of 4 points not run: no launcher runs it)"},
		3: nil,
		4: {"launch.flags.--mem-fraction-static 0.8 -> 0.9 (not known from " + drop + ")", "launch.status not run -> launched"},
		5: nil,
		// what the new points bring, not their client or what they share
		6: {"launch.env.SGLANG_TP4[tp4 8k1k]  -> 1", "launch.flags.--tp[tp4 8k1k]  -> 4"},
	} {
		if g := changes(n); strings.Join(g, "\n") != strings.Join(want, "\n") {
			t.Errorf("log of #%d:\n%s\nwant\n%s", n, strings.Join(g, "\n"), strings.Join(want, "\n"))
		}
	}
	// bisect: the change made while not known is a candidate (with its
	// stretch); the state changes and the removed rows are not
	bis, err := h.Bisect("k1-fp8-b200-sglang", s.commits["add k1 (#1)"], head, vs, "")
	if err != nil {
		t.Fatal(err)
	}
	var cands []int
	for _, c := range bis.Candidates {
		cands = append(cands, pr2(c.PR))
	}
	if fmt.Sprint(cands) != "[4 6]" {
		t.Errorf("bisect candidates %v, want [4 6]", cands)
	}
	if net := LaunchChanges(&vs[0], &vs[len(vs)-1]); len(net) != 1 || net[0].Path != "launch.flags.--mem-fraction-static" || net[0].Old != "0.8" {
		t.Errorf("net change from #1 to #5: %+v", net)
	}
}

func pr2(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// TestRunnerVariablesNeedNoEntry: a commit that changes only the
// runner's variables a recipe's server gets (a cache path a launcher
// exports) is a launch change in the log, but no entry's to tell; one
// that changes a setting of the server is missing its entry.
func TestRunnerVariablesNeedNoEntry(t *testing.T) {
	s := newScripted(t)
	launcher := func(cache string) string {
		return "#!/bin/bash\nexport XDG_CACHE_HOME=" + cache + "\n" + strings.TrimPrefix(gapLauncher, "#!/bin/bash\n")
	}
	s.commit("add k1 (#1)", gapStart(row8k, launcher("/tmp/a")))
	s.commit("move the cache (#2)", map[string]string{"runners/launch_b200-nb.sh": launcher("/tmp/b")})
	s.commit("set a knob (#3)", map[string]string{gapScriptAt: "#!/bin/bash\nexport SGLANG_X=1\n" + strings.TrimPrefix(gapScript("0.8"), "#!/bin/bash\n")})
	items := gapLog(t, s)
	var got []string
	for _, it := range items {
		if pr2(it.PR) == 1 {
			continue
		}
		var paths []string
		for _, c := range it.Changes {
			paths = append(paths, c.Path)
		}
		got = append(got, fmt.Sprintf("#%d %v missing %v", pr2(it.PR), paths, it.MissingEntry))
	}
	want := []string{"#3 [launch.env.SGLANG_X] missing true", "#2 [launch.runner-env.XDG_CACHE_HOME] missing false"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPointsBackAfterAStretch: points removed, then added back, bring
// what the others changed while they were gone; that change is the
// commit's that made it for the others, not news where they came back.
// What changed for them alone in the stretch is.
func TestPointsBackAfterAStretch(t *testing.T) {
	s := newScripted(t)
	s.commit("add k1 (#1)", gapStart(row1k+row8k, gapLauncher))
	s.commit("drop 1k1k (#2)", map[string]string{gapMaster: gapRecipe(row8k)})
	s.commit("export a knob (#3)", map[string]string{gapScriptAt: "#!/bin/bash\nexport SGLANG_X=1\n" +
		"if [ \"$ISL\" = 1024 ]; then export SGLANG_SHORT=1; fi\n" + strings.TrimPrefix(gapScript("0.8"), "#!/bin/bash\n")})
	s.commit("1k1k again (#4)", map[string]string{gapMaster: gapRecipe(row1k + row8k)})
	items := gapLog(t, s)
	got := map[int][]string{}
	for _, it := range items {
		for _, c := range it.Changes {
			if strings.HasPrefix(c.Path, "launch.env.") {
				got[pr2(it.PR)] = append(got[pr2(it.PR)], c.Path+" -> "+c.New)
			}
		}
	}
	if g := strings.Join(got[3], ", "); g != "launch.env.SGLANG_X -> 1" {
		t.Errorf("#3: %s", g)
	}
	// SGLANG_X is #3's; SGLANG_SHORT only the 1k1k points have, set in
	// the stretch they were gone
	if g := strings.Join(got[4], ", "); g != "launch.env.SGLANG_SHORT -> 1" {
		t.Errorf("#4: %s", g)
	}
}
