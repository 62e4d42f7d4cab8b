package provenance

import (
	"reflect"
	"testing"

	"github.com/perflog/perflog/config"
)

// TestGroupChanges: a launch change the same at several points is one
// change naming them all, the concurrencies of a configuration together;
// a change of another value, another kind, a config field or a setting of
// all points is kept as it is, in order.
func TestGroupChanges(t *testing.T) {
	add := func(path, v, reach string) FieldChange {
		return FieldChange{Kind: config.Added, Path: path, New: v, Reach: reach}
	}
	in := []FieldChange{
		{Kind: config.Changed, Path: "scenarios.fixed-seq-len[0].search-space[0].conc-start", Old: "4", New: "1", Reach: "only tp4 1k1k row"},
		{Kind: config.Changed, Path: "scenarios.fixed-seq-len[1].search-space[0].conc-start", Old: "4", New: "1", Reach: "only tp4 8k1k row"},
		add("launch.flags.--ep-size[tp4 ep4 1k1k conc 1]", "4", "only tp4 ep4 1k1k conc 1"),
		add("launch.flags.--ep-size[tp4 ep4 1k1k conc 2]", "4", "only tp4 ep4 1k1k conc 2"),
		add("launch.flags.--ep-size[tp4 ep4 8k1k conc 1]", "4", "only tp4 ep4 8k1k conc 1"),
		add("launch.flags.--ep-size[tp8 ep8 1k1k conc 1]", "8", "only tp8 ep8 1k1k conc 1"),
		add("launch.flags.--ep-size[tp8 ep8 8k1k]", "8", "only tp8 ep8 8k1k"),
		{Kind: config.Changed, Path: "launch.flags.--ep-size[tp4 ep4 8k1k conc 2]", Old: "2", New: "4", Reach: "only tp4 ep4 8k1k conc 2"},
		add("launch.env.X[conc 1]", "1", "only conc 1"),
		add("launch.env.X[conc 2]", "1", "only conc 2"),
		add("launch.image", "img", "all points"),
	}
	want := []FieldChange{
		in[0], in[1],
		add("launch.flags.--ep-size", "4", "only tp4 ep4 1k1k conc 1, 2; tp4 ep4 8k1k conc 1"),
		add("launch.flags.--ep-size", "8", "only tp8 ep8 1k1k conc 1; tp8 ep8 8k1k"),
		in[7],
		add("launch.env.X", "1", "only conc 1, 2"),
		in[10],
	}
	if got := GroupChanges(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	if got := GroupChanges(nil); len(got) != 0 {
		t.Errorf("nothing grouped: %v", got)
	}
}
