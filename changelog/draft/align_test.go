package draft

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// TestLongEnvSaidByItsSibling: a change of many variables that makes a
// recipe's environment its sibling's is one bullet naming the sibling,
// with the variables the sibling does not set as they are listed
// otherwise; when the sibling sets them otherwise, they are listed.
func TestLongEnvSaidByItsSibling(t *testing.T) {
	exports := func(prefix string, n int, v string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "export %s_%d=%s\n", prefix, i, v)
		}
		return b.String()
	}
	script := func(env string) string {
		return strings.Replace(testfs.Script, "export VLLM_USE_X=1\n", env, 1)
	}
	const sibKey = "k1-fp8-b200-vllm-mtp"
	sibPath := strings.Replace(testfs.ScriptPath, "k1_fp8_b200_vllm.sh", "k1_fp8_b200_vllm_mtp.sh", 1)
	sibling := strings.Replace(testfs.RecipeYAML, "k1-fp8-b200-vllm:", sibKey+":", 1)
	// (its points decode speculatively: its own script, _mtp)
	sibling = strings.ReplaceAll(sibling, "conc-end: 64 }", "conc-end: 64, spec-decoding: mtp }")
	sibling = strings.ReplaceAll(sibling, "conc-list: [64, 128] }", "conc-list: [64, 128], spec-decoding: mtp }")
	rev := func(mine, theirs string) testfs.Files {
		f := testfs.Revision("v1", script(mine))
		return f.With("configs/nvidia-master.yaml", f["configs/nvidia-master.yaml"]+fmt.Sprintf(sibling, "v1")).With(sibPath, script(theirs)).
			With("runners/launch_b200-nb.sh", "#!/bin/bash\nSPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\n"+
				"bash \"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}${SPEC_SUFFIX}.sh\"\n")
	}
	for _, c := range []struct {
		name, sibValue string
		want           []string
		not            []string
	}{
		{"aligned", "1",
			[]string{"Align the environment with " + sibKey + ": S_0=1, S_1=1, S_2=1, S_3=1, S_4=1 and S_5=1 as it sets them, 10 it does not set removed", "Set MY_VAR=1"},
			[]string{"Remove OLD_0", "Set S_0"}},
		{"the sibling sets them otherwise", "2",
			[]string{"Set MY_VAR=1, S_0=1, S_1=1, S_2=1, S_3=1, S_4=1 and S_5=1"},
			[]string{"Align the environment"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			theirs := exports("S", 6, c.sibValue)
			s := &config.Settings{}
			ch := recipe.NewChange(recipe.NewRev("base", rev(exports("OLD", 10, "1"), theirs), s),
				recipe.NewRev("head", rev(exports("S", 6, "1")+"export MY_VAR=1\n", theirs), s), []string{testfs.ScriptPath})
			drafts, err := Entries(ch, Options{})
			if err != nil || len(drafts) != 1 {
				t.Fatalf("%v %+v", err, drafts)
			}
			got := drafts[0].Description
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("bullets %q\nwant one %q", got, w)
				}
			}
			for _, n := range c.not {
				if slices.ContainsFunc(got, func(b string) bool { return strings.Contains(b, n) }) {
					t.Errorf("bullets %q\nwant none with %q", got, n)
				}
			}
		})
	}
}

