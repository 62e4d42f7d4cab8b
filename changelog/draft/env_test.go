package draft

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
)

// TestDraftNamesAnAddedRecipesVariables: a new multi-node recipe, whose
// launch is not dry-run, is described by the variables its srt-slurm
// recipes set (one bullet for them all; a value they disagree on is
// "by recipe"), not by nothing.
func TestDraftNamesAnAddedRecipesVariables(t *testing.T) {
	base := gb200Base()
	srt := func(b string) string {
		return "name: x\nbackend:\n  prefill_environment: &w\n    SGLANG_A: \"1\"\n    SGLANG_B: " + b + "\n    lowercase: no\n" +
			"  decode_environment:\n    <<: *w\nbenchmark:\n  env:\n    AIPERF_EXTRA_INPUTS: \"thinking:true\"\n"
	}
	head := base.With("configs/nvidia-master.yaml", m1Recipe("m1-fp4-gb200-dynamo-sglang", "1p1d.yaml")+
		"      - { conc-list: [64], prefill: { tp: 4, additional-settings: [\"CONFIG_FILE=recipes/m1/2p1d.yaml\"] }, decode: { tp: 8 } }\n").With("benchmarks/multi_node/srt-slurm-recipes/m1/1p1d.yaml", srt("one")).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/2p1d.yaml", srt("two"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	drafts, err := Entries(ch, Options{NoDryRun: true})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	want := "Env in its srt-slurm recipes: SGLANG_A=1, SGLANG_B (by recipe), AIPERF_EXTRA_INPUTS=thinking:true"
	if !slices.Contains(drafts[0].Description, want) {
		t.Fatalf("bullets %q\nwant one %q", drafts[0].Description, want)
	}
}

// TestDraftReadsTheModelTable: a change to the recipe's model in a
// per-model table of server settings (AMD's models_vllm.yaml) is
// described option by option, variable by variable, and nested setting
// by setting, in the model's entries for each run type too (-AgentX);
// another model's entry, changed too, is not this recipe's.
func TestDraftReadsTheModelTable(t *testing.T) {
	recipeYAML := `k1-fp4-mi355x-vllm-disagg:
  image: vllm/vllm-openai-rocm:%s
  model: amd/K1-MXFP4
  model-prefix: k1
  runner: mi355x-disagg
  precision: fp4
  framework: vllm-disagg
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { conc-list: [8], prefill: { num-worker: 1, tp: 8 }, decode: { num-worker: 1, tp: 8 } }
`
	table := func(k1flags, k1env, otherEnv string) string {
		return "K1-MXFP4:\n  decode_flags: \"" + k1flags + "\"\n  env: \"" + k1env + "\"\n  hf_dir: \"models--amd--K1\"\n" +
			"Other-Model:\n  env: \"" + otherEnv + "\"\n" +
			// the model's entry for a run type (models.yaml's -AgentX), with
			// nested settings
			"K1-MXFP4-AgentX:\n  prefill:\n    mem_fraction_static: " + map[bool]string{true: "0.85", false: "0.72"}[otherEnv == "O_A=2"] + "\n    disable_cuda_graph: true\n"
	}
	base := testfs.Files{
		"configs/nvidia-master.yaml":                       "{}\n",
		"configs/amd-master.yaml":                          fmt.Sprintf(recipeYAML, "v1"),
		"configs/runners.yaml":                             "labels:\n  mi355x-disagg: [mi355x-amds_0]\n",
		"runners/launch_mi355x-amds.sh":                    "#!/bin/bash\n",
		"benchmarks/multi_node/amd_utils/models_vllm.yaml": table("--tensor-parallel-size 8 --enable-expert-parallel --block-size 1", "VLLM_A=1 VLLM_B=0 VLLM_C=x", "O_A=1"),
	}
	head := base.With("configs/amd-master.yaml", fmt.Sprintf(recipeYAML, "v2")).
		With("benchmarks/multi_node/amd_utils/models_vllm.yaml", table("--tensor-parallel-size 8 --block-size 16 --kv-cache-dtype fp8", "VLLM_A=1 VLLM_C=y VLLM_D=INT4", "O_A=2"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s),
		[]string{"configs/amd-master.yaml", "benchmarks/multi_node/amd_utils/models_vllm.yaml"})
	drafts, err := Entries(ch, Options{NoDryRun: true})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	got := drafts[0].Description
	for _, want := range []string{
		"Add --kv-cache-dtype fp8 to decode_flags of K1-MXFP4 in models_vllm.yaml",
		"Change --block-size from 1 to 16 in decode_flags of K1-MXFP4 in models_vllm.yaml",
		"Remove --enable-expert-parallel from decode_flags of K1-MXFP4 in models_vllm.yaml",
		"Change VLLM_C from x to y (in K1-MXFP4 in models_vllm.yaml)",
		"Set VLLM_D=INT4 (in K1-MXFP4 in models_vllm.yaml)",
		"Remove VLLM_B (in K1-MXFP4 in models_vllm.yaml)",
		"Change prefill mem_fraction_static from 0.72 to 0.85 (in K1-MXFP4-AgentX in models_vllm.yaml)",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no bullet %q", want)
		}
	}
	for _, b := range got {
		if strings.Contains(b, "O_A") || strings.Contains(b, "VLLM_A") || strings.Contains(b, "hf_dir") || strings.Contains(b, "disable_cuda_graph") {
			t.Errorf("bullet %q is about what did not change for this recipe", b)
		}
	}
	if t.Failed() {
		t.Logf("bullets %q", got)
	}
}

