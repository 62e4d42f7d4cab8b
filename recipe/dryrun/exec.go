package dryrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func (s *dryRun) step() error {
	if s.steps.Add(1) > s.max {
		return errBudget
	}
	if runtime.NumGoroutine() > maxProcesses {
		// a background job or a subshell stops here, and its parent shell
		// would go on: the whole run is refused
		s.refuse(fmt.Sprintf("%s (%d running at once: a fork bomb?)", processStop, maxProcesses))
		return errProcesses
	}
	return nil
}

// maxProcesses bounds the subshells, pipelines and background jobs of a
// run at once (each is a goroutine of the interpreter).
const maxProcesses = 1024

var errProcesses = errors.New("too many processes at once")

// processStop starts the reason of a run stopped at maxProcesses.
const processStop = "stopped at the process budget"

// call runs before every simple command: the step budget, the exits
// and the client functions.
func (s *dryRun) call(ctx context.Context, args []string, funcs map[string]*syntax.Stmt) ([]string, error) {
	if err := s.step(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.called[args[0]] = true
	for _, a := range args[1:] {
		if nameLike(a) {
			s.called[a] = true
		}
	}
	s.mu.Unlock()
	if unsupportedBuiltin[args[0]] {
		return append([]string{stubCommand}, args...), nil
	}
	if l := lookup(args, funcs); l != nil {
		return l, nil
	}
	args = ownerTests(args)
	if args[0] == "eval" && len(args) > 1 {
		s.noteEval(ctx, args)
	}
	switch args[0] {
	case "source", ".":
		if len(args) >= 2 {
			hc := interp.HandlerCtx(ctx)
			p := s.abs(hc.Dir, args[1])
			s.mark(p, readCode)
			if data, ok := s.read(p); ok && len(args) == 2 {
				data = s.asSourced(p, data)
				// a file parsed before this shell started is its function
				// (one parsed since, by another run, is not in its table)
				if fn := s.cache.sourcedFunc(p, s.rel(p), data); fn != "" && funcs[fn] != nil {
					return []string{fn}, nil
				}
			}
			// the builtin opens it through the open handler, never
			// searching $PATH on disk (see sourceMark)
			return append([]string{args[0], sourceMark + p}, args[2:]...), nil
		}
	case "eval":
		if n := len(args); n > 2 && strings.HasPrefix(args[n-1], evalNamesWord) {
			names := strings.Split(strings.TrimPrefix(args[n-1], evalNamesWord), ",")
			args = args[:n-1]
			if out := strings.TrimSpace(strings.Join(args[1:], " ")); unknownWord.MatchString(out) {
				// the output of a program the sandbox does not run: what
				// it sets is unknown, never unset
				var b strings.Builder
				q, err := syntax.Quote(out, syntax.LangBash)
				if err != nil {
					q = "''"
				}
				for _, name := range names {
					if isVarName(name) {
						fmt.Fprintf(&b, "%s=%s\n", name, q)
					}
				}
				s.unknown(s.at(ctx, "eval"), "eval of %s: %s unknown", out, strings.Join(names, ", "))
				args = []string{"eval", b.String()}
			}
		}
		if len(args) > 1 {
			if code, ok := rewriteCode(strings.Join(args[1:], " "), "eval"); ok {
				return []string{"eval", code}, nil
			}
		}
	case "which":
		// answered as command -v answers a program: taken as installed
		var names []string
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				names = append(names, "file="+a)
			}
		}
		if len(names) > 0 {
			return append([]string{lookupCommand, "-p"}, names...), nil
		}
	case "set":
		return setArgs(args), nil
	case "trap":
		return trapArgs(args), nil
	case "printf":
		// %q is not supported by the interpreter; what printf prints does
		// not reach a launch
		if len(args) > 1 {
			args = append([]string(nil), args...)
			i := 1
			if args[1] == "-v" && len(args) > 3 {
				i = 3
			}
			args[i] = unsupportedVerb.ReplaceAllString(args[i], "%s")
		}
	case "exit":
		if len(args) > 1 && args[1] != "0" {
			at := s.at(ctx, "exit")
			s.mu.Lock()
			if s.ended == "" { // the innermost exit comes first
				// (with what it said last, and when: a check the launcher
				// makes after it cannot have decided it)
				s.ended, s.endedSaid, s.endedGuess = at, lastLine(s.stderr.String()), ""
				if s.guess != "" && s.steps.Load()-s.guessAt <= guessWindow {
					s.endedGuess = s.guess
				}
			}
			s.mu.Unlock()
		}
	default:
		for _, f := range s.pat.ClientFunctions {
			if args[0] == f {
				s.record(ctx, interp.HandlerCtx(ctx).Env, &s.launch.Clients, nil, args, 1)
			}
		}
	}
	return args, nil
}