// TestSiblingSameJSONOtherwiseWritten: a new recipe whose option holds
// the sibling's JSON with its keys in another order passes the same
// option: no difference is said.
func TestSiblingSameJSONOtherwiseWritten(t *testing.T) {
	const newKey = "k1-fp8-b200-vllm-mtp"
	newPath := strings.Replace(testfs.ScriptPath, "k1_fp8_b200_vllm.sh", "k1_fp8_b200_vllm_mtp.sh", 1)
	recipeYAML := strings.Replace(testfs.RecipeYAML, "k1-fp8-b200-vllm:", newKey+":", 1)
	recipeYAML = strings.ReplaceAll(recipeYAML, "conc-end: 64 }", "conc-end: 64, spec-decoding: mtp }")
	recipeYAML = strings.ReplaceAll(recipeYAML, "conc-list: [64, 128] }", "conc-list: [64, 128], spec-decoding: mtp }")
	launcher := "#!/bin/bash\nSPEC_SUFFIX=$([[ \"$SPEC_DECODING\" == \"mtp\" ]] && printf '_mtp' || printf '')\n" +
		"bash \"benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}${SPEC_SUFFIX}.sh\"\n"
	base := testfs.Revision("v1", testfs.Script).With("runners/launch_b200-nb.sh", launcher)
	reordered := strings.Replace(testfs.Script, `'{"level": 3, "k1_msa_backend": "cutlass"}'`, `'{"k1_msa_backend": "cutlass", "level": 3}'`, 1)
	head := base.With("configs/nvidia-master.yaml", base["configs/nvidia-master.yaml"]+fmt.Sprintf(recipeYAML, "v1")).With(newPath, reordered)
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml", newPath})
	drafts, err := Entries(ch, Options{})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	if got := drafts[0].Description; !slices.Contains(got, "Server options as k1-fp8-b200-vllm's") {
		t.Errorf("bullets %q\nwant one %q", got, "Server options as k1-fp8-b200-vllm's")
	}
}

// TestEnvSummary: a driver script's long list of variables is said by
// kind: those set to a value of its own named, those with a default by
// family (a family of one by its name), those passed in named briefly.
func TestEnvSummary(t *testing.T) {
	names := []string{"TIME_LIMIT=08:00:00 (default)", "MODEL_PATH", "MC_A=1 (default)", "MC_B=2 (default)", "MC_C=3 (default)",
		"HICACHE_X=a (default)", "HICACHE_Y=b (default)", "MORI_CONN_PATCH=skip", "PREFILL_ENABLE_EP"}
	got := envSummary(names)
	want := "9 variables; set: MORI_CONN_PATCH=skip; 6 with defaults: MC_* (3), HICACHE_* (2), TIME_LIMIT; passed in: MODEL_PATH, PREFILL_ENABLE_EP"
	if got != want {
		t.Errorf("envSummary =\n  %q\nwant\n  %q", got, want)
	}
}

// TestNewFilesSaidByTheirArm: a new srt-slurm file of a recipe whose
// config changed is said by the arm that names it, not again as a file;
// without a config change it is said.
func TestNewFilesSaidByTheirArm(t *testing.T) {
	f := "benchmarks/multi_node/srt-slurm-recipes/x/disagg-2p1d.yaml"
	out := []string{"Add 2P1D prefill TP8, decode TP8 conc 64", "Add " + f}
	changed := recipe.RecipeChange{Files: []string{f}, Diff: &config.RecipeDiff{Changes: []config.Change{{Path: "scenarios.fixed-seq-len[0].search-space[1]", Kind: config.Added}}}}
	if got := newFilesSaid(changed, slices.Clone(out)); !slices.Equal(got, out[:1]) {
		t.Errorf("config changed: %q, want %q", got, out[:1])
	}
	if got := newFilesSaid(recipe.RecipeChange{Files: []string{f}}, slices.Clone(out)); !slices.Equal(got, out) {
		t.Errorf("config unchanged: %q, want %q", got, out)
	}
}

// TestRemovedTogether: many removed arms are said by what they share and
// no remaining arm has; few, or nothing shared, are said one by one.
func TestRemovedTogether(t *testing.T) {
	row := func(isl int64, ptp, dtp int64) config.Row {
		return config.Row{Scenario: "fixed-seq-len", ISL: isl, OSL: 1024, TP: []int64{ptp, dtp}, EP: []int64{1, 1}, Workers: []int64{1, 1}}
	}
	for _, c := range []struct {
		name       string
		gone, kept []config.Row
		want       string
	}{
		{"a sequence length", []config.Row{row(8192, 4, 8), row(8192, 4, 4), row(8192, 8, 8), row(8192, 2, 4)}, []config.Row{row(1024, 4, 8)}, "Remove the 8k1k arms (4)"},
		{"a side", []config.Row{row(8192, 4, 8), row(1024, 8, 8), row(8192, 8, 8), row(1024, 2, 8)}, []config.Row{row(1024, 4, 4)}, "Remove the decode TP8 arms (4: 1k1k and 8k1k)"},
		{"few", []config.Row{row(8192, 4, 8), row(8192, 4, 4), row(8192, 8, 8)}, nil, ""},
		{"nothing shared", []config.Row{row(8192, 4, 8), row(1024, 4, 4), row(8192, 8, 4), row(1024, 2, 8)}, []config.Row{row(1024, 4, 8)}, ""},
	} {
		got, ok := removedTogether(c.gone, c.kept)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: %q %v, want %q", c.name, got, ok, c.want)
		}
	}
}

