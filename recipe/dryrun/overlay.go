package dryrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/perflog/perflog/recipe/revfs"
	"mvdan.cc/sh/v3/interp"
)

// abs makes a path absolute against dir.
func (s *dryRun) abs(dir, p string) string {
	if !path.IsAbs(p) {
		p = path.Join(dir, p)
	}
	return path.Clean(p)
}

// rel names an absolute sandbox path as the user knows it: relative to
// the repository for the tree.
func (s *dryRun) rel(p string) string {
	if r, ok := strings.CutPrefix(p, Workspace+"/"); ok {
		return r
	}
	return p
}

// read returns the content of a file: the overlay's, else the tree's
// under Workspace.
func (s *dryRun) read(p string) ([]byte, bool) {
	s.mu.Lock()
	if d, ok := s.overlay[p]; ok {
		s.mu.Unlock()
		return d, true
	}
	gone := s.gone[p]
	s.mu.Unlock()
	if gone {
		return nil, false
	}
	rel, ok := strings.CutPrefix(p, Workspace+"/")
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	t, seen := s.tree[rel]
	s.mu.Unlock()
	if !seen {
		// the tree does not change during a run: each file is read once
		data, ok, err := revfs.ReadFile(s.files, rel)
		t = treeFile{data, ok && err == nil}
		s.mu.Lock()
		s.tree[rel] = t
		if t.ok && strings.HasSuffix(rel, ".sh") {
			s.sources[rel] = data
		}
		s.mu.Unlock()
		if err != nil {
			// a file that is there but was not read (too large, a
			// damaged object): what the run does with it is not known,
			// which is not its absence
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			s.refuse(fmt.Sprintf("%s was not read: %v", rel, err))
		}
	}
	return t.data, t.ok
}

// treeFile is a file of the revision's tree as a run read it (ok: a
// regular file is there).
type treeFile struct {
	data []byte
	ok   bool
}

func (s *dryRun) write(p string, data []byte, appendMode bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if appendMode {
		s.overlay[p] = append(s.overlay[p], data...)
		return
	}
	s.overlay[p] = append([]byte(nil), data...)
	delete(s.gone, p)
}

func (s *dryRun) isDir(p string) bool {
	if p == "/" || p == Workspace || p == "/tmp" || p == "/dev" {
		return true
	}
	rel, ok := strings.CutPrefix(p, Workspace+"/")
	if !ok {
		return false
	}
	s.mu.Lock()
	dir, seen := s.dirs[rel]
	s.mu.Unlock()
	if !seen {
		l, err := revfs.ListFiles(s.files, rel)
		dir = err == nil && len(l) > 0
		s.mu.Lock()
		s.dirs[rel] = dir
		s.mu.Unlock()
	}
	return dir
}

// open serves redirections and source: reads from the overlay and the
// tree, writes into the overlay.
func (s *dryRun) open(ctx context.Context, p string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	how := readData
	if rest, ok := strings.CutPrefix(p, sourceMark); ok {
		p, how = rest, readCode // source, resolved by call
	}
	p = s.abs(hc.Dir, p)
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return nopFile{}, nil
	}
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		if flag&(os.O_APPEND) == 0 && flag&os.O_TRUNC != 0 || flag&os.O_CREATE != 0 {
			s.mu.Lock()
			if _, ok := s.overlay[p]; !ok || flag&os.O_TRUNC != 0 {
				s.overlay[p] = nil
			}
			delete(s.gone, p)
			s.mu.Unlock()
		}
		return &overlayFile{s: s, path: p}, nil
	}
	s.mark(p, how)
	data, ok := s.read(p)
	if ok && strings.HasSuffix(p, ".sh") {
		data = s.asSourced(p, data)
	}
	if !ok {
		if !strings.HasPrefix(p, Workspace+"/") && !strings.HasPrefix(p, "/tmp/") {
			s.unknown("", "reads %s, outside the revision's tree", p)
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return nopFile{r: bytes.NewReader(data)}, nil
}

type nopFile struct{ r *bytes.Reader }

func (f nopFile) Read(p []byte) (int, error) {
	if f.r == nil {
		return 0, io.EOF
	}
	return f.r.Read(p)
}
func (nopFile) Write(p []byte) (int, error) { return len(p), nil }
func (nopFile) Close() error                { return nil }

type overlayFile struct {
	s    *dryRun
	path string
}

func (f *overlayFile) Read([]byte) (int, error) { return 0, io.EOF }
func (f *overlayFile) Write(p []byte) (int, error) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if len(f.s.overlay[f.path]) < 1<<20 {
		f.s.overlay[f.path] = append(f.s.overlay[f.path], p...)
	}
	return len(p), nil
}
func (f *overlayFile) Close() error { return nil }

type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (fi fileInfo) Name() string { return fi.name }
func (fi fileInfo) Size() int64  { return fi.size }
func (fi fileInfo) Mode() fs.FileMode {
	if fi.dir {
		return fs.ModeDir | 0o755
	}
	return 0o755
}
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return fi.dir }
func (fi fileInfo) Sys() any           { return nil }

func (s *dryRun) stat(ctx context.Context, p string, _ bool) (fs.FileInfo, error) {
	hc := interp.HandlerCtx(ctx)
	p = s.abs(hc.Dir, p)
	if s.isDir(p) {
		return fileInfo{name: path.Base(p), dir: true}, nil
	}
	if data, ok := s.read(p); ok {
		return fileInfo{name: path.Base(p), size: int64(len(data))}, nil
	}
	if p == "/dev/null" {
		return fileInfo{name: "null"}, nil
	}
	if !strings.HasPrefix(p, Workspace+"/") {
		// what installers and caches outside the tree provide is taken
		// as there: the run goes on as on a prepared runner
		s.mu.Lock()
		gone := s.gone[p]
		s.mu.Unlock()
		if !gone {
			s.unknown("", "tests %s, outside the revision's tree: taken as present", p)
			// a name with an extension is taken for a file, else for a
			// directory (a model checkpoint, an install prefix)
			return fileInfo{name: path.Base(p), dir: !fileExt.MatchString(path.Ext(p))}, nil
		}
	}
	return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
}

func (s *dryRun) access(ctx context.Context, p string, _ interp.AccessMode) error {
	_, err := s.stat(ctx, p, true)
	return err
}

func (s *dryRun) readDir(ctx context.Context, p string) ([]fs.DirEntry, error) {
	hc := interp.HandlerCtx(ctx)
	p = s.abs(hc.Dir, p)
	rel, ok := strings.CutPrefix(p, Workspace+"/")
	if p == Workspace {
		rel, ok = "", true
	}
	var l []string
	if ok {
		l, _ = revfs.ListFiles(s.files, rel)
	}
	s.mu.Lock()
	for q := range s.overlay {
		if path.Dir(q) == p {
			l = append(l, s.rel(q))
		}
	}
	s.mu.Unlock()
	out := make([]fs.DirEntry, 0, len(l))
	for _, f := range l {
		out = append(out, fs.FileInfoToDirEntry(fileInfo{name: path.Base(f)}))
	}
	return out, nil
}
