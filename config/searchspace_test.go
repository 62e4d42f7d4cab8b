package config

import (
	"reflect"
	"slices"
	"testing"

	"github.com/perflog/perflog/internal/pyyaml"
)

// TestScenariosTyped: the search space reads as written, with absent
// settings unset (not zero), multi-node sides and their settings, and
// the paths and lines the history commands attribute changes to.
func TestScenariosTyped(t *testing.T) {
	text := `k:
  image: a
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, ep: 1, conc-list: [4, 8] }
      - prefill: { num-worker: 2, tp: 4, ep: 4, dp-attn: true, additional-settings: ["CONFIG_FILE=a.yaml", "X = 1"] }
        decode: { tp: 8, additional-settings: ["X=2"] }
        spec-decoding: mtp
        conc-start: 4
        conc-end: 20
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - { tp: 2, dp-attn: 0, kv-offloading: dram, kv-offload-backend: { name: lmcache }, conc-list: [1] }
      - { tp: 2, kv-offloading: dram, kv-offload-backend: hicache, conc-list: [1] }
      - { tp: 4, offloading: cpu, conc-list: [1] }
`
	m := master(t, File{"a.yaml", []byte(text)})
	sc := m.Recipes["k"].Scenarios()
	if len(sc) != 2 || sc[0].Name != "fixed-seq-len" || sc[1].Name != "agentic-coding" {
		t.Fatalf("scenarios: %+v", sc)
	}
	it := sc[0].Items[0]
	if it.Path != "scenarios.fixed-seq-len[0]" || it.Line != 5 || it.ISL != 8192 || it.OSL != 1024 || len(it.Entries) != 2 {
		t.Fatalf("item: %+v", it)
	}
	single, multi := it.Entries[0], it.Entries[1]
	if single.Path != "scenarios.fixed-seq-len[0].search-space[0]" || single.Line != 8 {
		t.Fatalf("entry place: %s:%d", single.Path, single.Line)
	}
	if single.TP != (Opt[int64]{8, true}) || single.EP.Or(7) != 1 || single.PP.Set || single.PP.Or(1) != 1 || single.DPAttn.Set ||
		single.Spec.Or("none") != "none" || !reflect.DeepEqual(single.Conc, []int64{4, 8}) || single.Sides() != nil {
		t.Fatalf("single-node entry: %+v", single)
	}
	if multi.Prefill == nil || multi.Decode == nil || len(multi.Sides()) != 2 || multi.TP.Set {
		t.Fatalf("multi-node sides: %+v", multi)
	}
	if p := multi.Prefill; p.Workers.V != 2 || p.TP.V != 4 || !p.DPAttn.V || multi.Decode.Workers.Set || multi.Decode.DPAttn.Set {
		t.Fatalf("prefill %+v decode %+v", *multi.Prefill, *multi.Decode)
	}
	if got := multi.Settings(); !reflect.DeepEqual(got, map[string]string{"CONFIG_FILE": "a.yaml", "X": "2"}) {
		t.Fatalf("settings (decode wins): %v", got)
	}
	if multi.Spec.V != "mtp" || !reflect.DeepEqual(multi.Conc, []int64{4, 8, 16, 20}) {
		t.Fatalf("spec and conc: %+v", multi)
	}
	ag := sc[1].Items[0]
	if ag.DRAMUtilization != 0.5 || ag.ISL != 0 {
		t.Fatalf("agentic item: %+v", ag)
	}
	if e := ag.Entries[0]; e.DPAttn != (Opt[bool]{false, true}) || e.KVOffloading.V != "dram" || e.KVBackend != "lmcache" {
		t.Fatalf("agentic entry: %+v", e)
	}

	// before #2096 (July 2026) the backend was its name alone
	if e := ag.Entries[1]; e.KVBackend != "hicache" || e.LegacyOffloading {
		t.Fatalf("a backend written as its name: %+v", e)
	}
	// #1201 to #1992: agentic rows said offloading: none, cpu or ssd
	if e := ag.Entries[2]; e.KVOffloading.V != "cpu" || !e.LegacyOffloading {
		t.Fatalf("offloading: %+v", e)
	}

	rows := m.Recipes["k"].Rows()
	if len(rows) != 5 {
		t.Fatalf("rows: %+v", rows)
	}
	if r := rows[1]; !reflect.DeepEqual(r.TP, []int64{4, 8}) || !reflect.DeepEqual(r.EP, []int64{4}) || !reflect.DeepEqual(r.DPA, []bool{true}) ||
		r.Spec != "mtp" || r.Path != multi.Path || r.Line != multi.Line || r.ISL != 8192 {
		t.Fatalf("multi-node row: %+v", r)
	}
	if r := rows[2]; r.Scenario != "agentic-coding" || r.KVOffloading != "dram" || r.KVBackend != "lmcache" || r.Spec != "none" || !r.HasDPA(false) {
		t.Fatalf("agentic row: %+v", r)
	}
}

