// Package dryrun runs a recipe point's launch path in a sandbox and says
// what it launched: the inference servers, routers and benchmark clients
// with their command lines and environments (a Launch). It also reads
// what a multi-node srt-slurm recipe file describes (Describe), and keeps
// a memo of dry runs over a history (Memo).
//
// The scripts it runs are a stranger's code (a pull request's), and it
// runs them inside CI jobs that hold tokens. A Sandbox runs them in
// worker processes of perflog's own binary, started with an empty
// environment, resource limits and, on Linux, Landlock and seccomp
// (Confined); the interpreter is hermetic by construction too (nothing
// of the machine reaches a script: see hermetic.go), which is all
// InProcess has. The threat model: docs/security.md.
//
// Dependencies: recipe/revfs (a revision's files), internal/lru, internal/assockeys,
// mvdan.cc/sh/v3, gopkg.in/yaml.v3 (srt-slurm recipe files),
// github.com/benhoyt/goawk (awk on a script's own values, confined),
// github.com/landlock-lsm/go-landlock, github.com/elastic/go-seccomp-bpf,
// golang.org/x/sys (the last three on Linux: the confinement).
package dryrun

import (
	"context"
	"io/fs"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perflog/perflog/internal/lru"
)

// The dry run's sandbox. A launch path is run by mvdan.cc/sh's
// interpreter with handlers that replace the operating system:
//
//   - files are read from the revision's tree (an fs.FS), mounted at
//     Workspace, the directory the runner checks out to and the
//     containers mount; what the script writes goes to an in-memory
//     overlay that later reads see and that is dropped with the run;
//     a read anywhere else finds no file and is recorded as unknown;
//   - no command is executed: the inference servers, routers and
//     benchmark clients are recorded (argv, exported environment,
//     file:line); a script run through bash/sh (directly or behind srun,
//     docker, timeout, ...) is run in the sandbox; dirname, basename,
//     realpath, cat, tee, mkdir, touch, rm, true and false act on the
//     overlay; every other command is stubbed: it succeeds, and when its
//     output is captured ($(...), a pipe, a file) it prints
//     UnknownMarker and its name, so a value that depends on it reads as
//     unknown, never as a guess;
//   - a step budget (commands, builtins and function calls), a time
//     budget and the caller's context bound every run.

// Workspace is where the revision's tree is mounted in the sandbox (the
// working directory of the launcher and of the container).
const Workspace = "/workspace"

// UnknownMarker starts what a stubbed command prints when its output is
// captured: "<unknown:nproc>".
const UnknownMarker = "<unknown:"

// Options bound a dry run (zero values: the defaults).
type Options struct {
	// MaxSteps bounds the commands, builtins and function calls run
	// (default 200000).
	MaxSteps int64
	// Timeout bounds the run's wall time (default 5 s).
	Timeout time.Duration
	// Patterns say which commands are servers, routers and clients
	// (default DefaultPatterns).
	Patterns *Patterns
	// Memory bounds what a run holds (default 1 GiB): a run past it
	// stops, unknown.
	Memory int64
	// Memo, when set, answers a point whose inputs did not change from
	// an earlier run (a history's dry runs, commit after commit).
	Memo *Memo
	// Sandbox runs the dry run (nil: in this process, with caches of
	// its own: see InProcess).
	Sandbox *Sandbox
	// inWorker: the run's process is a worker, whose heap is its runs'
	// (serve.go); elsewhere the process holds more, and a run's memory
	// is what the heap grew by.
	inWorker bool
}

// The default budgets of a run.
const (
	DefaultMaxSteps = 200_000
	DefaultTimeout  = 5 * time.Second
	DefaultMemory   = 1 << 30
)

func (o *Options) defaults() {
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Memory <= 0 {
		o.Memory = DefaultMemory
	}
	if o.Patterns == nil {
		o.Patterns = DefaultPatterns
	}
}

// Patterns recognise the commands a dry run records.
type Patterns struct {
	// Servers, Routers and Clients are command prefixes: a word is a
	// program's base name ("python3" matches "/opt/venv/bin/python3"
	// and "python3.12" when written "python*"), then literal arguments.
	Servers, Routers, Clients [][]string
	// ClientFunctions are shell functions whose call is the benchmark
	// client (their arguments are recorded).
	ClientFunctions []string
}

