package index

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// TestAuditWireFields fails when a stored type gains a field that
// auditwire.go or blamewire.go does not encode (update it, and
// SchemaVersion).
func TestAuditWireFields(t *testing.T) {
	for typ, want := range map[reflect.Type][]string{
		reflect.TypeFor[provenance.AuditEntry]():  {"Index", "Line", "ConfigKeys", "PRLink", "PRLinkPR", "Introduced", "Events", "Verdict", "Reason", "Claims"},
		reflect.TypeFor[provenance.CommitRef]():   {"Commit", "PR", "Date", "Subject", "Ignored"},
		reflect.TypeFor[provenance.AuditEvent]():  {"Type", "CommitRef", "From", "To", "Note"},
		reflect.TypeFor[provenance.AuditReport](): {"Rev", "Path", "Version", "Entries", "Summary", "Notes"},
		reflect.TypeFor[provenance.Note]():        {"Seq", "Commit", "Path", "Message"},
		reflect.TypeFor[provenance.BlameReport](): {"Key", "File", "Rev", "Fields", "Renames", "Notes"},
		reflect.TypeFor[provenance.BlameField]():  {"Path", "Value", "Line", "CommitRef", "Event", "Key", "NotKnown", "SetIn"},
		reflect.TypeFor[provenance.LaunchGap]():   {"From", "To", "Reason"},
		reflect.TypeFor[provenance.Rename]():      {"From", "To", "CommitRef"},
	} {
		checkFields(t, typ, want, "auditwire.go or blamewire.go")
	}
}

// derived fields repeat others under another name for JSON readers
// (AuditEntry.Named): they are not stored.
var derived = map[string]bool{"AuditEntry.Entry": true, "AuditEvent.Kind": true}

// unstored fields are the history's positions, found again when a
// stored walk is read (see launchwire.go).
var unstored = map[string]bool{"LaunchVersion.Seq": true, "LogItem.seq": true}

// checkFields fails unless typ has exactly the fields the encoder in file
// writes (derived ones aside).
func checkFields(t *testing.T, typ reflect.Type, want []string, file string) {
	t.Helper()
	var got []string
	for f := range typ.Fields() {
		if derived[typ.Name()+"."+f.Name] || unstored[typ.Name()+"."+f.Name] {
			continue
		}
		got = append(got, f.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s has fields %v; %s encodes %v", typ, got, file, want)
	}
}

func sampleAudit() ([]provenance.AuditEntry, *auditHead) {
	pr, zero, neg := 2707, 0, -3
	tokyo := time.Date(2026, 7, 1, 22, 59, 29, 0, time.FixedZone("", 9*3600))
	chicago := time.Date(2026, 8, 21, 15, 54, 17, 123, time.FixedZone("", -5*3600))
	ref := provenance.CommitRef{Commit: "e976e2e28e", PR: &pr, Date: tokyo, Subject: "Serve (#2707)"}
	es := []provenance.AuditEntry{
		{Index: 1, Line: 1, ConfigKeys: []string{"a-*", "b"}, PRLink: "https://x/pull/2707", PRLinkPR: &pr, Introduced: &ref,
			Events: []provenance.AuditEvent{
				{Type: provenance.EvIntroduced, CommitRef: ref},
				{Type: "pr-link-corrected", CommitRef: provenance.CommitRef{Commit: "ab", Date: chicago, Ignored: true}, From: "u1", To: "u2", Note: "n"},
			}, Verdict: "corrected", Reason: "fixed by #1"},
		{Index: 2, Line: neg, ConfigKeys: []string{}, Events: []provenance.AuditEvent{}, Verdict: "no-pr", PRLinkPR: &zero},
		{Index: 3}, // nil lists, no introduction
		{Index: 4, Verdict: "ok"},
	}
	h := &auditHead{Report: provenance.AuditReport{Rev: plumbing.NewHash("1fe5131ba9e3d0f6a6f1f6c3f0f0f0f0f0f0f0f0"), Path: "perf-changelog.yaml",
		Version: plumbing.NewHash("d1f1c0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0"),
		Summary: map[provenance.Verdict]int{"ok": 693, "mismatch": 8},
		Notes:   []provenance.Note{{Seq: 12, Commit: plumbing.NewHash("31bbb66b54000000000000000000000000000000"), Path: "p", Message: "does not load"}}},
		Entries: 772, Chunks: []uint64{0, 1 << 63, 42}}
	return es, h
}

func TestAuditWireRoundTrip(t *testing.T) {
	es, head := sampleAudit()
	data, err := encodeAuditEntries(nil, es)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAuditEntries(data)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(es)
	b, _ := json.Marshal(got)
	if string(a) != string(b) {
		t.Fatalf("entries read back differently:\n%s\n%s", a, b)
	}
	// nil and empty lists are kept apart (the JSON output shows [] or null)
	if got[1].ConfigKeys == nil || got[1].Events == nil || got[2].ConfigKeys != nil || got[2].Events != nil {
		t.Error("nil and empty lists confused")
	}
	if got[0].Events[0].Date.Format(time.RFC3339) != "2026-07-01T22:59:29+09:00" {
		t.Errorf("zone lost: %v", got[0].Events[0].Date)
	}

	// claims live in their own table: an audit holding some is not stored
	// without them
	for _, cs := range [][]claims.Result{{{Entry: 4, Verdict: "confirmed"}}, {}} {
		withClaims := slices.Clone(es)
		withClaims[0].Claims = cs
		if _, err := encodeAuditEntries(nil, withClaims); err == nil {
			t.Errorf("an entry with claims %v was encoded", cs)
		}
	}

	h2, err := decodeAuditHead(head.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h2, head) {
		t.Fatalf("head read back differently:\n%+v\n%+v", h2, head)
	}
	empty := &auditHead{}
	if h3, err := decodeAuditHead(empty.encode()); err != nil || !reflect.DeepEqual(h3, empty) {
		t.Fatalf("empty head: %+v %v", h3, err)
	}
}

// TestAuditWireCorrupt: damaged stored bytes are an error, never a panic
// or a wrong answer taken for a stored one.
func TestAuditWireCorrupt(t *testing.T) {
	es, head := sampleAudit()
	data, _ := encodeAuditEntries(nil, es)
	hd := head.encode()
	for n := range len(data) {
		if _, err := decodeAuditEntries(data[:n]); !errors.Is(err, wire.ErrCorrupt) {
			t.Fatalf("entries cut to %d bytes: %v", n, err)
		}
	}
	for n := range len(hd) {
		if _, err := decodeAuditHead(hd[:n]); !errors.Is(err, wire.ErrCorrupt) {
			t.Fatalf("head cut to %d bytes: %v", n, err)
		}
	}
	for _, b := range [][]byte{append(slices.Clone(data), 0), {9, 0}, jsonOf(t, es)} {
		if _, err := decodeAuditEntries(b); !errors.Is(err, wire.ErrCorrupt) {
			t.Errorf("%x: %v", b[:min(len(b), 8)], err)
		}
	}
}

// jsonOf is v in another encoding, which the decoders must refuse.
func jsonOf(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzAuditWire: any bytes decode without panicking.
func FuzzAuditWire(f *testing.F) {
	es, head := sampleAudit()
	data, _ := encodeAuditEntries(nil, es)
	f.Add(data)
	f.Add(head.encode())
	f.Add(sampleBlameData(f))
	f.Add(sampleLaunchData(f))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeAuditEntries(b)
		decodeAuditHead(b)
		decodeBlame(b)
		decodeLaunchState(b)
	})
}