// unknownWord matches a value that is one unknown value, whole.
var unknownWord = regexp.MustCompile(`^<unknown:[^<>\s]*>$`)

// loopCommand counts a loop's turns (see rewrite).
const loopCommand = "perflog-loop"

// arithCommand evaluates an arithmetic expansion that reads a variable
// (see rewrite and arith).
const arithCommand = "perflog-arith"

// exportCommand follows each export (export, declare -x) to say where
// the variables it names were exported (Command.EnvAt).
const exportCommand = "perflog-export"

// branchCommand opens and closes a branch of an if whose test reads
// values (see rewrite and branch).
const branchCommand = "perflog-branch"

// fileExt matches a file name extension (.json, .model, .sh), not the
// dotted version inside a checkpoint's name (GLM-5.2-NVFP4).
var fileExt = regexp.MustCompile(`^\.[A-Za-z][A-Za-z0-9]{0,7}$`)

// unsupportedVerb matches the printf conversions the interpreter lacks
// (%q, floats, widths on them).
var unsupportedVerb = regexp.MustCompile(`%[-+ #0]*[0-9]*(\.[0-9]*)?[qfeEgGaA]`)

// setArgs drops xtrace from a set command: the run's stderr keeps what
// the scripts say, not a trace of every command.
func setArgs(args []string) []string {
	out := []string{args[0]}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if (a == "-o" || a == "+o") && i+1 < len(args) {
			if args[i+1] != "xtrace" {
				out = append(out, a, args[i+1])
			}
			i++
			continue
		}
		if len(a) > 1 && (a[0] == '-' || a[0] == '+') && a != "--" {
			a = a[:1] + strings.ReplaceAll(a[1:], "x", "")
			if len(a) == 1 {
				continue
			}
		}
		out = append(out, a)
	}
	if len(out) == 1 && len(args) > 1 {
		return []string{"true"} // a bare set prints every variable
	}
	return out
}

// trapArgs keeps the traps the interpreter knows (EXIT, ERR): a signal
// never comes in a dry run.
func trapArgs(args []string) []string {
	if len(args) < 3 {
		return args
	}
	out := []string{args[0], args[1]}
	if code, ok := rewriteCode(args[1], "trap"); ok {
		out[1] = code
	}
	for _, sig := range args[2:] {
		switch strings.TrimPrefix(strings.ToUpper(sig), "SIG") {
		case "EXIT", "ERR", "0":
			out = append(out, sig)
		}
	}
	if len(out) == 2 {
		return []string{"true"}
	}
	return out
}

// stubCommand runs, through the exec handler, a builtin the interpreter
// does not implement (kill, ulimit, ...): it is stubbed like a program.
const stubCommand = "perflog-stub"

var unsupportedBuiltin = map[string]bool{"bg": true, "bind": true, "caller": true, "compgen": true, "complete": true,
	"compopt": true, "disown": true, "enable": true, "fc": true, "fg": true, "history": true, "jobs": true, "kill": true,
	"logout": true, "newgrp": true, "suspend": true, "ulimit": true, "umask": true}

// execHandler replaces the execution of every program.
func (s *dryRun) execHandler(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	return s.exec(ctx, hc.Dir, hc.Env, args)
}

