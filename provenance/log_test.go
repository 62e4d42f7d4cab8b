package provenance

import (
	"reflect"
	"testing"

	"github.com/perflog/perflog/config"
)

// TestOneVocabulary: a log reads in today's layout: an old-layout path is
// written as the new one, a move between the layouts is no "(was ...)",
// and a field removed from one layout and added to the other with its
// value, or a value "changed" to itself, is no change at all.
func TestOneVocabulary(t *testing.T) {
	got := oneVocabulary([]FieldChange{
		{Kind: config.Changed, Path: "seq-len-configs[0].search-space[0].conc-end", OldPath: "scenarios.fixed-seq-len[0].search-space[0].conc-end", Old: "128", New: "256"},
		{Kind: config.Removed, Path: "seq-len-configs[1].search-space[0].tp", Old: "8"},
		{Kind: config.Added, Path: "scenarios.fixed-seq-len[1].search-space[0].tp", New: "8"},
		{Kind: config.Changed, Path: "image", Old: "a:1", New: "a:1"},
		{Kind: config.Changed, Path: "scenarios.fixed-seq-len[0].search-space[0].tp", OldPath: "scenarios.fixed-seq-len[0].search-space[1].tp", Old: "4", New: "4"},
		{Kind: config.Added, Path: "seq-len-configs[2].search-space[0].tp", New: "4"},
	})
	want := []FieldChange{
		{Kind: config.Changed, Path: "scenarios.fixed-seq-len[0].search-space[0].conc-end", Old: "128", New: "256"},
		// a row moved within today's layout is a move worth saying
		{Kind: config.Changed, Path: "scenarios.fixed-seq-len[0].search-space[0].tp", OldPath: "scenarios.fixed-seq-len[0].search-space[1].tp", Old: "4", New: "4"},
		{Kind: config.Added, Path: "scenarios.fixed-seq-len[2].search-space[0].tp", New: "4"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestFilterLogDropsLayoutOnly: a commit that changed no field is left
// out of a log, or is a changelog-only item when an entry names the key.
func TestFilterLogDropsLayoutOnly(t *testing.T) {
	layout := []FieldChange{{Kind: config.Removed, Path: "seq-len-configs[0].isl", Old: "1024"}, {Kind: config.Added, Path: "scenarios.fixed-seq-len[0].isl", New: "1024"}}
	items := []LogItem{
		{Kind: EvChanged, Changes: layout, MissingEntry: true},
		{Kind: EvChanged, Changes: []FieldChange{}, MissingEntry: true},
		{Kind: EvChanged, Changes: layout, Entries: []LogEntry{{Event: EvIntroduced}}},
		{Kind: EvChanged, Changes: []FieldChange{{Kind: config.Changed, Path: "image", Old: "a", New: "b"}}},
	}
	got := FilterLog(items, LogOptions{})
	if len(got) != 2 || got[0].Kind != EvChangelog || got[0].MissingEntry || len(got[0].Changes) != 0 || got[1].Changes[0].Path != "image" {
		t.Errorf("%+v", got)
	}
}
