package index

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// TestSnapWireFields fails when a snapshot type gains a field that
// snapwire.go does not encode (update it, and SchemaVersion).
func TestSnapWireFields(t *testing.T) {
	for typ, want := range map[reflect.Type][]string{
		reflect.TypeFor[provenance.Snapshot]():    {"Head", "Changelog", "Recipes", "From", "Commits", "Blocks", "Slots", "Renames", "Raw", "Touched"},
		reflect.TypeFor[provenance.SnapCommit]():  {"Hash", "Author", "Email", "Date", "Subject", "PR", "PRSource"},
		reflect.TypeFor[provenance.SnapBlock]():   {"ID", "Recipe", "Key", "Hash", "Text", "Identity", "PRLink", "ConfigKeys", "Description", "Err"},
		reflect.TypeFor[provenance.SnapSlot]():    {"Recipe", "Versions"},
		reflect.TypeFor[provenance.SnapVersion](): {"Seq", "Path", "Blob", "Err", "P", "S", "Mid", "Note", "Written"},
		reflect.TypeFor[provenance.SnapRename]():  {"Seq", "From", "To"},
		reflect.TypeFor[provenance.SnapRaw]():     {"Key", "Kind", "Seq", "From", "To", "File", "Old", "B"},
		reflect.TypeFor[provenance.SnapTouched](): {"Key", "Seq"},
	} {
		checkFields(t, typ, want, "snapwire.go")
	}
}

// TestSnapWireRoundTrip: the snapshot of the corpus history (commits,
// changelog and recipe blocks with their texts, versions, renames) reads
// back as it was written: encoding what was read gives the same bytes,
// and a second round gives the same value.
func TestSnapWireRoundTrip(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("builds the corpus history: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, head := openCorpus(t)
	h, err := provenance.Build(context.Background(), r, provenance.Options{Head: head, Parts: provenance.PartsAll})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Commits) == 0 || len(s.Blocks) == 0 || len(s.Slots) < 2 || len(s.Renames) == 0 || len(s.Raw) == 0 || len(s.Touched) == 0 {
		t.Fatalf("a thin snapshot: %d commits, %d blocks, %d files, %d renames, %d recipe changes, %d keys touched",
			len(s.Commits), len(s.Blocks), len(s.Slots), len(s.Renames), len(s.Raw), len(s.Touched))
	}
	data, err := encodeSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := decodeSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeSnapshot(s1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, data) {
		t.Fatal("the decoded snapshot encodes differently")
	}
	s2, _ := decodeSnapshot(again)
	if !reflect.DeepEqual(s1, s2) {
		t.Fatal("a second round trip changed the snapshot")
	}
	if s1.Head != s.Head || len(s1.Commits) != len(s.Commits) || !s1.Commits[5].Date.Equal(s.Commits[5].Date) ||
		s1.Blocks[3].Text != s.Blocks[3].Text || !slices.Equal(s1.Slots[0].Versions[9].Mid, s.Slots[0].Versions[9].Mid) {
		t.Fatal("the decoded snapshot differs")
	}
	// a damaged part is an error, never a panic
	for _, n := range []int{0, 1, 22, len(data) / 3, len(data) / 2, len(data) - 1} {
		if _, err := decodeSnapshot(data[:n]); !errors.Is(err, wire.ErrCorrupt) {
			t.Errorf("cut to %d bytes: %v", n, err)
		}
	}
}

// FuzzSnapWire: any bytes decode without panicking, and what decodes
// encodes back to bytes that decode to the same snapshot.
func FuzzSnapWire(f *testing.F) {
	s := &provenance.Snapshot{Changelog: true, Commits: []provenance.SnapCommit{{Author: "a", PR: 3}},
		Blocks:  []provenance.SnapBlock{{ID: 1, Key: "k", ConfigKeys: []string{"x"}}},
		Slots:   []provenance.SnapSlot{{Versions: []provenance.SnapVersion{{Seq: 0, Mid: []int{1}, Written: []int{1, -1}}}}},
		Renames: []provenance.SnapRename{{Seq: 0, From: "a", To: "b"}},
		Raw:     []provenance.SnapRaw{{Key: "b", Kind: provenance.EvRenamed, From: "a", File: "f", Old: -1, B: 1}},
		Touched: []provenance.SnapTouched{{Key: "b"}}}
	data, err := encodeSnapshot(s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSnapshot(b)
		if err != nil {
			return
		}
		again, err := encodeSnapshot(s)
		if err != nil {
			return // a time the encoding cannot hold
		}
		s2, err := decodeSnapshot(again)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("%x: decoded, encoded and decoded again differently (%v)", b, err)
		}
	})
}
