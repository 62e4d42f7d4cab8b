package gitscan

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// ErrNotConflicted is returned by Stages for a path the index holds no
// conflict for.
var ErrNotConflicted = errors.New("not in conflict")

// Stages reads the conflict stages of path from the repository's index
// (git's staging area) during a merge: 1 the common ancestor, 2 ours, 3
// theirs. A stage the index does not hold (a file added on both sides
// has no ancestor) is nil.
func (r *Repo) Stages(path string) (stages [4][]byte, err error) {
	f, err := os.Open(filepath.Join(r.gitDir, "index"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return stages, fmt.Errorf("%s: %w (the repository has no index)", path, ErrNotConflicted)
		}
		return stages, err
	}
	defer f.Close()
	var idx index.Index
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(&idx); err != nil {
		return stages, fmt.Errorf("reading the git index: %w", err)
	}
	found := false
	for _, e := range idx.Entries {
		// stage 0 is a merged entry (go-git names stage 1 "Merged"; git
		// calls it the ancestor)
		if e.Name != path || e.Stage < index.AncestorMode || e.Stage > index.TheirMode {
			continue
		}
		data, err := r.ReadBlob(e.Hash)
		if err != nil {
			return stages, fmt.Errorf("%s stage %d: %w", path, e.Stage, err)
		}
		stages[e.Stage] = data
		found = true
	}
	if !found {
		return stages, fmt.Errorf("%s: %w", path, ErrNotConflicted)
	}
	return stages, nil
}
