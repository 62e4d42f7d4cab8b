package recipe

import (
	"testing"
)

// TestInfraVar: the runner's variables are no change of what runs; a
// setting whose name holds one of their words is.
func TestInfraVar(t *testing.T) {
	for name, infra := range map[string]bool{
		"USER": true, "HOME": true, "SLURM_JOB_ID": true, "HF_HUB_CACHE": true, "PORT": true, "RESULT_FILENAME": true,
		"XDG_CACHE_HOME": true, "AIPERF_HTTP_TCP_USER_TIMEOUT": false, "SGLANG_USE_AITER": false, "VLLM_HOME_DIRLESS": false, "NCCL_DMABUF_ENABLE": false,
	} {
		if infraVar.MatchString(name) != infra {
			t.Errorf("%s: infra %v, want %v", name, !infra, infra)
		}
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
