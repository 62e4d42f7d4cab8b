package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

func write(t *testing.T, name, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteKeepsModeAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "c.yaml"), "old", 0o640)
	if _, err := Write(dir, "c.yaml", []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "c.yaml"))
	if got := read(t, filepath.Join(dir, "c.yaml")); got != "new" || fi.Mode().Perm() != 0o640 {
		t.Fatalf("content %q mode %v", got, fi.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("files left: %v", ents)
	}
	// a new file
	if _, err := Write(dir, "sub/new.yaml", []byte("x")); err == nil {
		t.Fatal("a file in a missing directory: want an error")
	}
	if _, err := Write(dir, "n.yaml", []byte("x")); err != nil || read(t, filepath.Join(dir, "n.yaml")) != "x" {
		t.Fatalf("new file: %v", err)
	}
}

func TestWriteThroughSymlinkInside(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "real", "c.yaml"), "old", 0o644)
	if err := os.Symlink("real/c.yaml", filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	got, err := Write(dir, "c.yaml", []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	if got != filepath.Join("real", "c.yaml") || read(t, filepath.Join(dir, "real", "c.yaml")) != "new" {
		t.Fatalf("wrote %s: target %q", got, read(t, filepath.Join(dir, "real", "c.yaml")))
	}
	if fi, err := os.Lstat(filepath.Join(dir, "c.yaml")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced by a regular file")
	}
}

func TestWriteRefusesOutside(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "repo")
	outside := filepath.Join(top, "outside", "x.yaml")
	write(t, outside, "keep", 0o644)
	write(t, filepath.Join(dir, "a"), "", 0o644)
	if err := os.Symlink("../outside/x.yaml", filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"c.yaml", "../outside/x.yaml", "d/x.yaml", "d/new.yaml", "/etc/passwd"} {
		if _, err := Write(dir, rel, []byte("lost")); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: err %v, want ErrOutside", rel, err)
		}
	}
	if read(t, outside) != "keep" {
		t.Fatal("a file outside the repository was written")
	}
	if _, err := os.Stat(filepath.Join(top, "outside", "new.yaml")); err == nil {
		t.Fatal("a file outside the repository was created")
	}
}

// TestWriteRefusesReadOnly: a file no one may write is refused, even to
// root (whom the kernel would let write it).
func TestWriteRefusesReadOnly(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "c.yaml")
	write(t, name, "old", 0o444)
	if _, err := Write(dir, "c.yaml", []byte("new")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("err %v, want ErrReadOnly", err)
	}
	if read(t, name) != "old" {
		t.Fatal("a read-only file was overwritten")
	}
}

func TestWriteRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "c.yaml"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := Write(dir, "c.yaml", []byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("err %v, want ErrReadOnly", err)
	}
}

func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file another owner")
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "c.yaml")
	write(t, name, "old", 0o664)
	if err := os.Chown(name, 65534, 65534); err != nil {
		t.Skip(err)
	}
	if _, err := Write(dir, "c.yaml", []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(name)
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 65534 || st.Gid != 65534 || read(t, name) != "new" {
		t.Fatalf("owner %d:%d content %q", st.Uid, st.Gid, read(t, name))
	}
}

func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "c.yaml"), "old", 0o644)
	dead := filepath.Join(dir, ".c.yaml"+tmpMarker+"2147483646.tmp") // no such process
	live := filepath.Join(dir, ".c.yaml"+tmpMarker+strconv.Itoa(os.Getppid())+".tmp")
	other := filepath.Join(dir, ".c.yaml.tmp123") // not ours
	for _, n := range []string{dead, live, other} {
		write(t, n, "partial", 0o600)
	}
	if _, err := Write(dir, "c.yaml", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Error("a dead run's temporary file was kept")
	}
	for _, n := range []string{live, other} {
		if _, err := os.Stat(n); err != nil {
			t.Errorf("%s was removed", n)
		}
	}
}
