package recipe

import (
	"regexp"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe/dryrun"
)

// TestInfraVar: the runner's variables are no change of what runs; a
// setting whose name holds one of their words is.
func TestInfraVar(t *testing.T) {
	for name, infra := range map[string]bool{
		"USER": true, "HOME": true, "SLURM_JOB_ID": true, "HF_HUB_CACHE": true, "PORT": true, "RESULT_FILENAME": true,
		"XDG_CACHE_HOME": true, "AIPERF_HTTP_TCP_USER_TIMEOUT": false, "SGLANG_USE_AITER": false, "VLLM_HOME_DIRLESS": false, "NCCL_DMABUF_ENABLE": false,
		"home": true, "vllm_cache_root": true, "CACHE": false, "_PATH": true, "PATHS": false, "MY_JOBS": false, "Job_Id": true,
	} {
		if infraVar(name) != infra {
			t.Errorf("%s: infra %v, want %v", name, !infra, infra)
		}
	}
}

// TestInfraVarAsPattern: the word matcher says what the pattern it
// replaced says, over names built from its words, their neighbours and
// their cases.
func TestInfraVarAsPattern(t *testing.T) {
	pattern := regexp.MustCompile(`(?i)^(USER|HOME|TMP|TMPDIR|PWD|SHELL)$|(^|_)(SLURM|SRT|RUNNER|GITHUB|WORKSPACE|SQUASH|MOUNT|JOB|NODE|PARTITION|ACCOUNT|PORT|HOST|LOG|LOGS|RESULT|RESULTS|METRICS|CSV|MONITOR)(_|$)|_(PATH|DIR|FILE|CACHE|ROOT|PREFIX|HOME)$`)
	words := []string{"", "USER", "home", "TMPDIR", "Shell", "SLURM", "srt", "JOBS", "JOB", "NODE", "PORTS", "LOG", "CSV", "PATH",
		"DIR", "Cache", "ROOT", "PREFIX", "HOME", "VLLM", "SGLANG", "X", "DIRS", "USE", "AITER"}
	n := 0
	for _, a := range words {
		for _, b := range words {
			for _, c := range words {
				for _, name := range []string{a, a + "_" + b, a + b, a + "_" + b + "_" + c, a + b + "_" + c} {
					n++
					if got, want := infraVar(name), pattern.MatchString(name); got != want {
						t.Errorf("infraVar(%q) = %v, the pattern says %v", name, got, want)
					}
				}
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d names", n)
	}
}

// TestSameModel: a local copy of a hub model is the same model.
func TestSameModel(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"nvidia/GLM-5-NVFP4", "/scratch/fsw/models/GLM-5-NVFP4", true},
		{"/data/models/dsv4-pro", "deepseek-ai/dsv4-pro", true},
		{"nvidia/GLM-5-NVFP4", "nvidia/GLM-5-FP8", false},
		{"nvidia/GLM-5-NVFP4", "zai-org/GLM-5-NVFP4", false}, // another publisher's weights
		{"0.8", "/0.8", false},
		{"/a/x", "/b/x", true},
		{"deepseek-ai/DeepSeek-V4-Pro", "/lustre/fsw/models/deepseek-v4-pro", true}, // a mirror in lower case
	} {
		if sameModel(tc.a, tc.b) != tc.same {
			t.Errorf("sameModel(%q, %q) = %v", tc.a, tc.b, !tc.same)
		}
	}
}

// TestRespelled: a value written another way is not a change; a value
// added or removed, or a different value, is.
func TestRespelled(t *testing.T) {
	for _, c := range []struct {
		d    LaunchDiff
		want bool
	}{
		{LaunchDiff{Base: "0.9", Head: "0.90"}, true},
		{LaunchDiff{Base: "8192", Head: "8192.0"}, true},
		{LaunchDiff{Base: `{"a": 1, "b": [1, 2]}`, Head: "{\n  \"b\": [1,2],\n  \"a\": 1\n}"}, true},
		{LaunchDiff{Base: "0.9", Head: "0.85"}, false},
		{LaunchDiff{Base: `{"a": 1}`, Head: `{"a": 2}`}, false},
		{LaunchDiff{Base: `[1, 2]`, Head: `[2, 1]`}, false},
		{LaunchDiff{Base: "0.9", Head: "0.9"}, false},
		{LaunchDiff{Base: "", Head: "0", BaseAbsent: true}, false},
		{LaunchDiff{Base: "fp8", Head: "FP8"}, false},
	} {
		if got := c.d.Respelled(); got != c.want {
			t.Errorf("Respelled(%q -> %q) = %v, want %v", c.d.Base, c.d.Head, got, c.want)
		}
	}
}

