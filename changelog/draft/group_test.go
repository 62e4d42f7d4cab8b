package draft

import (
	"slices"
	"testing"

	"github.com/perflog/perflog/changelog/claims"
)

// TestGroupBullets: runs of one-setting bullets become one bullet, and
// the claims read every setting of it as the single bullets said it.
func TestGroupBullets(t *testing.T) {
	in := []string{"Update image from a to b", "Remove SGLANG_A", "Remove SGLANG_B_C", "Remove --enforce-eager",
		"Set X_ONE=1", "Set X_TWO=write_through", "Set X_THREE", "Add --dp-aware", "Add --enable-metrics", "Add --policy hash"}
	got := groupBullets(in)
	want := []string{"Update image from a to b", "Remove SGLANG_A and SGLANG_B_C", "Remove --enforce-eager",
		"Set X_ONE=1, X_TWO=write_through and X_THREE", "Add --dp-aware and --enable-metrics", "Add --policy hash"}
	if !slices.Equal(got, want) {
		t.Fatalf("groupBullets:\n got %q\nwant %q", got, want)
	}
	read := func(bullets []string) []string {
		var out []string
		for _, c := range claims.Extract(bullets) {
			if c.Kind == claims.KindEnv || c.Kind == claims.KindFlag {
				s := c.Name + "=" + c.Value
				if c.Negated {
					s = "!" + s
				}
				if !c.Asserts() {
					s += " (weak)"
				}
				out = append(out, s)
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := read(in), read(got); !slices.Equal(a, b) {
		t.Errorf("the claims read differ:\n single %q\ngrouped %q", a, b)
	}
}
