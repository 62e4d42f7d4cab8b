package recipe

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe/dryrun"
)

// A multi-node point whose driver script is in the tree gets the
// environment of the repository's multi-node workflow and is dry-run
// through the job it submits: its prefill and decode servers, each with
// its role and the parallelism of its side.
func TestMultinodeDriverScriptIsDryRun(t *testing.T) {
	r, head := testcorpus.Open(t, nil)
	rev := NewRev(head.String()[:10], r.Tree(head), nil)
	pts, err := rev.LaunchPoints("dsr1-fp8-mi355x-sglang-disagg")
	if err != nil || len(pts) == 0 {
		t.Fatalf("points: %v (%d)", err, len(pts))
	}
	var p *LaunchPoint
	for i := range pts {
		if pts[i].Sides == "p1 tp4, d1 tp8" {
			p = &pts[i]
			break
		}
	}
	if p == nil {
		t.Fatalf("no p1 tp4, d1 tp8 point among %d", len(pts))
	}
	if p.Note != "" || !strings.Contains(p.EnvFrom, "multinode") {
		t.Fatalf("note %q, env from %q: want the multi-node workflow's", p.Note, p.EnvFrom)
	}
	for k, want := range map[string]string{"IS_MULTINODE": "true", "PREFILL_TP": "4", "DECODE_TP": "8", "PREFILL_NODES": "1", "DECODE_NODES": "1", "DISAGG": "true"} {
		if p.Env[k] != want {
			t.Errorf("%s=%q, want %q", k, p.Env[k], want)
		}
	}
	if !strings.Contains(" "+p.Env["CONC_LIST"]+" ", " 64 ") {
		t.Errorf("CONC_LIST=%q, want the row's concurrencies", p.Env["CONC_LIST"])
	}
	l := rev.DryRunPoint(context.Background(), p, dryrun.Options{})
	if l == nil || l.Status != dryrun.StatusLaunched {
		t.Fatalf("launch %+v", l)
	}
	tp := map[string]string{}
	for _, s := range l.Servers {
		if v, _ := s.Flag("--tp-size"); len(v) > 0 {
			tp[s.Role] = v[0] // what follows it may be unknown settings
		}
	}
	if tp["prefill"] != "4" || tp["decode"] != "8" || len(l.Servers) != 2 {
		t.Errorf("servers by role: tp %v (%d servers), want prefill tp 4, decode tp 8", tp, len(l.Servers))
	}
}

// TestMultinodePointsAgainstTheGenerator: at the sample's head, every
// multi-node point perflog dry-runs through a driver script gets the
// environment of the matrix entry the repository's own sweep generator
// writes for it (testdata/oracle/generator-multinode.jsonl.gz: its
// multi-node entries at #2707, fixed-seq-len and agentic), field for
// field, and every such entry of those frameworks is one of perflog's
// rows.
func TestMultinodePointsAgainstTheGenerator(t *testing.T) {
	type side struct {
		Workers  int64    `json:"num-worker"`
		TP       int64    `json:"tp"`
		EP       int64    `json:"ep"`
		DPAttn   bool     `json:"dp-attn"`
		PP       int64    `json:"pp"`
		DCP      int64    `json:"dcp-size"`
		PCP      int64    `json:"pcp-size"`
		Settings []string `json:"additional-settings"`
	}
	type entry struct {
		Image, Model, Precision, Framework, Runner string
		Prefix                                     string  `json:"model-prefix"`
		ISL, OSL, MaxLen                           int64   `json:"-"`
		Spec                                       string  `json:"spec-decoding"`
		Exp                                        string  `json:"exp-name"`
		Conc                                       []int64 `json:"conc"`
		Disagg                                     bool    `json:"disagg"`
		Prefill, Decode                            side
	}
	var gen []map[string]string // each entry as the environment its launcher gets
	frameworks := map[string]int{}
	for _, line := range oracleLines(t, "generator-multinode.jsonl.gz", 1<<20) {
		var e entry
		var raw map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"IMAGE": e.Image, "MODEL": e.Model, "MODEL_PREFIX": e.Prefix, "PRECISION": e.Precision,
			"FRAMEWORK": e.Framework, "SPEC_DECODING": e.Spec, "EXP_NAME": e.Exp, "DISAGG": fmt.Sprint(e.Disagg)}
		if raw["scenario-type"] == "agentic-coding" {
			// sized and named by the generator's own rules (batches of
			// concurrencies, a prefill worker's share of its node's DRAM)
			env["SCENARIO_TYPE"], env["KV_OFFLOADING"] = "agentic-coding", fmt.Sprint(raw["kv-offloading"])
			env["TOTAL_CPU_DRAM_GB"], env["DURATION"] = fmt.Sprint(raw["total-cpu-dram-gb"]), fmt.Sprint(raw["duration"])
			if b, ok := raw["kv-offload-backend"].(map[string]any); ok {
				env["KV_OFFLOAD_BACKEND"] = fmt.Sprint(b["name"])
			}
		} else {
			env["ISL"], env["OSL"], env["MAX_MODEL_LEN"] = fmt.Sprint(raw["isl"]), fmt.Sprint(raw["osl"]), fmt.Sprint(raw["max-model-len"])
		}
		var concs []string
		for _, c := range e.Conc {
			concs = append(concs, fmt.Sprint(c))
		}
		env["CONC_LIST"] = strings.Join(concs, " ")
		for pre, s := range map[string]side{"PREFILL_": e.Prefill, "DECODE_": e.Decode} {
			env[pre+"NUM_WORKERS"], env[pre+"TP"], env[pre+"EP"] = fmt.Sprint(s.Workers), fmt.Sprint(s.TP), fmt.Sprint(s.EP)
			env[pre+"DP_ATTN"], env[pre+"PP_SIZE"] = fmt.Sprint(s.DPAttn), fmt.Sprint(s.PP)
			env[pre+"DCP_SIZE"], env[pre+"PCP_SIZE"] = fmt.Sprint(s.DCP), fmt.Sprint(s.PCP)
			for _, kv := range s.Settings {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		}
		gen = append(gen, env)
	}
	r, head := testcorpus.Open(t, nil)
	rev := NewRev(head.String()[:10], r.Tree(head), nil)
	keys, err := rev.Keys()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{} // perflog's rows, by the generator entry they match
	points := 0
	for _, k := range keys {
		pts, err := rev.LaunchPoints(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if !p.Multinode || p.Recipe != "" || p.Note != "" {
				continue
			}
			points++
			match := -1
			for i, g := range gen {
				ok := true
				for name, v := range g {
					if p.Env[name] != v {
						ok = false
						break
					}
				}
				if ok {
					match = i
					break
				}
			}
			if match < 0 {
				t.Errorf("%s point %s: no generator entry has its environment (EXP_NAME=%s CONC_LIST=%q PREFILL_TP=%s DECODE_TP=%s)",
					k, p.Label(), p.Env["EXP_NAME"], p.Env["CONC_LIST"], p.Env["PREFILL_TP"], p.Env["DECODE_TP"])
				continue
			}
			rows[fmt.Sprint(match)] = true
			frameworks[gen[match]["FRAMEWORK"]]++
		}
	}
	want := 0
	for _, g := range gen {
		if _, srt := g["CONFIG_FILE"]; frameworks[g["FRAMEWORK"]] > 0 && !srt {
			want++ // a row run by a driver script of the tree
		}
	}
	if points < 100 || len(rows) != want {
		t.Errorf("%d points dry-run through driver scripts make %d of the generator's rows, want all %d rows of their frameworks %v", points, len(rows), want, frameworks)
	}
}

