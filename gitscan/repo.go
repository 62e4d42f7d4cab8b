// Package gitscan is perflog's history engine: it opens a repository with
// go-git, resolves revisions the way a user types them, reads files at a
// commit, finds merge bases, walks first-parent history and maps commits to
// pull requests.
//
// gitscan knows nothing about YAML, changelogs or recipes; it hands out bytes
// and commit metadata. Packages above it (config, changelog, provenance) give
// those bytes meaning. It never runs the git binary.
//
// Dependencies: gitscan/internal/pack (its pack reader), internal/lru
// (the loose commits and trees it keeps), github.com/go-git/go-git/v5,
// github.com/go-git/go-billy/v5; no other perflog package.
package gitscan

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	cgfmt "github.com/go-git/go-git/v5/plumbing/format/commitgraph/v2"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/object/commitgraph"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
	"github.com/perflog/perflog/gitscan/internal/pack"
)

// Sentinel errors; wrapped with context, test them with errors.Is.
var (
	ErrNotRepository = errors.New("not a git repository")
	ErrUnknownRev    = errors.New("unknown revision")
	ErrNotFound      = errors.New("file not found at revision")
	ErrNoMergeBase   = errors.New("no merge base")
	ErrNotCommit     = errors.New("not a commit")
	// ErrStop may be returned by a walk callback to end the walk early
	// without error, in the style of go-git's storer.ErrStop.
	ErrStop = errors.New("stop walk")
)

// Repo is an opened repository.
type Repo struct {
	repo *git.Repository
	// idx reads commits through the commit-graph when the repository has
	// one, and decodes commit objects otherwise.
	idx commitgraph.CommitNodeIndex
	// worktree is the root of the work tree, "" for a bare repository or
	// an in-memory one.
	worktree string
	gitDir   string
	closer   io.Closer
	graph    bool
	// obj reads objects from the pack files directly (see objects);
	// blobs is a second reader for ScanBlobs, so that a blob pass can run
	// beside a walk (each reader is used by one goroutine at a time).
	obj, blobs *objects
	packs      *pack.Set // shared by the readers; nil in memory
}

// OpenOptions configures Open.
type OpenOptions struct {
	// NoDetect disables the search for a repository in parent directories
	// (the equivalent of running git with GIT_CEILING_DIRECTORIES=path).
	NoDetect bool
	// NoCommitGraph ignores objects/info/commit-graph even when present.
	NoCommitGraph bool
}

// Open opens the repository containing path: path itself when it is a git
// directory (a bare repository or a .git dir), else the nearest directory at
// or above path that holds a .git entry.
func Open(p string, opts *OpenOptions) (*Repo, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	} else if !fi.IsDir() {
		abs = filepath.Dir(abs)
	}
	gitDir, wt, err := locate(abs, !opts.NoDetect)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	dot := osfs.New(gitDir)
	var repoFS billy.Filesystem = dot
	if c := commonDir(gitDir); c != gitDir {
		repoFS = dotgit.NewRepositoryFilesystem(dot, osfs.New(c))
	}
	st := filesystem.NewStorageWithOptions(repoFS, cache.NewObjectLRU(16*cache.MiByte),
		filesystem.Options{KeepDescriptors: true})
	var wtFS billy.Filesystem
	if wt != "" {
		wtFS = osfs.New(wt)
	}
	r, err := git.Open(st, wtFS)
	if err != nil {
		st.Close()
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, fmt.Errorf("%s: %w", p, ErrNotRepository)
		}
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	out := &Repo{repo: r, worktree: wt, gitDir: gitDir, closer: st}
	objDir := filepath.Join(commonDir(gitDir), "objects")
	out.packs = pack.OpenSet(objDir)
	fb := newFallback(st, true)
	out.obj = newObjects(out.packs, fb, walkCacheBudget)
	out.blobs = newObjects(out.packs, fb, blobCacheBudget)
	out.idx = commitgraph.NewObjectCommitNodeIndex(st)
	if !opts.NoCommitGraph {
		if g, err := cgfmt.OpenChainOrFileIndex(repoFS); err == nil {
			out.idx = commitgraph.NewGraphCommitNodeIndex(g, st)
			out.graph = true
		}
	}
	return out, nil
}

