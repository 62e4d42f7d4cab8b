package changelog

import (
	"sync"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/revfs"
)

// NewInput is what Verify judges of a change, read from its two
// revisions: the changelog at base and head, the master configs at head
// (read now, parsed on demand, possibly on another goroutine) and at base
// (when an append-only entry asks). Each side is read once: the
// diff-aware rules read the same revisions (ch.Base, ch.Head), and the
// configs Verify parses are handed to them.
func NewInput(s *config.Settings, ch *recipe.Change) (*Input, error) {
	path := s.ChangelogPath()
	in := &Input{Path: path, BaseRev: ch.Base.Name, HeadRev: ch.Head.Name, Repository: s.Repository(), Settings: s, Change: ch}
	for _, side := range []struct {
		rev *recipe.Rev
		to  *[]byte
	}{{ch.Base, &in.Base}, {ch.Head, &in.Head}} {
		data, ok, err := revfs.ReadFile(side.rev.Files, path)
		if err != nil {
			return nil, err
		}
		if ok {
			*side.to = data
		}
		if err := CheckSize(path+" at "+side.rev.Name, len(data)); err != nil {
			return nil, err
		}
	}
	// configs that exist but do not load are a finding; a repository
	// error surfaces the same way (config/invalid), never as a crash.
	// The head's are read here (a revision's files are not safe for
	// concurrent reads) and parsed when first asked.
	files, err := recipe.MasterFiles(ch.Head.Files, s)
	if err != nil {
		return nil, err
	}
	if err := checkMasterSizes(files, ch.Head.Name); err != nil {
		return nil, err
	}
	in.HeadMaster = sync.OnceValues(func() (*config.Master, error) { return config.LoadMaster(files) })
	in.BaseMaster = sync.OnceValues(func() (*config.Master, error) {
		files, err := recipe.MasterFiles(ch.Base.Files, s)
		if err == nil {
			err = checkMasterSizes(files, ch.Base.Name)
		}
		if err != nil {
			return nil, err
		}
		m, err := config.LoadMaster(files)
		ch.Base.UseMaster(m, err)
		return m, err
	})
	return in, nil
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
