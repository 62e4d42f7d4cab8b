// Package testcorpus opens, in tests, the shipped sample: the real
// InferenceX first-parent history under testdata/corpus (see its NOTICE).
//
// Dependencies: gitscan, github.com/go-git/go-git/v5. Only tests import it.
package testcorpus

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

// Path returns the sample repository's path, found from the working
// directory (a package's directory when go test runs) up to the module
// root.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "corpus", "inferencex.git")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testcorpus: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Open opens the sample with o (nil: without looking for a work tree) and
// resolves main; the repository is closed when the test ends.
func Open(t testing.TB, o *gitscan.OpenOptions) (*gitscan.Repo, plumbing.Hash) {
	t.Helper()
	if o == nil {
		o = &gitscan.OpenOptions{NoDetect: true}
	}
	r, err := gitscan.Open(Path(t), o)
	if err != nil {
		t.Fatalf("open the sample history: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	head, err := r.Resolve("main")
	if err != nil {
		t.Fatal(err)
	}
	return r, head
}

// LongEnv names the environment variable that turns on the long replays of
// the real history (every changelog commit through the gate and strict
// profiles, the drafts against their authors, the audits against naive
// scans). `.ci/run` sets it; a plain `go test ./...` leaves them out (or
// samples them) and stays within a minute.
const LongEnv = "PERFLOG_LONG_TESTS"

// Long reports whether the long replays run.
func Long() bool { return os.Getenv(LongEnv) != "" }