// TestMergeTableBullets: a model table's change said twice (the same
// options for prefill and decode, one variable a bullet) is said once.
func TestMergeTableBullets(t *testing.T) {
	got := mergeTableBullets([]string{
		"Add --a 1, --b to prefill_flags of M in t.yaml", "Add --a 1, --b to decode_flags of M in t.yaml",
		"Set X_A=1 (in M in t.yaml)", "Remove X_C (in M in t.yaml)", "Set X_B=2 (in M in t.yaml)", "Set X_D=3 (in N in t.yaml)",
	})
	want := []string{"Add --a 1, --b to prefill_flags and decode_flags of M in t.yaml", "Set X_A=1 and X_B=2 (in M in t.yaml)", "Remove X_C (in M in t.yaml)", "Set X_D=3 (in N in t.yaml)"}
	if !slices.Equal(got, want) {
		t.Errorf("mergeTableBullets =\n  %q\nwant\n  %q", got, want)
	}
}

// TestConvertedArmIsOneChange: an arm whose expert parallelism or DP
// attention changed, nothing else, is one change, not an addition and a
// removal.
func TestConvertedArmIsOneChange(t *testing.T) {
	row := func(ep int64, dpa bool, conc ...int64) config.Row {
		return config.Row{Scenario: "agentic-coding", TP: []int64{8}, EP: []int64{ep}, DPA: []bool{dpa}, Conc: conc}
	}
	old := []config.Row{row(1, false, 1, 2, 4), row(1, true, 48, 64, 96)}
	new := []config.Row{row(1, false, 1, 2, 4), row(8, true, 48)}
	got := rowBullets(old, new)
	want := []string{"Change TP8 DPA to TP8/EP8 DPA, conc from [48, 64, 96] to 48"}
	if !slices.Equal(got, want) {
		t.Errorf("rowBullets = %q, want %q", got, want)
	}
}

