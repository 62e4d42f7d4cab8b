// Package gitscan is perflog's history engine: it opens a repository with
// go-git, resolves revisions the way a user types them, reads files at a
// commit, finds merge bases, walks first-parent history and maps commits to
// pull requests.
//
// gitscan knows nothing about YAML, changelogs or recipes; it hands out bytes
// and commit metadata. Packages above it (config, changelog, provenance) give
// those bytes meaning. It never runs the git binary.
//
// Dependencies: go-git only (no other perflog package).
package gitscan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
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
)

// Sentinel errors; wrapped with context, test them with errors.Is.
var (
	ErrNotRepository = errors.New("not a git repository")
	ErrUnknownRev    = errors.New("unknown revision")
	ErrNotFound      = errors.New("file not found at revision")
	ErrNoMergeBase   = errors.New("no merge base")
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
	if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
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
	return &Repo{repo: r, idx: commitgraph.NewObjectCommitNodeIndex(r.Storer)}
}

// Close releases file descriptors held by the repository.
func (r *Repo) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Worktree returns the work tree root, or "" for a bare repository.
func (r *Repo) Worktree() string { return r.worktree }

// GitDir returns the repository's git directory ("" when in memory).
func (r *Repo) GitDir() string { return r.gitDir }

// HasCommitGraph reports whether commits are read through a commit-graph.
func (r *Repo) HasCommitGraph() bool { return r.graph }

// Shallow reports whether the repository is a shallow clone.
func (r *Repo) Shallow() bool {
	s, err := r.repo.Storer.Shallow()
	return err == nil && len(s) > 0
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
	h, err := r.repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil || h == nil || h.IsZero() {
		return plumbing.ZeroHash, fmt.Errorf("%q: %w", rev, ErrUnknownRev)
	}
	return *h, nil
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
	c, err := r.repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return newCommit(c), nil
}

func (r *Repo) tree(commit plumbing.Hash) (*object.Tree, error) {
	n, err := r.idx.Get(commit)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", commit, err)
	}
	return n.Tree()
}

// FileHash returns the blob hash of path at commit; ok is false when the
// path does not exist there (or is not a file).
func (r *Repo) FileHash(commit plumbing.Hash, p string) (h plumbing.Hash, ok bool, err error) {
	t, err := r.tree(commit)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	e, err := t.FindEntry(p)
	if err != nil {
		if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
			return plumbing.ZeroHash, false, nil
		}
		return plumbing.ZeroHash, false, err
	}
	if !e.Mode.IsFile() {
		return plumbing.ZeroHash, false, nil
	}
	return e.Hash, true, nil
}

// ReadBlob returns the content of a blob.
func (r *Repo) ReadBlob(h plumbing.Hash) ([]byte, error) {
	obj, err := r.repo.Storer.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	buf := make([]byte, 0, obj.Size())
	w := sliceWriter{&buf}
	if _, err := io.Copy(w, rd); err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	return buf, nil
}

type sliceWriter struct{ b *[]byte }

func (w sliceWriter) Write(p []byte) (int, error) { *w.b = append(*w.b, p...); return len(p), nil }

// ReadFile returns the content of path at commit, or an error wrapping
// ErrNotFound.
func (r *Repo) ReadFile(commit plumbing.Hash, p string) ([]byte, error) {
	h, ok, err := r.FileHash(commit, p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s at %s: %w", p, commit.String()[:12], ErrNotFound)
	}
	return r.ReadBlob(h)
}

// ListFiles returns the paths of the files directly inside dir at commit,
// sorted. A missing dir gives an empty list.
func (r *Repo) ListFiles(commit plumbing.Hash, dir string) ([]string, error) {
	t, err := r.tree(commit)
	if err != nil {
		return nil, err
	}
	dir = strings.Trim(dir, "/")
	if dir != "" {
		t, err = t.Tree(dir)
		if err != nil {
			if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
				return nil, nil
			}
			return nil, err
		}
	}
	var out []string
	for _, e := range t.Entries {
		if e.Mode.IsFile() {
			out = append(out, path.Join(dir, e.Name))
		}
	}
	sort.Strings(out)
	return out, nil
}

// MergeBase returns the best common ancestor of a and b (the first of them
// when several exist, as `git merge-base` prints).
func (r *Repo) MergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	if a == b {
		return a, nil
	}
	ca, err := r.repo.CommitObject(a)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", a, err)
	}
	cb, err := r.repo.CommitObject(b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", b, err)
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge-base %s %s: %w", short(a), short(b), err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("%s and %s: %w", short(a), short(b), ErrNoMergeBase)
	}
	return bases[0].Hash, nil
}

func short(h plumbing.Hash) string { return h.String()[:12] }
