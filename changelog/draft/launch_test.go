package draft

import (
	"slices"
	"testing"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// TestEmptyValueSaid: a variable set empty, or set from empty, is said
// with both values ("from 0 to empty"), not as "Change X" alone.
func TestEmptyValueSaid(t *testing.T) {
	e := &recipe.Effect{Key: "k", Head: []recipe.PointLaunch{{Point: recipe.LaunchPoint{Index: 1}}}, Complete: true,
		Diffs: []recipe.LaunchDiff{
			{Kind: "env", Name: "A", Base: "0", Head: "", Points: []int{1}},
			{Kind: "env", Name: "B", Base: "", Head: "1", Points: []int{1}},
		}}
	got := launchBullets(e)
	for _, want := range []string{"Change A from 0 to empty", "Change B from empty to 1"} {
		if !slices.Contains(got, want) {
			t.Errorf("bullets %q, want %q among them", got, want)
		}
	}
}

// TestReadsUnread: a launch whose server passes options or variables the
// dry run could not read (printed by a program it does not run) leaves
// them to the file's diff.
func TestReadsUnread(t *testing.T) {
	srv := func(argv []string, env map[string]string) *recipe.Effect {
		return &recipe.Effect{Head: []recipe.PointLaunch{{Launch: &dryrun.Launch{Servers: []dryrun.Command{{Argv: argv, Env: env}}}}}}
	}
	for _, tc := range []struct {
		e    *recipe.Effect
		want bool
	}{
		{srv([]string{"vllm", "serve", "m", "--tp", "8"}, nil), false},
		{srv([]string{"vllm", "serve", "m", "--tp", "8", dryrun.UnknownMarker + "python3>"}, nil), true},
		{srv([]string{"vllm", "serve", "m", "--mem", dryrun.UnknownMarker + "python3>"}, nil), false}, // a value, not options
		{srv([]string{"vllm", "serve", "m"}, map[string]string{"X": dryrun.UnknownMarker + "python3>"}), true},
	} {
		if got := readsUnread(tc.e); got != tc.want {
			t.Errorf("%v %v: %v, want %v", tc.e.Head[0].Launch.Servers[0].Argv, tc.e.Head[0].Launch.Servers[0].Env, got, tc.want)
		}
	}
}
