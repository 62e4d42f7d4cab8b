package gitscan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-billy/v5/util"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// memRepo builds an in-memory repository with deterministic commits.
type memRepo struct {
	t    *testing.T
	r    *git.Repository
	when time.Time
}

func newMemRepo(t *testing.T) *memRepo {
	r, err := git.InitWithOptions(memory.NewStorage(), memfs.New(), git.InitOptions{DefaultBranch: plumbing.Main})
	if err != nil {
		t.Fatal(err)
	}
	return &memRepo{t: t, r: r, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (m *memRepo) commit(msg string, files map[string]string) plumbing.Hash {
	w, err := m.r.Worktree()
	if err != nil {
		m.t.Fatal(err)
	}
	for p, c := range files {
		if err := util.WriteFile(w.Filesystem, p, []byte(c), 0o644); err != nil {
			m.t.Fatal(err)
		}
		if _, err := w.Add(p); err != nil {
			m.t.Fatal(err)
		}
	}
	m.when = m.when.Add(time.Hour)
	sig := &object.Signature{Name: "a", Email: "a@b", When: m.when}
	h, err := w.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		m.t.Fatal(err)
	}
	return h
}

func TestResolveAndRead(t *testing.T) {
	m := newMemRepo(t)
	c1 := m.commit("first (#1)", map[string]string{"a.yaml": "x: 1\n", "dir/b.yaml": "y\n"})
	c2 := m.commit("second (#2)", map[string]string{"a.yaml": "x: 2\n"})
	c3 := m.commit("third", map[string]string{"c": ""})
	if _, err := m.r.CreateTag("v1", c1, nil); err != nil {
		t.Fatal(err)
	}
	r := FromRepository(m.r)
	for rev, want := range map[string]plumbing.Hash{
		"v1": c1, "HEAD": c3, "main": c3, "HEAD~1": c2, "HEAD~2": c1, "main^": c2,
		c1.String(): c1, c2.String()[:8]: c2,
	} {
		got, err := r.Resolve(rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", rev, got, err, want)
		}
	}
	for _, bad := range []string{"", "nope", "HEAD~9", "zzzz"} {
		if _, err := r.Resolve(bad); !errors.Is(err, ErrUnknownRev) {
			t.Errorf("Resolve(%q) err = %v, want ErrUnknownRev", bad, err)
		}
	}
	b, err := r.ReadFile(c1, "a.yaml")
	if err != nil || string(b) != "x: 1\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if b, err := r.ReadFile(c3, "c"); err != nil || b == nil || len(b) != 0 {
		t.Fatalf("empty file: %q, %v (want a non-nil empty slice)", b, err)
	}
	if _, err := r.ReadFile(c1, "missing.yaml"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing file err = %v", err)
	}
	if _, err := r.ReadFile(c1, "dir"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a directory must read as not found, got %v", err)
	}
	files, err := r.ListFiles(c1, "dir")
	if err != nil || len(files) != 1 || files[0] != "dir/b.yaml" {
		t.Fatalf("ListFiles = %v, %v", files, err)
	}
	if mb, err := r.MergeBase(c3, c1); err != nil || mb != c1 {
		t.Fatalf("MergeBase = %s, %v", mb, err)
	}
}

// TestResolveSimpleAgreesWithGoGit checks the fast revision path against
// go-git's ResolveRevision: where it answers, it answers the same; it
// answers the common forms itself; it declines the rest.
// TestResolveInEmptyRepository: a repository without commits says so
// rather than only that HEAD is unknown.
func TestResolveInEmptyRepository(t *testing.T) {
	r := FromRepository(newMemRepo(t).r)
	_, err := r.Resolve("HEAD")
	if !errors.Is(err, ErrUnknownRev) || !strings.Contains(err.Error(), "no commits yet") {
		t.Fatalf("Resolve(HEAD) in an empty repository: %v", err)
	}
	m := newMemRepo(t)
	m.commit("c1", map[string]string{"a": "1\n"})
	if _, err := FromRepository(m.r).Resolve("nope"); err == nil || strings.Contains(err.Error(), "no commits") {
		t.Fatalf("Resolve(nope) with commits: %v", err)
	}
}

