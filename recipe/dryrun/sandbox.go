// Package dryrun runs a recipe point's launch path in a sandbox and says
// what it launched: the inference servers, routers and benchmark clients
// with their command lines and environments (a Launch). It also reads
// what a multi-node srt-slurm recipe file describes (Describe), and keeps
// a memo of dry runs over a history (Memo).
//
// It depends on recipe/revfs (a revision's files) and mvdan.cc/sh.
package dryrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
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
	// Memo, when set, answers a point whose inputs did not change from
	// an earlier run (a history's dry runs, commit after commit).
	Memo *Memo
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
	},
	Clients: [][]string{
		{"python*", "*benchmark_serving.py"},
		{"aiperf"},
	},
	ClientFunctions: []string{"run_benchmark_serving"},
}

// errBudget stops a run that exceeds its step budget; errDone one that
// has started its benchmark client (what follows launches nothing).
var (
	errBudget = errors.New("step budget exceeded")
	errDone   = errors.New("the client started")
)

// maxTurns bounds the turns of a while or until loop of a script the
// sandbox runs: a loop that polls a stubbed command (squeue, curl) would
// turn forever.
const maxTurns = 256

// sandbox is the state of one dry run.
type sandbox struct {
	files fs.FS
	pat   *Patterns
	max   int64
	steps atomic.Int64

	mu      sync.Mutex
	overlay map[string][]byte // absolute path → content written
	gone    map[string]bool   // tree files removed
	sources map[string][]byte // shell files read, for positions
	stubbed map[string]bool
	launch  Launch
	stderr  bytes.Buffer
	ended   string // file:line of the last exit
	depth   int
	loops   map[string]int    // turns per loop
	env     map[string]string // the workflow's environment
	sites   map[string]int    // calls of stubs per position
	// guess is the last stub whose success may have decided a branch
	// (not infrastructure), at step guessAt
	guess   string
	guessAt int64
	stop    context.CancelCauseFunc
	// how the run read the tree's files (readCode, readData) by path,
	// the source builtin's opens to come, the names it called
	reads   map[string]uint8
	pending map[string]int
	called  map[string]bool
}

const (
	readCode uint8 = 1 << iota // run or sourced
	readData                   // read as text (cat, a redirection)
)

// mark notes how the run read the file at p.
func (s *sandbox) mark(p string, how uint8) {
	if rel, ok := strings.CutPrefix(p, Workspace+"/"); ok {
		s.mu.Lock()
		s.reads[rel] |= how
		s.mu.Unlock()
	}
}

// nameLike reports whether a word could name a shell function.
func nameLike(w string) bool {
	if w == "" || len(w) > 128 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c == '_' || c == '-' || c == '.' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// DryRun runs the shell script at path (e.g. runners/launch_h200-cw.sh)
// with args, as `bash path args` in the repository's root, in a sandbox
// over files with env as the whole environment, and returns what it
// launched.
func Run(ctx context.Context, files fs.FS, script string, args []string, env map[string]string, o Options) *Launch {
	if o.Memo != nil {
		return o.Memo.run(files, script, args, env, func(f fs.FS) *Launch { return run(ctx, f, script, args, env, o) })
	}
	return run(ctx, files, script, args, env, o)
}

func run(ctx context.Context, files fs.FS, script string, args []string, env map[string]string, o Options) *Launch {
	if o.MaxSteps <= 0 {
		o.MaxSteps = 200_000
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Patterns == nil {
		o.Patterns = DefaultPatterns
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s := &sandbox{files: files, pat: o.Patterns, max: o.MaxSteps, overlay: map[string][]byte{}, gone: map[string]bool{}, env: env,
		sources: map[string][]byte{}, stubbed: map[string]bool{}, loops: map[string]int{}, sites: map[string]int{}, stop: stop,
		reads: map[string]uint8{}, pending: map[string]int{}, called: map[string]bool{}}
	pairs := make([]string, 0, len(env))
	for k, v := range env {
		pairs = append(pairs, k+"="+v)
	}
	// bash's clock, which the interpreter lacks (set -u scripts read it)
	pairs = append(pairs, "SECONDS=0")
	sort.Strings(pairs)
	err := func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("the interpreter failed: %v", p)
			}
		}()
		return s.runScript(ctx, Workspace, expand.ListEnviron(pairs...), script, args)
	}()
	l := s.finish(ctx, err)
	if o.Memo != nil { // only a memo keeps it
		l.read = s.runReads()
	}
	return l
}