// TestFollowsPoints: an option whose value is every point's own tp, ep
// or conc, at the base points too, follows the point; a literal that
// only equals the new points' parameter does not.
func TestFollowsPoints(t *testing.T) {
	pl := func(ep, conc int64, flags ...dryrun.ArgFlag) recipe.PointLaunch {
		return recipe.PointLaunch{Point: recipe.LaunchPoint{TP: 8, EP: ep, Conc: conc},
			Launch: &dryrun.Launch{Status: dryrun.StatusLaunched, Servers: []dryrun.Command{{Argv: []string{"sglang"}, Flags: flags}}}}
	}
	ep := func(v string) dryrun.ArgFlag { return dryrun.ArgFlag{Name: "--ep-size", Values: []string{v}} }
	added := []recipe.PointLaunch{pl(8, 48, ep("8"))}
	for _, c := range []struct {
		name string
		base []recipe.PointLaunch
		want bool
	}{
		{"the base points pass their own ep", []recipe.PointLaunch{pl(1, 4, ep("1")), pl(1, 8, ep("1"))}, true},
		{"no base point passes it", []recipe.PointLaunch{pl(1, 4), pl(1, 8)}, false},
		{"a base point passes another value", []recipe.PointLaunch{pl(1, 4, ep("2"))}, false},
	} {
		if got := followsPoints("launch.flags.--ep-size", "8", added, c.base); got != c.want {
			t.Errorf("%s: followsPoints = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSiblingRuleByPoint: an option set by point in a new recipe and its
// sibling, which run different points, differs when it follows another
// rule at points of one kind (a constant 16 against 8 at DP attention,
// 2 × conc against conc / 2), and not when only the points differ (the
// point's own tp, the same multiple of conc).
func TestSiblingRuleByPoint(t *testing.T) {
	pt := func(tp, conc int64, dpa bool, flags ...string) recipe.PointLaunch {
		l := &dryrun.Launch{Status: dryrun.StatusLaunched, Servers: []dryrun.Command{{Argv: []string{"vllm", "serve"}}}}
		for i := 0; i+1 < len(flags); i += 2 {
			l.Servers[0].Flags = append(l.Servers[0].Flags, dryrun.ArgFlag{Name: flags[i], Values: []string{flags[i+1]}})
		}
		return recipe.PointLaunch{Point: recipe.LaunchPoint{TP: tp, EP: tp, DPAttn: dpa, Conc: conc, Scenario: "agentic-coding"}, Launch: l}
	}
	mine := []recipe.PointLaunch{
		pt(8, 8, false, "--tensor-parallel-size", "8", "--max-num-seqs", "16"),
		pt(8, 16, true, "--tensor-parallel-size", "8", "--max-num-seqs", "32", "--prefill-schedule-interval", "16"),
		pt(8, 24, true, "--tensor-parallel-size", "8", "--max-num-seqs", "48", "--prefill-schedule-interval", "16"),
	}
	theirs := []recipe.PointLaunch{
		pt(4, 4, false, "--tensor-parallel-size", "4", "--max-num-seqs", "8"),
		pt(4, 32, true, "--tensor-parallel-size", "4", "--max-num-seqs", "16", "--prefill-schedule-interval", "8"),
		pt(8, 64, true, "--tensor-parallel-size", "8", "--max-num-seqs", "32", "--prefill-schedule-interval", "8"),
	}
	for flag, same := range map[string]bool{
		"--tensor-parallel-size":      true,  // the point's own tp in both
		"--max-num-seqs":              false, // 2 × conc against conc / 2 at DP attention
		"--prefill-schedule-interval": false, // 16 against 8 at DP attention
	} {
		if got := sameRule(mine, theirs, "launch.flags."+flag); got != same {
			t.Errorf("%s: same rule %v, want %v", flag, got, same)
		}
	}
	// at points of the non-DP kind alone, 2 × conc is the same rule
	if !sameRule(mine[:1], theirs[:1], "launch.flags.--max-num-seqs") {
		t.Error("--max-num-seqs 2 × conc in both: said to differ")
	}
	// set at every point against at some: another rule, multiples aside
	some := []recipe.PointLaunch{pt(4, 4, false, "--max-num-seqs", "8"), pt(4, 6, false)}
	if sameRule(mine[:1], some, "launch.flags.--max-num-seqs") {
		t.Error("--max-num-seqs at every point against at some: said to be the same")
	}
	// and points of a kind the other recipe does not run say nothing
	if !sameRule(mine[1:], theirs[:1], "launch.flags.--prefill-schedule-interval") {
		t.Error("DP-attention points against none: said to differ")
	}
}

// TestConcFromTo: a change of concurrencies is said in one notation,
// ranges when both double, lists when either does not.
func TestConcFromTo(t *testing.T) {
	for _, c := range []struct {
		old, new []int64
		want     string
	}{
		{[]int64{4, 8, 16, 32, 64}, []int64{4, 8, 16, 32, 64, 128}, "from 4-64 to 4-128"},
		{[]int64{1, 4, 8}, []int64{1, 2, 4, 8}, "from [1, 4, 8] to [1, 2, 4, 8]"},
		{[]int64{48, 64, 96}, []int64{48}, "from [48, 64, 96] to 48"},
		{[]int64{16, 40, 48}, []int64{32, 64, 96}, "from [16, 40, 48] to [32, 64, 96]"},
	} {
		if got := concFromTo(c.old, c.new); got != c.want {
			t.Errorf("%v -> %v: %q, want %q", c.old, c.new, got, c.want)
		}
	}
}