// TestShallowCommits: the boundary of a shallow clone, sorted.
func TestShallowCommits(t *testing.T) {
	m := newMemRepo(t)
	a := m.commit("a", map[string]string{"a": "1\n"})
	b := m.commit("b", map[string]string{"a": "2\n"})
	r := FromRepository(m.r)
	if r.Shallow() || r.ShallowCommits() != nil {
		t.Fatal("a whole repository is not shallow")
	}
	if err := m.r.Storer.SetShallow([]plumbing.Hash{b, a}); err != nil {
		t.Fatal(err)
	}
	want := []plumbing.Hash{a, b}
	if bytes.Compare(b[:], a[:]) < 0 {
		want = []plumbing.Hash{b, a}
	}
	if got := r.ShallowCommits(); !r.Shallow() || !slices.Equal(got, want) {
		t.Fatalf("ShallowCommits = %v, want %v", got, want)
	}
}

func TestResolveSimpleAgreesWithGoGit(t *testing.T) {
	m := newMemRepo(t)
	c1 := m.commit("first", map[string]string{"a": "1"})
	c2 := m.commit("second", map[string]string{"a": "2"})
	side := m.commit("side", map[string]string{"b": "1"})
	sig := &object.Signature{Name: "a", Email: "a@b", When: m.when}
	w, err := m.r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	merge, err := w.Commit("merge", &git.CommitOptions{Author: sig, Committer: sig, Parents: []plumbing.Hash{c2, side}, AllowEmptyCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.r.CreateTag("light", c1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := m.r.CreateTag("v2", c2, &git.CreateTagOptions{Message: "release", Tagger: sig}); err != nil {
		t.Fatal(err)
	}
	blob := plumbing.ComputeHash(plumbing.BlobObject, []byte("1"))
	for _, ref := range []*plumbing.Reference{
		plumbing.NewHashReference("refs/remotes/origin/main", c2),
		plumbing.NewHashReference("refs/heads/feature/x", side),
		plumbing.NewHashReference("refs/tags/ablob", blob),
	} {
		if err := m.r.Storer.SetReference(ref); err != nil {
			t.Fatal(err)
		}
	}
	r := FromRepository(m.r)
	handled := map[string]plumbing.Hash{
		"HEAD": merge, "main": merge, "refs/heads/main": merge, "HEAD^": c2, "HEAD^1": c2, "HEAD^2": side,
		"HEAD^0": merge, "HEAD~": c2, "HEAD~2": c1, "HEAD^2~1": c2, "main~1^": c1, "light": c1, "v2": c2,
		"v2~1": c1, "origin/main": c2, "remotes/origin/main": c2, "feature/x": side, merge.String(): merge,
		c1.String() + "~0": c1,
	}
	for rev, want := range handled {
		got, ok := r.resolveSimple(rev)
		if !ok || got != want {
			t.Errorf("resolveSimple(%q) = %s, %v; want %s", rev, got, ok, want)
		}
		if gg, err := m.r.ResolveRevision(plumbing.Revision(rev)); err == nil && *gg != want {
			t.Errorf("%q: go-git says %s, the fast path %s", rev, gg, got)
		}
	}
	for _, rev := range []string{
		"HEAD~9", "HEAD^3", "c1", merge.String()[:8], "ablob", blob.String(), "main@{0}", "HEAD^{commit}",
		"HEAD:a", ":/first", "main..HEAD", "-x", "a//b", "x.lock", "nope", "~1", "HEAD~1x",
	} {
		if got, ok := r.resolveSimple(rev); ok {
			t.Errorf("resolveSimple(%q) = %s; want it left to go-git", rev, got)
		}
	}
}

func TestFirstParentWalk(t *testing.T) {
	m := newMemRepo(t)
	var want []plumbing.Hash
	for i := 0; i < 5; i++ {
		want = append([]plumbing.Hash{m.commit("c", map[string]string{"f": string(rune('a' + i))})}, want...)
	}
	r := FromRepository(m.r)
	var got []plumbing.Hash
	err := r.FirstParent(context.Background(), WalkOptions{From: want[0]}, func(n Node) error {
		got = append(got, n.Hash)
		return nil
	})
	if err != nil || len(got) != 5 || got[0] != want[0] || got[4] != want[4] {
		t.Fatalf("walk = %v, %v", got, err)
	}
	got = nil
	r.FirstParent(context.Background(), WalkOptions{From: want[0], Until: want[2]}, func(n Node) error {
		got = append(got, n.Hash)
		return nil
	})
	if len(got) != 2 {
		t.Fatalf("walk Until: %d commits, want 2", len(got))
	}
	n := 0
	if err := r.FirstParent(context.Background(), WalkOptions{From: want[0]}, func(Node) error { n++; return ErrStop }); err != nil || n != 1 {
		t.Fatalf("ErrStop: n=%d err=%v", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.FirstParent(ctx, WalkOptions{From: want[0]}, func(Node) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk err = %v", err)
	}
	if err := r.FirstParent(context.Background(), WalkOptions{}, nil); err == nil {
		t.Fatal("empty From must be rejected")
	}
}

func TestPRFromSubject(t *testing.T) {
	cases := map[string]int{
		"Serve the dsv4 B200 TP8 agentic arm (#2707)":         2707,
		"Revert \"Add X (#1837)\" (#1857)":                    1857,
		"Bump image (#1857) [skip-sweep]":                     1857,
		"Merge pull request #12 from org/branch":              12,
		"Update glm5-fp4-b300-sglang SGLang image to v0.5.11": 0,
		"Fix aiter pin, see ROCm/aiter#2916":                  0,
		"Ref #1154":                                           0,
		"":                                                    0,
	}
	for s, want := range cases {
		got, ok := PRFromSubject(s)
		if ok != (want != 0) || got != want {
			t.Errorf("PRFromSubject(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
}

func TestOpenOnDisk(t *testing.T) {
	corpus := "../testdata/corpus/inferencex.git"
	r, err := Open(corpus, &OpenOptions{NoDetect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Worktree() != "" || !r.HasCommitGraph() {
		t.Fatalf("bare corpus: worktree %q, commit-graph %v", r.Worktree(), r.HasCommitGraph())
	}
	head, err := r.Resolve("main")
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	err = r.FirstParent(context.Background(), WalkOptions{From: head}, func(Node) error { count++; return nil })
	if err != nil || count != 1970 {
		t.Fatalf("corpus first-parent walk: %d commits, %v; want 1970", count, err)
	}
	// without the commit-graph the walk decodes commits and agrees
	r2, err := Open(corpus, &OpenOptions{NoDetect: true, NoCommitGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	n2 := 0
	r2.FirstParent(context.Background(), WalkOptions{From: head}, func(Node) error { n2++; return nil })
	if n2 != count {
		t.Fatalf("no-graph walk %d != %d", n2, count)
	}
	// a plain directory is not a repository, and detection stops at its root
	dir := t.TempDir()
	if _, err := Open(dir, &OpenOptions{NoDetect: true}); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open(empty dir) err = %v", err)
	}
	// a work tree is found from a subdirectory
	wt := t.TempDir()
	if _, err := git.PlainInit(wt, false); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(wt, "a", "b")
	os.MkdirAll(sub, 0o755)
	r3, err := Open(sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if got, _ := filepath.EvalSymlinks(r3.Worktree()); got != mustEval(t, wt) {
		t.Fatalf("worktree = %q, want %q", r3.Worktree(), wt)
	}
}

func mustEval(t *testing.T, p string) string {
	s, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCommitMetadata checks the pack reader's commit decoding against
// go-git's on the corpus.
func TestCommitMetadata(t *testing.T) {
	r, head := openCorpus(t, &OpenOptions{NoDetect: true, NoCommitGraph: true})
	n := 0
	err := r.FirstParent(context.Background(), WalkOptions{From: head}, func(nd Node) error {
		n++
		if n%97 != 1 {
			return nil
		}
		c, err := r.Commit(nd.Hash)
		if err != nil {
			return err
		}
		g, err := r.repo.CommitObject(nd.Hash)
		if err != nil {
			return err
		}
		if c.Tree != g.TreeHash || c.Tree != nd.Tree || len(c.Parents) != len(g.ParentHashes) ||
			c.Message != g.Message || !c.When.Equal(g.Author.When) || c.Author != g.Author.Name {
			t.Errorf("%s: decoded %+v, go-git %v", nd.Hash, c, g)
		}
		return nil
	})
	if err != nil || n != 1970 {
		t.Fatalf("walk: %d, %v", n, err)
	}
}

// TestWalkMeta: the metadata a walk decodes (WalkOptions.Meta) is what
// Repo.Commit reads, on every corpus commit, with and without the
// commit-graph; a walk not asked for it gives none.
func TestWalkMeta(t *testing.T) {
	for _, o := range []*OpenOptions{{NoDetect: true, NoCommitGraph: true}, {NoDetect: true}} {
		r, head := openCorpus(t, o)
		n := 0
		err := r.FirstParent(context.Background(), WalkOptions{From: head, Meta: true}, func(nd Node) error {
			n++
			c, err := r.Commit(nd.Hash)
			if err != nil {
				return err
			}
			m := nd.Meta
			if m == nil || m.Author != c.Author || m.Email != c.Email || !m.When.Equal(c.When) ||
				m.When.Format(time.RFC3339) != c.When.Format(time.RFC3339) || m.Subject != c.Subject() {
				t.Fatalf("%s: walked %+v, Commit %+v", nd.Hash, m, c)
			}
			return nil
		})
		if err != nil || n != 1970 {
			t.Fatalf("walk: %d, %v", n, err)
		}
	}
	r, head := openCorpus(t, nil)
	r.FirstParent(context.Background(), WalkOptions{From: head}, func(nd Node) error {
		if nd.Meta != nil {
			t.Fatal("metadata without Meta")
		}
		return ErrStop
	})
}

// Header lines of hand-made commit objects.
const (
	tree      = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	parent    = "parent 1fe5131ba9e3d0f6a6f1f6c3f0f0f0f0f0f0f0f0\n"
	parent2   = "parent 2fe5131ba9e3d0f6a6f1f6c3f0f0f0f0f0f0f0f0\n"
	author    = "author A U Thor <a@x.org> 1750000000 +0930\n"
	committer = "committer C O Mitter <c@x.org> 1750000100 -0500\n"
)

// TestParseCommitMeta: odd commit objects decode as go-git decodes them.
func TestParseCommitMeta(t *testing.T) {
	for _, raw := range []string{
		tree + parent + author + committer + "\n  Subject line  \n\nbody\n",
		tree + author + committer + "gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n\nsigned\n",
		tree + parent + parent + committer + author + "\nauthor after the committer is not the author\n",
		tree + author + "author Second <s@x.org> 1 +0000\n\nfirst author wins\n",
		tree + parent + tree + author + "\na tree after the parents hides the author\n",
		tree + author + committer + "\n",
		tree + author + committer,
		tree + "author Broken\n\nno email\n",
		tree + "author X <x@y> notatime zone\n\nbad date\n",
		tree + author + "encoding ISO-8859-1\n\n\nempty subject line\n",
	} {
		mo := &plumbing.MemoryObject{}
		mo.SetType(plumbing.CommitObject)
		mo.Write([]byte(raw))
		var g object.Commit
		if err := g.Decode(mo); err != nil {
			t.Fatalf("go-git: %v\n%s", err, raw)
		}
		want := newCommit(&g)
		m := parseCommitMeta([]byte(raw))
		if m.Author != want.Author || m.Email != want.Email || !m.When.Equal(want.When) ||
			m.When.Format(time.RFC3339) != want.When.Format(time.RFC3339) || m.Subject != want.Subject() {
			t.Errorf("%q:\ngot  %+v\nwant %+v (%q)", raw, m, want, want.Subject())
		}
	}
}

// TestTrackMatchesFileHash checks Track's memoised lookups against plain
// FileHash on every corpus commit, for files that moved, vanished and came
// back, and for a path that never exists.
func TestTrackMatchesFileHash(t *testing.T) {
	r, head := openCorpus(t, nil)
	paths := []string{"perf-changelog.yaml", "configs/amd-master.yaml", ".github/configs/nvidia-master.yaml",
		"benchmarks/benchmark_lib.sh", "runners/launch_b200-nb.sh", "no/such/file", "configs"}
	n, changes := 0, 0
	prev := make([]plumbing.Hash, len(paths))
	err := r.Track(context.Background(), TrackOptions{WalkOptions: WalkOptions{From: head}, Paths: paths}, func(s Step) error {
		n++
		for i, p := range paths {
			want, _, err := r.FileHash(s.Hash, p)
			if err != nil {
				return err
			}
			if s.Blobs[i] != want {
				t.Fatalf("%s %s: Track %s, FileHash %s", s.Hash, p, s.Blobs[i], want)
			}
			if s.Blobs[i] != prev[i] {
				changes++
			}
			prev[i] = s.Blobs[i]
		}
		return nil
	})
	if err != nil || n != 1970 || changes < 1000 {
		t.Fatalf("track: %d commits, %d changes, %v", n, changes, err)
	}
}

// TestChangedFilesMatchesGoGit compares ChangedFiles with go-git's tree
// diff on a sample of corpus commits (and a root commit: every file added).
func TestChangedFilesMatchesGoGit(t *testing.T) {
	r, head := openCorpus(t, nil)
	n, files := 0, 0
	err := r.FirstParent(context.Background(), WalkOptions{From: head}, func(nd Node) error {
		n++
		if n%53 != 1 && len(nd.Parents) > 0 {
			return nil
		}
		var parent plumbing.Hash
		var pt *object.Tree
		if len(nd.Parents) > 0 {
			parent = nd.Parents[0]
			pc, err := r.repo.CommitObject(parent)
			if err != nil {
				return err
			}
			if pt, err = pc.Tree(); err != nil {
				return err
			}
		}
		c, err := r.repo.CommitObject(nd.Hash)
		if err != nil {
			return err
		}
		ct, err := c.Tree()
		if err != nil {
			return err
		}
		want, err := object.DiffTree(pt, ct)
		if err != nil {
			return err
		}
		got, err := r.ChangedFiles(parent, nd.Hash)
		if err != nil {
			return err
		}
		var w []string
		for _, ch := range want {
			name := ch.To.Name
			if name == "" {
				name = ch.From.Name
			}
			w = append(w, fmt.Sprintf("%s %s %s", name, ch.From.TreeEntry.Hash, ch.To.TreeEntry.Hash))
		}
		sort.Strings(w)
		var g []string
		for _, ch := range got {
			g = append(g, fmt.Sprintf("%s %s %s", ch.Path, ch.Old, ch.New))
		}
		if strings.Join(g, "\n") != strings.Join(w, "\n") {
			t.Fatalf("%s: ChangedFiles\n%s\ngo-git\n%s", nd.Hash, strings.Join(g, "\n"), strings.Join(w, "\n"))
		}
		files += len(got)
		return nil
	})
	if err != nil || files < 50 {
		t.Fatalf("compared %d files: %v", files, err)
	}
}

// TestWorktreeChanges: modified, deleted and new files below the given
// paths; a rewritten but identical file is no change.
func TestWorktreeChanges(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{"configs/a.yaml": "a\n", "configs/b.yaml": "b\n", "configs/c.yaml": "c\n", "benchmarks/x/s.sh": "s\n", "log.yaml": "l\n", "other/o.txt": "o\n"} {
		write(p, s)
	}
	w, _ := r.Worktree()
	if err := w.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0)}
	h, err := w.Commit("c", &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	write("configs/a.yaml", "a2\n")           // modified
	write("configs/b.yaml", "b\n")            // rewritten, same content
	write("configs/c.yaml", "C\n")            // modified, same size
	write("benchmarks/x/new.sh", "n\n")       // new
	os.Remove(filepath.Join(dir, "log.yaml")) // deleted file path
	write("other/o.txt", "o2\n")              // outside the paths
	gr, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer gr.Close()
	got, err := gr.WorktreeChanges(h, []string{"configs", "benchmarks", "log.yaml", "runners"})
	if err != nil {
		t.Fatal(err)
	}
	want := "benchmarks/x/new.sh configs/a.yaml configs/c.yaml log.yaml"
	if strings.Join(got, " ") != want {
		t.Fatalf("WorktreeChanges = %v, want %s", got, want)
	}
}

// TestSetReadCache: a Repo's read cache can be raised for a bulk read and
// restored; lowering it evicts down to the new budget at once.
func TestSetReadCache(t *testing.T) {
	r, head := openCorpus(t, nil)
	def := r.SetReadCache(64 << 20)
	if def != walkCacheBudget {
		t.Fatalf("default budget %d, want %d", def, walkCacheBudget)
	}
	// both master configs at a few commits: more than the default holds
	c := head
	for range 6 {
		for _, p := range []string{"configs/nvidia-master.yaml", "configs/amd-master.yaml"} {
			if _, err := r.ReadFile(c, p); err != nil {
				t.Fatal(err)
			}
		}
		n, err := r.Commit(c)
		if err != nil {
			t.Fatal(err)
		}
		c = n.Parents[0]
	}
	if used := r.obj.packs.Cached(); used <= walkCacheBudget {
		t.Fatalf("a 64 MiB cache holds %d bytes after reading 12 large files", used)
	}
	if prev := r.SetReadCache(def); prev != 64<<20 {
		t.Fatalf("SetReadCache returned %d, want the budget it replaced", prev)
	}
	if used := r.obj.packs.Cached(); used > 2*def {
		t.Fatalf("after lowering the budget to %d the cache still holds %d bytes", def, used)
	}
}

// TestScanStreams reads two files' versions interleaved, one reader per
// file: every blob arrives whole, in order, with its stream.
func TestScanStreams(t *testing.T) {
	r, head := openCorpus(t, nil)
	type req struct {
		h      plumbing.Hash
		stream int
	}
	var reqs []req
	last := make([]plumbing.Hash, 2)
	err := r.Track(context.Background(), TrackOptions{WalkOptions: WalkOptions{From: head},
		Paths: []string{"perf-changelog.yaml", "configs/amd-master.yaml"}}, func(s Step) error {
		for i, b := range s.Blobs {
			if b != last[i] && !b.IsZero() {
				reqs = append(reqs, req{b, i})
				last[i] = b
			}
		}
		if len(reqs) > 300 {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	got := 0
	maps := -1 // mappings of the pack while both readers are open
	// each stream's previous content, which must still be intact when the
	// stream's next version comes (the readers do not reuse its buffer)
	type lent struct {
		h    plumbing.Hash
		data []byte
	}
	prev := map[int]lent{}
	// readers with no room: every version read evicts the ones before
	defer func(b, r int) { streamBudget, streamRoom = b, r }(streamBudget, streamRoom)
	streamBudget, streamRoom = 1, 0
	err = r.ScanStreams(context.Background(), func() (plumbing.Hash, int, bool) {
		if i == len(reqs) {
			return plumbing.ZeroHash, 0, false
		}
		i++
		return reqs[i-1].h, reqs[i-1].stream, true
	}, func(h plumbing.Hash, stream int, data []byte) error {
		want := reqs[got]
		got++
		if h != want.h || stream != want.stream {
			return fmt.Errorf("read %s of stream %d, want %s of %d", h, stream, want.h, want.stream)
		}
		if plumbing.ComputeHash(plumbing.BlobObject, data) != h {
			return fmt.Errorf("blob %s: content hashes to %s", h, plumbing.ComputeHash(plumbing.BlobObject, data))
		}
		if p, ok := prev[stream]; ok && plumbing.ComputeHash(plumbing.BlobObject, p.data) != p.h {
			return fmt.Errorf("stream %d: the content of %s changed before the stream's next version was read", stream, p.h)
		}
		prev[stream] = lent{h, data}
		if got == len(reqs) {
			maps = packMappings(t)
		}
		return nil
	})
	if err != nil || got != len(reqs) || got < 300 {
		t.Fatalf("ScanStreams: %v after %d of %d blobs", err, got, len(reqs))
	}
	// the readers share the repository's mapping of the pack: each
	// mapping would count in the process's resident memory again
	if maps > 1 {
		t.Errorf("the pack is mapped %d times by the stream readers, want once", maps)
	}
	streams := map[int]bool{}
	for _, q := range reqs {
		streams[q.stream] = true
	}
	if len(streams) != 2 {
		t.Fatalf("the test read %d streams, want both files", len(streams))
	}
}

// packMappings counts the mappings of .pack files in this process (-1
// where /proc/self/maps does not exist).
func packMappings(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return -1
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasSuffix(l, ".pack") {
			n++
		}
	}
	return n
}

// openCorpus opens the shipped sample (without detecting a work tree
// unless o says otherwise) and resolves main; the repository is closed
// when the test ends.
func openCorpus(t testing.TB, o *OpenOptions) (*Repo, plumbing.Hash) {
	t.Helper()
	if o == nil {
		o = &OpenOptions{NoDetect: true}
	}
	r, err := Open("../testdata/corpus/inferencex.git", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	head, err := r.Resolve("main")
	if err != nil {
		t.Fatal(err)
	}
	return r, head
}

// TestParseCommitHeader: the tree and parents a walk reads are the ones
// go-git decodes; a commit without a tree, or with a parent that is not a
// hash, is an error.
func TestParseCommitHeader(t *testing.T) {
	const p1, p2 = parent, parent2
	for _, raw := range []string{
		tree + p1 + author + committer + "\nsubject\n",
		tree + p1 + p2 + author + committer + "\nmerge\n",
		tree + author + committer + "\nroot\n",
		tree + p1 + committer + p2 + author + "\nparents around the committer\n",
		tree + p1 + "\nno author\n",
		tree + p1,
	} {
		mo := &plumbing.MemoryObject{}
		mo.SetType(plumbing.CommitObject)
		mo.Write([]byte(raw))
		var g object.Commit
		if err := g.Decode(mo); err != nil {
			t.Fatalf("go-git: %v\n%s", err, raw)
		}
		c, err := parseCommitHeader([]byte(raw))
		if err != nil || c.tree != g.TreeHash || !slices.Equal(c.parents, g.ParentHashes) {
			t.Errorf("%q: %s %v, %v; go-git: %s %v", raw, c.tree, c.parents, err, g.TreeHash, g.ParentHashes)
		}
	}
	for _, raw := range []string{tree + p1 + "parent not-hex\n" + author, p1 + author + "\nno tree\n", p1 + tree + author, ""} {
		if c, err := parseCommitHeader([]byte(raw)); err == nil {
			t.Errorf("%q: %+v, want an error", raw, c)
		}
	}
}

// TestTreeIsFS: a commit's Tree passes the standard library's checks of
// an fs.FS (every file and directory opened, read, listed and described
// consistently), and lists what go-git's tree of that commit holds.
func TestTreeIsFS(t *testing.T) {
	r, head := openCorpus(t, nil)
	tree := r.Tree(head)
	if err := fstest.TestFS(tree, "perf-changelog.yaml", "configs/amd-master.yaml", "benchmarks/benchmark_lib.sh"); err != nil {
		t.Fatal(err)
	}
	c, err := r.repo.CommitObject(head)
	if err != nil {
		t.Fatal(err)
	}
	gt, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []string
	gt.Files().ForEach(func(f *object.File) error {
		if f.Mode.IsFile() {
			want = append(want, f.Name)
		}
		return nil
	})
	fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			got = append(got, p)
		}
		return nil
	})
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) || len(got) < 100 {
		t.Fatalf("the tree walks to %d files, go-git lists %d", len(got), len(want))
	}
	for _, bad := range []string{"/perf-changelog.yaml", "../x", "configs/", "nope", "configs/nope.yaml"} {
		if _, err := fs.ReadFile(tree, bad); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("ReadFile(%q) = %v, want not found or invalid", bad, err)
		}
	}
	data, _ := fs.ReadFile(tree, "perf-changelog.yaml")
	data[0] ^= 0xff // the caller's copy: the tree's own stays intact
	again, _ := fs.ReadFile(tree, "perf-changelog.yaml")
	if again[0] == data[0] {
		t.Fatal("ReadFile handed out the tree's cached bytes")
	}
}

// TestDamagedIndexIsCorruption: a pack index cut short (or otherwise
// damaged) makes the repository corrupt, said so and naming the index,
// never a revision reported unknown or another object's content.
func TestDamagedIndexIsCorruption(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := r.Worktree()
	os.WriteFile(filepath.Join(dir, "f.yaml"), []byte("a: 1\n"), 0o644)
	w.Add("f.yaml")
	sig := &object.Signature{Name: "a", Email: "a@b", When: time.Unix(1e9, 0)}
	if _, err := w.Commit("one", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		t.Fatal(err)
	}
	if err := r.RepackObjects(&git.RepackConfig{}); err != nil {
		t.Fatal(err)
	}
	objs, _ := os.ReadDir(filepath.Join(dir, ".git", "objects"))
	for _, e := range objs {
		if e.Name() != "pack" {
			os.RemoveAll(filepath.Join(dir, ".git", "objects", e.Name()))
		}
	}
	idxs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	if len(idxs) != 1 {
		t.Fatalf("indexes %v", idxs)
	}
	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },                                // cut short
		func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 1; return b },     // a changed byte
		func(b []byte) []byte { b = bytes.Clone(b); b[len(b)-25] ^= 0x10; return b }, // an offset
	} {
		orig, _ := os.ReadFile(idxs[0])
		os.WriteFile(idxs[0], damage(orig), 0o644)
		g, err := Open(dir, &OpenOptions{NoDetect: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = g.Resolve("HEAD")
		g.Close()
		os.WriteFile(idxs[0], orig, 0o644)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ".idx") {
			t.Errorf("Resolve(HEAD) with a damaged index: %v; want corruption naming the index", err)
		}
	}
}

// TestTreeFollowsLinks: a symbolic link of the commit to a file of the
// commit reads as that file (InferenceX's runners/launch_b200-dgxc-slurm.sh
// names launch_b200-dgxc.sh); one that leaves the tree, names nothing or
// loops does not read.
func TestTreeFollowsLinks(t *testing.T) {
	m := newMemRepo(t)
	w, err := m.r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"runners/launch_b-slurm.sh": "launch_b.sh",
		"runners/twice.sh":          "launch_b-slurm.sh",
		"runners/out.sh":            "../../etc/passwd",
		"runners/abs.sh":            "/etc/passwd",
		"runners/none.sh":           "nothing.sh",
		"runners/loop1.sh":          "loop2.sh",
		"runners/loop2.sh":          "loop1.sh",
	}
	for link, target := range links {
		if err := w.Filesystem.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add(link); err != nil {
			t.Fatal(err)
		}
	}
	head := m.commit("links", map[string]string{"runners/launch_b.sh": "echo b\n"})
	tree := FromRepository(m.r).Tree(head)
	for _, p := range []string{"runners/launch_b-slurm.sh", "runners/twice.sh"} {
		data, err := fs.ReadFile(tree, p)
		if err != nil || string(data) != "echo b\n" {
			t.Errorf("%s: %q %v, want the file it links to", p, data, err)
		}
		if fi, err := fs.Stat(tree, p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("stat %s: %v %v", p, fi, err)
		}
	}
	next := m.commit("the file changes", map[string]string{"runners/launch_b.sh": "echo c\n"})
	if a, b := tree.PathID("runners/twice.sh", false), FromRepository(m.r).Tree(next).PathID("runners/twice.sh", false); a == b || a == "" {
		t.Errorf("a link's id %q does not change with the file it names (%q)", a, b)
	}
	for _, p := range []string{"runners/out.sh", "runners/abs.sh", "runners/none.sh", "runners/loop1.sh"} {
		if data, err := fs.ReadFile(tree, p); err == nil {
			t.Errorf("%s read as %q", p, data)
		}
	}
}

// TestLooseTreesAreKept: a commit made since the last repack is loose;
// its commit and trees are read from disk once, however many of its paths
// are looked up (here: read again after the files are gone).
func TestLooseTreesAreKept(t *testing.T) {
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := r.Worktree()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "b", "c.sh"), []byte("c\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a", "b", "d.sh"), []byte("d\n"), 0o644)
	w.AddWithOptions(&git.AddOptions{All: true})
	sig := &object.Signature{Name: "a", Email: "a@b", When: time.Unix(1e9, 0)}
	h, err := w.Commit("one", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := r.CommitObject(h)
	f, err := c.File("a/b/d.sh")
	if err != nil {
		t.Fatal(err)
	}
	keep := f.Hash.String()
	g, err := Open(dir, &OpenOptions{NoDetect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if b, err := fs.ReadFile(g.Tree(h), "a/b/c.sh"); err != nil || string(b) != "c\n" {
		t.Fatalf("a/b/c.sh: %q, %v", b, err)
	}
	loose, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "??", "*"))
	removed := 0
	for _, p := range loose {
		if filepath.Base(filepath.Dir(p))+filepath.Base(p) != keep {
			os.Remove(p)
			removed++
		}
	}
	if removed < 4 { // the commit, three trees, a blob
		t.Fatalf("removed %d loose objects", removed)
	}
	if b, err := fs.ReadFile(g.Tree(h), "a/b/d.sh"); err != nil || string(b) != "d\n" {
		t.Fatalf("a/b/d.sh after its trees were read once: %q, %v", b, err)
	}
}