// TestUnknownIsNoValue: a value the dry run could not know is never
// written into a bullet as if it were one.
func TestUnknownIsNoValue(t *testing.T) {
	for v, want := range map[string]bool{"0.85": true, "fp8_e4m3": true, "<unknown:nproc>": false, "a<unknown:paste>b": false, "$CONC": false} {
		if got := literalValue(v); got != want {
			t.Errorf("literalValue(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestDraftNamesOnlyItsOwnScriptsVariables: a new recipe run by a script
// the change did not touch (a harness other recipes share) does not list
// that script's variables as its news; a script the change adds does.
func TestDraftNamesOnlyItsOwnScriptsVariables(t *testing.T) {
	script := "#!/bin/bash\nexport VLLM_HARNESS_X=1\nvllm serve \"$MODEL\"\n"
	for _, tc := range []struct {
		name    string
		inBase  bool
		changed []string
		want    bool
	}{
		{"a shared script, untouched", true, []string{"configs/nvidia-master.yaml"}, false},
		{"its own script, added", false, []string{"configs/nvidia-master.yaml", testfs.ScriptPath}, true},
	} {
		head := testfs.Revision("v1", script)
		base := testfs.Revision("v1", script).With("configs/nvidia-master.yaml", "{}\n")
		if !tc.inBase {
			delete(base, testfs.ScriptPath)
		}
		s := &config.Settings{}
		ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), tc.changed)
		drafts, err := Entries(ch, Options{NoDryRun: true})
		if err != nil || len(drafts) != 1 {
			t.Fatalf("%s: %v %+v", tc.name, err, drafts)
		}
		got := slices.ContainsFunc(drafts[0].Description, func(b string) bool { return strings.Contains(b, "VLLM_HARNESS_X") })
		if got != tc.want {
			t.Errorf("%s: the draft names the script's variable: %v, want %v (%q)", tc.name, got, tc.want, drafts[0].Description)
		}
	}
}

// TestDraftSaysASecondNewRecipesEnvByTheFirst: of two new multi-node
// recipes of one model, the second's long srt-slurm env is said by what
// differs from the first's, not listed again; the first, with no recipe
// before it to compare with, lists its own.
func TestDraftSaysASecondNewRecipesEnvByTheFirst(t *testing.T) {
	base := gb200Base()
	envYAML := func(extra string) string {
		return "name: x\nbackend:\n  prefill_environment:\n    SGLANG_A: \"1\"\n    SGLANG_B: \"2\"\n    SGLANG_C: \"3\"\n" +
			"    SGLANG_D: \"4\"\n    SGLANG_E: \"5\"\n    SGLANG_F: \"6\"\n" + extra
	}
	head := base.With("configs/nvidia-master.yaml", m1Recipe("m1-fp4-gb200-dynamo-sglang-agg", "agg.yaml")+m1Recipe("m1-fp4-gb200-dynamo-sglang-disagg", "disagg.yaml")).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/agg.yaml", envYAML("    SGLANG_G: \"7\"\n  decode_environment:\n    SGLANG_G: \"9\"\n")).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/disagg.yaml", envYAML("    SGLANG_G: \"8\"\n    SGLANG_DISAGG_TIMEOUT: \"100\"\n"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	drafts, err := Entries(ch, Options{NoDryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	bullets := map[string][]string{}
	for _, d := range drafts {
		for _, k := range d.ConfigKeys {
			bullets[k] = d.Description
		}
	}
	// (the sibling sets SGLANG_G two ways: both said)
	want := "Env in its srt-slurm recipe as m1-fp4-gb200-dynamo-sglang-agg's, except: adds SGLANG_DISAGG_TIMEOUT=100, SGLANG_G=8 instead of 7 or 9"
	if !slices.Contains(bullets["m1-fp4-gb200-dynamo-sglang-disagg"], want) {
		t.Errorf("disagg bullets %q\nwant one %q", bullets["m1-fp4-gb200-dynamo-sglang-disagg"], want)
	}
	if !slices.ContainsFunc(bullets["m1-fp4-gb200-dynamo-sglang-agg"], func(b string) bool { return strings.HasPrefix(b, "Env in its srt-slurm recipe: SGLANG_A=1") }) {
		t.Errorf("agg bullets %q: want its own list", bullets["m1-fp4-gb200-dynamo-sglang-agg"])
	}
	// new recipes of one family (model, precision, machines, framework,
	// image) are one entry, as #2657's author wrote them; the image said
	// once
	if len(drafts) != 1 || len(drafts[0].ConfigKeys) != 2 {
		t.Fatalf("%d entries: want one of both keys", len(drafts))
	}
	images := 0
	for _, b := range drafts[0].Description {
		if strings.HasPrefix(b, "Image: ") {
			images++
		}
	}
	if images != 1 {
		t.Errorf("the image said %d times: %q", images, drafts[0].Description)
	}
}

// m1Recipe is a multi-node recipe of model m1 whose one row runs the
// srt-slurm recipe file.
func m1Recipe(key, file string) string {
	return key + `:
  image: lmsysorg/sglang:v1
  model: org/m1
  model-prefix: m1
  runner: gb200
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { conc-list: [8], prefill: { tp: 4, additional-settings: ["CONFIG_FILE=recipes/m1/` + file + `"] }, decode: { tp: 8 } }
`
}

// gb200Base is a repository with no recipe and a GB200 launcher.
func gb200Base() testfs.Files {
	return testfs.Files{
		"configs/nvidia-master.yaml": "{}\n",
		"configs/amd-master.yaml":    "{}\n",
		"configs/runners.yaml":       "labels:\n  gb200: [gb200-nv_0]\n",
		"runners/launch_gb200-nv.sh": "#!/bin/bash\n",
	}
}

// TestYAMLBulletsNameTheirFile: of a recipe whose arms each have a
// srt-slurm file, a variable's change is said with the file it is in (one
// arm's may go one way and another's the other); one file alone is not
// named. A value is said without its YAML quotes.
func TestYAMLBulletsNameTheirFile(t *testing.T) {
	p := "benchmarks/multi_node/srt-slurm-recipes/m1/tp8.yaml"
	env := func(v string) string {
		return "name: x\nbackend:\n  aggregated_environment:\n    VLLM_SEQS: \"" + v + "\"\n"
	}
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", gb200Base().With(p, env("32")), s), recipe.NewRev("head", gb200Base().With(p, env("16")), s), []string{p})
	if got, want := yamlBullets(ch, p, false, true), []string{`Change VLLM_SEQS from 32 to 16 in tp8.yaml`}; !slices.Equal(got, want) {
		t.Errorf("named: %q, want %q", got, want)
	}
	if got, want := yamlBullets(ch, p, false, false), []string{`Change VLLM_SEQS from 32 to 16`}; !slices.Equal(got, want) {
		t.Errorf("alone: %q, want %q", got, want)
	}
}

// TestYAMLBulletsSayRoleOptions: a role's server option in a srt-slurm
// file is said as the launch says options, one bullet per change with
// its value (a JSON option by its keys), not as a path in a list of
// paths.
func TestYAMLBulletsSayRoleOptions(t *testing.T) {
	p := "benchmarks/multi_node/srt-slurm-recipes/m1/agg.yaml"
	file := func(opts string) string {
		return "name: x\nbackend:\n  vllm_config:\n    aggregated:\n      tensor-parallel-size: 8\n" + opts
	}
	base := file("      max-num-seqs: 32\n      enable-cumem-allocator: true\n      gpu-memory-utilization: 0.9\n      speculative-config: '{\"method\":\"mtp\",\"x\":1}'\n")
	head := file("      max-num-seqs: 16\n      gpu-memory-utilization: 0.94\n      speculative-config: '{\"method\":\"mtp\"}'\n      enforce-eager: true\n")
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", gb200Base().With(p, base), s), recipe.NewRev("head", gb200Base().With(p, head), s), []string{p})
	got := yamlBullets(ch, p, false, false)
	for _, want := range []string{
		"Change aggregated --max-num-seqs from 32 to 16 in agg.yaml",
		"Remove aggregated --enable-cumem-allocator in agg.yaml",
		"Change aggregated --gpu-memory-utilization from 0.9 to 0.94 in agg.yaml",
		"Change aggregated --speculative-config (remove x) in agg.yaml",
		"Add aggregated --enforce-eager in agg.yaml",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("bullets %q\nwant one %q", got, want)
		}
	}
	if slices.ContainsFunc(got, func(b string) bool { return strings.HasPrefix(b, "Update ") }) {
		t.Errorf("bullets %q: options said as a list of paths", got)
	}
}

// TestSettingsSaidOnceByTheFile: a multi-node recipe whose concurrency
// and srt-slurm file both changed is said by the file's diff ("Change
// dynamo.version from 1.0 to 1.1", "Change prefill --mem-fraction-static
// from 0.8 to 0.85 in agg.yaml"), not again from the compared points'
// settings and options ("… (settings)", "… by point").
func TestSettingsSaidOnceByTheFile(t *testing.T) {
	p := "benchmarks/multi_node/srt-slurm-recipes/m1/agg.yaml"
	file := func(v, mem string) string {
		return "name: x\ndynamo:\n  version: \"" + v + "\"\nbackend:\n  type: sglang\n  sglang_config:\n    prefill:\n      mem-fraction-static: " + mem + "\n" +
			"    decode:\n      mem-fraction-static: 0.8\n  prefill_environment:\n    SGLANG_A: \"1\"\n"
	}
	cfg := func(conc string) string {
		return strings.Replace(m1Recipe("m1-fp4-gb200-dynamo-sglang", "agg.yaml"), "conc-list: [8]", "conc-list: "+conc, 1)
	}
	base := gb200Base().With("configs/nvidia-master.yaml", cfg("[8, 16]")).With(p, file("1.0", "0.8"))
	head := gb200Base().With("configs/nvidia-master.yaml", cfg("[8, 32]")).With(p, file("1.1", "0.85"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml", p})
	drafts, err := Entries(ch, Options{})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	got := drafts[0].Description
	if !slices.Contains(got, `Change dynamo.version from "1.0" to "1.1" in agg.yaml`) && !slices.Contains(got, `Change dynamo.version from 1.0 to 1.1 in agg.yaml`) {
		t.Errorf("bullets %q: want the file's change of dynamo.version", got)
	}
	if !slices.Contains(got, "Change prefill --mem-fraction-static from 0.8 to 0.85 in agg.yaml") {
		t.Errorf("bullets %q: want the file's change of the prefill option", got)
	}
	if n := len(slices.DeleteFunc(slices.Clone(got), func(b string) bool { return !strings.Contains(b, "mem-fraction-static") })); n != 1 {
		t.Errorf("bullets %q: the option said %d times", got, n)
	}
	if slices.ContainsFunc(got, func(b string) bool { return strings.Contains(b, "(settings)") || strings.Contains(b, "by point") }) {
		t.Errorf("bullets %q: the same setting said again from the compared points' launches", got)
	}
}

// TestLongEnvSaidByWhatIsNew: a new recipe's long srt-slurm environment,
// with no sibling that says it shortly, is said by its count and what no
// other file of the repository (srt-slurm file or script) sets so, never
// listed whole: a name set nowhere else is new, one set elsewhere to
// another value has a new value, and a pair another launcher's recipe
// (llm-d's env:) sets already is neither.
func TestLongEnvSaidByWhatIsNew(t *testing.T) {
	vars := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "    SGLANG_SHARED_%d: \"%d\"\n", i, i)
		}
		return b.String()
	}
	envYAML := func(vs string) string { return "name: x\nbackend:\n  prefill_environment:\n" + vs }
	// two other models' recipes set the shared ones between them: either,
	// as a sibling, differs in most
	others := strings.ReplaceAll(m1Recipe("m2-fp4-gb200-dynamo-sglang", "a.yaml"), "org/m1", "org/m2") +
		strings.ReplaceAll(m1Recipe("m3-fp4-gb200-dynamo-sglang", "b.yaml"), "org/m1", "org/m3")
	// (and a script of the repository sets one of them, so)
	base := gb200Base().With("configs/nvidia-master.yaml", others).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/a.yaml", envYAML(vars(0, 7))).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/b.yaml", envYAML(vars(7, 13))).
		With("benchmarks/single_node/x.sh", "#!/bin/bash\nexport SGLANG_IN_A_SCRIPT=\"on\"\n").
		With("benchmarks/multi_node/llm-d-recipes/m9.yaml", "prefill:\n  tp: 1\n  env:\n    NVSHMEM_REMOTE_TRANSPORT: \"none\"\n")
	head := base.With("configs/nvidia-master.yaml", others+m1Recipe("m1-fp4-gb200-dynamo-sglang", "new.yaml")).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/new.yaml", envYAML("    SGLANG_SHARED_0: \"9\"\n"+vars(1, 13)+"    SGLANG_NEW: \"1\"\n    SGLANG_IN_A_SCRIPT: \"on\"\n    NVSHMEM_REMOTE_TRANSPORT: \"none\"\n"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	drafts, err := Entries(ch, Options{NoDryRun: true})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	// (a variable set elsewhere to another value is no new variable)
	want := "Env in its srt-slurm recipe: 16 variables; new to the repository: SGLANG_NEW=1; values new to it: SGLANG_SHARED_0=9"
	if !slices.Contains(drafts[0].Description, want) {
		t.Errorf("bullets %q\nwant one %q", drafts[0].Description, want)
	}
}

