package draft

import (
	"slices"
	"testing"

	"github.com/perflog/perflog/recipe"
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