// TestChangeLeaves: an added or removed subtree lists its leaves at their
// full paths (from the side that holds it); a change without its value
// (read back from an index) has none.
func TestChangeLeaves(t *testing.T) {
	old := master(t, File{"a.yaml", []byte("k:\n  image: a\n  env: { A: '1', \"B C\": '2' }\n")}).Recipes["k"]
	new := master(t, File{"a.yaml", []byte("k:\n  image: b\n  extra: [{ x: 1 }, { y: [1, 2] }]\n")}).Recipes["k"]
	got := map[string]string{}
	for _, c := range Diff(old, new).Changes {
		for _, f := range c.Leaves() {
			got[string(c.Kind)+" "+f.Path] = f.Value
		}
	}
	want := map[string]string{
		"changed image": "b", "removed env.A": `"1"`, `removed env["B C"]`: `"2"`,
		"added extra[0].x": "1", "added extra[1].y": "[1, 2]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("leaves\n got %v\nwant %v", got, want)
	}
	if l := (Change{Kind: Added, Path: "extra", New: "[...]"}).Leaves(); l != nil {
		t.Fatalf("a change without its value: %v", l)
	}
}

// TestComponentsAsJSON: an entry's component metadata is the JSON the
// generator's output carries (keys in order, numbers as Python writes
// them, a key PyYAML reads as a boolean as json.dumps writes it).
func TestComponentsAsJSON(t *testing.T) {
	v, err := pyyaml.Load([]byte("{ tp: 8, kv-offload-backend: { name: lmcache, version: \"0.4.5\", gb: 2, f: .inf, on: true }, router: { name: r } }\n"), pyyaml.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := entryOf("x", v)
	if got := e.Components["kv-offload-backend"]; got != `{"name": "lmcache", "version": "0.4.5", "gb": 2, "f": Infinity, "true": true}` {
		t.Errorf("kv-offload-backend %s", got)
	}
	if got := e.Components["router"]; got != `{"name": "r"}` || e.KVBackend != "lmcache" {
		t.Errorf("router %s, backend %q", got, e.KVBackend)
	}
}

// TestRowsAggregated: a multi-node entry whose decode side has no
// workers is an aggregated server; pp and dcp-size are read per side.
func TestRowsAggregated(t *testing.T) {
	text := `k:
  image: a
  multinode: true
  disagg: false
  scenarios:
    agentic-coding:
    - search-space:
      - prefill: { num-worker: 1, tp: 8, pp: 2, dcp-size: 8, ep: 1, dp-attn: false }
        decode: { num-worker: 0, tp: 8, pp: 2, dcp-size: 8 }
        conc-list: [16]
      - prefill: { num-worker: 1, tp: 4 }
        decode: { num-worker: 2, tp: 8 }
        conc-list: [16]
      - prefill: { tp: 4 }
        decode: { tp: 8 }
        conc-list: [16]
`
	m := master(t, File{"a.yaml", []byte(text)})
	rows := m.Recipes["k"].Rows()
	if len(rows) != 3 {
		t.Fatalf("rows: %+v", rows)
	}
	if r := rows[0]; !r.Aggregated() || !slices.Equal(r.PP, []int64{2, 2}) || !slices.Equal(r.DCP, []int64{8, 8}) {
		t.Errorf("row 0: aggregated %v, PP %v, DCP %v; want aggregated, [2 2], [8 8]", r.Aggregated(), r.PP, r.DCP)
	}
	if r := rows[1]; r.Aggregated() || !slices.Equal(r.PP, []int64{0, 0}) {
		t.Errorf("row 1 (1P2D): aggregated %v, PP %v", r.Aggregated(), r.PP)
	}
	if rows[2].Aggregated() {
		t.Error("row 2 (no num-worker said): aggregated")
	}
}
