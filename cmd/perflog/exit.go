package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/internal/safefile"
	"github.com/perflog/perflog/provenance/index"
	"github.com/perflog/perflog/recipe/dryrun"
)

// Exit statuses, one table for the whole binary (documented in the README
// and in `perflog --help`). They are a public contract.
const (
	ExitOK          = 0   // success, no error findings
	ExitFindings    = 1   // the check ran and reported error findings
	ExitError       = 2   // usage error or runtime error (not a repo, unknown rev, unreadable file)
	ExitInterrupted = 130 // cancelled by SIGINT/SIGTERM
)

// errFindings means "the command printed its findings; exit 1".
var errFindings = errors.New("error findings")

// flagError is a usage error: exit 2, with a hint (by default, to see
// --help).
type flagError struct {
	err  error
	hint string
}

func (e *flagError) Error() string { return e.err.Error() }
func (e *flagError) Unwrap() error { return e.err }

func flagErrorf(format string, a ...any) error { return &flagError{err: fmt.Errorf(format, a...)} }

// Main runs perflog with os.Args and returns the exit status.
func Main() int {
	dryrun.ServeIfWorker()                             // a dry-run worker: before anything of the environment is read
	if p := os.Getenv("PERFLOG_CPUPROFILE"); p != "" { // for perflog's developers
		if f, err := os.Create(p); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	if p := os.Getenv("PERFLOG_MEMPROFILE"); p != "" { // every allocation of the run
		runtime.MemProfileRate = 4096
		defer func() {
			runtime.GC() // the profile is as of the last collection
			if f, err := os.Create(p); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	ctx := interruptible(os.Stderr)
	return run(ctx, newFactory(iostreams.System()), os.Args[1:])
}

// interruptible returns a context cancelled by the first SIGINT or
// SIGTERM: commands stop at their next check and exit 130. A second
// signal exits at once, for a command that does not stop soon enough.
func interruptible(errOut io.Writer) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		cancel()
		<-sig
		fmt.Fprintln(errOut, "perflog: interrupted twice: exiting now")
		os.Exit(ExitInterrupted)
	}()
	return ctx
}

// run executes one command line and maps its outcome to an exit status. A
// panic is a perflog bug: it is reported as such (exit 2), never as a
// verdict.
func run(ctx context.Context, f *Factory, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(f.IO.ErrOut, "perflog: internal error (please report it): %v\n%s", r, debug.Stack())
			code = ExitError
		}
	}()
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	if f.pager != nil && errors.Is(err, syscall.EPIPE) {
		err = nil // the reader quit the pager before the end: nothing is wrong
	}
	f.stopPager()
	f.closeSandbox()
	if f.output != "" && (err == nil || errors.Is(err, errFindings)) {
		// a completed run's report (findings included); a failed run
		// leaves the file as it was, never empty or half written
		if werr := writeOutput(f.abs(f.output), f.outputBuf.Bytes()); werr != nil {
			err = fmt.Errorf("--output: %w", werr)
		}
	}
	return exitCode(f, err)
}

func exitCode(f *Factory, err error) int {
	var fe *flagError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errFindings):
		return ExitFindings
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(f.IO.ErrOut, "perflog: interrupted")
		return ExitInterrupted
	case errors.As(err, &fe):
		hint := fe.hint
		if hint == "" {
			hint = "Run 'perflog --help' for usage."
		}
		fmt.Fprintf(f.IO.ErrOut, "perflog: %s\n%s\n", printable(err.Error()), hint)
		return ExitError
	case index.IsCorrupt(err):
		fmt.Fprintf(f.IO.ErrOut, "perflog: %v\nThe index is a cache of the history: run 'perflog index --rebuild' to build it anew.\n", err)
		return ExitError
	default:
		fmt.Fprintf(f.IO.ErrOut, "perflog: %s\n", printable(err.Error()))
		return ExitError
	}
}

// writeOutput replaces the --output file name with data, atomically.
func writeOutput(name string, data []byte) error {
	abs, err := filepath.Abs(name)
	if err != nil {
		return err
	}
	_, err = safefile.Write(filepath.Dir(abs), filepath.Base(abs), data)
	return err
}
