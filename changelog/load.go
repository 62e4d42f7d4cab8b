package changelog

import (
	"errors"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
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

// LoadMaster loads the master configs at a commit, trying each layout of
// the settings (configs/ first, then .github/configs/ where the InferenceX
// configs lived before #1992). A layout is used when any of its files
// exists. The error wraps config.ErrMasterInvalid when the configs exist but
// do not load.
func LoadMaster(r *gitscan.Repo, s *config.Settings, commit plumbing.Hash) (*config.Master, error) {
	cands := s.MasterCandidates()
	for _, layout := range cands {
		var files []config.File
		found := false
		for _, p := range layout {
			data, err := readOptional(r, commit, p)
			if err != nil {
				return nil, err
			}
			found = found || data != nil
			files = append(files, config.File{Path: p, Data: data})
		}
		if found {
			return config.LoadMaster(files)
		}
	}
	files := make([]config.File, 0, len(cands[0]))
	for _, p := range cands[0] {
		files = append(files, config.File{Path: p})
	}
	return config.LoadMaster(files) // reports the first missing file
}

// LoadInput reads what Verify needs from a repository: the changelog at
// base and head and the master configs at head (at base lazily).
func LoadInput(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string) (*Input, error) {
	path := s.ChangelogPath()
	in := &Input{Path: path, BaseRev: baseName, HeadRev: headName, Repository: s.Repository(), Settings: s}
	var err error
	if in.Base, err = readOptional(r, base, path); err != nil {
		return nil, err
	}
	if in.Head, err = readOptional(r, head, path); err != nil {
		return nil, err
	}
	in.Master, in.MasterErr = LoadMaster(r, s, head)
	if in.MasterErr != nil && !errors.Is(in.MasterErr, config.ErrMasterInvalid) {
		return nil, in.MasterErr
	}
	in.BaseMaster = func() (*config.Master, error) { return LoadMaster(r, s, base) }
	return in, nil
}
