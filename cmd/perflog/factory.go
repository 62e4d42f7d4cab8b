package main

import (
	"bytes"
	"os"
	"sync"
	"time"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/iostreams"
)

// Factory holds the process-wide dependencies of commands as lazy
// constructors, so that tests can replace exactly one of them.
type Factory struct {
	IO *iostreams.IOStreams
	// Getenv reads the environment (CI variables such as GITHUB_REF).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// OpenRepo opens the repository containing dir.
	OpenRepo func(dir string) (*gitscan.Repo, error)
	// Getwd returns the working directory.
	Getwd func() (string, error)

	// output is --output: the file the run's standard output goes to,
	// written once the run has completed (see run).
	output    string
	outputBuf bytes.Buffer

	shallowOnce sync.Once // warnShallow's
}

func newFactory(io *iostreams.IOStreams) *Factory {
	return &Factory{
		IO:     io,
		Getenv: os.Getenv,
		Now:    time.Now,
		OpenRepo: func(dir string) (*gitscan.Repo, error) {
			return gitscan.Open(dir, nil)
		},
		Getwd: os.Getwd,
	}
}