// FromRepository wraps an already opened go-git repository (for example an
// in-memory one in tests).
func FromRepository(r *git.Repository) *Repo {
	out := &Repo{repo: r, idx: commitgraph.NewObjectCommitNodeIndex(r.Storer)}
	fb := newFallback(r.Storer, false)
	out.obj = newObjects(nil, fb, walkCacheBudget)
	out.blobs = newObjects(nil, fb, blobCacheBudget)
	return out
}

// commonDir returns the directory holding the objects of gitDir: the
// main repository's git dir for a linked worktree, else gitDir.
func commonDir(gitDir string) string {
	if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		return c
	}
	return gitDir
}

// Close releases file descriptors held by the repository.
func (r *Repo) Close() error {
	if r.packs != nil {
		r.packs.Close()
	}
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Worktree returns the work tree root, or "" for a bare repository.
func (r *Repo) Worktree() string { return r.worktree }

// GitDir returns the repository's git directory ("" when in memory).
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir returns the directory shared by all worktrees of the
// repository (the main git directory; "" when in memory).
func (r *Repo) CommonDir() string {
	if r.gitDir == "" {
		return ""
	}
	return commonDir(r.gitDir)
}

// HasCommitGraph reports whether commits are read through a commit-graph.
func (r *Repo) HasCommitGraph() bool { return r.graph }

// Shallow reports whether the repository is a shallow clone.
func (r *Repo) Shallow() bool { return len(r.ShallowCommits()) > 0 }

// ShallowCommits returns the boundary commits of a shallow clone (git's
// .git/shallow: commits whose parents were not fetched), sorted; none for
// a complete repository.
func (r *Repo) ShallowCommits() []plumbing.Hash {
	s, err := r.repo.Storer.Shallow()
	if err != nil || len(s) == 0 {
		return nil
	}
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	return s
}

func isGitDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, "objects"))
	if err != nil || !fi.IsDir() {
		// a linked worktree's git dir has commondir instead of objects
		_, err := os.Stat(filepath.Join(dir, "commondir"))
		return err == nil
	}
	return true
}

// locate finds the git directory and work tree for dir.
func locate(dir string, detect bool) (gitDir, worktree string, err error) {
	for {
		dotgitPath := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotgitPath); err == nil {
			if fi.IsDir() {
				return dotgitPath, dir, nil
			}
			gd, err := readGitFile(dotgitPath)
			if err != nil {
				return "", "", err
			}
			return gd, dir, nil
		}
		if isGitDir(dir) {
			return dir, "", nil
		}
		parent := filepath.Dir(dir)
		if !detect || parent == dir {
			return "", "", ErrNotRepository
		}
		dir = parent
	}
}

func readGitFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	const prefix = "gitdir: "
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("%s has no %q line", p, prefix)
	}
	gd := strings.TrimSpace(line[len(prefix):])
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(p), gd)
	}
	return gd, nil
}

// Resolve turns a user-typed revision (branch, tag, remote branch, full or
// abbreviated sha, HEAD~3, main^2, ...) into a commit hash.
func (r *Repo) Resolve(rev string) (plumbing.Hash, error) {
	if strings.TrimSpace(rev) == "" {
		return plumbing.ZeroHash, fmt.Errorf("empty revision: %w", ErrUnknownRev)
	}
	if h, ok := r.resolveSimple(rev); ok {
		return h, nil
	}
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil || h == nil || h.IsZero() {
		if r.packs != nil {
			if bad := r.packs.Damaged(); bad != nil {
				return plumbing.ZeroHash, fmt.Errorf("%q: %w", rev, bad) // the repository is damaged, not the revision unknown
			}
		}
		if _, herr := r.repo.Head(); errors.Is(herr, plumbing.ErrReferenceNotFound) {
			return plumbing.ZeroHash, fmt.Errorf("%q: %w: the repository has no commits yet", rev, ErrUnknownRev)
		}
		return plumbing.ZeroHash, fmt.Errorf("%q: %w", rev, ErrUnknownRev)
	}
	return *h, nil
}

// Branch is the short name of the branch HEAD is on ("" when HEAD is
// detached or unreadable).
func (r *Repo) Branch() string {
	ref, err := r.repo.Storer.Reference(plumbing.HEAD)
	if err != nil || ref.Type() != plumbing.SymbolicReference || !ref.Target().IsBranch() {
		return ""
	}
	return ref.Target().Short()
}

// Commit is the metadata of one commit.
type Commit struct {
	Hash    plumbing.Hash
	Parents []plumbing.Hash
	Tree    plumbing.Hash
	Author  string
	Email   string
	When    time.Time
	Message string
}