// TestPointIdentityOfRepeatedWorkers: two rows of the same workers whose
// concurrency lists share a value make two points of that value, told
// apart by their order, so a point is never matched with the other row's
// (a launch diff of "32x64 -> 2x4x8x16x32" on a change of neither).
func TestPointIdentityOfRepeatedWorkers(t *testing.T) {
	cfg := `m1-fp8-mi355x-sglang-disagg:
  image: img:v1
  model: org/m1
  model-prefix: m1
  runner: mi355x-disagg
  precision: fp8
  framework: sglang-disagg
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { conc-list: [2, 4, 32], prefill: { num-worker: 1, tp: 8 }, decode: { num-worker: 1, tp: 8 } }
      - { conc-list: [32, 64], prefill: { num-worker: 1, tp: 8 }, decode: { num-worker: 1, tp: 8 } }
`
	files := testfs.Files{
		"configs/amd-master.yaml":       cfg,
		"configs/nvidia-master.yaml":    "{}\n",
		"configs/runners.yaml":          "labels:\n  mi355x-disagg: [mi355x-amds_0]\n",
		"runners/launch_mi355x-amds.sh": "#!/bin/bash\n",
	}
	pts, err := NewRev("head", files, &config.Settings{}).LaunchPoints("m1-fp8-mi355x-sglang-disagg")
	if err != nil || len(pts) != 5 {
		t.Fatalf("%d points (%v), want 5", len(pts), err)
	}
	ids := map[string]int{}
	for _, p := range pts {
		ids[p.ID()]++
	}
	if len(ids) != 5 {
		t.Errorf("ids %v: two points share one", ids)
	}
	if pts[2].ID() == pts[3].ID() || pts[3].Dup != 1 {
		t.Errorf("the two conc 32 points: %q and %q", pts[2].ID(), pts[3].ID())
	}
}

// TestVariableThatFollowsTheConcurrencies: a variable whose value is the
// point's own concurrency list (BENCH_MAX_CONCURRENCY=1x2x4) changes with
// the search space; its change is the harness's, not the recipe's.
func TestVariableThatFollowsTheConcurrencies(t *testing.T) {
	pl := func(list, bench, other string) *PointLaunch {
		return &PointLaunch{Point: LaunchPoint{Multinode: true, Env: map[string]string{"CONC_LIST": list}},
			Launch: &dryrun.Launch{Status: dryrun.StatusLaunched, Servers: []dryrun.Command{{Argv: []string{"python3"}, Role: "decode",
				Env: map[string]string{"CONC_LIST": list, "BENCH_MAX_CONCURRENCY": bench, "OTHER": other}}}}}
	}
	ds := diffLaunches(pl("32 64", "32x64", "1"), pl("2 4 8", "2x4x8", "2"))
	follows := map[string]bool{}
	for _, d := range ds {
		follows[d.Name] = d.Harness()
	}
	if !follows["decode BENCH_MAX_CONCURRENCY"] || follows["decode OTHER"] || len(ds) != 2 {
		t.Errorf("diffs %+v: want BENCH_MAX_CONCURRENCY the harness's, OTHER the recipe's", ds)
	}
}
