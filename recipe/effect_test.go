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
