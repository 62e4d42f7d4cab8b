package changelog

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/revfs"
)

// readOptional reads a file at a commit; a missing file is (nil, nil) and
// an empty one is a non-nil empty slice.
func readOptional(r *gitscan.Repo, commit plumbing.Hash, p string) ([]byte, error) {
	b, err := r.ReadFile(commit, p)
	if errors.Is(err, gitscan.ErrNotFound) {
		return nil, nil
	}
	if b == nil && err == nil {
		b = []byte{}
	}
	return b, err
}

// LoadMaster loads the master configs at a commit (see MasterFiles).
func LoadMaster(r *gitscan.Repo, s *config.Settings, commit plumbing.Hash) (*config.Master, error) {
	files, err := MasterFiles(r, s, commit)
	if err != nil {
		return nil, err
	}
	return config.LoadMaster(files)
}

// MasterFiles reads the master config files at a commit, trying each
// layout of the settings (configs/ first, then .github/configs/ where the
// InferenceX configs lived before #1992). A layout is used when any of its
// files exists; a missing file has nil Data (config.LoadMaster reports it).
func MasterFiles(r *gitscan.Repo, s *config.Settings, commit plumbing.Hash) ([]config.File, error) {
	files, err := recipe.MasterFiles(r.Tree(commit), s)
	if err != nil {
		return nil, err
	}
	if err := checkMasterSizes(files, ShortHash(commit)); err != nil {
		return nil, err
	}
	return files, nil
}

// LoadInput reads what Verify needs from a repository: the changelog at
// base and head and the master configs at head (at base lazily).
func LoadInput(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string) (*Input, error) {
	return loadInput(r, s, base, baseName, headName, r.Tree(head), func() (*recipe.Change, error) {
		return ChangeAt(r, s, base, head, baseName, headName)
	})
}

// loadInput is LoadInput with head read from headFiles and the change
// from change.
func loadInput(r *gitscan.Repo, s *config.Settings, base plumbing.Hash, baseName, headName string, headFiles fs.FS, change func() (*recipe.Change, error)) (*Input, error) {
	path := s.ChangelogPath()
	in := &Input{Path: path, BaseRev: baseName, HeadRev: headName, Repository: s.Repository(), Settings: s}
	var err error
	if in.Base, err = readOptional(r, base, path); err != nil {
		return nil, err
	}
	data, ok, err := revfs.ReadFile(headFiles, path)
	if err != nil {
		return nil, err
	}
	if ok {
		in.Head = data
	}
	for _, side := range []struct {
		name string
		data []byte
	}{{baseName, in.Base}, {headName, in.Head}} {
		if err := CheckSize(path+" at "+side.name, len(side.data)); err != nil {
			return nil, err
		}
	}
	// configs that exist but do not load are a finding; a repository
	// error surfaces the same way (config/invalid), never as a crash
	// read the head configs now (go-git is not safe for concurrent reads);
	// parse them on demand, possibly on another goroutine
	files, err := recipe.MasterFiles(headFiles, s)
	if err != nil {
		return nil, err
	}
	if err := checkMasterSizes(files, headName); err != nil {
		return nil, err
	}
	in.HeadMaster = sync.OnceValues(func() (*config.Master, error) { return config.LoadMaster(files) })
	in.BaseMaster = sync.OnceValues(func() (*config.Master, error) { return LoadMaster(r, s, base) })
	if in.Change, err = change(); err != nil {
		return nil, err
	}
	return in, nil
}

// ChangeAt describes the change base..head of a repository for the
// diff-aware rules: both revisions read through recipe.Rev and the files
// that differ. A zero base is the empty tree.
func ChangeAt(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string) (*recipe.Change, error) {
	return changeOf(r, s, base, head, baseName, headName, r.Tree(head), nil)
}

// changeOf is the change from base to headFiles: the files that differ
// between base and head, and extra (the work tree's).
func changeOf(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string, headFiles fs.FS, extra []string) (*recipe.Change, error) {
	fcs, err := r.ChangedFiles(base, head)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(fcs)+len(extra))
	for _, fc := range fcs {
		paths = append(paths, fc.Path)
	}
	paths = append(paths, extra...)
	var bf fs.FS = emptyTree{}
	if !base.IsZero() {
		bf = r.Tree(base)
	}
	return recipe.NewChange(recipe.NewRev(baseName, bf, s), recipe.NewRev(headName, headFiles, s), paths), nil
}

// emptyTree is a tree without files (the base of a first commit).
type emptyTree struct{}

func (emptyTree) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// WorktreePaths are the work-tree paths whose uncommitted changes count:
// the changelog, the master configs' directories, benchmarks/ and runners/.
func WorktreePaths(s *config.Settings) []string {
	out := []string{s.ChangelogPath(), "benchmarks", "runners"}
	for _, layout := range s.MasterCandidates() {
		for _, p := range layout {
			out = append(out, path.Dir(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// WorktreeChange is base..head plus the work tree's uncommitted changes
// on top of head (WorktreePaths), read from the work tree; for a bare
// repository it is base..head.
func WorktreeChange(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName string) (*recipe.Change, error) {
	if r.Worktree() == "" {
		return ChangeAt(r, s, base, head, baseName, ShortHash(head))
	}
	wt, err := r.WorktreeChanges(head, WorktreePaths(s))
	if err != nil {
		return nil, err
	}
	return changeOf(r, s, base, head, baseName, "work tree", revfs.Dir(r.Worktree()), wt)
}

// LoadWorktreeInput is LoadInput with the work tree as head: its
// changelog, its master configs and its uncommitted changes on top of
// head (what `changelog new` drafts from, before it is committed).
func LoadWorktreeInput(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName string) (*Input, error) {
	if r.Worktree() == "" {
		return LoadInput(r, s, base, head, baseName, "work tree")
	}
	return loadInput(r, s, base, baseName, "work tree", revfs.Dir(r.Worktree()), func() (*recipe.Change, error) {
		return WorktreeChange(r, s, base, head, baseName)
	})
}

// checkMasterSizes bounds the master configs (MaxConfigSize).
func checkMasterSizes(files []config.File, rev string) error {
	for _, f := range files {
		if err := CheckConfigSize(f.Path+" at "+rev, len(f.Data)); err != nil {
			return err
		}
	}
	return nil
}
