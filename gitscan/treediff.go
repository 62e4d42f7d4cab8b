package gitscan

import (
	"path"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// FileChange is one file that differs between two commits. Old or New is
// the zero hash when the file is absent on that side.
type FileChange struct {
	Path     string
	Old, New plumbing.Hash
}

// ChangedFiles lists the files that differ between commits a and b (a
// may be the zero hash: every file of b is added), sorted by path. Equal
// subtrees are skipped by hash, so a one-commit change costs a few tree
// reads however large the repository is. Renames are a deletion and an
// addition.
func (r *Repo) ChangedFiles(a, b plumbing.Hash) ([]FileChange, error) {
	var ta, tb plumbing.Hash
	if !a.IsZero() {
		n, err := r.node(a, false)
		if err != nil {
			return nil, err
		}
		ta = n.Tree
	}
	n, err := r.node(b, false)
	if err != nil {
		return nil, err
	}
	tb = n.Tree
	var out []FileChange
	if err := r.diffTrees(ta, tb, "", &out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (r *Repo) entries(tree plumbing.Hash) (map[string]treeEntry, error) {
	out := map[string]treeEntry{}
	if tree.IsZero() {
		return out, nil
	}
	data, err := r.readTree(tree)
	if err != nil {
		return nil, err
	}
	err = eachTreeEntry(data, func(name string, e treeEntry) error {
		out[name] = e
		return nil
	})
	return out, err
}

func (r *Repo) diffTrees(a, b plumbing.Hash, prefix string, out *[]FileChange) error {
	if a == b {
		return nil
	}
	ea, err := r.entries(a)
	if err != nil {
		return err
	}
	eb, err := r.entries(b)
	if err != nil {
		return err
	}
	side := func(e treeEntry, ok bool, mode uint32) plumbing.Hash {
		if ok && e.mode&modeMask == mode {
			return e.hash
		}
		return plumbing.ZeroHash
	}
	seen := map[string]bool{}
	visit := func(name string) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		x, okx := ea[name]
		y, oky := eb[name]
		if okx && oky && x == y {
			return nil
		}
		p := path.Join(prefix, name)
		if da, db := side(x, okx, modeDir), side(y, oky, modeDir); !da.IsZero() || !db.IsZero() {
			if err := r.diffTrees(da, db, p, out); err != nil {
				return err
			}
		}
		if fa, fb := side(x, okx, modeFile), side(y, oky, modeFile); fa != fb {
			*out = append(*out, FileChange{Path: p, Old: fa, New: fb})
		}
		return nil
	}
	for name := range ea {
		if err := visit(name); err != nil {
			return err
		}
	}
	for name := range eb {
		if err := visit(name); err != nil {
			return err
		}
	}
	return nil
}
