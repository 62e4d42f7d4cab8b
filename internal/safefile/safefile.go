// Package safefile replaces files inside a directory tree atomically and
// without leaving it: symbolic links are followed only to targets inside
// the tree, a file the user cannot write is refused, mode and owner are
// kept, and a temporary file a killed run left behind is removed by the
// next one.
//
// Dependencies: the standard library only.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrOutside marks a path (or a symbolic link) that leads out of the tree.
var ErrOutside = errors.New("outside the repository")

// ErrReadOnly marks a file the user may not write.
var ErrReadOnly = errors.New("not writable")

// tmpMarker is in the name of every temporary file of this package:
// .NAME.perflog-PID.tmp, in the directory of NAME.
const tmpMarker = ".perflog-"

// Resolve returns rel (slash-separated, relative to dir) with every
// symbolic link on its way resolved, as a path relative to dir; a path
// or link that leaves dir is ErrOutside. A file that does not exist yet
// resolves to its own name in its resolved directory.
func Resolve(dir, rel string) (string, error) {
	absDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	name := filepath.Join(absDir, filepath.FromSlash(rel))
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf("%s: %w", rel, ErrOutside)
	}
	real, err := filepath.EvalSymlinks(name)
	if errors.Is(err, fs.ErrNotExist) {
		// no file yet: its directory must resolve inside, and a dangling
		// link is refused rather than created through
		if _, lerr := os.Lstat(name); lerr == nil {
			return "", fmt.Errorf("%s is a symbolic link to a file that does not exist", rel)
		}
		parent, perr := filepath.EvalSymlinks(filepath.Dir(name))
		if perr != nil {
			return "", perr
		}
		real = filepath.Join(parent, filepath.Base(name))
	} else if err != nil {
		return "", err
	}
	r, err := filepath.Rel(absDir, real)
	if err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("%s resolves to %s: %w", rel, real, ErrOutside)
	}
	return r, nil
}

// Write replaces the file rel inside dir with data, atomically: a
// temporary file beside the target, synced, given the old file's mode and
// owner, renamed over it. A symbolic link is written through to its
// target when that is inside dir (ErrOutside otherwise). A file the user
// cannot open for writing is ErrReadOnly, as is one that is not a regular
// file. A reader sees the old or the new content, never a mix, and a
// failure leaves the old file as it was. It returns the path written,
// relative to dir.
func Write(dir, rel string, data []byte) (string, error) {
	target, err := Resolve(dir, rel)
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	mode := fs.FileMode(0o644)
	var owner *fileOwner
	fi, err := root.Stat(target)
	switch {
	case err == nil:
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file: %w", rel, ErrReadOnly)
		}
		mode = fi.Mode().Perm()
		owner = ownerOf(fi)
		// a file no one may write (0444) was made read-only on purpose:
		// root, whom the kernel lets write it, is refused too
		if mode&0o222 == 0 {
			return "", fmt.Errorf("%s: %w (its mode is %v); perflog does not override that", rel, ErrReadOnly, mode)
		}
		// otherwise the permission check the kernel makes for the user
		f, err := root.OpenFile(target, os.O_WRONLY, 0)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return "", fmt.Errorf("%s: %w (its mode is %v); perflog does not override that", rel, ErrReadOnly, mode)
			}
			return "", err
		}
		f.Close()
	case errors.Is(err, fs.ErrNotExist):
	default:
		return "", err
	}
	removeStale(root, target)
	tmp := filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+tmpMarker+strconv.Itoa(os.Getpid())+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Chmod(mode); err != nil {
		return "", err
	}
	if owner != nil && !owner.mine() {
		if err := f.Chown(owner.uid, owner.gid); err != nil {
			// another user's file we may write: rewrite it in place, which
			// keeps its owner (not atomic, but never a file of the wrong owner)
			f.Close()
			root.Remove(tmp)
			ok = true
			return target, writeInPlace(root, target, data)
		}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	if err := root.Rename(tmp, target); err != nil {
		return "", err
	}
	ok = true
	if d, err := root.Open(filepath.Dir(target)); err == nil {
		d.Sync() // the rename itself, durable where the system allows
		d.Close()
	}
	return target, nil
}

func writeInPlace(root *os.Root, name string, data []byte) error {
	f, err := root.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeStale removes the temporary files of target that runs no longer
// alive left behind (a run killed between creating and renaming one).
func removeStale(root *os.Root, target string) {
	d, err := root.Open(filepath.Dir(target))
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	prefix := "." + filepath.Base(target) + tmpMarker
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(rest, ".tmp"))
		if err != nil || !strings.HasSuffix(rest, ".tmp") || pid == os.Getpid() || alive(pid) {
			continue
		}
		root.Remove(filepath.Join(filepath.Dir(target), n))
	}
}
