package index

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/provenance"
)

// openCorpus opens the shipped sample (testdata/corpus/NOTICE).
func openCorpus(t testing.TB) (*gitscan.Repo, plumbing.Hash) {
	t.Helper()
	return testcorpus.Open(t, nil)
}

func newIndex(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "perflog", FileName), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// answers renders what audit, blame and log answer.
func answers(t *testing.T, h *provenance.History, keys []string) string {
	t.Helper()
	rep, err := h.Audit(provenance.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := []any{rep.Entries, rep.Summary}
	for i, k := range keys {
		b, err := h.Blame(k, plumbing.ZeroHash)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		if i%25 == 0 {
			l, err := h.Log(k, provenance.LogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
	}
	j, _ := json.Marshal(out)
	return string(j)
}

// tables renders every documented table of ix, rows sorted.
func tables(t *testing.T, ix *Index) string {
	t.Helper()
	var b strings.Builder
	for _, tb := range Schema {
		var cols []string
		for _, c := range tb.Columns {
			cols = append(cols, c.Name)
		}
		res, err := ix.Query(context.Background(), "SELECT "+strings.Join(cols, ", ")+" FROM "+tb.Name+" ORDER BY "+strings.Join(cols, ", "))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: %d rows\n", tb.Name, len(res.Rows))
		for _, row := range res.Rows {
			fmt.Fprintln(&b, row...)
		}
	}
	return b.String()
}

// sameTables fails when an index updated step by step and an index built
// at once hold different rows.
func sameTables(t *testing.T, stepwise, cold *Index) {
	t.Helper()
	a, b := tables(t, stepwise), tables(t, cold)
	if a == b {
		return
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			t.Fatalf("the index updated step by step differs from one built at once, line %d:\n%s\n%s", i+1, al[i], bl[i])
		}
	}
	t.Fatalf("the index updated step by step has %d lines, the one built at once %d", len(al), len(bl))
}

// TestIndexAnswersLikeGit: an index built in two steps (an older commit,
// then the head), an index restored as stored, and the stored answers all
// answer as a history read from git.
func TestIndexAnswersLikeGit(t *testing.T) {
	if !testcorpus.Long() {
		t.Skip("builds the corpus history several times: a long replay (" + testcorpus.LongEnv + "=1 runs it)")
	}
	r, head := openCorpus(t)
	ctx := context.Background()
	cold, err := provenance.Build(ctx, r, provenance.Options{Head: head, Parts: provenance.PartsAll})
	if err != nil {
		t.Fatal(err)
	}
	keys := cold.RecipeKeysAt(len(cold.Chain) - 1)
	want := answers(t, cold, keys)

	ix := newIndex(t)
	old, _ := r.Resolve("main~40")
	if _, st, err := ix.Sync(ctx, r, old, Options{}); err != nil || st.New != len(cold.Chain)-40 {
		t.Fatalf("first sync: %+v, %v", st, err)
	}
	prev, _ := r.Resolve("main~1")
	if _, st, err := ix.Sync(ctx, r, prev, Options{}); err != nil || st.New != 39 || st.Dropped != 0 {
		t.Fatalf("incremental sync: %+v, %v", st, err)
	}
	h, st, err := ix.Sync(ctx, r, head, Options{})
	if err != nil || st.New != 1 || st.Dropped != 0 {
		t.Fatalf("incremental sync of one commit: %+v, %v", st, err)
	}
	// each update appended what it added to the stored snapshot
	var parts int
	if err := ix.db.QueryRow(`SELECT count(DISTINCT part) FROM snapshot`).Scan(&parts); err != nil || parts != 3 {
		t.Fatalf("the stored snapshot has %d parts (%v), want 3: the history, then each update", parts, err)
	}
	if got := answers(t, h, keys); got != want {
		t.Fatal("the incrementally indexed history answers differently from git")
	}
	h, st, err = ix.History(ctx, r, head, provenance.PartsAll, Options{})
	if err != nil || st.New != 0 {
		t.Fatalf("restore: %+v, %v", st, err)
	}
	if got := answers(t, h, keys); got != want {
		t.Fatal("the restored history answers differently from git")
	}
	// the stored answers
	rep, err := ix.CachedAudit(ctx, head, Options{})
	if err != nil {
		t.Fatal(err)
	}
	coldRep, _ := cold.Audit(provenance.AuditOptions{})
	a, _ := json.Marshal(rep)
	b, _ := json.Marshal(coldRep)
	if string(a) != string(b) {
		t.Fatal("the stored audit differs")
	}
	for _, k := range keys {
		got, err := ix.CachedBlame(ctx, head, k, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wantB, _ := cold.Blame(k, head)
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(wantB)
		if string(a) != string(b) {
			t.Fatalf("the stored blame of %s differs:\n%s\n%s", k, a, b)
		}
	}
	// and its query tables are those of an index built at once
	coldIx := newIndex(t)
	if _, _, err := coldIx.Sync(ctx, r, head, Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, coldIx)
	var uk *provenance.UnknownKeyError
	if _, err := ix.CachedBlame(ctx, head, keys[0]+"x", Options{}); !errors.As(err, &uk) {
		t.Errorf("stored blame of an unknown key: %v", err)
	}
	if _, err := ix.CachedAudit(ctx, old, Options{}); !errors.Is(err, ErrNotCached) {
		t.Errorf("stored audit at another revision: %v", err)
	}
}

// TestIndexRewrittenHistory: an index at a commit that is not on the new
// head's chain (a force-push) keeps the common part and indexes the new
// suffix.
// History answers from the stored history when it holds rev, and syncs
// (telling BeforeSync first) only when it does not.
func TestIndexHistorySyncsOnlyWhenBehind(t *testing.T) {
	ctx := context.Background()
	r, head := openCorpus(t)
	prev, _ := r.Resolve("main~1")
	ix := newIndex(t)
	if _, _, err := ix.Sync(ctx, r, prev, Options{}); err != nil {
		t.Fatal(err)
	}
	syncs := 0
	o := Options{BeforeSync: func() { syncs++ }}
	for i, c := range []struct {
		rev       plumbing.Hash
		new, sync int
	}{
		{head, 1, 1}, // behind: synced
		{head, 0, 1}, // indexed now
		{prev, 0, 1}, // an older commit of the indexed chain
	} {
		h, st, err := ix.History(ctx, r, c.rev, provenance.PartsAll, o)
		if err != nil {
			t.Fatal(err)
		}
		if st.New != c.new || syncs != c.sync {
			t.Fatalf("step %d: %d commits indexed, BeforeSync called %d times; want %d and %d", i, st.New, syncs, c.new, c.sync)
		}
		if _, on := h.SeqOf(c.rev); !on || h.Head != head {
			t.Fatalf("step %d: a history with head %s, which does not hold %s", i, h.Head, c.rev)
		}
	}
	// other ignore-revs: the query tables are computed again
	o.IgnoreRevs = []plumbing.Hash{prev}
	if _, _, err := ix.History(ctx, r, head, provenance.PartsAll, o); err != nil || syncs != 2 {
		t.Fatalf("other ignore-revs: BeforeSync called %d times (%v), want 2", syncs, err)
	}
}

func TestIndexRewrittenHistory(t *testing.T) {
	s := newScript(t)
	e := func(n int) string {
		return fmt.Sprintf("- config-keys:\n    - k\n  description:\n    - \"change %d\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", n, n)
	}
	a := s.commit("one (#1)", e(1))
	b := s.commit("two (#2)", e(1)+"\n"+e(2))
	s.commit("three (#3)", e(1)+"\n"+e(2)+"\n"+e(3))
	ix := newIndex(t)
	ctx := context.Background()
	if _, st, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil || st.New != 3 {
		t.Fatalf("first sync: %+v %v", st, err)
	}
	// main is reset to "two" and gets another commit
	s.reset(b)
	s.commit("four (#4)", e(1)+"\n"+e(2)+"\n"+e(4))
	h, st, err := ix.Sync(ctx, s.repo, s.head(), Options{})
	if err != nil || st.Dropped != 1 || st.New != 1 || len(h.Chain) != 3 {
		t.Fatalf("rewritten history: %+v %v", st, err)
	}
	var parts int
	if err := ix.db.QueryRow(`SELECT count(DISTINCT part) FROM snapshot`).Scan(&parts); err != nil || parts != 1 {
		t.Fatalf("after a rewrite the snapshot has %d parts (%v), want it stored whole", parts, err)
	}
	res, err := ix.Query(ctx, `SELECT group_concat(subject, '|') FROM (SELECT subject FROM commits ORDER BY seq)`)
	if err != nil || res.Rows[0][0] != "one (#1)|two (#2)|four (#4)" {
		t.Fatalf("commits: %v %v", res, err)
	}
	res, err = ix.Query(ctx, `SELECT count(*) FROM entries WHERE alive`)
	if err != nil || res.Rows[0][0].(int64) != 3 {
		t.Fatalf("entries: %v %v", res, err)
	}
	// an older commit on the chain needs no work
	if _, st, err := ix.Sync(ctx, s.repo, a, Options{}); err != nil || st.New != 0 || st.Dropped != 0 {
		t.Fatalf("older commit: %+v %v", st, err)
	}
	// and another commit on top appends to it
	s.commit("five (#5)", e(1)+"\n"+e(2)+"\n"+e(4)+"\n"+e(5))
	if _, st, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil || st.New != 1 {
		t.Fatalf("sync after the rewrite: %+v %v", st, err)
	}
	if err := ix.db.QueryRow(`SELECT count(DISTINCT part) FROM snapshot`).Scan(&parts); err != nil || parts != 2 {
		t.Fatalf("the snapshot has %d parts (%v), want 2", parts, err)
	}
}

// TestIndexExactMovesBack: an exact sync to an older commit of the indexed
// chain makes it the head (the tables describe it, as those of an index
// built there); a plain one changes nothing.
func TestIndexExactMovesBack(t *testing.T) {
	s := newScript(t)
	e := func(n int) string {
		return fmt.Sprintf("- config-keys:\n    - k\n  description:\n    - \"change %d\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", n, n)
	}
	s.commit("one (#1)", e(1))
	two := s.commit("two (#2)", e(1)+"\n"+e(2))
	s.commit("three (#3)", e(1)+"\n"+e(2)+"\n"+e(3))
	ctx := context.Background()
	ix := newIndex(t)
	if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	if _, st, err := ix.Sync(ctx, s.repo, two, Options{}); err != nil || st.New != 0 || st.Dropped != 0 || ix.Current(ctx, two, Options{}) {
		t.Fatalf("a plain sync to an older commit: %+v %v", st, err)
	}
	_, st, err := ix.Sync(ctx, s.repo, two, Options{Exact: true})
	if err != nil || st.New != 0 || st.Dropped != 1 || !ix.Current(ctx, two, Options{}) {
		t.Fatalf("an exact sync to an older commit: %+v %v", st, err)
	}
	cold := newIndex(t)
	if _, _, err := cold.Sync(ctx, s.repo, two, Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, cold)
	// and forward again
	if _, st, err := ix.Sync(ctx, s.repo, s.head(), Options{Exact: true}); err != nil || st.New != 1 || st.Dropped != 0 {
		t.Fatalf("forward again: %+v %v", st, err)
	}
}

// TestEntryFingerprints: every entry version has its content fingerprint;
// a pr-link correction keeps it, an edit changes it.
func TestEntryFingerprints(t *testing.T) {
	s := newScript(t)
	e := func(desc string, pr int) string {
		return fmt.Sprintf("- config-keys:\n    - k\n  description:\n    - %q\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", desc, pr)
	}
	s.commit("one (#1)", e("change", 9))
	s.commit("fix the link (#2)", e("change", 1))
	s.commit("reword (#3)", e("change, reworded", 1))
	ctx := context.Background()
	ix := newIndex(t)
	if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Query(ctx, `SELECT kind, fingerprint FROM entry_events ORDER BY seq`)
	if err != nil || len(res.Rows) != 3 {
		t.Fatalf("events: %v %v", res, err)
	}
	kinds := fmt.Sprint(res.Rows[0][0], res.Rows[1][0], res.Rows[2][0])
	if kinds != "introducedpr-link-changededited" {
		t.Fatalf("event kinds %s", kinds)
	}
	fp := func(i int) string { return res.Rows[i][1].(string) }
	if len(fp(0)) != 32 || fp(0) != fp(1) || fp(1) == fp(2) {
		t.Fatalf("fingerprints %s %s %s: a pr-link fix must keep it, an edit change it", fp(0), fp(1), fp(2))
	}
	last, err := ix.Query(ctx, `SELECT fingerprint FROM entries`)
	if err != nil || len(last.Rows) != 1 || last.Rows[0][0] != fp(2) {
		t.Fatalf("entries.fingerprint %v %v, want the last version's %s", last, err, fp(2))
	}
}

// TestIndexWritesChangedRows: an update rewrites the entries rows that
// changed, and only those, whatever the commit did (append, insert in the
// middle, correct a pr-link, remove, rewrite history); the tables stay
// those of an index built at once.
func TestIndexWritesChangedRows(t *testing.T) {
	s := newScript(t)
	e := func(n, pr int) string {
		return fmt.Sprintf("- config-keys:\n    - k%d\n  description:\n    - \"change %d\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/%d\n", n, n, pr)
	}
	cat := func(parts ...string) string { return strings.Join(parts, "\n") }
	ctx := context.Background()
	ix := newIndex(t)
	sync := func() {
		t.Helper()
		if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	s.commit("one (#1)", e(1, 1))
	b := s.commit("two (#2)", cat(e(1, 1), e(2, 2)))
	sync()
	if _, err := ix.db.Exec(`CREATE TABLE written(id INTEGER);
		CREATE TRIGGER entries_written AFTER INSERT ON entries BEGIN INSERT INTO written VALUES(new.id); END`); err != nil {
		t.Fatal(err)
	}
	written := func() string {
		t.Helper()
		var ids sql.NullString
		if err := ix.db.QueryRow(`SELECT group_concat(id, ',') FROM (SELECT id FROM written ORDER BY id)`).Scan(&ids); err != nil {
			t.Fatal(err)
		}
		ix.db.Exec(`DELETE FROM written`)
		return ids.String
	}
	steps := []struct {
		name, msg, changelog, want string
	}{
		{"append", "three (#3)", cat(e(1, 1), e(2, 2), e(3, 3)), "3"},
		// the entries after it move down a position
		{"insert in the middle", "four (#4)", cat(e(1, 1), e(4, 4), e(2, 2), e(3, 3)), "2,3,4"},
		// entry 3's link is corrected to its own PR: a verdict changes
		{"pr-link fix", "five (#5)", cat(e(1, 1), e(4, 4), e(2, 2), e(3, 5)), "3"},
		{"remove", "six (#6)", cat(e(1, 1), e(2, 2), e(3, 5)), "2,3,4"},
		{"nothing", "seven (#7)", cat(e(1, 1), e(2, 2), e(3, 5)) + "\n", ""},
	}
	for _, st := range steps {
		s.commit(st.msg, st.changelog)
		sync()
		if got := written(); got != st.want {
			t.Errorf("%s: entries rows written %q, want %q", st.name, got, st.want)
		}
	}
	cold := newIndex(t)
	if _, _, err := cold.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, cold)
	// history rewritten back to "two": fewer entries than stored
	s.reset(b)
	s.commit("eight (#8)", cat(e(2, 2), e(8, 8)))
	sync()
	cold = newIndex(t)
	if _, _, err := cold.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, cold)
	rep, err := ix.CachedAudit(ctx, s.head(), Options{})
	if err != nil || len(rep.Entries) != 2 {
		t.Fatalf("stored audit after the rewrite: %+v %v", rep, err)
	}
	// a stored audit chunk that is missing, or does not match its digest,
	// is not used
	ix.db.Exec(`UPDATE answers SET name = 'audit/7' WHERE name = 'audit/0'`)
	if _, err := ix.CachedAudit(ctx, s.head(), Options{}); !errors.Is(err, ErrNotCached) {
		t.Fatalf("missing audit chunk: %v", err)
	}
	ix.db.Exec(`UPDATE answers SET name = 'audit/0', data = x'00' WHERE name = 'audit/7'`)
	if _, err := ix.CachedAudit(ctx, s.head(), Options{}); !errors.Is(err, ErrNotCached) {
		t.Fatalf("damaged audit chunk: %v", err)
	}
}

// syncedIn builds an index of the corpus at its head in dir.
func syncedIn(t *testing.T, dir string) (*Index, *gitscan.Repo, plumbing.Hash) {
	t.Helper()
	r, head := openCorpus(t)
	ix, err := Open(filepath.Join(dir, FileName), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Sync(context.Background(), r, head, Options{}); err != nil {
		t.Fatal(err)
	}
	return ix, r, head
}

// TestIndexEmpty: a new index is empty, a synced one is not, and Empty
// agrees with Commits.
func TestIndexEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix, err := Open(filepath.Join(dir, FileName), true)
	if err != nil {
		t.Fatal(err)
	}
	if !ix.Empty(ctx) || ix.Commits(ctx) != 0 {
		t.Fatalf("new index: empty %v, %d commits", ix.Empty(ctx), ix.Commits(ctx))
	}
	ix.Close()
	ix, _, _ = syncedIn(t, dir)
	defer ix.Close()
	if ix.Empty(ctx) || ix.Commits(ctx) == 0 {
		t.Fatalf("synced index: empty %v, %d commits", ix.Empty(ctx), ix.Commits(ctx))
	}
}

// TestIndexRebuildsWhatItCannotTrust: a damaged file, another schema or
// other settings are rebuilt, never used.
func TestIndexRebuildsWhatItCannotTrust(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	ix, r, head := syncedIn(t, dir)
	// a recipe at head whose stored blame is missing is not an unknown key
	if _, err := ix.db.Exec(`DELETE FROM blame_cache WHERE key = 'dsr1-fp4-mi355x-sglang'`); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.CachedBlame(ctx, head, "dsr1-fp4-mi355x-sglang", Options{}); !errors.Is(err, ErrNotCached) {
		t.Errorf("stored blame missing: %v", err)
	}
	var unknown *provenance.UnknownKeyError
	if _, err := ix.CachedBlame(ctx, head, "dsr1-fp4-mi355x-sglan", Options{}); !errors.As(err, &unknown) || unknown.Rev != head.String()[:10] {
		t.Errorf("a misspelt key: %v", err)
	}
	// a key deleted by #2101: the history says so, the index does not
	if _, err := ix.CachedBlame(ctx, head, "gptoss-fp4-b200-trt", Options{}); !errors.Is(err, ErrNotCached) {
		t.Errorf("a deleted key: %v", err)
	}
	// what follows rebuilds the index a dozen times: at an older revision
	// (two fifths of the history, where the recipe exists), so that each
	// costs two fifths
	at, err := r.Resolve("main~1200")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Sync(ctx, r, at, Options{Rebuild: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.CachedBlame(ctx, at, "dsr1-fp4-mi355x-sglang", Options{}); err != nil {
		t.Fatalf("the stored blame at %s: %v", at, err)
	}
	// another schema version
	ix.db.Exec(`UPDATE meta SET value = '0' WHERE name = 'schema'`)
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
		t.Fatalf("old schema: %+v %v", st, err)
	}
	// a snapshot that does not decode
	ix.db.Exec(`UPDATE snapshot SET data = x'00ff00ff'`)
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
		t.Fatalf("damaged snapshot: %+v %v", st, err)
	}
	// parts that do not follow each other (the first one lost)
	prev, _ := r.Resolve("main~1201")
	if _, _, err := ix.Sync(ctx, r, prev, Options{Rebuild: true}); err != nil {
		t.Fatal(err)
	}
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || st.New != 1 {
		t.Fatalf("update: %+v %v", st, err)
	}
	ix.db.Exec(`DELETE FROM snapshot WHERE part = (SELECT min(part) FROM snapshot)`)
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
		t.Fatalf("a snapshot part missing: %+v %v", st, err)
	}
	// a part is stored in segments: one lost, or one byte of one changed,
	// is caught by the part's length and digest (the history's decoder
	// alone could read some such damage as another history)
	var segs int
	if err := ix.db.QueryRow(`SELECT count(*) FROM snapshot`).Scan(&segs); err != nil || segs < 3 {
		t.Fatalf("the snapshot of the corpus is stored in %d segments (%v), want several", segs, err)
	}
	// (each damage is made in a transaction rolled back after the load, so
	// that one rebuild, below, is paid rather than one per damage)
	for what, damage := range map[string]string{
		"a segment lost":    `DELETE FROM snapshot WHERE seg = (SELECT min(seg) + 1 FROM snapshot)`,
		"a byte changed":    `UPDATE snapshot SET data = substr(data, 1, 100) || x'ff' || substr(data, 102) WHERE seg = (SELECT min(seg) + 1 FROM snapshot)`,
		"segments swapped":  `UPDATE snapshot SET seg = -seg WHERE seg IN (SELECT seg FROM snapshot ORDER BY seg LIMIT 2)`,
		"the digest absent": `UPDATE snapshot SET data = substr(data, 1, length(data) - 8) WHERE seg = (SELECT max(seg) FROM snapshot)`,
		"a size beyond any": `UPDATE snapshot SET data = x'ffffffffffffff7f' || substr(data, 9) WHERE seg = (SELECT min(seg) FROM snapshot)`,
		"a size too small":  `UPDATE snapshot SET data = x'1000000000000000' || substr(data, 9) WHERE seg = (SELECT min(seg) FROM snapshot)`,
	} {
		tx, err := ix.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := load(ctx, tx, provenance.PartsAll); err != nil {
			t.Fatalf("%s: the snapshot does not load before the damage: %v", what, err)
		}
		if res, err := tx.ExecContext(ctx, damage); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n == 0 {
			t.Fatalf("%s: nothing damaged", what)
		}
		_, err = load(ctx, tx, provenance.PartsAll)
		tx.Rollback()
		if !errors.Is(err, errStale) {
			t.Fatalf("%s: the snapshot loads (%v), want it stale", what, err)
		}
	}
	if _, err := ix.db.Exec(`DELETE FROM snapshot WHERE seg = (SELECT min(seg) + 1 FROM snapshot)`); err != nil {
		t.Fatal(err)
	}
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
		t.Fatalf("a segment lost: %+v %v", st, err)
	}
	// a table, an index or a view dropped: no stored answer is read (a
	// blame without its table said the key did not exist), and the next
	// sync rebuilds
	if objs := schemaObjects(); len(objs) < 20 || !slices.Contains(objs, "blame_cache") ||
		!slices.Contains(objs, "field_changes_key") || !slices.Contains(objs, "entry_prs") {
		t.Fatalf("schema objects %v", objs)
	}
	for _, drop := range []string{"TABLE blame_cache", "TABLE answers", "INDEX field_changes_key", "VIEW entry_prs"} {
		if _, err := ix.db.Exec(`DROP ` + drop); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.CachedBlame(ctx, at, "dsr1-fp4-mi355x-sglang", Options{}); !errors.Is(err, ErrNotCached) {
			t.Errorf("stored blame without %s: %v", drop, err)
		}
		if _, err := ix.CachedAudit(ctx, at, Options{}); !errors.Is(err, ErrNotCached) {
			t.Errorf("stored audit without %s: %v", drop, err)
		}
		if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
			t.Fatalf("without %s: %+v %v", drop, st, err)
		}
	}
	// the shallow boundary moved (git fetch --deepen, --unshallow): the
	// stored attributions stopped at the old one
	shallow := Options{Shallow: []plumbing.Hash{prev}}
	if _, err := ix.CachedAudit(ctx, at, shallow); !errors.Is(err, ErrNotCached) {
		t.Errorf("stored audit for another shallow boundary: %v", err)
	}
	if _, st, err := ix.Sync(ctx, r, at, shallow); err != nil || !st.Rebuilt {
		t.Fatalf("shallow boundary set: %+v %v", st, err)
	}
	if _, st, err := ix.Sync(ctx, r, at, shallow); err != nil || st.Rebuilt {
		t.Fatalf("same boundary: %+v %v", st, err)
	}
	if _, st, err := ix.Sync(ctx, r, at, Options{}); err != nil || !st.Rebuilt {
		t.Fatalf("unshallowed: %+v %v", st, err)
	}
	ix.Close()
	// garbage instead of a database
	if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	ix, err = Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	// the stored answers are not read from it: the caller reads git
	if _, err := ix.CachedBlame(ctx, at, "dsr1-fp4-mi355x-sglang", Options{}); !errors.Is(err, ErrNotCached) {
		t.Fatalf("stored blame from a garbage file: %v", err)
	}
	if _, err := ix.CachedAudit(ctx, at, Options{}); !errors.Is(err, ErrNotCached) {
		t.Fatalf("stored audit from a garbage file: %v", err)
	}
	h, st, err := ix.Sync(ctx, r, at, Options{})
	if err != nil || !st.Rebuilt || len(h.Chain) != 1970-1200 {
		t.Fatalf("garbage file: %+v %v", st, err)
	}
}

