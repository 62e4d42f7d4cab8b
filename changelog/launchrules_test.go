package changelog

import (
	"testing"

	"github.com/perflog/perflog/internal/testfs"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// TestFailureAtBaseMovedLines: a failure the base had is not introduced
// by a change that only moved the failing line (an edit above it).
func TestFailureAtBaseMovedLines(t *testing.T) {
	rev := recipe.NewRev("r", testfs.Files{}, nil)
	ch := &recipe.Change{Base: rev, Head: rev}
	fail := func(at string) *dryrun.Launch {
		return &dryrun.Launch{Status: dryrun.StatusFailed, Exit: 1, EndedAt: at, Reason: "Error: EP_SIZE is not set"}
	}
	pt := recipe.LaunchPoint{Key: "k", Index: 1, TP: 8}
	for _, tc := range []struct {
		base, head string
		want       Severity
	}{
		{"benchmarks/benchmark_lib.sh:86", "benchmarks/benchmark_lib.sh:88", Warning},
		{"benchmarks/benchmark_lib.sh:86", "benchmarks/other.sh:86", Error},
	} {
		eff := &recipe.Effect{Key: "k",
			Base: []recipe.PointLaunch{{Point: pt, Launch: fail(tc.base)}},
			Head: []recipe.PointLaunch{{Point: pt, Launch: fail(tc.head)}}}
		var got []Finding
		launchRules(ch, map[string]*recipe.Effect{"k": eff}, func(f Finding) { got = append(got, f) })
		if len(got) != 1 || got[0].Rule != RuleLaunchFails || got[0].Severity != tc.want {
			t.Errorf("base %s, head %s: %+v, want one %s", tc.base, tc.head, got, tc.want)
		}
	}
}