func (s *dryRun) exec(ctx context.Context, dir string, env expand.Environ, args []string) error {
	if nodes, ok := srunTasks(ctx, args, env); ok {
		return s.srun(ctx, dir, env, args, nodes)
	}
	for i := range args {
		if i > 0 && !isWrapper(args) {
			break
		}
		rest := args[i:]
		if n := matchAny(s.pat.Servers, rest); n > 0 {
			s.record(ctx, env, &s.launch.Servers, args[:i], rest, n)
			return nil
		}
		if n := matchAny(s.pat.Routers, rest); n > 0 {
			s.record(ctx, env, &s.launch.Routers, args[:i], rest, n)
			return nil
		}
		if n := matchAny(s.pat.Clients, rest); n > 0 {
			s.record(ctx, env, &s.launch.Clients, args[:i], rest, n)
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c, ok := dockerRun(args, env, func(p string) ([]byte, bool) { return s.read(s.abs(dir, p)) }); ok {
		s.bindFiles(c.binds)
		for _, f := range c.missing {
			s.unknown(s.at(ctx, args[0]), "docker --env-file %s: a file the run did not write, outside the tree: its variables are unknown", f)
			s.hideEnv(UnknownMarker + "env-file " + f + ">")
		}
		if len(c.argv) > 0 {
			return s.exec(ctx, c.dir, c.env, c.argv)
		}
		return nil
	}
	if ok, err := s.sbatch(ctx, dir, env, args); ok {
		return err
	}
	if file, sargs, extra, ok := s.scriptOf(dir, args); ok {
		if len(extra) > 0 {
			env = withEnv(env, extra)
			at := s.at(ctx, args[0]) // the wrapper set them (srun --export=ALL,K=V)
			s.mu.Lock()
			for _, kv := range extra {
				k, v, _ := strings.Cut(kv, "=")
				s.exports[k] = exportSite{at: at, value: v}
			}
			s.mu.Unlock()
		}
		// what the script prints goes where this command's output goes (a
		// capture: JOB_ID=$(bash ./submit.sh), IP=$(srun bash -c 'ip ...'))
		ctx = context.WithValue(ctx, stdoutKey{}, interp.HandlerCtx(ctx).Stdout)
		if file == "-c" {
			return s.runCode(ctx, dir, env, sargs)
		}
		return s.runScript(ctx, dir, env, file, sargs)
	}
	return s.builtin(ctx, dir, args)
}

// infra are stubbed programs whose success is the runner's normal
// state (a failure after them is not blamed on a guess).
var infra = map[string]bool{"sleep": true, "srun": true, "salloc": true, "sbatch": true, "squeue": true, "scancel": true,
	"scontrol": true, "sbcast": true, "docker": true, "podman": true, "enroot": true, "unsquashfs": true, "flock": true,
	"hf": true, "huggingface-cli": true, "nvidia-smi": true, "rocm-smi": true, "amd-smi": true, "pip": true, "echo": true,
	"date": true, "hostname": true, "tail": true, "tar": true, "curl": true, "wget": true, "kill": true, "sed": true}

// idleQuery answers a command that asks what uses the GPUs as an idle
// machine does: nvidia-smi --query-compute-apps=... lists no process,
// rocm-smi --showmemuse has no memory in use. Launchers refuse to start
// on a busy machine ("[ERROR] GPU busy from previous run"), and the dry
// run is of a machine fit to run the point. ok is false for another
// command.
func idleQuery(name string, args []string) (answer string, ok bool) {
	for _, a := range args {
		switch {
		case name == "nvidia-smi" && strings.HasPrefix(a, "--query-compute-apps"):
			return "", true
		case name == "rocm-smi" && a == "--showmemuse":
			return "GPU[0]\t\t: GPU Memory Allocated (VRAM%): 0\n", true
		}
	}
	return "", false
}

// healthQuery says whether a command asks a server for its HTTP status
// (curl -w '%{http_code}'), as launch paths poll servers they started
// until they answer.
func healthQuery(name string, args []string) bool {
	if name != "curl" {
		return false
	}
	for i, a := range args {
		if (a == "-w" || a == "--write-out") && i+1 < len(args) && strings.TrimSpace(args[i+1]) == "%{http_code}" {
			return true
		}
	}
	return false
}

// guessWindow is how many steps after a guessed stub a failing exit is
// taken to follow from it.
const guessWindow = 5

// wrappers are programs that run the command in their arguments: a
// launch behind them (mpirun -n 1 trtllm-serve ...) is recorded with
// them as its Wrapper.
var wrappers = map[string]bool{"mpirun": true, "mpiexec": true, "srun": true, "docker": true, "podman": true,
	"timeout": true, "nohup": true, "env": true, "numactl": true, "taskset": true, "stdbuf": true, "setsid": true,
	"sudo": true, "nice": true, "ionice": true, "time": true, "apptainer": true, "singularity": true,
	"enroot": true, "exec": true, "torchrun": true}

// envWrapper applies what an env wrapper does to the environment of the
// command it runs (`env HF_HUB_OFFLINE=1 vllm serve ...`): -i clears it,
// -u NAME unsets, NAME=VALUE sets.
func envWrapper(wrapper []string, env map[string]string) {
	for i := 0; i < len(wrapper); i++ {
		if path.Base(wrapper[i]) != "env" {
			continue
		}
		j := i + 1
	words:
		for ; j < len(wrapper); j++ {
			w := wrapper[j]
			name, value, isSet := strings.Cut(w, "=")
			switch {
			case w == "-i" || w == "--ignore-environment" || w == "-":
				clear(env)
			case (w == "-u" || w == "--unset") && j+1 < len(wrapper):
				j++
				delete(env, wrapper[j])
			case strings.HasPrefix(w, "--unset="):
				delete(env, strings.TrimPrefix(w, "--unset="))
			case strings.HasPrefix(w, "-"): // another option
			case isSet && isVarName(name):
				env[name] = value
			default:
				break words // the command env runs (another wrapper, perhaps)
			}
		}
		i = j - 1
	}
}

func isWrapper(args []string) bool {
	b := path.Base(args[0])
	return wrappers[b] || (b == "uv" && len(args) > 1 && args[1] == "run")
}

type container struct {
	dir   string
	env   expand.Environ
	argv  []string
	binds [][2]string // -v SOURCE:TARGET, absolute paths
	// missing: --env-file files the run cannot read (the machine's):
	// the container may start with variables the dry run cannot name
	missing []string
}

// bindFields splits a bind SOURCE:TARGET[:OPTIONS] at its colons, not at
// those inside an unknown value (/logs/x_<unknown:slurm.job_id>.env).
func bindFields(v string) []string {
	var out []string
	start, depth := 0, 0
	for i := 0; i < len(v); i++ {
		switch {
		case strings.HasPrefix(v[i:], UnknownMarker):
			depth++
			i += len(UnknownMarker) - 1
		case v[i] == '>' && depth > 0:
			depth--
		case v[i] == ':' && depth == 0:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// bindFiles makes a file the run wrote, bound into a container (docker -v
// FILE:/config/x.env), readable at its place there. The overlay is the
// run's one file system, so the file is there for every later reader; a
// directory bound elsewhere (the tree at /workspace) is not followed.
func (s *dryRun) bindFiles(binds [][2]string) {
	for _, b := range binds {
		s.mu.Lock()
		data, ok := s.overlay[path.Clean(b[0])]
		s.mu.Unlock()
		if ok && b[1] != b[0] {
			s.write(path.Clean(b[1]), data, false)
		}
	}
}

// dockerBool are docker run options without a value.
var dockerBool = map[string]bool{"--rm": true, "--privileged": true, "-i": true, "-t": true, "-it": true, "-d": true,
	"--detach": true, "--init": true, "--interactive": true, "--tty": true, "--read-only": true, "-P": true,
	"--publish-all": true, "--no-healthcheck": true, "--oom-kill-disable": true}

// dockerRun reads `docker run [options] IMAGE [command]` (podman too):
// the command runs in the container with the environment its --env
// options pass (NAME=VALUE, or NAME from the caller) and its --env-file
// files hold (read with read: a line NAME=VALUE, or NAME from the
// caller; # comments), and its --workdir (default Workspace).
func dockerRun(args []string, env expand.Environ, read func(string) ([]byte, bool)) (container, bool) {
	b := path.Base(args[0])
	if (b != "docker" && b != "podman") || len(args) < 3 || args[1] != "run" {
		return container{}, false
	}
	c := container{dir: Workspace}
	var pairs []string
	var entry []string
	envFileBytes := 0
	i := 2
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, val, hasVal := strings.Cut(a, "=")
		if !hasVal && !dockerBool[a] && i+1 < len(args) {
			i++
			val = args[i]
		} else if !hasVal {
			continue
		}
		switch name {
		case "-e", "--env":
			if strings.Contains(val, "=") {
				pairs = append(pairs, val)
			} else if vr := env.Get(val); vr.IsSet() {
				pairs = append(pairs, val+"="+vr.String())
			}
		case "--env-file":
			data, ok := read(val)
			if !ok || envFileBytes+len(data) > maxEnvFile {
				c.missing = append(c.missing, val)
				break
			}
			envFileBytes += len(data)
			for _, line := range strings.Split(string(data), "\n") {
				line = strings.TrimRight(line, "\r")
				if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
					continue
				}
				if strings.Contains(line, "=") {
					pairs = append(pairs, line)
				} else if vr := env.Get(line); vr.IsSet() {
					pairs = append(pairs, line+"="+vr.String())
				}
			}
		case "-w", "--workdir":
			c.dir = path.Clean(val)
		case "-v", "--volume":
			if f := bindFields(val); len(f) >= 2 && strings.HasPrefix(f[0], "/") && strings.HasPrefix(f[1], "/") {
				c.binds = append(c.binds, [2]string{f[0], f[1]})
			}
		case "--entrypoint":
			entry = nil // "" resets the image's
			if val != "" {
				entry = []string{val}
			}
		}
	}
	if i >= len(args) {
		return c, true // no image: nothing runs
	}
	c.argv = append(entry, args[i+1:]...)
	c.env = expand.ListEnviron(lastPairs(pairs)...)
	return c, true
}

// maxEnvFile bounds what a docker run's --env-file files hold in all: a
// file past it is one the run cannot read (its variables unknown).
const maxEnvFile = 256 << 10

// lastPairs keeps the last NAME=VALUE of each name, in order (the
// environment a later one sets; ListEnviron's own de-duplication is
// quadratic in the duplicates).
func lastPairs(pairs []string) []string {
	last := make(map[string]int, len(pairs))
	for i, p := range pairs {
		name, _, _ := strings.Cut(p, "=")
		last[name] = i
	}
	out := pairs[:0:0]
	for i, p := range pairs {
		name, _, _ := strings.Cut(p, "=")
		if last[name] == i {
			out = append(out, p)
		}
	}
	return out
}

// scriptOf finds the shell script a command runs: "bash FILE ARGS",
// "./FILE.sh", and either behind a wrapper (srun ... bash FILE); extra
// is the environment the wrapper adds (srun --export=ALL,K=V, docker -e
// K=V, env K=V).
func (s *dryRun) scriptOf(dir string, args []string) (file string, sargs []string, extra []string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--export="):
			for _, kv := range strings.Split(strings.TrimPrefix(a, "--export="), ",") {
				if strings.Contains(kv, "=") {
					extra = append(extra, kv)
				}
			}
		case (a == "-e" || a == "--env") && i+1 < len(args) && strings.Contains(args[i+1], "="):
			extra = append(extra, args[i+1])
			i++
		case path.Base(args[0]) == "env" && i > 0 && strings.Contains(a, "=") && !strings.HasPrefix(a, "-"):
			extra = append(extra, a)
		}
		base := path.Base(a)
		if base == "bash" || base == "sh" {
			j := i + 1
			for j < len(args) && strings.HasPrefix(args[j], "-") && !dashC(args[j]) {
				j++
			}
			if j+1 < len(args) && dashC(args[j]) {
				return "-c", args[j+1:], extra, true
			}
			if j < len(args) && !dashC(args[j]) {
				if _, exists := s.read(s.abs(dir, args[j])); exists {
					return args[j], args[j+1:], extra, true
				}
			}
			return "", nil, nil, false
		}
		if i == 0 && strings.HasSuffix(a, ".sh") {
			if _, exists := s.read(s.abs(dir, a)); exists {
				return a, args[1:], extra, true
			}
		}
	}
	return "", nil, nil, false
}

// dashC says whether a shell option word holds -c ("-c", "-lc", "-ec").
func dashC(a string) bool {
	return len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a[1:], "c")
}