// syncConcurrently syncs n indexes of one file at once, each with its own
// reader of the corpus, as n processes would, and returns their errors
// (a chain that is not the corpus's whole is one).
func syncConcurrently(t *testing.T, path string, n int, o Options) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		r, head := openCorpus(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix, err := Open(path, true)
			if err != nil {
				errs[i] = err
				return
			}
			defer ix.Close()
			h, _, err := ix.Sync(context.Background(), r, head, o)
			if err == nil && len(h.Chain) != 1970 {
				err = fmt.Errorf("chain of %d", len(h.Chain))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs
}

// TestIndexConcurrentSyncs: two processes updating one index wait for
// each other and agree.
func TestIndexConcurrentSyncs(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	for i, err := range syncConcurrently(t, path, 2, Options{}) {
		if err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	if m := journalMode(t, path); m != "wal" {
		t.Errorf("after two concurrent first builds the index is in %q mode, want wal", m)
	}
}

// TestIndexConcurrentRebuilds: rebuilds, which remove the files, are
// serialised: four at once all succeed (before, all but one failed with
// "disk I/O error" or "attempt to write a readonly database").
func TestIndexConcurrentRebuilds(t *testing.T) {
	for i, err := range syncConcurrently(t, filepath.Join(t.TempDir(), FileName), 4, Options{Rebuild: true}) {
		if err != nil {
			t.Errorf("rebuild %d: %v", i, err)
		}
	}
}

// journalMode reads the journal mode a database file is in, through a
// connection that does not set one.
func journalMode(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	return mode
}

// TestFreshIndexEndsInWAL: a new index is built with a rollback journal
// (each page written once) and left in WAL mode; a process that opened
// the file before another built it does not switch it back.
func TestFreshIndexEndsInWAL(t *testing.T) {
	r, head := openCorpus(t)
	path := filepath.Join(t.TempDir(), "perflog", FileName)
	ctx := context.Background()
	late, err := Open(path, true) // opens before the file exists
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	first, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !first.fresh || !late.fresh {
		t.Fatalf("an index opened before its file exists is fresh: %v %v", first.fresh, late.fresh)
	}
	if _, st, err := first.Sync(ctx, r, head, Options{}); err != nil || st.New != 1970 {
		t.Fatalf("first build: %+v %v", st, err)
	}
	first.Close()
	if m := journalMode(t, path); m != "wal" {
		t.Fatalf("a built index is in %q mode, want wal", m)
	}
	if _, st, err := late.Sync(ctx, r, head, Options{}); err != nil || st.New != 0 || st.Rebuilt {
		t.Fatalf("the other process finds the work done: %+v %v", st, err)
	}
	if m := journalMode(t, path); m != "wal" || late.fresh {
		t.Fatalf("after the other process's sync the index is in %q mode (fresh %v), want wal", m, late.fresh)
	}
	for _, p := range []string{path + "-journal"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	// an empty file (a first build interrupted) is fresh; one with a WAL
	// beside it is not
	empty := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, withWAL := range []bool{false, true} {
		if withWAL {
			os.WriteFile(empty+"-wal", nil, 0o644)
		}
		ix, err := Open(empty, false)
		if err != nil {
			t.Fatal(err)
		}
		if ix.fresh == withWAL {
			t.Errorf("an empty index file (WAL beside it: %v) opens fresh = %v", withWAL, ix.fresh)
		}
		ix.Close()
	}
	// a rebuild starts again from a fresh file
	if _, st, err := late.Sync(ctx, r, head, Options{Rebuild: true}); err != nil || st.New != 1970 {
		t.Fatalf("rebuild: %+v %v", st, err)
	}
	if m := journalMode(t, path); m != "wal" {
		t.Fatalf("a rebuilt index is in %q mode, want wal", m)
	}
}

// TestQuery: read-only SQL over the documented tables; bad SQL and writes
// are the engine's errors.
func TestQuery(t *testing.T) {
	r, head := openCorpus(t)
	ctx := context.Background()
	ix := newIndex(t)
	if _, _, err := ix.Sync(ctx, r, head, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, tb := range Schema {
		res, err := ix.Query(ctx, "SELECT * FROM "+tb.Name+" LIMIT 1")
		if err != nil {
			t.Fatalf("%s: %v", tb.Name, err)
		}
		if len(res.Columns) != len(tb.Columns) {
			t.Errorf("%s: %d columns, documented %d", tb.Name, len(res.Columns), len(tb.Columns))
		}
		for i, c := range tb.Columns {
			if i < len(res.Columns) && res.Columns[i] != c.Name {
				t.Errorf("%s column %d: %s, documented %s", tb.Name, i, res.Columns[i], c.Name)
			}
		}
	}
	res, err := ix.Query(ctx, `SELECT verdict, count(*) FROM entries WHERE alive GROUP BY verdict ORDER BY 2 DESC`)
	if err != nil || len(res.Rows) != 9 || res.Rows[0][0] != "ok" || res.Rows[0][1].(int64) != 693 {
		t.Fatalf("verdicts: %v %v", res, err)
	}
	// a BLOB is bytes, not text: kept whole and shown in hex
	res, err = ix.Query(ctx, `SELECT x'00ff41', 'A'`)
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("blob: %v %v", res, err)
	}
	if b, ok := res.Rows[0][0].(Blob); !ok || !bytes.Equal(b, []byte{0, 0xff, 'A'}) || b.String() != `\x00ff41` {
		t.Errorf("blob: %#v", res.Rows[0][0])
	}
	if s, ok := res.Rows[0][1].(string); !ok || s != "A" {
		t.Errorf("text: %#v", res.Rows[0][1])
	}
	// the image of the recipe blamed earlier, through its field changes
	res, err = ix.Query(ctx, `SELECT c.pr FROM field_changes f JOIN commits c USING (seq)
		WHERE f.key = 'dsr1-fp4-mi355x-sglang' AND f.path = 'image' ORDER BY f.seq DESC LIMIT 1`)
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0].(int64) != 1431 {
		t.Fatalf("last image change: %v %v", res, err)
	}
	attached := filepath.Join(t.TempDir(), "x.db")
	for _, bad := range []string{`SELEC 1`, `SELECT * FROM no_such_table`, `DELETE FROM commits`, `DROP TABLE entries`,
		`INSERT INTO notes VALUES (1, 'x', 'y', 'z')`,
		// query_only alone let these through: the first deleted rows, the
		// second created a file
		`PRAGMA query_only = OFF; DELETE FROM commits`, `ATTACH DATABASE '` + attached + `' AS x`,
		`PRAGMA journal_mode = DELETE`, `BEGIN`, `CREATE TEMP TABLE t(x)`, `SELECT 1; SELECT 2`,
		`SELECT load_extension('x')`} {
		if _, err := ix.Query(ctx, bad); !IsQueryError(err) {
			t.Errorf("%q: %v, want a query error", bad, err)
		}
	}
	if _, err := os.Stat(attached); !os.IsNotExist(err) {
		t.Errorf("ATTACH created %s", attached)
	}
	if res, _ := ix.Query(ctx, `SELECT count(*) FROM commits`); res.Rows[0][0].(int64) != 1970 {
		t.Error("a refused write changed the index")
	}
	// what reads is allowed: recursive CTEs, the schema pragmas, a
	// statement ended by a semicolon and a comment
	for q, want := range map[string]any{
		`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT count(*) FROM c`: int64(3),
		`SELECT count(*) FROM pragma_table_info('commits')`:                                                  int64(8),
		`PRAGMA table_info(commits)`: int64(0),
		`SELECT 'a;b'; -- the end`:   "a;b",
	} {
		res, err := ix.Query(ctx, q)
		if err != nil || len(res.Rows) == 0 || res.Rows[0][0] != want {
			t.Errorf("%q: %v %v, want %v first", q, res, err, want)
		}
	}
	// the restriction stays on the query: the index is written afterwards
	if _, _, err := ix.Sync(ctx, r, head, Options{Rebuild: true}); err != nil {
		t.Fatalf("a sync after the queries: %v", err)
	}
}

// TestOneStatement: a semicolon ends a statement only outside literals,
// quoted names and comments.
func TestOneStatement(t *testing.T) {
	for q, one := range map[string]bool{
		`SELECT 1`: true, `SELECT 1;`: true, "SELECT 1; \n -- done\n /* really */ ": true,
		`SELECT 'a;b'`: true, `SELECT 'it''s; fine'`: true, `SELECT "a;b" FROM t`: true, "SELECT `a;b`": true,
		`SELECT [a;b]`: true, `SELECT 1 /* ; SELECT 2 */`: true, "SELECT 1 -- ; SELECT 2": true, `SELECT 'open;`: true,
		`SELECT 1; SELECT 2`: false, `SELECT 1;;`: false, "SELECT 1; -- x\nSELECT 2": false, `SELECT 'a'; DELETE FROM t`: false,
		`SELECT 'it''s'; SELECT 2`: false, `;SELECT 1`: false,
	} {
		if err := oneStatement(q); (err == nil) != one {
			t.Errorf("oneStatement(%q) = %v, want one statement: %v", q, err, one)
		}
	}
}

// script builds a small repository in memory for index tests.
type script struct {
	t    *testing.T
	repo *gitscan.Repo
	r    *git.Repository
	w    *git.Worktree
	when time.Time
}

func newScript(t *testing.T) *script {
	r, err := git.InitWithOptions(memory.NewStorage(), memfs.New(), git.InitOptions{DefaultBranch: plumbing.Main})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := r.Worktree()
	return &script{t: t, repo: gitscan.FromRepository(r), r: r, w: w, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (s *script) commit(msg, changelog string) plumbing.Hash {
	return s.commitFiles(msg, map[string]string{"perf-changelog.yaml": changelog})
}

// commitFiles writes files (path -> content) and commits them.
func (s *script) commitFiles(msg string, files map[string]string) plumbing.Hash {
	for p, text := range files {
		if err := util.WriteFile(s.w.Filesystem, p, []byte(text), 0o644); err != nil {
			s.t.Fatal(err)
		}
		if _, err := s.w.Add(p); err != nil {
			s.t.Fatal(err)
		}
	}
	s.when = s.when.Add(time.Hour)
	sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: s.when}
	h, err := s.w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		s.t.Fatal(err)
	}
	return h
}

func (s *script) head() plumbing.Hash {
	h, _ := s.r.Head()
	return h.Hash()
}

func (s *script) reset(to plumbing.Hash) {
	if err := s.w.Reset(&git.ResetOptions{Commit: to, Mode: git.HardReset}); err != nil {
		s.t.Fatal(err)
	}
}

// TestBusyIsNotStale: "database is locked" is waited out, never taken for
// a damaged index (which would delete it under the other process);
// damage is.
func TestBusyIsNotStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	ctx := context.Background()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES(1)`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, busy := other.ExecContext(ctx, `INSERT INTO t VALUES(2)`)
	if !isBusy(busy) || errors.Is(staleErr(busy), errStale) {
		t.Fatalf("a locked database: isBusy = %v, staleErr = %v", isBusy(busy), staleErr(busy))
	}
	// whileBusy waits until the holder lets go
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		conn.ExecContext(ctx, `COMMIT`)
		close(released)
	}()
	tries := 0
	err = whileBusy(ctx, func() error {
		tries++
		_, err := other.ExecContext(ctx, `INSERT INTO t VALUES(3)`)
		return err
	})
	<-released
	if err != nil || tries < 2 {
		t.Fatalf("whileBusy: %v after %d tries", err, tries)
	}
	// a file that is not a database is stale
	garbage := filepath.Join(t.TempDir(), "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not sqlite ", 1000)), 0o644)
	g, err := sql.Open("sqlite", "file:"+garbage)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, bad := g.ExecContext(ctx, `SELECT count(*) FROM sqlite_master`)
	if bad == nil || isBusy(bad) || !errors.Is(staleErr(bad), errStale) {
		t.Fatalf("garbage: %v, stale = %v", bad, staleErr(bad))
	}
}

// TestDriverBlobsAreFresh: the BLOB values scanned into sql.RawBytes are
// slices of their own, which the next row does not overwrite (see
// driverBlobs: the stored answers' decoders keep them).
func TestDriverBlobsAreFresh(t *testing.T) {
	ix, err := Open(filepath.Join(t.TempDir(), FileName), true)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if _, err := ix.db.ExecContext(ctx, `CREATE TABLE b(n INTEGER, data BLOB)`); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := ix.db.ExecContext(ctx, `INSERT INTO b VALUES(?, ?)`, i, bytes.Repeat([]byte{byte('a' + i)}, 5000)); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT data FROM b ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kept []sql.RawBytes
	for rows.Next() {
		var data sql.RawBytes
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, data)
	}
	if err := rows.Err(); err != nil || len(kept) != 3 {
		t.Fatalf("%d rows, %v", len(kept), err)
	}
	for i, d := range kept {
		if !bytes.Equal(d, bytes.Repeat([]byte{byte('a' + i)}, 5000)) {
			t.Fatalf("row %d changed once later rows were read: the driver reuses its buffers, and the decoders must copy again", i)
		}
	}
}

// TestIndexNotWritable: an index this user cannot write (another user's,
// a read-only file system) is refused with ErrNotWritable and left as it
// is: never removed as damaged, and no WAL or shared-memory file of this
// user's is left beside it. (Root writes any file: run as another user.)
func TestIndexNotWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write any file")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	ix, r, _ := syncedIn(t, dir)
	ix.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, false); !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), path) {
		t.Errorf("a read-only file: %v", err)
	}
	// a directory without write permission: SQLite cannot make its WAL
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	ix, err = Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	prev, _ := r.Resolve("main~1")
	if _, _, err := ix.Sync(ctx, r, prev, Options{Exact: true}); !errors.Is(err, ErrNotWritable) {
		t.Errorf("a read-only directory: %v", err)
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the index changed (%v)", err)
	}
	// (the writers' lock file was made by the build, while the
	// directory was writable)
	if ents, _ := os.ReadDir(dir); len(ents) != 2 || ents[1].Name() != FileName+".lock" {
		t.Errorf("files beside the index: %v", ents)
	}
}

// TestIndexKeyPlacesStepwise: the file and line of each recipe at head
// (recipes_at_head) stay right through updates that move keys without
// changing them: a line shift in one file, a key moved to the other file,
// a key in both files (the first file wins) and taken out of the first
// again, an edit of the other file alone, an identical recipe moved.
func TestIndexKeyPlacesStepwise(t *testing.T) {
	s := newScript(t)
	r := func(k, img string) string {
		return k + ":\n  image: " + img + "\n  model: m\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n"
	}
	cat := func(parts ...string) string { return strings.Join(parts, "\n") }
	cl := "- config-keys:\n    - a\n  description:\n    - \"add\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
	const amd, nv = "configs/amd-master.yaml", "configs/nvidia-master.yaml"
	ctx := context.Background()
	ix := newIndex(t)
	for i, st := range []struct {
		name  string
		files map[string]string
	}{
		{"start", map[string]string{"perf-changelog.yaml": cl, amd: cat(r("a", "1"), r("b", "1")), nv: cat(r("c", "1"), r("d", "1"))}},
		{"a line shift in amd", map[string]string{amd: cat(r("a", "1"), r("x", "1"), r("b", "1"))}},
		{"b moves to nvidia", map[string]string{amd: cat(r("a", "1"), r("x", "1")), nv: cat(r("c", "1"), r("b", "1"), r("d", "1"))}},
		{"c in both files", map[string]string{amd: cat(r("c", "1"), r("a", "1"), r("x", "1"))}},
		{"c back to nvidia alone", map[string]string{amd: cat(r("a", "1"), r("x", "1"))}},
		{"nvidia alone shifts", map[string]string{nv: cat("# nvidia recipes", "", r("c", "1"), r("b", "1"), r("d", "1"))}},
		{"d moves unchanged", map[string]string{amd: cat(r("a", "1"), r("d", "1"), r("x", "1")), nv: cat("# nvidia recipes", "", r("c", "1"), r("b", "1"))}},
	} {
		s.commitFiles(fmt.Sprintf("%s (#%d)", st.name, i+2), st.files)
		if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
			t.Fatal(err)
		}
		cold := newIndex(t)
		if _, _, err := cold.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
			t.Fatal(err)
		}
		t.Run(st.name, func(t *testing.T) { sameTables(t, ix, cold) })
	}
	// and the places are where the files put the keys
	res, err := ix.Query(ctx, `SELECT key, file, line FROM recipes_at_head ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range res.Rows {
		got = append(got, strings.TrimSpace(fmt.Sprintln(row...)))
	}
	want := []string{"a configs/amd-master.yaml 1", "b configs/nvidia-master.yaml 10", "c configs/nvidia-master.yaml 3",
		"d configs/amd-master.yaml 8", "x configs/amd-master.yaml 15"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("places at head:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestIndexRewriteDropsRecipeChanges: when a rewritten history drops
// commits that changed recipes (an image, a rename, a key moved to the
// other file unchanged) and the new commits touch no config, the rows at
// head and the stored blames are those of the new head, as an index built
// there holds (the old head's were kept).
func TestIndexRewriteDropsRecipeChanges(t *testing.T) {
	s := newScript(t)
	r := func(k, img string) string {
		return k + ":\n  image: " + img + "\n  model: m\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n"
	}
	cl := "- config-keys:\n    - a\n  description:\n    - \"add\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
	const amd, nv = "configs/amd-master.yaml", "configs/nvidia-master.yaml"
	ctx := context.Background()
	base := s.commitFiles("one (#1)", map[string]string{"perf-changelog.yaml": cl,
		amd: r("a", "v1") + "\n" + r("b", "v1") + "\n" + r("m", "v1") + "\n" + r("z", "v1"), nv: r("c", "v1")})
	ix := newIndex(t)
	if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	// dropped later: a's image, b renamed to b2, m moved to nvidia as it
	// is, c copied into amd, which then holds it (the first file wins),
	// and z, unchanged, pushed down by a new x
	s.commitFiles("two (#2)", map[string]string{amd: r("c", "v1") + "\n" + r("x", "v1") + "\n" + r("a", "v2") + "\n" + r("b2", "v1") + "\n" + r("z", "v1"),
		nv: r("c", "v1") + "\n" + r("m", "v1")})
	if _, _, err := ix.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	s.reset(base)
	head := s.commitFiles("three (#3)", map[string]string{"perf-changelog.yaml": cl + "\n" + strings.ReplaceAll(cl, "add", "again")})
	if _, st, err := ix.Sync(ctx, s.repo, head, Options{}); err != nil || st.Dropped != 1 || st.New != 1 {
		t.Fatalf("rewritten history: %+v %v", st, err)
	}
	cold := newIndex(t)
	if _, _, err := cold.Sync(ctx, s.repo, head, Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, cold)
	for _, k := range []string{"a", "b", "c", "m", "z"} {
		got, err := ix.CachedBlame(ctx, head, k, Options{})
		if err != nil {
			t.Fatalf("stored blame of %s: %v", k, err)
		}
		want, err := cold.CachedBlame(ctx, head, k, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Errorf("the stored blame of %s after the rewrite:\n%s\nwant\n%s", k, a, b)
		}
	}
	var uk *provenance.UnknownKeyError
	if _, err := ix.CachedBlame(ctx, head, "b2", Options{}); !errors.As(err, &uk) {
		t.Errorf("stored blame of b2, which the new head does not have: %v", err)
	}
}

// TestIndexUpdateKeepsUnchangedFiles: an update adds no version of a file
// its commits did not change; with a changelog that does not load at the
// old head, its note stays that head's alone, as in an index built at once.
func TestIndexUpdateKeepsUnchangedFiles(t *testing.T) {
	s := newScript(t)
	r := func(img string) string {
		return "k:\n  image: " + img + "\n  model: m\n  runner: mi355x\n  precision: fp8\n  framework: sglang\n"
	}
	good := "- config-keys:\n    - k\n  description:\n    - \"add\"\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
	bad := good + "- config-keys: [k\n"
	ctx := context.Background()
	ix := newIndex(t)
	sync := func() *provenance.History {
		t.Helper()
		h, _, err := ix.Sync(ctx, s.repo, s.head(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	s.commitFiles("one (#1)", map[string]string{"perf-changelog.yaml": good, "configs/amd-master.yaml": r("v1")})
	sync()
	s.commitFiles("two (#2)", map[string]string{"perf-changelog.yaml": bad})
	if h := sync(); h.ConfigChangedAfter(len(h.Chain) - 2) {
		t.Error("a commit that changed only the changelog changed a master config")
	}
	s.commitFiles("three (#3)", map[string]string{"configs/amd-master.yaml": r("v2")})
	sync()
	cold := newIndex(t)
	if _, _, err := cold.Sync(ctx, s.repo, s.head(), Options{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, ix, cold)
	res, err := ix.Query(ctx, `SELECT count(*) FROM notes`)
	if err != nil || res.Rows[0][0].(int64) != 1 {
		t.Errorf("notes: %v %v, want the one of commit two", res, err)
	}
}

// A damaged page is ErrCorrupt naming the file (the command then rebuilds
// the index), and QueryEach hands rows over as they are read: an endless
// statement stops when its reader does.
func TestQueryCorruptAndStreaming(t *testing.T) {
	r, head := openCorpus(t)
	path := filepath.Join(t.TempDir(), FileName)
	ctx := context.Background()
	ix, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Sync(ctx, r, head, Options{}); err != nil {
		t.Fatal(err)
	}
	enough := errors.New("enough")
	n := 0
	err = ix.QueryEach(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c`,
		func([]string) error { return nil },
		func([]any) error {
			if n++; n == 1000 {
				return enough
			}
			return nil
		})
	if !errors.Is(err, enough) || n != 1000 {
		t.Fatalf("endless statement: %v after %d rows", err, n)
	}
	var root int
	if err := ix.db.QueryRowContext(ctx, `SELECT rootpage FROM sqlite_master WHERE name = 'entries'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := (root-1)*4096 + 8; i < root*4096-8; i++ {
		data[i] = 'A'
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	_, err = ix.Query(ctx, `SELECT count(*) FROM entries`)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || IsQueryError(err) {
		t.Fatalf("damaged page: %v", err)
	}
}

// FuzzQueryReadOnly: no statement a query runs writes the index or makes
// a file beside it (ATTACH, VACUUM INTO, a pragma that writes), whatever
// its text.
func FuzzQueryReadOnly(f *testing.F) {
	r, head := openCorpus(f)
	dir := f.TempDir()
	path := filepath.Join(dir, FileName)
	ix, err := Open(path, true)
	if err != nil {
		f.Fatal(err)
	}
	defer ix.Close()
	if _, _, err := ix.Sync(context.Background(), r, head, Options{}); err != nil {
		f.Fatal(err)
	}
	state := func() string {
		var b strings.Builder
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			fi, _ := e.Info()
			// readers open the WAL and share its index (-shm); a write
			// would grow the WAL
			if strings.HasSuffix(e.Name(), "-shm") || strings.HasSuffix(e.Name(), "-wal") && fi.Size() == 0 {
				continue
			}
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
		return b.String()
	}
	if _, err := ix.Query(context.Background(), "SELECT 1"); err != nil { // opens the WAL
		f.Fatal(err)
	}
	for _, q := range []string{
		"SELECT count(*) FROM entries", "DELETE FROM entries", "ATTACH 'x.db' AS x", "VACUUM INTO 'y.db'",
		"PRAGMA user_version = 3", "CREATE TABLE t(x)", "WITH d AS (DELETE FROM entries RETURNING 1) SELECT 1",
		"SELECT * FROM pragma_table_info('entries')", "PRAGMA journal_mode = DELETE", "REINDEX",
		"INSERT INTO notes VALUES (1, 'x', 'y')", "SELECT load_extension('x')", "ANALYZE", "PRAGMA writable_schema = 1",
	} {
		f.Add(q)
	}
	before := state()
	f.Fuzz(func(t *testing.T, q string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		rows := 0
		ix.QueryEach(ctx, q, func([]string) error { return nil }, func([]any) error {
			if rows++; rows > 1000 {
				return errors.New("enough")
			}
			return nil
		})
		if after := state(); after != before {
			t.Fatalf("%q changed the index's directory:\n%s\nwas\n%s", q, after, before)
		}
	})
}
