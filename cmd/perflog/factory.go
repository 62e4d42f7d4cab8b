package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/recipe/dryrun"
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
	// LookupEnv is Getenv with whether the variable is set (nil: the
	// process's environment).
	LookupEnv func(string) (string, bool)

	// output is --output: the file the run's standard output goes to,
	// written once the run has completed (see run).
	output    string
	outputBuf bytes.Buffer
	// pager is the pager process the run's output goes through (a
	// terminal's long output), and pagerIn its input.
	pager   *exec.Cmd
	pagerIn io.WriteCloser
	noPager bool

	shallowOnce sync.Once // warnShallow's

	// DryRun bounds the dry runs of recipes (zero: dryrun's defaults);
	// its Sandbox, when nil, is filled in by dryRun (one given is used,
	// and its owner closes it).
	DryRun      dryrun.Options
	sandbox     *dryrun.Sandbox
	sandboxOnce sync.Once
}

// dryRun is how commands dry-run recipes: in workers of perflog's own
// binary, confined (dryrun.Confined), started when the first point is
// run and stopped when the command ends. A binary that cannot name
// itself runs no dry run: each point is unknown, and says why.
func (f *Factory) dryRun() dryrun.Options {
	if f.DryRun.Sandbox != nil {
		return f.DryRun
	}
	f.sandboxOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			exe = ""
		}
		f.sandbox = dryrun.Confined(false, exe, dryrun.WorkerArg)
	})
	o := f.DryRun
	o.Sandbox = f.sandbox
	return o
}

// closeSandbox stops the dry-run workers, and notes once what the
// machine lacked to confine them.
func (f *Factory) closeSandbox() {
	if f.sandbox == nil {
		return
	}
	if _, lacks := f.sandbox.Confinement(); lacks != "" {
		fmt.Fprintf(f.IO.ErrOut, "perflog: note: dry runs ran with less confinement than perflog applies where it can (%s); see docs/security.md\n", lacks)
	}
	f.sandbox.Close()
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

// startPager sends standard output through a pager when it is a terminal:
// $PERFLOG_PAGER, else $PAGER, else "less -FRX" (which quits at once when
// the output fits the screen, and keeps colour); "" or "cat" means none.
// The output stays a terminal's (tables, colour).
func (f *Factory) startPager() {
	if !f.IO.IsStdoutTTY() {
		return
	}
	pager, set := f.lookupEnv("PERFLOG_PAGER")
	if !set {
		pager, set = f.lookupEnv("PAGER")
	}
	if !set {
		pager = "less -FRX"
	}
	if strings.TrimSpace(pager) == "" || strings.TrimSpace(pager) == "cat" {
		return
	}
	width := f.IO.TerminalWidth() // the terminal's, while stdout is still it
	cmd := exec.Command("sh", "-c", pager)
	cmd.Stdout, cmd.Stderr = f.IO.Out, f.IO.ErrOut
	if f.Getenv("LESS") == "" {
		cmd.Env = append(os.Environ(), "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil || cmd.Start() != nil {
		return // no pager: write to the terminal
	}
	f.pager, f.pagerIn = cmd, in
	f.IO.Out = in
	f.IO.SetStdoutTTY(true)
	if width > 0 {
		f.IO.SetTerminalWidth(width)
	}
}

// stopPager waits for the pager to show the rest (the run has written it).
func (f *Factory) stopPager() {
	if f.pager == nil {
		return
	}
	f.pagerIn.Close()
	f.pager.Wait()
	f.pager = nil
}

// abs is path p given on the command line, relative to the working
// directory (Getwd), as an absolute path ("" stays "").
func (f *Factory) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	wd, err := f.Getwd()
	if err != nil {
		return p
	}
	return filepath.Join(wd, p)
}

// rel is absolute path p relative to the working directory when it is
// below it (for messages), else p.
func (f *Factory) rel(p string) string {
	if wd, err := f.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return p
}

// lookupEnv is Getenv telling an empty value from an unset one.
func (f *Factory) lookupEnv(k string) (string, bool) {
	if f.LookupEnv != nil {
		return f.LookupEnv(k)
	}
	return os.LookupEnv(k)
}
