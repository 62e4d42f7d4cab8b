package draft

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/safefile"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/revfs"
)

// Appended is what AppendToWorktree did.
type Appended struct {
	changelog.AppendResult
	// Written says the file changed (false: it already held the draft).
	Written bool
	// NoBaseFile says the base has no changelog: the draft is appended,
	// and no entry is replaced.
	NoBaseFile bool
}

// AppendToWorktree appends entries to the changelog in the work tree dir
// (the head of ch), replacing this change's own earlier entries there
// (changelog.AppendEntries), and writes the file only when it changes,
// never through a symbolic link out of dir. The base's changelog, which
// tells this change's entries from the others, is read from ch.Base.
func AppendToWorktree(dir string, ch *recipe.Change, entries []changelog.DraftEntry, link string) (*Appended, error) {
	path := ch.Head.Settings.ChangelogPath()
	target, err := safefile.Resolve(dir, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cur, err := config.ReadRegular(filepath.Join(dir, target), changelog.MaxFileSize)
	if errors.Is(err, os.ErrNotExist) {
		cur = nil
	} else if err != nil {
		return nil, err
	}
	base, haveBase, err := revfs.ReadFile(ch.Base.Files, path)
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", path, ch.Base.Name, err)
	}
	out, ar, err := changelog.AppendEntries(path, cur, entries, changelog.AppendOptions{Base: base, HaveBase: haveBase, PRLink: link})
	if err != nil {
		return nil, err
	}
	res := &Appended{AppendResult: *ar, NoBaseFile: !haveBase}
	if !ar.Unchanged {
		if _, err := safefile.Write(dir, path, out); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		res.Written = true
	}
	return res, nil
}