func (s *sandbox) finish(ctx context.Context, err error) *Launch {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.launch
	for name := range s.stubbed {
		l.Stubbed = append(l.Stubbed, name)
	}
	sort.Strings(l.Stubbed)
	status, isExit := interp.IsExitStatus(err)
	switch {
	case err == nil, errors.Is(context.Cause(ctx), errDone):
	case isExit && interpLimit.MatchString(lastLine(s.stderr.String())):
		l.Status, l.Exit, l.Reason = StatusUnknown, int(status), "bash the interpreter does not run: "+lastLine(s.stderr.String())
	case isExit:
		l.Exit = int(status)
		l.EndedAt = s.ended
		l.Reason = lastLine(s.stderr.String())
		if missing := s.unmapped(l.Reason); status != 0 && len(l.Servers) == 0 && missing != "" {
			// the script needs a variable this workflow mapping does not
			// give (an older workflow's name): not the recipe's failure
			l.Status = StatusUnknown
			l.Reason = fmt.Sprintf("needs %s, which the workflow environment perflog gives a point does not have (settings: launch: env): %s", missing, l.Reason)
		} else if status != 0 && s.guess != "" && s.steps.Load()-s.guessAt <= guessWindow && len(l.Servers) == 0 {
			// the failure follows a check the sandbox could only guess
			// (awk, python -c, grep on a file it cannot read)
			l.Status = StatusUnknown
			l.Unknowns = append(l.Unknowns, Unknown{At: l.EndedAt, What: fmt.Sprintf(
				"exits %d right after %s, which the sandbox does not run (%s)", status, s.guess, l.Reason)})
			l.Reason = fmt.Sprintf("decided by %s, which the sandbox does not run: %s", s.guess, l.Reason)
		}
	case errors.Is(err, errBudget):
		l.Status, l.Reason = StatusUnknown, fmt.Sprintf("stopped after %d steps (a loop that does not end?)", s.max)
	case ctx.Err() != nil:
		l.Status, l.Reason = StatusUnknown, "stopped at the time budget (a loop that does not end?)"
	default:
		l.Status, l.Reason = StatusUnknown, err.Error()
	}
	if l.Status == "" {
		switch {
		case len(l.Servers) > 0:
			l.Status = StatusLaunched
		case l.Exit != 0:
			l.Status = StatusFailed
		default:
			l.Status = StatusNoServer
		}
	}
	if l.Status == StatusUnknown && len(l.Servers) > 0 && l.Reason != "" {
		// the server was recorded before the run stopped: what it
		// launched is known, what came after is not
		l.Status = StatusLaunched
		l.Unknowns = append(l.Unknowns, Unknown{What: l.Reason})
	}
	return &l
}

// interpLimit matches what the interpreter says of bash it does not
// implement.
var interpLimit = regexp.MustCompile(`unhandled command node|unsupported (builtin|option|redirect)|not supported|not implemented`)

var envName = regexp.MustCompile(`\b[A-Z][A-Z0-9_]{2,}\b`)

