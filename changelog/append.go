package changelog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// AppendResult says what AppendEntries did.
type AppendResult struct {
	// Replaced are the 1-based indexes (in the file before) of this
	// change's own earlier entries that the draft replaced.
	Replaced []int
	// Added is the number of entries appended.
	Added int
	// Unchanged is true when the file already held exactly the draft.
	Unchanged bool
}

// AppendEntries appends drafted entries to a changelog. Every byte of the
// file before the append is kept, except this change's own earlier
// entries (entries that base does not have and that list one of the
// draft's keys or link this PR), which are replaced, so running it again
// updates the entry instead of adding a second one. Historical entries are
// never touched. One empty line separates entries and the file ends with
// one newline. base is the changelog at the base revision (nil: none).
func AppendEntries(path string, cur, base []byte, entries []DraftEntry, link string) ([]byte, *AppendResult, error) {
	res := &AppendResult{}
	var text strings.Builder
	for i, e := range entries {
		if i > 0 {
			text.WriteString("\n")
		}
		text.WriteString(RenderEntry(e))
	}
	head, _, err := Parse(path, cur)
	if err != nil {
		return nil, nil, fmt.Errorf("%s does not parse; fix it before appending: %w", path, err)
	}
	bf := &File{Path: path, Raw: base, lineStarts: lineStarts(base)}
	if len(bytes.TrimSpace(base)) > 0 {
		if b, _, err := Parse(path, base); err == nil {
			bf = b
		}
	}
	keys := map[string]bool{}
	for _, e := range entries {
		for _, k := range e.ConfigKeys {
			keys[k] = true
		}
	}
	var own []*Entry
	for _, e := range Align(bf, head).Added {
		mine := link != "" && e.PRLink() == link
		for _, k := range ConfigKeysOf(e.Value) {
			mine = mine || keys[k.Key]
		}
		if mine {
			own = append(own, e)
		}
	}
	out := append([]byte(nil), cur...)
	// remove own entries, last first, with the separator before each
	for i := len(own) - 1; i >= 0; i-- {
		e := own[i]
		start := e.Start // the first entry: what precedes it stays
		if e.Index > 1 {
			start = head.Entries[e.Index-2].End
		}
		end := e.End
		if e.Index == len(head.Entries) {
			end = len(out) // the last entry: the tail goes with it
		}
		out = append(out[:start:start], out[end:]...)
		res.Replaced = append([]int{e.Index}, res.Replaced...)
	}
	switch {
	case len(bytes.TrimSpace(out)) == 0:
		out = out[:0]
	case bytes.HasSuffix(out, []byte("\n\n")):
	case bytes.HasSuffix(out, []byte("\n")):
		out = append(out, '\n')
	default:
		out = append(out, '\n', '\n')
	}
	out = append(out, text.String()...)
	res.Added = len(entries)
	res.Unchanged = bytes.Equal(out, cur)
	return out, res, nil
}

// WriteFileAtomic replaces a file's content: a temporary file in the same
// directory, synced, given the old file's mode, renamed over it. A reader
// sees the old or the new content, never a mix; a failure leaves the old
// file as it was.
func WriteFileAtomic(name string, data []byte) (err error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
