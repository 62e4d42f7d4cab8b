// Package revfs reads the files of one revision of a recipe repository
// (a commit's tree or a work tree on disk) as an fs.FS, and records what
// a reader read (Recorder).
//
// Dependencies: the standard library only.
package revfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
)

// The files of one revision are an fs.FS: a commit's tree (*gitscan.Tree)
// or a work tree on disk (Dir). Paths are slash-separated and relative to
// the repository root; only regular files count as files (a directory, a
// symbolic link that does not lead to a file of the revision, or a path
// that leads outside a work tree reads as no file; one that does reads as
// that file). ReadFile, Exists and ListFiles read them so.

// ReadFile returns a file's content; ok is false when no regular file is
// there.
func ReadFile(fsys fs.FS, p string) (data []byte, ok bool, err error) {
	if fi, err := fs.Stat(fsys, p); err != nil || !fi.Mode().IsRegular() {
		if err == nil || absent(err) {
			return nil, false, nil
		}
		return nil, false, err
	} else if fi.Size() > maxFileSize {
		return nil, false, &fs.PathError{Op: "read", Path: p, Err: tooLarge(fi.Size())}
	}
	data, err = fs.ReadFile(fsys, p)
	if err != nil {
		if absent(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return data, true, nil
}

// Exists reports whether a regular file is at p.
func Exists(fsys fs.FS, p string) bool {
	fi, err := fs.Stat(fsys, p)
	return err == nil && fi.Mode().IsRegular()
}

// ListFiles returns the paths of the regular files directly in dir ("" is
// the root), sorted; none when dir is not a directory.
func ListFiles(fsys fs.FS, dir string) ([]string, error) {
	name := dir
	if name == "" {
		name = "."
	}
	ents, err := fs.ReadDir(fsys, name)
	if err != nil {
		if absent(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, path.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// WalkFiles returns the paths of the regular files below dir (at any
// depth), sorted; none when dir is not a directory.
func WalkFiles(fsys fs.FS, dir string) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && absent(err) {
				return fs.SkipAll // a missing directory holds nothing
			}
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// absent says whether err means nothing readable is there: no such
// path, a path through a file or not a directory, an invalid path, or one
// leading outside a work tree.
func absent(err error) bool {
	var pe *fs.PathError
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) ||
		errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EISDIR) ||
		(errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"))
}

// Dir is a work tree on disk read as an fs.FS, as a checkout of it would
// run: reads are confined to it (os.Root); a symbolic link to a file of
// the work tree reads as that file (as gitscan.Tree reads a commit's: a
// relative target inside the tree, at most 8 links); a link anywhere
// else on a path reads as nothing there, and so does the repository's
// .git (where a CI checkout keeps its token), through a link too.
type Dir string

// Open opens a file or directory of the work tree.
func (d Dir) Open(name string) (fs.File, error) {
	root, name, err := d.resolve(name)
	if err != nil {
		return nil, err
	}
	defer root.Close() // a file opened stays open
	return root.FS().Open(name)
}

// ReadFile reads a file of the work tree, refusing one over MaxFileSize
// before reading it.
func (d Dir) ReadFile(name string) ([]byte, error) {
	root, name, err := d.resolve(name)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if fi, err := fs.Stat(root.FS(), name); err != nil {
		return nil, err
	} else if fi.Mode().IsRegular() && fi.Size() > maxFileSize {
		return nil, &fs.PathError{Op: "read", Path: name, Err: tooLarge(fi.Size())}
	}
	return fs.ReadFile(root.FS(), name)
}

// MaxFileSize bounds a file of a revision perflog reads, on disk as in
// git (gitscan.MaxFileSize): more than any it parses, so that a file of
// gigabytes is refused by its size, not read.
const MaxFileSize = 64 << 20

// maxFileSize is MaxFileSize (a variable for the tests).
var maxFileSize int64 = MaxFileSize

// ErrTooLarge marks a file over MaxFileSize.
var ErrTooLarge = errors.New("too large")

func tooLarge(n int64) error {
	return fmt.Errorf("%.1f MB: %w (perflog reads files of up to %d MiB)", float64(n)/1e6, ErrTooLarge, maxFileSize>>20)
}

// Stat describes a file or directory of the work tree.
func (d Dir) Stat(name string) (fs.FileInfo, error) {
	root, name, err := d.resolve(name)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return fs.Stat(root.FS(), name)
}

// maxLinks bounds the symbolic links followed to one file.
const maxLinks = 8

// resolve opens the work tree for reading name, and names the file a
// link at name leads to (name itself when it is none).
func (d Dir) resolve(name string) (*os.Root, string, error) {
	for hops := 0; ; hops++ {
		root, target, err := d.root(name)
		if err != nil || target == "" {
			return root, name, err
		}
		root.Close()
		next := path.Join(path.Dir(name), target)
		if hops == maxLinks || path.IsAbs(target) || next == ".." || strings.HasPrefix(next, "../") || next == "." {
			return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		name = next
	}
}

// root opens the work tree for reading name: an error when name is not
// a valid path, lies under .git, or passes through a symbolic link
// before its last element; target is what a link at its last element
// names ("" for none).
func (d Dir) root(name string) (root *os.Root, target string, err error) {
	if !fs.ValidPath(name) {
		return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	root, err = os.OpenRoot(string(d))
	if err != nil {
		return nil, "", err
	}
	if name == "." {
		return root, "", nil
	}
	parts := strings.Split(name, "/")
	for i := range parts {
		if parts[i] == ".git" {
			root.Close()
			return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		fi, err := root.Lstat(strings.Join(parts[:i+1], "/"))
		if err != nil {
			root.Close()
			return nil, "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if i < len(parts)-1 {
			root.Close()
			return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		t, err := root.Readlink(name)
		if err != nil || t == "" {
			root.Close()
			return nil, "", &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return root, t, nil
	}
	return root, "", nil
}

// MaxScriptSize bounds the files perflog parses as scripts or recipes.
const MaxScriptSize = 4 << 20
