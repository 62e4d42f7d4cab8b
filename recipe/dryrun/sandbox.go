package dryrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"runtime"
	"runtime/metrics"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

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
type dryRun struct {
	// refused is the first construct the sandbox refused, refusedAt the
	// servers recorded by then
	refused   string
	refusedAt int
	files     fs.FS
	cache     *Cache
	memory    int64
	pat       *Patterns
	max       int64
	steps     atomic.Int64

	mu      sync.Mutex
	overlay map[string][]byte // absolute path → content written
	// bodies: files the dry run wrote as a health probe's response body
	// (curl -o): their content is what a server that came up answers
	bodies  map[string]bool
	gone    map[string]bool   // tree files removed
	sources map[string][]byte // shell files read, for positions
	// evals: code run by eval, with the file:line of the eval, so that
	// what it launches is placed there (positions in it are the code's)
	evals   []evalCode
	stubbed map[string]bool
	launch  Launch
	stderr  bytes.Buffer
	// hiddenEnv: unknown words exported where names stand (export
	// "$pair" of what a program printed); each command recorded since
	// may start with variables the dry run cannot name
	hiddenEnv  []string
	ended      string // file:line of the last exit
	endedSaid  string // the last line of stderr then
	endedGuess string // the guess that came right before it, if one did
	depth      int
	loops      map[string]int // turns per loop
	// branches are the open branches of ifs whose test read a value the
	// sandbox does not know (see branch)
	branches []openBranch
	env      map[string]string // the workflow's environment
	sites    map[string]int    // calls of stubs per position
	// guess is the last stub whose success may have decided a branch
	// (not infrastructure), at step guessAt
	guess   string
	guessAt int64
	stop    context.CancelCauseFunc
	// how the run read the tree's files (readCode, readData) by path,
	// the source builtin's opens to come, the names it called
	reads  map[string]uint8
	tree   map[string]treeFile // the tree's files read, by path
	dirs   map[string]bool     // the tree's paths probed as directories
	called map[string]bool
	// exports are where each variable was last exported, with the value
	// it had then (Command.EnvAt)
	exports map[string]exportSite
}

// exportSite is the position of an export of a variable and its value.
type exportSite struct {
	at, value string // file:line, the value
}

const (
	readCode uint8 = 1 << iota // run or sourced
	readData                   // read as text (cat, a redirection)
)