// Subject returns the first line of the commit message.
func (c *Commit) Subject() string {
	s, _, _ := strings.Cut(c.Message, "\n")
	return strings.TrimSpace(s)
}

// PR returns the pull request number named in the commit subject, if any
// (see PRFromSubject).
func (c *Commit) PR() (int, bool) { return PRFromSubject(c.Subject()) }

func newCommit(c *object.Commit) *Commit {
	return &Commit{
		Hash: c.Hash, Parents: c.ParentHashes, Tree: c.TreeHash,
		Author: c.Author.Name, Email: c.Author.Email, When: c.Author.When,
		Message: c.Message,
	}
}

// Commit reads one commit.
func (r *Repo) Commit(h plumbing.Hash) (*Commit, error) {
	t, data, err := r.obj.read(h)
	if err == nil && t != plumbing.CommitObject {
		err = fmt.Errorf("%w: a %s", ErrNotCommit, t)
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(plumbing.CommitObject)
	if _, err := mo.Write(data); err != nil {
		return nil, err
	}
	c := &object.Commit{}
	if err := c.Decode(mo); err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	c.Hash = h
	return newCommit(c), nil
}

// node reads a commit's tree and parents: from the commit-graph when the
// repository has one, else from the commit object.
func (r *Repo) node(h plumbing.Hash, meta bool) (Node, error) {
	if r.graph && !meta {
		n, err := r.idx.Get(h)
		if err != nil {
			return Node{}, fmt.Errorf("commit %s: %w", h, err)
		}
		t, err := n.Tree()
		if err != nil {
			return Node{}, fmt.Errorf("tree of %s: %w", h, err)
		}
		return Node{Hash: h, Tree: t.Hash, Parents: n.ParentHashes()}, nil
	}
	data, c, err := r.readCommit(h)
	if err != nil {
		return Node{}, err
	}
	n := Node{Hash: h, Tree: c.tree, Parents: c.parents}
	if meta {
		m := parseCommitMeta(data)
		n.Meta = &m
	}
	return n, nil
}

// readCommit reads a commit object: its bytes and its tree and parents.
func (r *Repo) readCommit(h plumbing.Hash) ([]byte, rawCommit, error) {
	t, data, err := r.obj.read(h)
	if err == nil && t != plumbing.CommitObject {
		err = fmt.Errorf("%w: a %s", ErrNotCommit, t)
	}
	if err != nil {
		return nil, rawCommit{}, fmt.Errorf("commit %s: %w", h, err)
	}
	c, err := parseCommitHeader(data)
	if err != nil {
		return nil, rawCommit{}, fmt.Errorf("commit %s: %w", h, err)
	}
	return data, c, nil
}

// readTree returns a raw tree object.
func (r *Repo) readTree(h plumbing.Hash) ([]byte, error) {
	t, data, err := r.obj.read(h)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("tree %s: %w", h, errBadTree)
	}
	return data, nil
}

// lookup resolves a slash-separated path below a tree. ok is false when
// the path does not exist (or a component is not a directory).
func (r *Repo) lookup(tree plumbing.Hash, p string) (treeEntry, bool, error) {
	e := treeEntry{mode: modeDir, hash: tree}
	for p != "" {
		if e.mode&modeMask != modeDir {
			return treeEntry{}, false, nil
		}
		name, rest, _ := strings.Cut(p, "/")
		p = rest
		if name == "" {
			continue
		}
		data, err := r.readTree(e.hash)
		if err != nil {
			return treeEntry{}, false, err
		}
		var ok bool
		e, ok, err = findTreeEntry(data, name)
		if err != nil || !ok {
			return treeEntry{}, false, err
		}
	}
	return e, true, nil
}

// FileHash returns the blob hash of path at commit; ok is false when the
// path does not exist there (or is not a file).
func (r *Repo) FileHash(commit plumbing.Hash, p string) (h plumbing.Hash, ok bool, err error) {
	n, err := r.node(commit, false)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return r.TreeFileHash(n.Tree, p)
}

// TreeFileHash is FileHash below a tree.
func (r *Repo) TreeFileHash(tree plumbing.Hash, p string) (h plumbing.Hash, ok bool, err error) {
	e, ok, err := r.lookup(tree, p)
	if err != nil || !ok || e.mode&modeMask != modeFile {
		return plumbing.ZeroHash, false, err
	}
	return e.hash, true, nil
}

