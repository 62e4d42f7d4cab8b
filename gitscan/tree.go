package gitscan

import (
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// Tree reads the files of one commit, caching what it read. Its methods
// serialise their reads; like its Repo, it is not for use beside other
// readers of that Repo on other goroutines.
type Tree struct {
	r      *Repo
	Commit plumbing.Hash
	mu     sync.Mutex
	files  map[string][]byte // nil value: absent
	exists map[string]bool
	dirs   map[string][]string
	ids    map[string]string // PathID's answers
	root   plumbing.Hash     // the commit's tree, once resolved
}

// Tree returns a view of the files at commit.
func (r *Repo) Tree(commit plumbing.Hash) *Tree {
	return &Tree{r: r, Commit: commit, files: map[string][]byte{}, exists: map[string]bool{}, dirs: map[string][]string{}}
}

// Read returns a file's content; ok is false when it does not exist.
func (t *Tree) Read(path string) (data []byte, ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, seen := t.files[path]; seen {
		return d, d != nil, nil
	}
	d, err := t.r.ReadFile(t.Commit, path)
	if errors.Is(err, ErrNotFound) {
		t.files[path] = nil
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if d == nil {
		d = []byte{}
	}
	t.files[path] = d
	return d, true, nil
}

// Exists reports whether a file exists (errors count as absent).
func (t *Tree) Exists(path string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, seen := t.files[path]; seen {
		return d != nil
	}
	if ok, seen := t.exists[path]; seen {
		return ok
	}
	if t.root.IsZero() {
		n, err := t.r.node(t.Commit, false)
		if err != nil {
			return false
		}
		t.root = n.Tree
	}
	_, ok, err := t.r.TreeFileHash(t.root, path)
	t.exists[path] = err == nil && ok
	return t.exists[path]
}

// List returns the files directly in dir, sorted.
func (t *Tree) List(dir string) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.dirs[dir]; ok {
		return l, nil
	}
	l, err := t.r.ListFiles(t.Commit, dir)
	if err != nil {
		return nil, err
	}
	t.dirs[dir] = l
	return l, nil
}

// Files lists every file below dir (recursively), in tree order.
func (t *Tree) Files(dir string) ([]string, error) {
	var out []string
	err := t.Walk(dir, func(p string, _ plumbing.Hash) error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// Walk lists every file below dir (recursively) with its blob hash.
func (t *Tree) Walk(dir string, fn func(path string, blob plumbing.Hash) error) error {
	return t.r.WalkFiles(t.Commit, dir, fn)
}

// PathID says what path holds at the commit without reading it: a
// file's object id, or (dir) the names of a directory's files, one per
// line; "" for nothing there.
func (t *Tree) PathID(path string, dir bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	key := path
	if dir {
		key += "/"
	}
	if id, ok := t.ids[key]; ok {
		return id
	}
	id := t.pathID(path, dir)
	if t.ids == nil {
		t.ids = map[string]string{}
	}
	t.ids[key] = id
	return id
}

func (t *Tree) pathID(path string, dir bool) string {
	if t.root.IsZero() {
		n, err := t.r.node(t.Commit, false)
		if err != nil {
			return ""
		}
		t.root = n.Tree
	}
	if dir {
		var names []string
		err := t.r.walkTreeAt(t.root, path, false, func(p string, _ plumbing.Hash) error {
			names = append(names, p)
			return nil
		})
		if err != nil {
			return ""
		}
		sort.Strings(names)
		return strings.Join(names, "\n")
	}
	e, ok, err := t.r.lookup(t.root, path)
	if err != nil || !ok {
		return ""
	}
	return e.hash.String()
}