func withEnv(env expand.Environ, extra []string) expand.Environ {
	return expand.ListEnviron(append(exportedPairs(env), extra...)...)
}

// exported calls fn with each exported variable of env that is set: what
// a new process would get (not the rewrites' own statusVar, which set -a
// would export).
func exported(env expand.Environ, fn func(name, value string)) {
	env.Each(func(name string, vr expand.Variable) bool {
		if vr.Exported && vr.IsSet() && name != statusVar {
			fn(name, vr.String())
		}
		return true
	})
}

// exportedPairs are env's exported variables as NAME=VALUE.
func exportedPairs(env expand.Environ) []string {
	var pairs []string
	exported(env, func(name, value string) { pairs = append(pairs, name+"="+value) })
	return pairs
}

// matchAny returns how many words of args are the program of one of
// the patterns (0: none matches). A pattern for python skips the
// interpreter's own options (python3 -u -m X is python3 -m X).
func matchAny(pats [][]string, args []string) int {
	skip := 0
	if len(args) > 2 && strings.HasPrefix(path.Base(args[0]), "python") {
		i := 1
		for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-m" && args[i] != "-c" && len(args[i]) <= 3 {
			i++
		}
		if i > 1 {
			skip = i - 1
			args = append([]string{args[0]}, args[i:]...)
		}
	}
	for _, p := range pats {
		if len(args) < len(p) {
			continue
		}
		ok := true
		for i, w := range p {
			a := args[i]
			if i == 0 {
				a = path.Base(a)
			}
			if m, _ := path.Match(w, a); !m {
				ok = false
				break
			}
		}
		if ok {
			return len(p) + skip
		}
	}
	return 0
}

