package gitscan

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

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
	ids    map[string]string // PathID's answers
	root   plumbing.Hash     // the commit's tree, once resolved
}

// Tree returns a view of the files at commit.
func (r *Repo) Tree(commit plumbing.Hash) *Tree {
	return &Tree{r: r, Commit: commit, files: map[string][]byte{}}
}

// read returns a file's content, shared with the cache; ok is false when
// no file is there.
func (t *Tree) read(path string) (data []byte, ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d, seen := t.files[path]; seen {
		return d, d != nil, nil
	}
	e, ok, err := t.lookup(path)
	if err != nil {
		return nil, false, err
	}
	if ok && e.mode&modeMask == modeSymlink {
		_, e, ok, err = t.follow(path, e)
		if err != nil {
			return nil, false, err
		}
	}
	if !ok || e.mode&modeMask != modeFile {
		t.files[path] = nil
		return nil, false, nil
	}
	if err := t.r.checkSize(path, e.hash); err != nil {
		return nil, false, err
	}
	d, err := t.r.ReadBlob(e.hash)
	if err != nil {
		return nil, false, err
	}
	if d == nil {
		d = []byte{}
	}
	t.files[path] = d
	return d, true, nil
}

// entry returns what is at path: a file, a directory or something else
// (a symbolic link, a submodule); ok is false when nothing is there.
func (t *Tree) entry(path string) (e treeEntry, ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lookup(path)
}

// maxLinks bounds the symbolic links followed to one file.
const maxLinks = 8

// follow resolves a symbolic link at p to the entry it names in the
// tree (t.mu held): a relative target, read from the link's directory,
// at most maxLinks links deep. ok is false for a link that leaves the
// tree, names nothing, or loops: a checkout would not reach a file of
// the commit there.
func (t *Tree) follow(p string, e treeEntry) (string, treeEntry, bool, error) {
	for hops := 0; e.mode&modeMask == modeSymlink; hops++ {
		if hops == maxLinks {
			return "", e, false, nil
		}
		target, err := t.r.ReadBlob(e.hash)
		if err != nil {
			return "", e, false, err
		}
		tg := string(target)
		if tg == "" || path.IsAbs(tg) {
			return "", e, false, nil
		}
		next := path.Join(path.Dir(p), tg)
		if next == ".." || strings.HasPrefix(next, "../") || next == "." {
			return "", e, false, nil
		}
		ne, ok, err := t.lookup(next)
		if err != nil || !ok {
			return "", e, false, err
		}
		p, e = next, ne
	}
	return p, e, true, nil
}

// lookup is entry for a caller holding t.mu.
func (t *Tree) lookup(path string) (treeEntry, bool, error) {
	root, err := t.rootTree()
	if err != nil {
		return treeEntry{}, false, err
	}
	return t.r.lookup(root, path)
}

// rootTree is the commit's tree, resolved once (t.mu held).
func (t *Tree) rootTree() (plumbing.Hash, error) {
	if t.root.IsZero() {
		n, err := t.r.node(t.Commit, false)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.root = n.Tree
	}
	return t.root, nil
}

// A Tree is an fs.FS of the commit's files: regular and executable files
// read as regular files, directories as directories, a symbolic link to
// a file of the commit (relative, inside the tree) as that file, and
// other links and submodules as irregular entries that cannot be opened.
var _ interface {
	fs.ReadFileFS
	fs.ReadDirFS
	fs.StatFS
} = (*Tree)(nil)

// Open opens a file or directory of the commit.
func (t *Tree) Open(name string) (fs.File, error) {
	fi, err := t.Stat(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unwrapPath(err)}
	}
	if fi.IsDir() {
		ents, err := t.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &treeDir{info: fi.(treeInfo), ents: ents}, nil
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	data, ok, err := t.read(name)
	if err != nil || !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: orNotExist(err)}
	}
	return &treeFile{info: fi.(treeInfo), r: bytes.NewReader(data)}, nil
}

// ReadFile returns a copy of a file's content (fs.ReadFileFS: the caller
// may modify it).
func (t *Tree) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	data, ok, err := t.read(name)
	if err != nil || !ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: orNotExist(err)}
	}
	return bytes.Clone(data), nil
}

