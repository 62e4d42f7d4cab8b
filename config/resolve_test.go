package config

import "testing"

// TestResolveMultinodeWithoutLauncher: a multi-node driver is found by
// the GPU its runner label starts with even when no launcher runs the
// label (InferenceX's mi355x-disagg before its launcher existed); a
// single-node recipe there still resolves nothing, and says why.
func TestResolveMultinodeWithoutLauncher(t *testing.T) {
	driver := "benchmarks/multi_node/m3_fp4_mi355x_atom-disagg.sh"
	exists := func(p string) bool { return p == driver }
	runners := []byte("labels:\n  mi355x-disagg: [mi355x-disagg_0]\n")
	r, err := NewResolver(nil, mustRunners(t, runners), []string{"runners/launch_b200-nv.sh"}, exists)
	if err != nil {
		t.Fatal(err)
	}
	m := master(t, File{"a.yaml", []byte(`mn:
  runner: mi355x-disagg
  model-prefix: m3
  precision: fp4
  framework: atom-disagg
  multinode: true
  seq-len-configs:
  - { isl: 1024, osl: 1024, search-space: [{ prefill: { tp: 4 }, decode: { tp: 4 }, conc-list: [1] }] }
sn:
  runner: mi355x-disagg
  model-prefix: m3
  precision: fp4
  framework: atom
  seq-len-configs:
  - { isl: 1024, osl: 1024, search-space: [{ tp: 4, conc-list: [1] }] }
`)})
	got := r.Resolve(m.Recipes["mn"])
	if len(got) != 1 || got[0].Script != driver || got[0].Family != "" || got[0].Note != "" {
		t.Fatalf("multi-node: %+v", got)
	}
	got = r.Resolve(m.Recipes["sn"])
	if len(got) != 1 || got[0].Script != "" || got[0].Note != `no launcher for runner "mi355x-disagg"` {
		t.Fatalf("single-node: %+v", got)
	}
	exists = func(string) bool { return false }
	r.Exists = exists
	if got = r.Resolve(m.Recipes["mn"]); len(got) != 1 || got[0].Note != `no launcher for runner "mi355x-disagg"` {
		t.Fatalf("multi-node without a driver: %+v", got)
	}
}

// TestResolveEarlierFamilies: a launcher family the head no longer has
// (launch_mi325x-amd.sh, launch_b200-nv.sh in early 2026) resolves its
// recipes the way its launcher named their scripts, and before #406 by
// how it ran them (benchmarks/x_fp8_mi300x_docker.sh).
func TestResolveEarlierFamilies(t *testing.T) {
	scripts := map[string]bool{
		"benchmarks/single_node/m2_fp8_mi325x.sh":   true,
		"benchmarks/single_node/m2_fp4_b200_trt.sh": true,
		"benchmarks/m1_fp8_mi300x_docker.sh":        true,
		"benchmarks/m1_fp8_mi300x_slurm.sh":         true,
	}
	runners := []byte("labels:\n  mi325x: [mi325x-amd_0]\n  b200: [b200-nv_0]\n  mi300x: [mi300x-amd_0]\n")
	r, err := NewResolver(nil, mustRunners(t, runners), []string{"runners/launch_mi325x-amd.sh", "runners/launch_b200-nv.sh", "runners/launch_mi300x-amd.sh"}, func(p string) bool { return scripts[p] })
	if err != nil {
		t.Fatal(err)
	}
	m := master(t, File{"a.yaml", []byte(`amd:
  runner: mi325x
  model-prefix: m2
  precision: fp8
  framework: vllm
  seq-len-configs: [{ isl: 1024, osl: 1024, search-space: [{ tp: 2, conc-list: [4] }] }]
nv:
  runner: b200
  model-prefix: m2
  precision: fp4
  framework: trt
  seq-len-configs: [{ isl: 1024, osl: 1024, search-space: [{ tp: 4, conc-list: [4] }] }]
old:
  runner: mi300x
  model-prefix: m1
  precision: fp8
  framework: sglang
  seq-len-configs: [{ isl: 1024, osl: 1024, search-space: [{ tp: 8, conc-list: [4] }] }]
`)})
	for key, want := range map[string]string{"amd": "benchmarks/single_node/m2_fp8_mi325x.sh", "nv": "benchmarks/single_node/m2_fp4_b200_trt.sh",
		"old": "benchmarks/m1_fp8_mi300x_docker.sh"} {
		got := r.Resolve(m.Recipes[key])
		if len(got) != 1 || got[0].Script != want {
			t.Errorf("%s: %+v, want %s", key, got, want)
		}
	}
}

// TestParseRunners: one read of runners.yaml gives the labels and the
// hardware; the same content is parsed once and shared, other content
// anew, and a file that does not parse is an error.
func TestParseRunners(t *testing.T) {
	data := []byte(`labels:
  b200: [b200-nv_0, b200-nv_1]
hardware:
  b200: { available-cpu-dram-mib: 2000000, gpus-per-node: 8 }
  h100: { gpus-per-node: "8" }
`)
	rs, err := ParseRunners(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.Labels["b200"]; len(got) != 2 || got[1] != "b200-nv_1" {
		t.Errorf("labels %v", rs.Labels)
	}
	if got := rs.Hardware["b200"]; got != (Hardware{DRAMMiB: 2000000, GPUs: 8}) {
		t.Errorf("b200 hardware %+v", got)
	}
	if got := rs.Hardware["h100"]; got != (Hardware{}) { // a string is no count
		t.Errorf("h100 hardware %+v", got)
	}
	other, _ := ParseRunners(append(append([]byte(nil), data...), "  mi355x: { gpus-per-node: 8 }\n"...))
	if other == rs || other.Hardware["mi355x"].GPUs != 8 {
		t.Errorf("other content: %+v", other)
	}
	// 2025's layout: the labels at the top (#145's b200-trt runs on b200-nv)
	old, err := ParseRunners([]byte("b200-trt:\n- 'b200-nv_0'\n- 'b200-nv_1'\nh200: [h200-cw_0]\n"))
	if err != nil || len(old.Labels["b200-trt"]) != 2 || old.Labels["h200"][0] != "h200-cw_0" {
		t.Errorf("labels at the top: %+v %v", old, err)
	}
	if _, err := ParseRunners([]byte("labels: [\n")); err == nil {
		t.Error("a file that does not parse gave no error")
	}
	// a resolver's labels are its own: changing them leaves the shared parse
	r, err := NewResolver(nil, mustRunners(t, data), nil, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	r.Labels["b200"][0] = "changed"
	if rs.Labels["b200"][0] != "b200-nv_0" {
		t.Error("a resolver's labels alias the shared parse")
	}
}

func mustRunners(t *testing.T, data []byte) *Runners {
	t.Helper()
	rs, err := ParseRunners(data)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