// PathHash returns the object hash of path at commit, whatever it is (a
// file's blob, a directory's tree); ok is false when nothing is there.
// "" is the commit's root tree.
func (r *Repo) PathHash(commit plumbing.Hash, p string) (h plumbing.Hash, ok bool, err error) {
	n, err := r.node(commit, false)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if p == "" {
		return n.Tree, true, nil
	}
	e, ok, err := r.lookup(n.Tree, p)
	if err != nil || !ok {
		return plumbing.ZeroHash, false, err
	}
	return e.hash, true, nil
}

// SetReadCache sets how many bytes of decoded objects the reader of
// ReadBlob, ReadFile and tree lookups keeps for delta bases, and returns
// the previous budget (to restore it). The default is small, to keep a
// short command's heap small; a caller about to read many versions of
// large files out of order (the claims of a whole history read both sides
// of hundreds of commits) sets a larger one for the while.
func (r *Repo) SetReadCache(budget int) (previous int) {
	if r.obj.packs == nil {
		return 0
	}
	return r.obj.packs.SetBudget(budget)
}

// ReadBlob returns the content of a blob. The slice may be shared with
// perflog's object cache: callers must not modify it.
func (r *Repo) ReadBlob(h plumbing.Hash) ([]byte, error) {
	t, data, err := r.obj.read(h)
	if err == nil && t != plumbing.BlobObject {
		err = fmt.Errorf("not a blob but a %s", t)
	}
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	return data, nil
}

// ScanBlobs reads blobs in the given order and calls fn with each one's
// content. The content is valid only until fn returns (its buffer is then
// reused), which keeps a pass over hundreds of versions of a large file
// from allocating them all. Pass versions newest first: packs store older
// versions as deltas of newer ones.
//
// ScanBlobs has its own object reader: one goroutine may run it while
// another walks history (Track, FirstParent); two concurrent ScanBlobs
// calls are not allowed.
func (r *Repo) ScanBlobs(ctx context.Context, hashes []plumbing.Hash, fn func(h plumbing.Hash, data []byte) error) error {
	return r.ScanBlobsFrom(ctx, func() (plumbing.Hash, bool) {
		if len(hashes) == 0 {
			return plumbing.ZeroHash, false
		}
		h := hashes[0]
		hashes = hashes[1:]
		return h, true
	}, fn)
}

// ScanBlobsFrom is ScanBlobs over the hashes next returns until it
// returns false (for example from a channel fed by a concurrent walk).
func (r *Repo) ScanBlobsFrom(ctx context.Context, next func() (plumbing.Hash, bool), fn func(h plumbing.Hash, data []byte) error) error {
	for i := 0; ; i++ {
		if i&15 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		h, ok := next()
		if !ok {
			return nil
		}
		t, data, err := r.blobs.readTransient(h)
		if err == nil && t != plumbing.BlobObject {
			err = fmt.Errorf("not a blob but a %s", t)
		}
		if err != nil {
			return fmt.Errorf("blob %s: %w", h, err)
		}
		if err := fn(h, data); err != nil {
			return err
		}
	}
}

// ScanStreams reads the versions of several files interleaved (as a walk
// meets their changes): next returns a blob and the stream (file) it
// belongs to, until it returns false; fn gets the content, which stays
// valid until fn gets the same stream's next version (a caller comparing
// each version with the one before keeps it without a copy). Each stream has its own object reader and delta-base cache, so
// that one file's bases never evict another's: read through one cache, a
// history three times the corpus's inflated 14 times as many objects.
// Pass each stream's versions newest first. Like ScanBlobs, ScanStreams
// may run beside a walk, not beside another ScanBlobs or ScanStreams.
func (r *Repo) ScanStreams(ctx context.Context, next func() (h plumbing.Hash, stream int, ok bool), fn func(h plumbing.Hash, stream int, data []byte) error) error {
	readers := map[int]*objects{}
	room := streamRoom
	for i := 0; ; i++ {
		if i&15 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		h, stream, ok := next()
		if !ok {
			return nil
		}
		o := readers[stream]
		if o == nil {
			o = newObjects(r.packs, r.blobs.fallback, streamBudget)
			if o.packs != nil {
				o.packs.Grow(&room)
			}
			readers[stream] = o
		}
		t, data, err := o.readTransient(h)
		if err == nil && t != plumbing.BlobObject {
			err = fmt.Errorf("not a blob but a %s", t)
		}
		if err != nil {
			return fmt.Errorf("blob %s: %w", h, err)
		}
		if o.packs != nil {
			o.packs.Lend(data)
		}
		if err := fn(h, stream, data); err != nil {
			return err
		}
	}
}