// record keeps one launch with the environment it starts with.
func (s *dryRun) record(ctx context.Context, env expand.Environ, into *[]Command, wrapper, argv []string, program int) {
	first := argv[0]
	if len(wrapper) > 0 {
		first = wrapper[0]
	}
	c := Command{Argv: append([]string(nil), argv...), At: s.at(ctx, append([]string{first}, argv...)...), Env: map[string]string{}}
	if len(wrapper) > 0 {
		c.Wrapper = append([]string(nil), wrapper...)
	}
	s.mu.Lock()
	c.HiddenEnv = slices.Clone(s.hiddenEnv)
	s.mu.Unlock()
	exported(env, func(name, value string) {
		if name != "SECONDS" {
			c.Env[name] = value
		}
	})
	before := maps.Clone(c.Env)
	envWrapper(wrapper, c.Env)
	c.Flags, c.Stray = ParseArgv(c.Argv, program)
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, v := range c.Env {
		at := ""
		if b, ok := before[name]; !ok || b != v {
			at = c.At // the wrapper set it (docker -e X=1)
		} else if e, ok := s.exports[name]; ok && e.value == v {
			at = e.at
		}
		if at != "" && !strings.HasPrefix(at, "?") {
			if c.EnvAt == nil {
				c.EnvAt = map[string]string{}
			}
			c.EnvAt[name] = at
		}
	}
	for _, a := range c.Argv {
		for p, data := range s.overlay {
			if strings.Contains(a, p) || (strings.HasPrefix(p, Workspace+"/") && strings.Contains(a, strings.TrimPrefix(p, Workspace+"/"))) {
				if c.Files == nil {
					c.Files = map[string]string{}
				}
				c.Files[s.rel(p)] = string(data)
			}
		}
	}
	if len(*into) < 16 {
		*into = append(*into, c)
	}
	if into == &s.launch.Clients {
		s.stop(errDone)
	}
}

