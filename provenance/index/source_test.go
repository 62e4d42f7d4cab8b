package index

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/provenance"
)

// TestSource: a Source answers from the index as from git; a cancel is
// an error, never a reason to read git instead; --ignore-rev questions
// are not answered from the stored answers; an ignore-rev that does not
// resolve is an error that says where it is listed.
func TestSource(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix, r, head := syncedIn(t, dir)
	ix.Close()
	path := filepath.Join(dir, FileName)
	open := func(o SourceOptions) *Source {
		t.Helper()
		o.Rev, o.IndexPath = "main", path
		s, err := OpenSource(r, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	stored, fromGit := open(SourceOptions{}), open(SourceOptions{NoIndex: true})
	if stored.Rev != head || stored.Index() == nil || fromGit.Index() != nil {
		t.Fatalf("rev %s index %v / %v", stored.Rev, stored.Index(), fromGit.Index())
	}
	if !stored.Current(ctx) || fromGit.Current(ctx) {
		t.Error("Current: the synced index is current; no index is not")
	}
	a, err := stored.Audit(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fromGit.Audit(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) == 0 || !reflect.DeepEqual(a.Summary, b.Summary) || len(a.Entries) != len(b.Entries) {
		t.Errorf("audit from the index %v, from git %v", a.Summary, b.Summary)
	}
	key := a.Entries[len(a.Entries)-1].ConfigKeys[0]
	ba, err := stored.Blame(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := fromGit.Blame(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ba, bb) {
		t.Errorf("blame of %s differs from the index and from git", key)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := stored.Audit(cancelled, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled audit: %v", err)
	}
	if _, err := stored.Blame(cancelled, key); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled blame: %v", err)
	}

	prev, err := r.Resolve("main~1")
	if err != nil {
		t.Fatal(err)
	}
	flagged := open(SourceOptions{IgnoreRevs: []string{prev.String()}})
	if flagged.Current(ctx) || len(flagged.IgnoreRevs) != 1 || len(flagged.SettingsRevs) != 0 {
		t.Errorf("--ignore-rev: current %v, revs %v / %v", flagged.Current(ctx), flagged.IgnoreRevs, flagged.SettingsRevs)
	}
	if _, err := flagged.Audit(ctx, ""); err != nil {
		t.Error(err)
	}

	_, err = OpenSource(r, SourceOptions{Rev: "main", IndexPath: path, Settings: &config.Settings{IgnoreRevs: []string{"no-such-rev"}}})
	if err == nil || !strings.Contains(err.Error(), "ignore-revs in the settings") {
		t.Errorf("an ignore-rev that does not resolve: %v", err)
	}
	if _, err := OpenSource(r, SourceOptions{Rev: "nope", RevName: "rev-b"}); err == nil || !strings.HasPrefix(err.Error(), "rev-b: ") {
		t.Errorf("a revision that does not resolve: %v", err)
	}
}

// TestClaimsFromGitReportProgress: checking claims from git (no index: a
// cold report's longest step) reports its progress, as the index's check
// does, so that a terminal is not left silent.
func TestClaimsFromGitReportProgress(t *testing.T) {
	ctx := context.Background()
	r, _ := openCorpus(t)
	var labels []string
	updates := 0
	s, err := OpenSource(r, SourceOptions{Rev: "main", NoIndex: true, Progress: func(label string) (func(provenance.Progress), func()) {
		labels = append(labels, label)
		return func(p provenance.Progress) {
			if p.Stage == "claims" && p.Total > 0 {
				updates++
			}
		}, func() {}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	rep, err := s.Audit(ctx, "dsr1-fp8-mi355x-*")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Claims(ctx, rep); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(labels, "checking claims") || updates == 0 {
		t.Errorf("progress labels %q, %d claim updates: want the claims check reported", labels, updates)
	}
}
