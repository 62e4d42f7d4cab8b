package recipe

import (
	"context"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
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