// builtin runs the few programs the sandbox knows, on the overlay, and
// stubs every other.
func (s *dryRun) builtin(ctx context.Context, dir string, args []string) error {
	hc := interp.HandlerCtx(ctx)
	out := hc.Stdout
	if args[0] == stubCommand && len(args) > 1 {
		args = args[1:]
		out = io.Discard
	}
	if args[0] == lookupCommand && len(args) >= 2 {
		return s.lookupRun(ctx, args[1], args[2:])
	}
	if args[0] == arithCommand && len(args) == 2 {
		fmt.Fprint(out, arith(hc.Env, args[1]))
		return nil
	}
	if args[0] == branchCommand && len(args) >= 3 {
		s.branch(hc, out, args[1], args[2], args[3:])
		return nil
	}
	if args[0] == exportCommand && len(args) >= 3 {
		// "perflog-export AT STATUS NAMES...": where each was exported,
		// with the value it got; the export's own status stays
		at := args[1]
		if at == "-" { // a sourced file's: found by its position
			at = s.at(ctx, exportCommand)
		}
		s.mu.Lock()
		for _, name := range args[3:] {
			if vr := hc.Env.Get(name); vr.Exported && vr.Kind == expand.String {
				s.exports[name] = exportSite{at: at, value: vr.Str}
			}
		}
		s.mu.Unlock()
		if n, err := strconv.Atoi(args[2]); err == nil && n != 0 {
			return interp.ExitStatus(uint8(n))
		}
		return nil
	}
	if args[0] == loopCommand && len(args) == 2 {
		s.mu.Lock()
		s.loops[args[1]]++
		n := s.loops[args[1]]
		s.mu.Unlock()
		if n > maxTurns {
			s.unknown(args[1], "a loop stopped after %d turns", maxTurns)
			return interp.NewExitStatus(1)
		}
		return nil
	}
	name := path.Base(args[0])
	operands := func() []string {
		var l []string
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") || a == "-" {
				l = append(l, a)
			}
		}
		return l
	}
	switch name {
	case "true", ":":
		return nil
	case "false":
		return interp.NewExitStatus(1)
	case "dirname":
		for _, a := range operands() {
			fmt.Fprintln(out, path.Dir(a))
		}
		return nil
	case "basename":
		ops := operands()
		if len(ops) > 0 {
			b := path.Base(ops[0])
			if len(ops) > 1 {
				b = strings.TrimSuffix(b, ops[1])
			}
			fmt.Fprintln(out, b)
		}
		return nil
	case "realpath", "readlink":
		for _, a := range operands() {
			fmt.Fprintln(out, s.abs(dir, a))
		}
		return nil
	case "cat", "tee":
		ops := operands()
		if name == "cat" && len(ops) > 0 {
			for _, a := range ops {
				p := s.abs(dir, a)
				s.mark(p, readData)
				data, ok := s.read(p)
				if !ok {
					if !strings.HasPrefix(p, Workspace+"/") && !strings.HasPrefix(p, "/tmp/") {
						s.unknown(s.at(ctx), "reads %s, outside the revision's tree", p)
					}
					fmt.Fprintf(hc.Stderr, "cat: %s: No such file or directory\n", a)
					return interp.NewExitStatus(1)
				}
				out.Write(data)
			}
			return nil
		}
		var in []byte
		if hc.Stdin != nil {
			in, _ = io.ReadAll(io.LimitReader(hc.Stdin, 4<<20))
		}
		if name == "tee" {
			appendMode := false
			for _, a := range args[1:] {
				if a == "-a" || a == "--append" {
					appendMode = true
				}
			}
			for _, a := range ops {
				s.write(s.abs(dir, a), in, appendMode)
			}
		}
		out.Write(in)
		return nil
	case "mkdir", "chmod", "chown", "ln", "sync":
		return nil
	case "scontrol":
		// the nodes of a dry run's job, one a line (a plain list only)
		if len(args) >= 3 && args[1] == "show" && args[2] == "hostnames" {
			list := hc.Env.Get("SLURM_JOB_NODELIST").String()
			if len(args) > 3 {
				list = args[3]
			}
			if nodes, ok := nodeList(list); ok {
				fmt.Fprintln(out, strings.Join(nodes, "\n"))
				return nil
			}
		}
	case "touch":
		for _, a := range operands() {
			p := s.abs(dir, a)
			if _, ok := s.read(p); !ok {
				s.write(p, nil, false)
			}
		}
		return nil
	case "rm":
		for _, a := range operands() {
			p := s.abs(dir, a)
			if !strings.HasPrefix(p, Workspace+"/") && !strings.HasPrefix(p, "/tmp/") {
				s.unknown(s.at(ctx), "rm %s: outside the tree, not run", a)
				continue
			}
			s.mu.Lock()
			delete(s.overlay, p)
			s.gone[p] = true
			s.mu.Unlock()
		}
		return nil
	}
	if name == "grep" {
		// grep of one file whose text is known: the revision's, or a
		// health probe's body; as of its text on stdin. (A file the run
		// wrote otherwise, a server's log, holds on a machine what the
		// dry run did not write: grep is stubbed there, as before.)
		if opts, file, ok := grepFile(args[1:]); ok {
			p := s.abs(dir, file)
			s.mu.Lock()
			_, written := s.overlay[p]
			known := !written || s.bodies[p]
			s.mu.Unlock()
			if data, found := s.read(p); found && known {
				if res, status, ok := grepText(opts, data); ok {
					out.Write(res)
					if status != 0 {
						return interp.NewExitStatus(uint8(status))
					}
					return nil
				}
			}
		}
	}
	if textTools[name] || name == "grep" || awks[name] {
		var in []byte
		if hc.Stdin != nil && name != "seq" {
			in, _ = io.ReadAll(io.LimitReader(hc.Stdin, 4<<20))
		}
		if res, status, ok := textProgram(ctx, hc.Env, name, args[1:], in); ok {
			out.Write(res)
			if status != 0 {
				return interp.NewExitStatus(uint8(status))
			}
			return nil
		}
	}
	if idle, ok := idleQuery(name, args[1:]); ok {
		fmt.Fprint(out, idle) // a machine fit to run the point has no process on its GPUs
		return nil
	}
	if healthQuery(name, args[1:]) {
		// a run whose servers came up: a health probe's status is 200,
		// with an empty body where -o puts it (a probe may grep it for
		// an error)
		s.mu.Lock()
		s.stubbed[name] = true
		s.mu.Unlock()
		for i, a := range args[1:] {
			if (a == "-o" || a == "--output") && i+2 < len(args) && args[i+2] != "/dev/null" && args[i+2] != "-" {
				p := s.abs(hc.Dir, args[i+2])
				s.write(p, nil, false)
				s.mu.Lock()
				if s.bodies == nil {
					s.bodies = map[string]bool{}
				}
				s.bodies[p] = true
				s.mu.Unlock()
			}
		}
		fmt.Fprint(out, "200")
		return nil
	}
	s.mu.Lock()
	s.stubbed[name] = true
	site := fmt.Sprintf("%d:%d", hc.Pos.Offset(), hc.Pos.Line())
	s.sites[site]++
	n := s.sites[site]
	if !infra[name] {
		s.guess, s.guessAt = name, s.steps.Load()
	}
	s.mu.Unlock()
	if n > maxTurns && name != "sleep" {
		// a stub polled this often decides a loop (while kill -0 PID,
		// until squeue ...): it fails now, so that the loop ends
		s.unknown(s.at(ctx), "%s polled %d times: taken to fail", name, maxTurns)
		return interp.NewExitStatus(1)
	}
	if f, ok := out.(*overlayFile); ok && (name == "python3" || name == "python") {
		if names := s.printedNames(hc, args); len(names) > 0 {
			// a program that writes shell assignments to a file (to be
			// sourced): each variable its text assigns is unknown, never
			// unset
			q, _ := syntax.Quote(UnknownMarker+name+">", syntax.LangBash)
			for _, n := range names {
				fmt.Fprintf(f, "%s=%s\n", n, q)
			}
			s.unknown(s.at(ctx), "%s writes %s to a file: unknown", name, strings.Join(names, ", "))
			return nil
		}
	}
	if out != io.Discard && out != nil {
		if _, isTerm := out.(*lockedWriter); !isTerm {
			fmt.Fprintf(out, "%s%s>", UnknownMarker, name)
		}
	}
	return nil
}

// printedNames are the variables a python program (its -c code, or the
// program it reads on stdin: a here-document) prints assignments of, as
// evalNames reads them.
func (s *dryRun) printedNames(hc interp.HandlerContext, args []string) []string {
	var code string
	if i := slices.Index(args, "-c"); i > 0 && i+1 < len(args) {
		code = args[i+1]
	} else if len(args) == 1 || (len(args) == 2 && args[1] == "-") {
		if hc.Stdin != nil {
			b, _ := io.ReadAll(io.LimitReader(hc.Stdin, maxCode))
			code = string(b)
		}
	}
	return assignedNames(code)
}