// TestFactsLocalModel: a launch that points MODEL at a local copy of the
// point's model keeps it with the runner's variables, not as a setting
// a changelog entry tells.
func TestFactsLocalModel(t *testing.T) {
	pl := PointLaunch{
		Point: LaunchPoint{Env: map[string]string{"MODEL": "deepseek-ai/DeepSeek-V4-Pro"}},
		Launch: &dryrun.Launch{Status: dryrun.StatusLaunched, Servers: []dryrun.Command{{
			Argv: []string{"vllm", "serve"},
			Env:  map[string]string{"MODEL": "/lustre/fsw/models/deepseek-v4-pro", "VLLM_X": "1"},
		}}},
	}
	f := pl.Facts()
	if _, ok := f["launch.env.MODEL"]; ok {
		t.Errorf("facts = %v: a local copy of the model is a setting", f)
	}
	if f["launch.runner-env.MODEL"] != "/lustre/fsw/models/deepseek-v4-pro" || f["launch.env.VLLM_X"] != "1" {
		t.Errorf("facts = %v, want MODEL with the runner's variables and VLLM_X a setting", f)
	}
}

// TestCheckImageAliasesAndRepeats: a srt-slurm container alias
// ("dynamo-sglang", an image of the cluster's own table) is not called a
// non-upstream image, and an image its recipe's files repeat is said once.
func TestCheckImageAliasesAndRepeats(t *testing.T) {
	cfg := `m1-fp4-gb200-dynamo-sglang:
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
      - { conc-list: [8], prefill: { tp: 4, additional-settings: ["CONFIG_FILE=recipes/m1/a.yaml"] }, decode: { tp: 8 } }
      - { conc-list: [16], prefill: { tp: 8, additional-settings: ["CONFIG_FILE=recipes/m1/b.yaml"] }, decode: { tp: 8 } }
`
	files := testfs.Files{
		"configs/nvidia-master.yaml":                        cfg,
		"configs/amd-master.yaml":                           "{}\n",
		"configs/runners.yaml":                              "labels:\n  gb200: [gb200-nv_0]\n",
		"runners/launch_gb200-nv.sh":                        "#!/bin/bash\n",
		"benchmarks/multi_node/srt-slurm-recipes/m1/a.yaml": "model:\n  container: \"dynamo-sglang\"\nfrontend:\n  image: nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0\n",
		"benchmarks/multi_node/srt-slurm-recipes/m1/b.yaml": "model:\n  container: \"dynamo-sglang\"\nfrontend:\n  image: nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0\n",
	}
	got := CheckImage(NewRev("head", files, &config.Settings{}), "m1-fp4-gb200-dynamo-sglang")
	if len(got) != 1 || got[0].Source != "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0" {
		t.Errorf("findings %+v, want one for the nvcr.io image", got)
	}
}

func TestRunnerField(t *testing.T) {
	for path, want := range map[string]bool{
		"launch.runner-env.HF_HUB_CACHE":           true,
		"launch.runner-env.PORT[tp8 8k1k]":         true,
		"launch.decode.runner-env.MODEL":           true,
		"launch.env.RANDOM_RANGE_RATIO":            false,
		"launch.decode.env.NCCL_X":                 false,
		"launch.flags.--port":                      false,
		"launch.files.runner-env.max_batch":        false,
		"scenarios.fixed-seq-len[0].runner-env.TP": false,
		"launch.image":                             false,
	} {
		if got := RunnerField(path); got != want {
			t.Errorf("RunnerField(%q) = %v, want %v", path, got, want)
		}
	}
}
