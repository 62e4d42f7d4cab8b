// Package testfs holds revisions in memory for tests: Files, an fs.FS of
// file contents by path, and Revision, a small InferenceX-shaped
// repository of one recipe (k1-fp8-b200-vllm) and its script.
//
// Dependencies: the standard library only.
package testfs

import (
	"fmt"
	"io/fs"
	"maps"
	"testing/fstest"
)

// Files is a revision's tree in memory: file contents by slash-separated
// path.
type Files map[string]string

// Open opens a file or directory of f (as fstest.MapFS, which lists the
// directories its paths imply).
func (f Files) Open(name string) (fs.File, error) {
	fsys := fstest.MapFS{}
	for p, s := range f {
		fsys[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return fsys.Open(name)
}

// With is a copy of f with the file p holding s.
func (f Files) With(p, s string) Files {
	out := maps.Clone(f)
	out[p] = s
	return out
}

// RecipeYAML is the master config of Revision, with a %s for the image
// tag.
const RecipeYAML = `k1-fp8-b200-vllm:
  image: vllm/vllm-openai:%s
  model: m
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, conc-start: 4, conc-end: 64 }
      - { tp: 4, ep: 4, dp-attn: true, conc-list: [64, 128] }
`

// Script is a benchmark script of Revision's recipe.
const Script = `#!/bin/bash
source "$(dirname "$0")/../../benchmark_lib.sh"
export VLLM_USE_X=1
vllm serve "$MODEL" --tensor-parallel-size "$TP" --max-num-seqs 256 \
  --kv-cache-dtype fp8 --attention_config.k1_special_backend fast \
  --compilation-config '{"level": 3, "k1_msa_backend": "cutlass"}'
`

// ScriptPath is where Revision keeps its script.
const ScriptPath = "benchmarks/single_node/fixed_seq_len/k1_fp8_b200_vllm.sh"

// Revision is a repository of one recipe, k1-fp8-b200-vllm, whose image
// has the tag image, run by script.
func Revision(image, script string) Files {
	return Files{
		"configs/nvidia-master.yaml":  fmt.Sprintf(RecipeYAML, image),
		"configs/amd-master.yaml":     "{}\n",
		"configs/runners.yaml":        "labels:\n  b200: [b200-nb_0]\n",
		"runners/launch_b200-nb.sh":   "#!/bin/bash\n",
		"benchmarks/benchmark_lib.sh": "X=1\n",
		ScriptPath:                    script,
	}
}
