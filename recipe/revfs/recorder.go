package revfs

import (
	"io/fs"
	"sort"
	"sync"
)

// Recorder is an fs.FS that notes what is read through it: each path
// read or probed, and each directory listed. A dry run is a function of
// the revision's files through what it read (and of the point's
// environment): where none of them changed, it launches the same.
type Recorder struct {
	fsys        fs.FS
	mu          sync.Mutex
	paths, dirs map[string]bool
}

// NewRecorder wraps fsys.
func NewRecorder(fsys fs.FS) *Recorder {
	return &Recorder{fsys: fsys, paths: map[string]bool{}, dirs: map[string]bool{}}
}

func (r *Recorder) note(m map[string]bool, p string) {
	r.mu.Lock()
	m[p] = true
	r.mu.Unlock()
}

// Open notes name as read (a directory opened is listed).
func (r *Recorder) Open(name string) (fs.File, error) {
	f, err := r.fsys.Open(name)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			r.note(r.dirs, name)
			return f, nil
		}
	}
	r.note(r.paths, name)
	return f, err
}

// ReadFile notes name as read.
func (r *Recorder) ReadFile(name string) ([]byte, error) {
	r.note(r.paths, name)
	return fs.ReadFile(r.fsys, name)
}

// Stat notes name as probed.
func (r *Recorder) Stat(name string) (fs.FileInfo, error) {
	r.note(r.paths, name)
	return fs.Stat(r.fsys, name)
}

// ReadDir notes name as listed.
func (r *Recorder) ReadDir(name string) ([]fs.DirEntry, error) {
	r.note(r.dirs, dirName(name))
	return fs.ReadDir(r.fsys, name)
}

// dirName is the directory name ListFiles was given for an fs path ("."
// is the root, "").
func dirName(name string) string {
	if name == "." {
		return ""
	}
	return name
}

// Paths are the paths read or probed, and Dirs the directories listed
// (what matters of a directory is its names), sorted.
func (r *Recorder) Paths() []string { return r.sorted(r.paths) }

func (r *Recorder) Dirs() []string { return r.sorted(r.dirs) }

func (r *Recorder) sorted(m map[string]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Unwrap is the fs.FS the recorder reads through (what is read from it
// is not recorded).
func (r *Recorder) Unwrap() fs.FS { return r.fsys }

// Note records a path as read (or a directory as listed) without reading
// it: what a memoised dry run read.
func (r *Recorder) Note(p string, dir bool) {
	if dir {
		r.note(r.dirs, p)
	} else {
		r.note(r.paths, p)
	}
}

// PathID is the inner fs.FS's PathID ("" when it has none).
func (r *Recorder) PathID(p string, dir bool) string {
	if h, ok := r.fsys.(Hasher); ok {
		return h.PathID(p, dir)
	}
	return ""
}

// Hasher is an fs.FS that says what a path holds without reading it: a
// file's object id, a directory's names ("" for nothing there). A git
// tree is one.
type Hasher interface {
	PathID(path string, dir bool) string
}