func sampleBlame() *provenance.BlameReport {
	pr := 145
	when := time.Date(2025, 11, 3, 10, 0, 0, 0, time.FixedZone("", -8*3600))
	ref := provenance.CommitRef{Commit: "d57d6111ae", PR: &pr, Date: when, Subject: "feat: candidate search space"}
	return &provenance.BlameReport{Key: "dsr1-fp4-mi355x-sglang", File: "configs/amd-master.yaml", Rev: "e976e2e28e",
		Fields: []provenance.BlameField{
			{Path: "image", Value: "lmsysorg/sglang:v0.5.12", Line: 2, CommitRef: ref, Event: "changed"},
			{Path: "scenarios.fixed-seq-len[0].search-space[1].conc-list", Value: "[4, 8]", Line: -1,
				CommitRef: provenance.CommitRef{Commit: "ab", Date: when, Ignored: true}, Event: "renamed", Key: "old-key"},
		},
		Renames: []provenance.Rename{{From: "old-key", To: "dsr1-fp4-mi355x-sglang", CommitRef: ref}},
		Notes:   []provenance.Note{{Seq: 3, Commit: plumbing.NewHash("31bbb66b54000000000000000000000000000000"), Path: "configs/amd-master.yaml", Message: "m"}},
	}
}

func sampleBlameData(t testing.TB) []byte {
	data, err := encodeBlame(sampleBlame())
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBlameWireRoundTrip(t *testing.T) {
	for _, want := range []*provenance.BlameReport{sampleBlame(), {}, {Fields: []provenance.BlameField{}, Renames: []provenance.Rename{}}} {
		data, err := encodeBlame(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeBlame(data)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(want)
		b, _ := json.Marshal(got)
		if string(a) != string(b) || !reflect.DeepEqual(got.Notes, want.Notes) {
			t.Errorf("blame read back differently:\n%s\n%s", a, b)
		}
		for n := range len(data) {
			if _, err := decodeBlame(data[:n]); !errors.Is(err, wire.ErrCorrupt) {
				t.Fatalf("cut to %d bytes: %v", n, err)
			}
		}
	}
}
