package index

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// TestLaunchWireFields fails when a type of a stored launch walk gains a
// field that launchwire.go does not encode (update it, and
// SchemaVersion).
func TestLaunchWireFields(t *testing.T) {
	for typ, want := range map[reflect.Type][]string{
		reflect.TypeFor[provenance.LaunchState]():   {"Version", "Key", "Through", "Versions", "Watch", "Blame", "Log"},
		reflect.TypeFor[provenance.LaunchVersion](): {"Commit", "Key", "Fields", "Points", "NotKnown"},
		reflect.TypeFor[provenance.Watched]():       {"Path", "List", "ID"},
		reflect.TypeFor[provenance.LogItem]():       {"CommitRef", "Key", "Kind", "From", "Changes", "Entries", "MissingEntry"},
		reflect.TypeFor[provenance.FieldChange]():   {"Kind", "Path", "OldPath", "Old", "New", "Reach", "NotKnownFrom"},
		reflect.TypeFor[provenance.LogEntry]():      {"Event", "ConfigKeys", "Description", "PRLink"},
	} {
		checkFields(t, typ, want, "launchwire.go")
	}
}

func sampleLaunch() *provenance.LaunchState {
	pr := 1243
	ref := provenance.CommitRef{Commit: "e976e2e28e", PR: &pr, Date: time.Date(2026, 7, 1, 22, 59, 29, 0, time.FixedZone("", 9*3600)), Subject: "Steps (#1243)"}
	return &provenance.LaunchState{Version: "8", Key: "k-fp8-mi355x-sglang", Through: "1fe5131ba9e3d0f6a6f1f6c3f0f0f0f0f0f0f0f0",
		Versions: []provenance.LaunchVersion{
			{Commit: "ab", Key: "k-old", Fields: map[string]string{"launch.flags.--num-continuous-decode-steps": "4", "launch.env.A": ""},
				Points: []string{"tp8 1k1k conc 4", "tp8 1k1k conc 8"}},
			{Commit: "cd", Key: "k-fp8-mi355x-sglang", Fields: map[string]string{}, Points: []string{}, NotKnown: "2 of 2 points not run: no launcher runs it"},
			{Commit: "ef", Key: "k-fp8-mi355x-sglang"},
		},
		Watch: []provenance.Watched{{Path: "benchmarks/x.sh", ID: "0123"}, {Path: "runners", List: true}},
		Blame: []provenance.BlameField{{Path: "launch.image", Value: "img:1", Line: 3, CommitRef: ref, Event: "changed", Key: "k-old",
			NotKnown: []provenance.LaunchGap{{From: ref, To: ref, Reason: "why"}}},
			{Path: "launch.flags.--x", CommitRef: ref, Event: "changed", SetIn: &provenance.LaunchGap{From: ref, To: ref}}},
		Log: []provenance.LogItem{
			{CommitRef: ref, Key: "k-fp8-mi355x-sglang", Kind: "changed", From: "k-old",
				Changes: []provenance.FieldChange{{Kind: "changed", Path: "launch.flags.--num-continuous-decode-steps", Old: "4", New: "8", Reach: "all points", NotKnownFrom: "ab"}},
				Entries: []provenance.LogEntry{{Event: "introduced", ConfigKeys: []string{"k-*"}, Description: []string{}, PRLink: "https://x/pull/1243"}}},
			{Kind: "changelog-only", Changes: []provenance.FieldChange{}, MissingEntry: true},
		},
	}
}

func sampleLaunchData(t testing.TB) []byte {
	data, err := encodeLaunchState(sampleLaunch())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLaunchWireRoundTrip: a walk reads back as it was written (nil and
// empty lists and maps apart, zones kept); damaged or foreign bytes are an
// error.
func TestLaunchWireRoundTrip(t *testing.T) {
	want := sampleLaunch()
	data := sampleLaunchData(t)
	got, err := decodeLaunchState(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		t.Fatalf("the walk read back differently:\n%s\n%s", a, b)
	}
	if got.Versions[1].Fields == nil || got.Versions[2].Fields != nil || got.Log[1].Entries != nil || got.Log[1].Changes == nil {
		t.Error("nil and empty confused")
	}
	again, _ := encodeLaunchState(got)
	if string(again) != string(data) {
		t.Error("encoding a decoded walk gives other bytes (map order?)")
	}
	for n := range len(data) {
		if _, err := decodeLaunchState(data[:n]); !errors.Is(err, wire.ErrCorrupt) {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
	if _, err := decodeLaunchState(jsonOf(t, want)); !errors.Is(err, wire.ErrCorrupt) {
		t.Fatalf("the walk's JSON: %v", err)
	}
}
