package changelog

import (
	"strings"
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

// TestBaseProblemSaidOnce: a failure every recipe had at base (a shared
// helper's) is one finding naming the recipes, not one per recipe; one
// the change introduced stays one per recipe.
func TestBaseProblemSaidOnce(t *testing.T) {
	rev := recipe.NewRev("r", testfs.Files{}, nil)
	ch := &recipe.Change{Base: rev, Head: rev}
	fail := func(why string) *dryrun.Launch {
		return &dryrun.Launch{Status: dryrun.StatusFailed, Exit: 1, EndedAt: "benchmarks/benchmark_lib.sh:86", Reason: why}
	}
	effects := map[string]*recipe.Effect{}
	for _, k := range []string{"k1", "k2", "k3"} {
		pt := recipe.LaunchPoint{Key: k, Index: 1, TP: 8}
		effects[k] = &recipe.Effect{Key: k,
			Base: []recipe.PointLaunch{{Point: pt, Launch: fail("Error: EP_SIZE is not set")}},
			Head: []recipe.PointLaunch{{Point: pt, Launch: fail("Error: EP_SIZE is not set")}}}
	}
	pt := recipe.LaunchPoint{Key: "k4", Index: 1, TP: 8}
	effects["k4"] = &recipe.Effect{Key: "k4",
		Base: []recipe.PointLaunch{{Point: pt, Launch: &dryrun.Launch{Status: dryrun.StatusLaunched}}},
		Head: []recipe.PointLaunch{{Point: pt, Launch: fail("Error: TP is not set")}}}
	var got []Finding
	launchRules(ch, effects, func(f Finding) { got = append(got, f) })
	if len(got) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(got), got)
	}
	old, fresh := got[1], got[0]
	if fresh.Severity != Error || fresh.ConfigKey != "k4" {
		t.Errorf("the new failure: %+v", fresh)
	}
	if old.Severity != Warning || !strings.HasPrefix(old.Message, "3 recipes (k1, k2, k3): exits 1 before the server starts: Error: EP_SIZE is not set (so they did at base") {
		t.Errorf("the failure the base had: %+v", old)
	}
}

// TestImageMentioned: a bullet speaks of a new image by the word, the
// new tag, its version or the commit it was built from; a bullet about
// something else does not.
func TestImageMentioned(t *testing.T) {
	for _, c := range []struct {
		bullet, image string
		want          bool
	}{
		{"Update image to the new release", "lmsysorg/sglang:v0.5.13-rocm700-mi35x", true},
		{"Bump SGLang to 0.5.13", "lmsysorg/sglang:v0.5.13-rocm700-mi35x", true},
		{"Use lmsysorg/sglang:v0.5.13-rocm700-mi35x", "lmsysorg/sglang:v0.5.13-rocm700-mi35x", true},
		{"Use vLLM 426e59f with DEP scheduling", "vllm/vllm-openai:nightly-dev-x86_64-cu13.0.1-426e59f", true},
		{"Use the pinned 2026-08-10 vLLM nightly", "vllm/vllm-openai:nightly-b22afe45ac797ae58e67@sha256:1443", true},
		{"Tune the server", "lmsysorg/sglang:v0.5.13-rocm700-mi35x", false},
		{"Raise --max-num-seqs to 13", "lmsysorg/sglang:v0.5.13-rocm700-mi35x", false},
		{"Refresh the submission with EAGLE3-GQA", "vllm/vllm-openai:nightly-5e35a6f4f9bbc217c599692157ca985c894373f7", false},
	} {
		if got := imageMentioned(mentionForm(c.bullet), c.image); got != c.want {
			t.Errorf("%q of %s: mentioned %v, want %v", c.bullet, c.image, got, c.want)
		}
	}
}
