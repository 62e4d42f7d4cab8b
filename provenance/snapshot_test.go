package provenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

// answers renders everything the commands answer from a history: the
// audit, every recipe's blame and a few logs.
func answers(t *testing.T, h *History, keys []string) string {
	t.Helper()
	var out []any
	rep, err := h.Audit(AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, rep.Entries, rep.Summary, h.Notes)
	for i, k := range keys {
		b, err := h.Blame(k, plumbing.ZeroHash)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		if i%10 == 0 {
			l, err := h.Log(k, LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
	}
	j, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func firstDiff(a, b string) string {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			lo := max(0, i-200)
			return fmt.Sprintf("at byte %d:\n%s\n---\n%s", i, a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}

// replayOf renders what the replay of the master config versions leaves
// in h: every key's changes (blocks by the hash of their text: a history
// extended from a snapshot numbers its new blocks otherwise), the last seq
// that touched each key, the notes and the state at head.
func replayOf(h *History) string {
	hashOf := func(b *block) string {
		switch {
		case b == nil:
			return "-"
		case b.text != "":
			return fmt.Sprintf("%x", textHash([]byte(b.text)))
		}
		return fmt.Sprintf("%x", b.hash)
	}
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(h.Keys)) {
		for _, r := range h.Keys[k].raw {
			fmt.Fprintf(&sb, "%s %s@%d %q>%q %s old=%s new=%s\n", k, r.kind, r.seq, r.from, r.to, r.file, hashOf(r.old), hashOf(r.b))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(h.lastTouched)) {
		fmt.Fprintf(&sb, "touched %s@%d\n", k, h.lastTouched[k])
	}
	for _, n := range h.Notes {
		fmt.Fprintf(&sb, "note %+v\n", n)
	}
	st := h.stateAt(len(h.Chain) - 1)
	for s := range st.cur {
		fmt.Fprintf(&sb, "slot %d %q next %d:", s, st.paths[s], st.next[s])
		for _, b := range st.cur[s] {
			fmt.Fprintf(&sb, " %s=%s", b.key, hashOf(b))
		}
		for _, k := range slices.Sorted(maps.Keys(st.byKey[s])) {
			if st.counts[s][k] > 0 {
				fmt.Fprintf(&sb, " [%s %s %d %v]", k, hashOf(st.byKey[s][k]), st.counts[s][k], st.slots[k])
			}
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// TestSnapshotRestoreAndExtend: a history restored from its snapshot, and
// one extended from an older snapshot, answer exactly as one built from
// git — the promise of the index.
func TestSnapshotRestoreAndExtend(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("builds the corpus history three times: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, head := openCorpus(t)
	ctx := context.Background()
	full, err := Build(ctx, r, Options{Head: head, Parts: PartsAll})
	if err != nil {
		t.Fatal(err)
	}
	keys := full.RecipeKeysAt(len(full.Chain) - 1)
	want := answers(t, full, keys)

	snap, err := full.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	texts := map[int]string{}
	for i := range snap.Blocks {
		texts[snap.Blocks[i].ID] = snap.Blocks[i].Text
		snap.Blocks[i].Text = "" // fetched on demand, as from an index
	}
	opts := RestoreOptions{ReadBlob: r.ReadBlob, Text: func(id int) (string, error) { return texts[id], nil }}
	rest, err := Restore(ctx, snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := answers(t, rest, keys); got != want {
		t.Fatalf("restored history answers differently: %s", firstDiff(got, want))
	}
	// the recipes' history is restored as the replay found it, not
	// replayed again
	wantReplay := replayOf(full)
	if got := replayOf(rest); got != wantReplay {
		t.Fatalf("the restored recipe history differs from the replay: %s", firstDiff(got, wantReplay))
	}

	// an index at an older commit, extended to head
	old, err := r.Resolve("main~150")
	if err != nil {
		t.Fatal(err)
	}
	oh, err := Build(ctx, r, Options{Head: old, Parts: PartsAll})
	if err != nil {
		t.Fatal(err)
	}
	osnap, err := oh.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	base, err := Restore(ctx, osnap, RestoreOptions{ReadBlob: r.ReadBlob, BaseOnly: true}) // as the index restores a base
	if err != nil {
		t.Fatal(err)
	}
	ext, err := Build(ctx, r, Options{Head: head, Parts: PartsAll, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	if len(ext.Chain) != len(full.Chain) {
		t.Fatalf("extended chain %d commits, full %d", len(ext.Chain), len(full.Chain))
	}
	if got := answers(t, ext, keys); got != want {
		t.Fatalf("extended history answers differently: %s", firstDiff(got, want))
	}
	// it replayed only the versions above the base, from the base's state
	if got := replayOf(ext); got != wantReplay {
		t.Fatalf("the extended recipe history differs from the replay: %s", firstDiff(got, wantReplay))
	}
	// the extension's snapshot holds the base's blocks, not copies
	esnap, err := ext.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(esnap.Blocks) > len(snap.Blocks)+len(snap.Blocks)/20 {
		t.Errorf("extended snapshot has %d blocks, a full one %d", len(esnap.Blocks), len(snap.Blocks))
	}
	// what the extension added, appended to the base's snapshot, is the
	// extension's snapshot
	part, err := ext.SnapshotAbove(len(oh.Chain)-1, osnap.Blocks[len(osnap.Blocks)-1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if part.From != len(oh.Chain) || len(part.Commits) != 150 || len(part.Blocks) == 0 || len(part.Blocks) >= len(esnap.Blocks)/2 {
		t.Fatalf("the part above the base: from %d, %d commits, %d of %d blocks", part.From, len(part.Commits), len(part.Blocks), len(esnap.Blocks))
	}
	merged, err := MergeSnapshots(osnap, part)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged, esnap) {
		t.Error("the base's snapshot with the part above it differs from the extended history's snapshot")
	}
	if _, err := MergeSnapshots(osnap, part, part); !errors.Is(err, ErrSnapshot) {
		t.Errorf("a part merged twice: %v", err)
	}
	if _, err := Restore(ctx, part, RestoreOptions{}); !errors.Is(err, ErrSnapshot) {
		t.Errorf("a part restored alone: %v", err)
	}
	_ = gitscan.ErrStop
}