// mark notes how the run read the file at p.
func (s *dryRun) mark(p string, how uint8) {
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

// runHere runs a dry run in this process; reads says whether to keep how
// the run read its files (for a memo).
func runHere(ctx context.Context, cache *Cache, files fs.FS, script string, args []string, env map[string]string, o Options, reads bool) *Launch {
	o.defaults()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	s := &dryRun{files: files, cache: cache, pat: o.Patterns, max: o.MaxSteps, memory: o.Memory, overlay: map[string][]byte{}, gone: map[string]bool{}, env: env,
		sources: map[string][]byte{}, stubbed: map[string]bool{}, loops: map[string]int{}, sites: map[string]int{}, stop: stop,
		reads: map[string]uint8{}, called: map[string]bool{}, tree: map[string]treeFile{}, dirs: map[string]bool{},
		exports: map[string]exportSite{}}
	defer watchMemory(ctx, o.Memory, !o.inWorker, stop)()
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
	if reads { // only a memo keeps it
		l.read = s.runReads()
	}
	return l
}

func (s *dryRun) finish(ctx context.Context, err error) *Launch {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.launch
	for name := range s.stubbed {
		l.Stubbed = append(l.Stubbed, name)
	}
	sort.Strings(l.Stubbed)
	status, isExit := interp.IsExitStatus(err)
	switch {
	case errors.Is(context.Cause(ctx), errMemory):
		l.Status, l.Reason = StatusUnknown, fmt.Sprintf("%s (%d MiB)", memoryStop, s.memory>>20)
	case err == nil, errors.Is(context.Cause(ctx), errDone):
	case isExit && interpLimit.MatchString(lastLine(s.stderr.String())):
		l.Status, l.Exit, l.Reason = StatusUnknown, int(status), "bash the interpreter does not run: "+lastLine(s.stderr.String())
	case isExit:
		l.Exit = int(status)
		l.EndedAt = s.ended
		l.Reason = lastLine(s.stderr.String())
		guess := ""
		if s.steps.Load()-s.guessAt <= guessWindow {
			guess = s.guess
		}
		if s.ended != "" {
			// what came right before the exit, not what the launcher
			// checked or said after it (a check after cannot have
			// decided it)
			guess = s.endedGuess
			if s.endedSaid != "" {
				l.Reason = s.endedSaid
			}
		}
		if missing := s.unmapped(l.Reason); status != 0 && len(l.Servers) == 0 && missing != "" {
			// the script needs a variable this workflow mapping does not
			// give (an older workflow's name): not the recipe's failure
			l.Status = StatusUnknown
			l.Reason = fmt.Sprintf("needs %s, which the workflow environment perflog gives a point does not have (settings: launch: env): %s", missing, l.Reason)
		} else if status != 0 && guess != "" && len(l.Servers) == 0 {
			// the failure follows a check the sandbox could only guess
			// (awk, python -c, grep on a file it cannot read)
			l.Status = StatusUnknown
			l.Unknowns = append(l.Unknowns, Unknown{At: l.EndedAt, What: fmt.Sprintf(
				"exits %d right after %s, which the sandbox does not run (%s)", status, guess, l.Reason)})
			l.Reason = fmt.Sprintf("decided by %s, which the sandbox does not run: %s", guess, l.Reason)
		}
	case errors.Is(err, errBudget):
		l.Status, l.Reason = StatusUnknown, fmt.Sprintf("stopped after %d steps (a loop that does not end?)", s.max)
	case errors.Is(err, errProcesses):
		l.Status, l.Reason = StatusUnknown, fmt.Sprintf("%s (%d running at once: a fork bomb?)", processStop, maxProcesses)
	case ctx.Err() != nil:
		l.Status, l.Reason = StatusUnknown, "stopped at the time budget (a loop that does not end?)"
	default:
		l.Status, l.Reason = StatusUnknown, err.Error()
	}
	if s.refused != "" && s.refusedAt == 0 && (l.Status == "" || l.Status == StatusLaunched) {
		// refused before any server started: what it launched after is
		// not known
		l.Status, l.Reason = StatusUnknown, s.refused
		l.Servers, l.Routers, l.Clients = nil, nil, nil
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
	if l.Status == StatusUnknown && len(l.Servers) > 0 && l.Reason != "" && (s.refused == "" || s.refusedAt > 0) {
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
func (s *dryRun) unmapped(reason string) string {
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

func (s *dryRun) unknown(at, format string, a ...any) {
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
func (s *dryRun) runScript(ctx context.Context, dir string, env expand.Environ, file string, args []string) error {
	abs := s.abs(dir, file)
	data, ok := s.read(abs)
	s.mark(abs, readCode)
	if !ok {
		s.unknown("", "runs %s, which does not exist", file)
		return interp.NewExitStatus(127)
	}
	prog, err := s.cache.parseScript(abs, s.rel(abs), data)
	if err != nil {
		return err
	}
	// a script run from bash -c code places its commands in its own file
	ctx = context.WithValue(ctx, codeSite{}, "")
	return s.run(ctx, dir, env, prog, file, args)
}

// runCode runs `bash -c CODE [NAME ARGS...]`.
func (s *dryRun) runCode(ctx context.Context, dir string, env expand.Environ, args []string) error {
	at := s.at(ctx)
	if len(args[0]) > maxCode {
		return fmt.Errorf("bash -c: %d KiB of code, over the %d KiB the sandbox runs", len(args[0])>>10, maxCode>>10)
	}
	prog, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(inertMarkers(args[0])), "bash -c")
	if err == nil {
		if u := unsupported(prog); u != "" {
			err = errors.New(u)
		}
	}
	if err != nil {
		s.unknown(at, "bash -c: code the interpreter does not read: %v", err)
		return nil
	}
	rewrite(prog, "bash")
	var params []string
	if len(args) > 2 {
		params = args[2:]
	}
	arg0 := "bash"
	if len(args) > 1 {
		arg0 = args[1]
	}
	if at != "" && !strings.HasPrefix(at, "?") {
		ctx = context.WithValue(ctx, codeSite{}, at)
	}
	return s.run(ctx, dir, env, prog, arg0, params)
}

// maxDepth bounds how deep scripts run each other. A multi-node agentic
// client is 9 deep (launcher, driver, submit.sh, job.slurm, srun's bash
// -c, the server container, server.sh, the client container,
// trace_replay.sh).
const maxDepth = 16

// run runs a parsed program as a new bash process would: a fresh shell
// with the exported environment.
func (s *dryRun) run(ctx context.Context, dir string, env expand.Environ, prog *syntax.File, arg0 string, args []string) error {
	s.mu.Lock()
	s.depth++
	depth := s.depth
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.depth--
		s.mu.Unlock()
	}()
	if depth > maxDepth {
		s.unknown(s.at(ctx), "scripts run each other deeper than %d: the run stops", maxDepth)
		return fmt.Errorf("scripts run each other deeper than %d", maxDepth)
	}
	pre := prelude(env, arg0)
	env = hermeticEnv{expand.ListEnviron(exportedPairs(env)...)}
	funcs := s.cache.sourcedFuncs()
	r, err := interp.New(
		interp.Env(env),
		interp.Params(append([]string{"--"}, args...)...),
		interp.StdIO(nil, s.stdout(ctx), &lockedWriter{s: s}),
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
	prog = &syntax.File{Name: prog.Name, Stmts: append(pre, prog.Stmts...), Last: prog.Last}
	return r.Run(ctx, prog)
}

// stdoutKey carries, into a script run by a command, where that
// command's output goes (see exec).
type stdoutKey struct{}

// stdout is where a run's output goes: its caller's, else the run's own
// (what no one captures).
func (s *dryRun) stdout(ctx context.Context) io.Writer {
	if w, ok := ctx.Value(stdoutKey{}).(io.Writer); ok && w != nil {
		return w
	}
	return &lockedWriter{s: s}
}

type lockedWriter struct{ s *dryRun }

func (w *lockedWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("cannot create fifo")) || bytes.Contains(p, []byte("cannot open fifo")) {
		// a process substitution the rewrite did not reach: the
		// interpreter's named pipe was refused (noTempDir)
		w.s.refuse("a process substitution, which the sandbox refuses at run time")
	}
	if m := reHiddenExport.FindSubmatch(p); m != nil {
		w.s.hideEnv(string(m[1]))
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.s.stderr.Len() < 64<<10 {
		w.s.stderr.Write(p)
	}
	return len(p), nil
}

// reHiddenExport is the interpreter's complaint at an export of an
// unknown word (export "$pair", the pair a program printed).
// Only a marker of the sandbox's own form counts (a script could print
// the complaint itself, but only to the effect an export of its own has).
var reHiddenExport = regexp.MustCompile(`^declare: invalid name "(` + regexp.QuoteMeta(UnknownMarker) + `[A-Za-z0-9_.+-]{1,64}>)"\n?$`)

// hideEnv notes an unknown word exported where a name stands: what it
// would export is the machine's.
func (s *dryRun) hideEnv(word string) {
	s.mu.Lock()
	seen := slices.Contains(s.hiddenEnv, word)
	if !seen && len(s.hiddenEnv) < 16 {
		s.hiddenEnv = append(s.hiddenEnv, word)
	}
	s.mu.Unlock()
	if !seen {
		s.unknown("", "exports %s, what a program the sandbox does not run printed: the servers may start with variables it cannot name", word)
	}
}

// at names a handler's position: file:line of the shell file holding a
// command at that offset and line. Positions carry no file name, so the
// files read are searched: one whose text there starts with the
// command's first word (word[0], when given) wins over one where the line
// merely matches. Code run by eval whose text there starts with that word
// wins over both; among several, the one holding most of the other words.
func (s *dryRun) at(ctx context.Context, word ...string) string {
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
	site, most := "", 0
	for _, e := range s.evals {
		if len(word) == 0 || word[0] == "" || off >= len(e.code) || bytes.Count(e.code[:off], []byte{'\n'})+1 != line ||
			!bytes.HasPrefix(e.code[off:], []byte(word[0])) {
			continue
		}
		// codes alike at this position (one per role) are told apart
		// by how many of the command's words each holds
		n := 1
		for _, w := range word[1:] {
			if w != "" && bytes.Contains(e.code[off:], []byte(w)) {
				n++
			}
		}
		if n >= most { // on a tie, the latest eval
			site, most = e.site, n
		}
	}
	if site != "" {
		return site // eval CODE: where it was run
	}
	if site, ok := ctx.Value(codeSite{}).(string); ok && site != "" && score < 3 {
		return site // bash -c CODE: where it was run (a file that has a command here by chance is not it)
	}
	if best == "" {
		return fmt.Sprintf("?:%d", line)
	}
	return fmt.Sprintf("%s:%d", best, line)
}

// evalCode is code an eval ran, and the file:line of the eval.
type evalCode struct {
	site string
	code []byte
}

// maxEvals bounds the eval codes kept for positions (the latest), and
// maxEvalCode the size of one: every command's place is looked for in
// each.
const (
	maxEvals    = 64
	maxEvalCode = 16 << 10
)

// noteEval keeps the code of `eval ARGS` at the eval's own position.
func (s *dryRun) noteEval(ctx context.Context, args []string) {
	if strings.TrimSpace(strings.Join(args[1:], "")) == "" {
		return // nothing runs (a branch's close, mostly)
	}
	site := s.at(ctx, "eval")
	if site == "" || strings.HasPrefix(site, "?") {
		return
	}
	code := []byte(strings.Join(args[1:], " "))
	if len(code) > maxEvalCode {
		return // what it runs is placed by its file
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evals = slices.DeleteFunc(s.evals, func(e evalCode) bool { return e.site == site && bytes.Equal(e.code, code) })
	if len(s.evals) == maxEvals {
		s.evals = s.evals[1:]
	}
	s.evals = append(s.evals, evalCode{site, code}) // the latest last
}

// codeSite carries, into the run of `bash -c CODE`, the file:line that
// ran it: what CODE launches is said to be launched there.
type codeSite struct{}

// runReads is how the run read its shell files.
func (s *dryRun) runReads() *runReads {
	rr := &runReads{code: map[string]bool{}, ran: map[string]bool{}, called: s.called, shapes: map[string]*codeShape{}}
	for p, how := range s.reads {
		if how == readCode {
			rr.code[p] = true
		}
		if how&readCode != 0 {
			rr.ran[p] = true
			if t := s.tree[p]; t.ok {
				rr.shapes[p] = s.cache.shape(t.data)
			}
		}
	}
	return rr
}

// errMemory stops a run that holds more than its memory budget.
var errMemory = errors.New("memory budget exceeded")

// watchMemory stops the run (stop) when the heap it holds grows past
// limit; it returns the function that ends the watch. The heap is the
// process's: in a worker it is the runs'. In another process (shared) it
// also holds what the process holds besides (a history's memo, caches of
// a long command or test), so the limit is counted from the live heap
// when the run starts: a process that holds a gigabyte of its own must
// neither stop every run nor collect every few milliseconds. The heap is
// sampled often and cheaply (its objects, garbage not yet collected
// included); past the limit a collection tells what is live, which alone
// stops the run: garbage is no run's fault, and a worker collects late
// (serve.go).
func watchMemory(ctx context.Context, limit int64, shared bool, stop context.CancelCauseFunc) func() {
	done, exited := make(chan struct{}), make(chan struct{})
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	if shared {
		if metrics.Read(live); live[0].Value.Kind() == metrics.KindUint64 {
			limit += int64(live[0].Value.Uint64())
		}
	}
	go func() {
		defer close(exited)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		over := func(s []metrics.Sample) bool {
			metrics.Read(s)
			return s[0].Value.Kind() == metrics.KindUint64 && int64(s[0].Value.Uint64()) > limit
		}
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if !over(heap) {
					continue
				}
				runtime.GC()
				if over(live) {
					stop(errMemory)
					return
				}
			}
		}
	}()
	return func() { close(done); <-exited }
}

// refuse notes a construct the sandbox refused: the run is unknown from
// there (what a server launched before it stays known).
func (s *dryRun) refuse(what string) {
	s.mu.Lock()
	first := s.refused == ""
	if first {
		s.refused, s.refusedAt = what, len(s.launch.Servers)
	}
	s.mu.Unlock()
	s.unknown("", "%s", what)
}
