package revfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"
)

// TestDir: a work tree reads as an fs.FS (the standard library's checks),
// and ReadFile, Exists and ListFiles count regular files inside it only,
// as a checkout would run them: a link to a file inside reads as that
// file (through another link too); a directory, a link to a file outside
// or to .git (where a CI checkout keeps its token), a path through a
// linked directory, or .git itself is no file. ListFiles lists no link.
func TestDir(t *testing.T) {
	top := t.TempDir()
	wt := filepath.Join(top, "wt")
	for p, s := range map[string]string{"wt/runners/launch_b200.sh": "echo b200\n", "wt/runners/notes.md": "n\n", "wt/perf-changelog.yaml": "[]\n", "secret": "outside\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(top, p)), 0o755)
		if err := os.WriteFile(filepath.Join(top, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fstest.TestFS(Dir(wt), "runners/launch_b200.sh", "perf-changelog.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../secret", filepath.Join(wt, "runners", "launch_out.sh")); err != nil {
		t.Skip(err)
	}
	os.Symlink("launch_b200.sh", filepath.Join(wt, "runners", "launch_in.sh"))
	os.Symlink("launch_in.sh", filepath.Join(wt, "runners", "launch_twice.sh"))
	os.Symlink("runners", filepath.Join(wt, "linked"))
	os.MkdirAll(filepath.Join(wt, ".git"), 0o755)
	os.WriteFile(filepath.Join(wt, ".git", "config"), []byte("extraheader = token\n"), 0o644)
	os.Symlink("../.git/config", filepath.Join(wt, "runners", "cfg"))
	for p, want := range map[string]bool{"runners/launch_b200.sh": true, "runners/launch_in.sh": true, "runners/launch_twice.sh": true, "runners/launch_out.sh": false,
		"linked/launch_b200.sh": false, ".git/config": false, "runners/cfg": false,
		"runners": false, "nope.sh": false, "../secret": false, "/etc/passwd": false, "runners/launch_b200.sh/x": false} {
		data, ok, err := ReadFile(Dir(wt), p)
		if err != nil || ok != want || Exists(Dir(wt), p) != want {
			t.Errorf("%s: ReadFile ok=%v err=%v, Exists=%v; want %v", p, ok, err, Exists(Dir(wt), p), want)
		}
		if ok && string(data) != "echo b200\n" {
			t.Errorf("%s read %q", p, data)
		}
	}
	got, err := ListFiles(Dir(wt), "runners")
	if want := []string{"runners/launch_b200.sh", "runners/notes.md"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ListFiles(runners) = %v, %v; want %v (links are not regular files)", got, err, want)
	}
	if got, err := ListFiles(Dir(wt), ""); err != nil || !slices.Equal(got, []string{"perf-changelog.yaml"}) {
		t.Errorf("ListFiles of the root = %v, %v", got, err)
	}
	if got, err := ListFiles(Dir(wt), "nope"); err != nil || got != nil {
		t.Errorf("ListFiles of a missing directory = %v, %v", got, err)
	}
}

// TestTooLargeOnDisk: a work tree's file over the size perflog reads is
// refused by its size, not read; a smaller one reads.
func TestTooLargeOnDisk(t *testing.T) {
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = 1 << 10
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big.sh"), bytes.Repeat([]byte("#\n"), 1<<10), 0o644)
	os.WriteFile(filepath.Join(dir, "small.sh"), []byte("echo\n"), 0o644)
	for _, read := range []func(string) error{
		func(p string) error { _, err := fs.ReadFile(Dir(dir), p); return err },
		func(p string) error { _, _, err := ReadFile(Dir(dir), p); return err },
	} {
		if err := read("big.sh"); !errors.Is(err, ErrTooLarge) {
			t.Errorf("big.sh: %v, want too large", err)
		}
		if err := read("small.sh"); err != nil {
			t.Errorf("small.sh: %v", err)
		}
	}
}