// Stat describes a file or directory of the commit.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	e, ok, err := t.entry(treePath(name))
	if err == nil && ok && e.mode&modeMask == modeSymlink {
		t.mu.Lock()
		_, e, ok, err = t.follow(treePath(name), e) // what the link names, as os.Stat
		t.mu.Unlock()
	}
	if err != nil || !ok {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: orNotExist(err)}
	}
	info := treeInfo{name: path.Base(name), mode: e.mode}
	if e.mode&modeMask == modeFile {
		// a file's size is its object's, from its header: a file asked
		// about may be too large to read
		t.mu.Lock()
		info.size, err = t.r.obj.size(e.hash)
		t.mu.Unlock()
		if err != nil {
			return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
	}
	return info, nil
}

// ReadDir lists a directory of the commit, sorted by name.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	dir := treePath(name)
	e, ok, err := t.entry(dir)
	switch {
	case err != nil || !ok:
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: orNotExist(err)}
	case e.mode&modeMask != modeDir:
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	t.mu.Lock()
	data, err := t.r.readTree(e.hash)
	t.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var out []fs.DirEntry
	err = eachTreeEntry(data, func(n string, te treeEntry) error {
		out = append(out, treeDirEntry{t: t, path: path.Join(dir, n), info: treeInfo{name: n, mode: te.mode}})
		return nil
	})
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, err
}

// treePath is the tree's path of a valid fs path ("" for the root).
func treePath(name string) string {
	if name == "." {
		return ""
	}
	return name
}

func orNotExist(err error) error {
	if err != nil {
		return err
	}
	return fs.ErrNotExist
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// treeDirEntry is an entry of a listed directory; its Info is Stat's.
type treeDirEntry struct {
	t    *Tree
	path string
	info treeInfo
}

func (e treeDirEntry) Name() string      { return e.info.name }
func (e treeDirEntry) IsDir() bool       { return e.info.IsDir() }
func (e treeDirEntry) Type() fs.FileMode { return e.info.Mode().Type() }
func (e treeDirEntry) Info() (fs.FileInfo, error) {
	if e.info.Mode()&fs.ModeSymlink != 0 {
		return e.info, nil // the link itself, as fs.DirEntry's Info (lstat)
	}
	return e.t.Stat(e.path)
}

// treeInfo describes an entry of a tree.
type treeInfo struct {
	name string
	mode uint32
	size int64
}

func (i treeInfo) Name() string       { return i.name }
func (i treeInfo) Size() int64        { return i.size }
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i treeInfo) Sys() any           { return nil }
func (i treeInfo) Mode() fs.FileMode {
	switch i.mode & modeMask {
	case modeDir:
		return fs.ModeDir | 0o755
	case modeFile:
		return fs.FileMode(i.mode & 0o777)
	case modeSymlink:
		return fs.ModeSymlink | 0o777
	}
	return fs.ModeIrregular
}

type treeFile struct {
	info treeInfo
	r    *bytes.Reader
}

func (f *treeFile) Stat() (fs.FileInfo, error) {
	i := f.info
	i.size = f.r.Size()
	return i, nil
}
func (f *treeFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *treeFile) Close() error               { return nil }

type treeDir struct {
	info treeInfo
	ents []fs.DirEntry
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *treeDir) Close() error { return nil }

// ReadDir returns the next n entries (all that are left when n <= 0).
func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.ents
		d.ents = nil
		return out, nil
	}
	if len(d.ents) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.ents))
	out := d.ents[:n]
	d.ents = d.ents[n:]
	return out, nil
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
// file's object id (a link's, with that of the file it names), or (dir)
// the names of a directory's files, one per line; "" for nothing there.
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
	root, err := t.rootTree()
	if err != nil {
		return ""
	}
	if dir {
		var names []string
		err := t.r.walkTreeAt(root, path, false, func(p string, _ plumbing.Hash) error {
			names = append(names, p)
			return nil
		})
		if err != nil {
			return ""
		}
		sort.Strings(names)
		return strings.Join(names, "\n")
	}
	e, ok, err := t.r.lookup(root, path)
	if err != nil || !ok {
		return ""
	}
	if e.mode&modeMask == modeSymlink {
		// what the link reads as: the file it names (a change to that
		// file changes what the path holds)
		if _, fe, ok, err := t.follow(path, e); err == nil && ok {
			return e.hash.String() + ">" + fe.hash.String()
		}
	}
	return e.hash.String()
}