// DefaultPatterns are the launches of InferenceX's recipes.
var DefaultPatterns = &Patterns{
	Servers: [][]string{
		{"python*", "-m", "sglang.launch_server"},
		{"vllm", "serve"},
		{"trtllm-serve"},
		{"python*", "-m", "atom.entrypoints.openai_server"},
		{"python*", "-m", "vllm.entrypoints.openai.api_server"},
		{"sglang", "serve"},
		{"atom_server"},
	},
	Routers: [][]string{
		{"python*", "-m", "sglang_router.launch_router"},
		{"vllm-router"},
		{"atomesh", "launch"},
	},
	Clients: [][]string{
		{"python*", "*benchmark_serving.py"},
		{"aiperf"},
	},
	ClientFunctions: []string{"run_benchmark_serving"},
}

// A Sandbox runs dry runs: in this process (InProcess) or in worker
// processes it starts (Confined). It is safe for concurrent use; Close
// stops its workers.
type Sandbox struct {
	cache *Cache // in this process: the interpreter's caches
	pool  *pool  // confined: the workers (nil in this process)
	// shapes of shell files by object id, for memos (codesig.go)
	shapes *lru.Cache[string, *codeShape]
	// stopped is the wall time (ns) its runs spent before a budget
	// stopped them, spent the time of all its runs; past stoppedLimit
	// (StoppedBudget when 0), and half of spent, it runs no more (see
	// Run).
	stopped, spent atomic.Int64
	stoppedLimit   time.Duration
}

// StoppedBudget bounds the wall time one sandbox (one perflog command)
// spends on dry runs that a budget stops: a loop that never ends in a
// helper every recipe sources would otherwise cost each point its 5 s,
// an hour for a pull request that reaches every point of the corpus.
// Past it, when such runs have taken half the command's dry-run time or
// more, the remaining runs are unknown without running; a history walk
// whose few stopped runs add up over thousands of good ones runs on.
const StoppedBudget = 30 * time.Second

// shapeCache holds the shapes of the shell files a history's memos
// compare: the versions of every shared helper a walk passes through.
func shapeCache() *lru.Cache[string, *codeShape] { return lru.New[string, *codeShape](1024) }

// InProcess returns a sandbox that runs the interpreter in this process:
// hermetic by construction, without the operating system's confinement
// or hard memory and time limits. For tests, fuzzing and what the
// interpreter alone must guarantee.
func InProcess() *Sandbox { return &Sandbox{cache: NewCache(), shapes: shapeCache()} }

// Run runs the shell script at path (e.g. runners/launch_h200-cw.sh)
// with args, as `bash path args` in the repository's root, in the
// sandbox over files with env as the whole environment, and returns
// what it launched.
func (sb *Sandbox) Run(ctx context.Context, files fs.FS, script string, args []string, env map[string]string, o Options) *Launch {
	o.defaults()
	limit := sb.stoppedLimit
	if limit <= 0 {
		limit = StoppedBudget
	}
	dry := func(f fs.FS) *Launch {
		if stopped := sb.stopped.Load(); time.Duration(stopped) >= limit && 2*stopped >= sb.spent.Load() {
			return unknownLaunch("not run: this command's dry runs already spent %v on runs a budget stopped (a script that never ends?)", limit)
		}
		start := time.Now()
		var l *Launch
		if sb.pool != nil {
			l = sb.pool.run(ctx, f, job{Script: script, Args: args, Env: env, MaxSteps: o.MaxSteps, Timeout: o.Timeout,
				Memory: o.Memory, Patterns: o.Patterns, Reads: o.Memo != nil})
		} else {
			l = runHere(ctx, sb.cache, f, script, args, env, o, o.Memo != nil)
		}
		took := int64(time.Since(start))
		sb.spent.Add(took)
		if l != nil && l.Status == StatusUnknown && strings.Contains(l.Reason, "stopped") {
			sb.stopped.Add(took)
		}
		return l
	}
	if o.Memo != nil {
		return o.Memo.run(files, script, args, env, sb.shapes, dry)
	}
	return dry(files)
}

// Close stops the sandbox's workers (a sandbox in this process has
// none).
func (sb *Sandbox) Close() error {
	if sb.pool != nil {
		sb.pool.close()
	}
	return nil
}

// Run runs a dry run in o.Sandbox, or in a new sandbox in this process
// when o has none (see Sandbox.Run).
func Run(ctx context.Context, files fs.FS, script string, args []string, env map[string]string, o Options) *Launch {
	sb := o.Sandbox
	if sb == nil {
		sb = InProcess()
	}
	return sb.Run(ctx, files, script, args, env, o)
}