// TestSettingsSaidByTheLaunch: when every point was compared, a srt-slurm
// file's settings are said by the launch's diff, once for the recipe; the
// recipe's identity block and a container that is the image are not news.
func TestSettingsSaidByTheLaunch(t *testing.T) {
	p := "benchmarks/multi_node/srt-slurm-recipes/m1/agg.yaml"
	file := func(v, image string) string {
		return "name: x\nidentity:\n  frameworks:\n    dynamo: \"" + v + "\"\nmodel:\n  container: \"" + image + "\"\ndynamo:\n  version: \"" + v + "\"\nbackend:\n  type: sglang\n  sglang_config:\n" +
			"    prefill:\n      mem-fraction-static: 0.8\n    decode:\n      mem-fraction-static: 0.8\n  prefill_environment:\n    SGLANG_A: \"1\"\n"
	}
	cfg := m1Recipe("m1-fp4-gb200-dynamo-sglang", "agg.yaml")
	base := gb200Base().With("configs/nvidia-master.yaml", cfg).With(p, file("1.0", "lmsysorg/sglang:v1"))
	head := gb200Base().With("configs/nvidia-master.yaml", strings.Replace(cfg, "sglang:v1", "sglang:v2", 1)).With(p, file("1.1", "lmsysorg/sglang:v2"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml", p})
	drafts, err := Entries(ch, Options{})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	want := []string{"Update image from lmsysorg/sglang:v1 to lmsysorg/sglang:v2", "Change dynamo.version from 1.0 to 1.1 in its srt-slurm recipe"}
	if got := drafts[0].Description; !slices.Equal(got, want) {
		t.Errorf("bullets %q\nwant %q", got, want)
	}
}