// ReadFile returns the content of path at commit, or an error wrapping
// ErrNotFound, or ErrTooLarge for a file over MaxFileSize.
func (r *Repo) ReadFile(commit plumbing.Hash, p string) ([]byte, error) {
	h, ok, err := r.FileHash(commit, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s at %s: %w", p, commit.String()[:12], ErrNotFound)
	}
	if err := r.checkSize(p, h); err != nil {
		return nil, err
	}
	return r.ReadBlob(h)
}

// MaxFileSize bounds a file perflog reads by its path (ReadFile, a
// Tree's files): more than any it parses (a changelog's 32 MiB), so that
// a hostile commit's file of gigabytes costs a look at its header, not
// its inflated bytes.
const MaxFileSize = 64 << 20

// maxFileSize is MaxFileSize (a variable for the tests).
var maxFileSize int64 = MaxFileSize

// ErrTooLarge marks a file over MaxFileSize.
var ErrTooLarge = errors.New("too large")

// checkSize refuses the blob h, the file p, when it holds more than
// MaxFileSize (a size that cannot be read lets the read say why).
func (r *Repo) checkSize(p string, h plumbing.Hash) error {
	if n, err := r.obj.size(h); err == nil && n > maxFileSize {
		return fmt.Errorf("%s is %.1f MB: %w (perflog reads files of up to %d MiB)", p, float64(n)/1e6, ErrTooLarge, maxFileSize>>20)
	}
	return nil
}

// ListFiles returns the paths of the files directly inside dir at commit,
// sorted. A missing dir gives an empty list.
func (r *Repo) ListFiles(commit plumbing.Hash, dir string) ([]string, error) {
	var out []string
	err := r.walkTree(commit, dir, false, func(p string, _ plumbing.Hash) error {
		out = append(out, p)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// WalkFiles calls fn for every file below dir at commit (recursively),
// with its blob hash, in tree order. A missing dir visits nothing.
func (r *Repo) WalkFiles(commit plumbing.Hash, dir string, fn func(path string, blob plumbing.Hash) error) error {
	return r.walkTree(commit, dir, true, fn)
}

func (r *Repo) walkTree(commit plumbing.Hash, dir string, recursive bool, fn func(string, plumbing.Hash) error) error {
	n, err := r.node(commit, false)
	if err != nil {
		return err
	}
	return r.walkTreeAt(n.Tree, dir, recursive, fn)
}

// walkTreeAt is walkTree below a root tree.
func (r *Repo) walkTreeAt(root plumbing.Hash, dir string, recursive bool, fn func(string, plumbing.Hash) error) error {
	dir = strings.Trim(dir, "/")
	e, ok, err := r.lookup(root, dir)
	if err != nil || !ok || e.mode&modeMask != modeDir {
		return err
	}
	var visit func(tree plumbing.Hash, prefix string) error
	visit = func(tree plumbing.Hash, prefix string) error {
		data, err := r.readTree(tree)
		if err != nil {
			return err
		}
		return eachTreeEntry(data, func(name string, te treeEntry) error {
			p := path.Join(prefix, name)
			switch te.mode & modeMask {
			case modeFile:
				return fn(p, te.hash)
			case modeDir:
				if recursive {
					return visit(te.hash, p)
				}
			}
			return nil
		})
	}
	return visit(e.hash, dir)
}

func short(h plumbing.Hash) string { return h.String()[:12] }

// RemoteURL returns the first URL of a remote ("" when there is none).
func (r *Repo) RemoteURL(name string) string {
	rem, err := r.repo.Remote(name)
	if err != nil || len(rem.Config().URLs) == 0 {
		return ""
	}
	return rem.Config().URLs[0]
}

// RefNames lists the short names of the repository's branches, remote
// branches and tags (as one types them: main, origin/main, v1.2), sorted.
func (r *Repo) RefNames() ([]string, error) {
	iter, err := r.repo.References()
	if err != nil {
		return nil, err
	}
	var out []string
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name()
		if n.IsBranch() || n.IsRemote() || n.IsTag() {
			out = append(out, n.Short())
		}
		return nil
	})
	sort.Strings(out)
	return slices.Compact(out), err
}