// unmapped returns the variables a "not set" error names that the
// workflow's environment for the point does not have at all ("" when it
// names none, or only variables the workflow gives).
func (s *sandbox) unmapped(reason string) string {
	i := strings.Index(reason, "not set")
	if i < 0 || s.env == nil {
		return ""
	}
	var out []string
	for _, n := range envName.FindAllString(reason[i:], -1) {
		if _, ok := s.env[n]; !ok {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// lastLine is what a run said last (stdout and stderr, not the traces of
// set -x): its last line, or its last "Error" line with the list after it
// ("Error: not set:", "  - EP_SIZE", "  - DP_ATTENTION" read as one).
func lastLine(s string) string {
	var said []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "+") {
			said = append(said, l)
		}
	}
	if len(said) == 0 {
		return ""
	}
	from, to := len(said)-1, len(said)
	for i := len(said) - 1; i >= max(0, len(said)-6); i-- {
		if strings.HasPrefix(strings.ToLower(said[i]), "error") {
			// the error and the list it announces, not what an exit
			// trap said after it
			from, to = i, i+1
			for to < len(said) && strings.HasPrefix(said[to], "-") {
				to++
			}
			break
		}
	}
	l := strings.Join(said[from:to], " ")
	if len(l) > 300 {
		l = l[:300] + "…"
	}
	return l
}

func (s *sandbox) unknown(at, format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := Unknown{At: at, What: fmt.Sprintf(format, a...)}
	for _, x := range s.launch.Unknowns {
		if x == u {
			return
		}
	}
	if len(s.launch.Unknowns) < 50 {
		s.launch.Unknowns = append(s.launch.Unknowns, u)
	}
}

// runScript runs a shell file of the tree (or of the overlay) as a new
// bash process would: a fresh shell with the exported environment.
func (s *sandbox) runScript(ctx context.Context, dir string, env expand.Environ, file string, args []string) error {
	abs := s.abs(dir, file)
	data, ok := s.read(abs)
	s.mark(abs, readCode)
	if !ok {
		s.unknown("", "runs %s, which does not exist", file)
		return interp.NewExitStatus(127)
	}
	prog, err := parseScript(abs, s.rel(abs), data)
	if err != nil {
		return err
	}
	return s.run(ctx, dir, env, prog, args)
}

// runCode runs `bash -c CODE [NAME ARGS...]`.
func (s *sandbox) runCode(ctx context.Context, dir string, env expand.Environ, args []string) error {
	at := s.at(ctx)
	prog, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(args[0]), "bash -c")
	if err != nil {
		s.unknown(at, "bash -c: code the interpreter does not read: %v", err)
		return nil
	}
	rewrite(prog, "bash")
	var params []string
	if len(args) > 2 {
		params = args[2:]
	}
	return s.run(ctx, dir, env, prog, params)
}

// run runs a parsed program as a new bash process would: a fresh shell
// with the exported environment.
func (s *sandbox) run(ctx context.Context, dir string, env expand.Environ, prog *syntax.File, args []string) error {
	s.mu.Lock()
	s.depth++
	depth := s.depth
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.depth--
		s.mu.Unlock()
	}()
	if depth > 8 {
		return fmt.Errorf("scripts run each other deeper than 8")
	}
	pairs := exportedPairs(env)
	funcs := sourcedFuncs()
	r, err := interp.New(
		interp.Env(expand.ListEnviron(pairs...)),
		interp.Params(append([]string{"--"}, args...)...),
		interp.StdIO(nil, &lockedWriter{s: s}, &lockedWriter{s: s}),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) { return s.call(ctx, args, funcs) }),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.execHandler }),
		interp.OpenHandler(s.open),
		interp.StatHandler(s.stat),
		interp.AccessHandler(s.access),
		interp.ReadDirHandler2(s.readDir),
	)
	if err != nil {
		return err
	}
	r.Dir = dir
	r.Reset()
	r.Funcs = funcs
	return r.Run(ctx, prog)
}

type lockedWriter struct{ s *sandbox }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.stderr.Len() < 64<<10 {
		w.s.stderr.Write(p)
	}
	return len(p), nil
}

// at names a handler's position: file:line of the shell file holding a
// command at that offset and line. Positions carry no file name, so the
// files read are searched: one whose text there starts with the
// command's first word (word, when given) wins over one where the line
// merely matches.
func (s *sandbox) at(ctx context.Context, word ...string) string {
	hc := interp.HandlerCtx(ctx)
	if !hc.Pos.IsValid() {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	off, line := int(hc.Pos.Offset()), int(hc.Pos.Line())
	best, score := "", 0
	for p, data := range s.sources {
		if off >= len(data) || bytes.Count(data[:off], []byte{'\n'})+1 != line {
			continue
		}
		sc := 1
		if len(word) > 0 && word[0] != "" && bytes.HasPrefix(data[off:], []byte(word[0])) {
			sc = 3
		} else if c := data[off]; c == ' ' || c == '\t' || c == '\n' {
			sc = 0 // a command does not start at a blank
		}
		if sc > score || (sc == score && sc > 0 && p < best) {
			best, score = p, sc
		}
	}
	if best == "" {
		return fmt.Sprintf("?:%d", line)
	}
	return fmt.Sprintf("%s:%d", best, line)
}

// runReads is how the run read its shell files.
func (s *sandbox) runReads() *runReads {
	rr := &runReads{code: map[string]bool{}, ran: map[string]bool{}, called: s.called}
	for p, how := range s.reads {
		if how == readCode {
			rr.code[p] = true
		}
		if how&readCode != 0 {
			rr.ran[p] = true
		}
	}
	return rr
}
