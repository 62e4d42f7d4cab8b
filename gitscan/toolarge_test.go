package gitscan

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTooLargeIsRefusedUnread: a file over the size perflog reads is
// refused by the size its object's header gives, loose or packed, whole
// or a delta, without inflating it; a stat gives its size unread too.
func TestTooLargeIsRefusedUnread(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	defer func(n int64) { maxFileSize = n }(maxFileSize)
	maxFileSize = 1 << 20
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
			"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	big := bytes.Repeat([]byte("# a line of a file a hostile commit made large\n"), 3<<20/48)
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	write("big.sh", big)
	write("small.sh", []byte("echo\n"))
	git("add", ".")
	git("commit", "-q", "-m", "one")
	write("big.sh", append([]byte("echo changed\n"), big...))
	git("commit", "-q", "-am", "two")

	check := func(how string) {
		t.Helper()
		r, err := Open(dir, &OpenOptions{NoDetect: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, rev := range []string{"HEAD", "HEAD~1"} {
			c, err := r.Resolve(rev)
			if err != nil {
				t.Fatal(err)
			}
			tree := r.Tree(c)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			fi, err := fs.Stat(tree, "big.sh")
			_, readErr := fs.ReadFile(tree, "big.sh")
			_, fileErr := r.ReadFile(c, "big.sh")
			runtime.ReadMemStats(&after)
			if err != nil || fi.Size() < int64(len(big)) {
				t.Errorf("%s %s: stat %v, %v", how, rev, fi, err)
			}
			for _, err := range []error{readErr, fileErr} {
				if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.sh is 3.1 MB") {
					t.Errorf("%s %s: read %v, want too large", how, rev, err)
				}
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("%s %s: %d bytes allocated to refuse it", how, rev, grew)
			}
			if data, err := fs.ReadFile(tree, "small.sh"); err != nil || string(data) != "echo\n" {
				t.Errorf("%s %s: small.sh %q, %v", how, rev, data, err)
			}
		}
	}
	check("loose")
	git("repack", "-adq", "--window=10", "--depth=10")
	if !strings.Contains(git("cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectsize) %(deltabase)"), "blob 3") {
		t.Fatal("git stored no version of big.sh whole")
	}
	if bases := strings.Fields(git("cat-file", "--batch-all-objects", "--batch-check=%(deltabase)")); !slices.ContainsFunc(bases, func(b string) bool { return strings.Trim(b, "0") != "" }) {
		t.Fatal("git stored no delta: the test tests one way only")
	}
	check("packed")
}
