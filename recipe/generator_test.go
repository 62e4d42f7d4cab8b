package recipe

import (
	"fmt"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testfs"
)

// TestPointEnvFollowsTheGenerator: a point's MAX_MODEL_LEN and EXP_NAME
// are what the revision's own sweep generator gave (isl + osl + 200 and
// "1k8k" in early 2026), today's where the revision has none; a point's
// label does not follow them.
func TestPointEnvFollowsTheGenerator(t *testing.T) {
	const early = `seq_len_stoi = {
    "1k1k": (1024, 1024),
    "1k8k": (1024, 8192),
    "8k1k": (8192, 1024)
}
...
                        Fields.MAX_MODEL_LEN.value: isl + osl + 200,
`
	const y2025 = "seq_len_stoi = {\"1k1k\": (1024, 1024), \"1k8k\": (1024, 8192)}\n    FIELD_MAX_MODEL_LEN: isl + osl + 200,\n"
	recipe := `k1-fp8-b200-vllm:
  image: vllm/vllm-openai:v1
  model: m
  model-prefix: k1
  runner: b200
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - { isl: 1024, osl: 8192, search-space: [ { tp: 8, conc-list: [4] } ] }
`
	base := testfs.Revision("v1", testfs.Script).With("configs/nvidia-master.yaml", recipe)
	for _, c := range []struct {
		name        string
		files       testfs.Files
		maxLen, exp string
		label       string
	}{
		{"no generator: today's", base, "9472", "k1_1024_8192", "tp8 conc 4 1k8k"},
		{"early 2026", base.With("utils/matrix_logic/generate_sweep_configs.py", early), "9416", "k1_1k8k", "tp8 conc 4 1k8k"},
		{"2025, matrix-logic", base.With("utils/matrix-logic/generate_sweep_configs.py", y2025), "9416", "k1_1k8k", "tp8 conc 4 1k8k"},
		{"unreadable: today's", base.With("utils/matrix_logic/generate_sweep_configs.py", "def main(): pass\n"), "9472", "k1_1024_8192", "tp8 conc 4 1k8k"},
	} {
		r := NewRev(c.name, c.files, nil)
		pts, err := r.LaunchPoints("k1-fp8-b200-vllm")
		if err != nil || len(pts) != 1 {
			t.Fatalf("%s: %v %v", c.name, pts, err)
		}
		p := pts[0]
		if p.Env["MAX_MODEL_LEN"] != c.maxLen || p.Env["EXP_NAME"] != c.exp {
			t.Errorf("%s: MAX_MODEL_LEN %s EXP_NAME %s, want %s %s", c.name, p.Env["MAX_MODEL_LEN"], p.Env["EXP_NAME"], c.maxLen, c.exp)
		}
		if l := p.Label(); l != "1 ("+c.label+")" {
			t.Errorf("%s: label %s", c.name, l)
		}
	}
}

// TestMultinodeAgenticEntry: a multi-node agentic row's points are sized
// and named as the generator of their revision writes them: batches of
// its concurrencies (MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION:
// 4 at #2127, 1 since #2170), each side's workers and parallelism in the
// exp-name, and the KV offloading only when there is one.
func TestMultinodeAgenticEntry(t *testing.T) {
	if g := parseGenerator([]byte("MAX_MULTINODE_AGENTIC_CONCURRENCIES_PER_ALLOCATION = 4\n")); g.agenticBatch != 4 {
		t.Errorf("batch %d, want 4", g.agenticBatch)
	}
	if g := parseGenerator([]byte("x = 1\n")); g.agenticBatch != 1 {
		t.Errorf("batch %d without the constant, want today's 1", g.agenticBatch)
	}
	concs := []int64{2, 4, 8, 16, 32}
	for conc, want := range map[int64]string{2: "[2 4 8 16]", 16: "[2 4 8 16]", 32: "[32]"} {
		if got := fmt.Sprint(agenticBatch(concs, conc, 4)); got != want {
			t.Errorf("batch of %d: %s, want %s", conc, got, want)
		}
	}
	if got := fmt.Sprint(agenticBatch(concs, 8, 1)); got != "[8]" {
		t.Errorf("batch of 8 by 1: %s", got)
	}
	n := func(v int64) config.Opt[int64] { return config.Opt[int64]{V: v, Set: true} }
	e := &config.Entry{Prefill: &config.Side{Workers: n(1), TP: n(8), EP: n(8), DPAttn: config.Opt[bool]{V: true, Set: true}},
		Decode: &config.Side{Workers: n(2), TP: n(8)}}
	for _, tc := range []struct{ kv, backend, want string }{
		{"dram", "hicache", "dsv4_p1x8ep8dpa_d2x8_conc2x4_kvdram-hicache"},
		{"none", "", "dsv4_p1x8ep8dpa_d2x8_conc2x4"},
	} {
		p := &LaunchPoint{KVOffloading: tc.kv, KVBackend: tc.backend}
		if got := multinodeAgenticName("dsv4", e, []int64{2, 4}, p); got != tc.want {
			t.Errorf("exp-name %q, want %q", got, tc.want)
		}
	}
}
