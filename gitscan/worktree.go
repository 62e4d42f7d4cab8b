package gitscan

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrNoWorktree is returned by WorktreeChanges for a bare repository.
var ErrNoWorktree = errors.New("the repository has no work tree")

// WorktreeChanges lists the files at or below paths (files or
// directories) whose content in the work tree differs from commit:
// modified, deleted and new (untracked) files, sorted. Contents are
// compared by blob hash, so a touched but unchanged file is not a change.
func (r *Repo) WorktreeChanges(commit plumbing.Hash, paths []string) ([]string, error) {
	if r.worktree == "" {
		return nil, ErrNoWorktree
	}
	n, err := r.node(commit, false)
	if err != nil {
		return nil, err
	}
	changed := map[string]bool{}
	same := func(p string, blob plumbing.Hash) (bool, error) {
		f, err := os.Open(filepath.Join(r.worktree, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return false, err
		}
		if fi.IsDir() {
			return false, nil // a directory where the file was
		}
		// a size that differs from the blob's is a change, unread; the
		// same size is hashed as it streams (a file of gigabytes is
		// never held)
		if n, err := r.obj.size(blob); err == nil && n != fi.Size() {
			return false, nil
		}
		h := plumbing.NewHasher(plumbing.BlobObject, fi.Size())
		if n, err := io.Copy(h, f); err != nil {
			return false, err
		} else if n != fi.Size() {
			return false, nil // it changed while read
		}
		return h.Sum() == blob, nil
	}
	for _, p := range paths {
		e, ok, err := r.lookup(n.Tree, p)
		if err != nil {
			return nil, err
		}
		inTree := map[string]bool{}
		switch {
		case ok && e.mode&modeMask == modeFile:
			inTree[p] = true
			if eq, err := same(p, e.hash); err != nil {
				return nil, err
			} else if !eq {
				changed[p] = true
			}
		case ok && e.mode&modeMask == modeDir:
			err := r.WalkFiles(commit, p, func(f string, blob plumbing.Hash) error {
				inTree[f] = true
				eq, err := same(f, blob)
				if err == nil && !eq {
					changed[f] = true
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		// new files on disk
		root := filepath.Join(r.worktree, filepath.FromSlash(p))
		err = filepath.WalkDir(root, func(f string, d fs.DirEntry, err error) error {
			if err != nil {
				if f == root && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, err := filepath.Rel(r.worktree, f)
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !inTree[rel] {
				changed[rel] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(changed))
	for p := range changed {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, nil
}
