package changelog

import (
	"slices"
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
	base := testfs.Files{
		"configs/nvidia-master.yaml": "{}\n",
		"configs/amd-master.yaml":    "{}\n",
		"configs/runners.yaml":       "labels:\n  gb200: [gb200-nv_0]\n",
		"runners/launch_gb200-nv.sh": "#!/bin/bash\n",
	}
	srt := func(b string) string {
		return "name: x\nbackend:\n  prefill_environment: &w\n    SGLANG_A: \"1\"\n    SGLANG_B: " + b + "\n    lowercase: no\n" +
			"  decode_environment:\n    <<: *w\nbenchmark:\n  env:\n    AIPERF_EXTRA_INPUTS: \"thinking:true\"\n"
	}
	head := base.With("configs/nvidia-master.yaml", `m1-fp4-gb200-dynamo-sglang:
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
      - { conc-list: [8], prefill: { tp: 4, additional-settings: ["CONFIG_FILE=recipes/m1/1p1d.yaml"] }, decode: { tp: 8 } }
      - { conc-list: [64], prefill: { tp: 4, additional-settings: ["CONFIG_FILE=recipes/m1/2p1d.yaml"] }, decode: { tp: 8 } }
`).With("benchmarks/multi_node/srt-slurm-recipes/m1/1p1d.yaml", srt("one")).
		With("benchmarks/multi_node/srt-slurm-recipes/m1/2p1d.yaml", srt("two"))
	s := &config.Settings{}
	ch := recipe.NewChange(recipe.NewRev("base", base, s), recipe.NewRev("head", head, s), []string{"configs/nvidia-master.yaml"})
	drafts, err := DraftEntries(ch, DraftOptions{NoDryRun: true})
	if err != nil || len(drafts) != 1 {
		t.Fatalf("%v %+v", err, drafts)
	}
	want := "Env in its srt-slurm recipes: SGLANG_A=1, SGLANG_B (by recipe), AIPERF_EXTRA_INPUTS=thinking:true"
	if !slices.Contains(drafts[0].Description, want) {
		t.Fatalf("bullets %q\nwant one %q", drafts[0].Description, want)
	}
}
