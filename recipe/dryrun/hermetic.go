package dryrun

import (
	"context"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// What the interpreter would take from the machine perflog runs on, the
// sandbox answers itself, the same on every machine:
//
//   - the user: UID, EUID and GID are 0 (the benchmark containers run as
//     root), HOME is /root unless the script set it, and ~NAME is /root
//     for root and /home/NAME for anyone else (never the real passwd);
//   - the temporary directory: mvdan.cc/sh makes process substitutions
//     as named pipes in $TMPDIR, and opens any $TMPDIR/sh-interp-* with
//     os.OpenFile, past the open handler. Every runner's TMPDIR is
//     noTempDir, a path with a NUL byte that no system call accepts, so
//     neither can reach the disk whatever the script exports; the script
//     still reads its own TMPDIR (a prelude restores it);
//   - program lookups: command -v, command -V, type and hash answer from
//     the shell's functions and builtins, and take any other program as
//     installed at /usr/bin (the runners the recipes run on are
//     prepared); the interpreter's own lookup would stat $PATH on disk;
//   - source: the file is found in the revision's tree, never on $PATH.

// noTempDir is every runner's temporary directory as the interpreter
// sees it.
const noTempDir = "/\x00perflog-sandbox-has-no-tmp"

// sourceMark prefixes the path `source` is given once the sandbox has
// resolved it: the interpreter's search of $PATH on disk fails on the NUL
// byte before any system call, and the open handler strips it.
const sourceMark = "\x00perflog-source\x00"

// hermeticEnv is the environment a runner starts with: the exported
// variables it is given, and the user and temporary directory of the
// sandbox.
type hermeticEnv struct{ vars expand.Environ }

var rootID = expand.Variable{Set: true, Kind: expand.String, ReadOnly: true, Str: "0"}

func (e hermeticEnv) Get(name string) expand.Variable {
	switch name {
	case "UID", "EUID", "GID":
		return rootID
	case "TMPDIR":
		return expand.Variable{Set: true, Kind: expand.String, Str: noTempDir}
	case "HOME":
		if v := e.vars.Get(name); v.IsSet() {
			return v
		}
		return expand.Variable{Set: true, Kind: expand.String, Str: "/root"}
	}
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: homeOf(user)}
	}
	return e.vars.Get(name)
}

// Each lists the variables a script sees (TMPDIR is the prelude's).
func (e hermeticEnv) Each(fn func(name string, vr expand.Variable) bool) {
	home := false
	for name, vr := range e.vars.Each {
		if name == "TMPDIR" || name == "UID" || name == "EUID" || name == "GID" {
			continue
		}
		home = home || name == "HOME"
		if !fn(name, vr) {
			return
		}
	}
	for _, n := range []string{"UID", "EUID", "GID", "HOME"} {
		if n == "HOME" && home {
			continue
		}
		if !fn(n, e.Get(n)) {
			return
		}
	}
}

// homeOf is ~name in the sandbox.
func homeOf(name string) string {
	if name == "root" {
		return "/root"
	}
	return "/home/" + strings.ReplaceAll(name, "/", "_")
}

// tildeUser is a word that starts with ~NAME (another user's home), its
// first part, the home the sandbox gives it and NAME's length. NAME is
// what the interpreter would look up: everything up to the first '/' of
// the word's first part, whatever its characters ("~!", "~+"), or that
// part whole when the word has no other.
func tildeUser(w *syntax.Word) (lit *syntax.Lit, home string, n int, ok bool) {
	if len(w.Parts) == 0 {
		return nil, "", 0, false
	}
	lit, isLit := w.Parts[0].(*syntax.Lit)
	if !isLit || len(lit.Value) < 2 || lit.Value[0] != '~' {
		return nil, "", 0, false
	}
	name := lit.Value[1:]
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name = name[:i]
	} else if len(w.Parts) > 1 {
		return nil, "", 0, false // "~'x'": no tilde expansion
	}
	if name == "" {
		return nil, "", 0, false // ~ is HOME
	}
	return lit, homeOf(name), len(name), true
}

// homes replaces ~NAME at the start of a word with the home the sandbox
// gives NAME: the interpreter would look NAME up in the machine's user
// database where the environment does not answer (a background job's).
func homes(w *syntax.Word) {
	if lit, home, n, ok := tildeUser(w); ok {
		lit.Value = home + lit.Value[1+n:]
	}
}

// prelude restores the TMPDIR the runner was given (or unsets it): the
// first statement of every program the sandbox runs.
func prelude(env expand.Environ, arg0 string) []*syntax.Stmt {
	src := "unset TMPDIR"
	if vr := env.Get("TMPDIR"); vr.IsSet() && vr.Exported {
		if q, err := syntax.Quote(vr.String(), syntax.LangBash); err == nil {
			src = "export TMPDIR=" + q
		}
	}
	q, err := syntax.Quote(arg0, syntax.LangBash)
	if err != nil {
		q = "bash"
	}
	src += "\n" + arg0Var + "=" + q
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 2 {
		panic(fmt.Sprintf("prelude %q: %v", src, err))
	}
	return f.Stmts
}

// arg0Var holds a run's $0 (see bashSource): a shell variable of the
// run, never exported.
const arg0Var = "__perflog_arg0"

// lookupCommand is what command -v/-V, type and hash run when a name
// they look up is not the shell's own (see lookup).
const lookupCommand = "perflog-lookup"

// lookup rewrites a command that looks programs up on $PATH (command -v
// NAME, command -V, type, hash) so that the sandbox answers it: nil when
// the interpreter may answer (every name is a builtin, keyword or
// function of the shell, or the command runs NAME rather than looks it
// up). Each name is passed as KIND=NAME, its kind as the shell knows it
// now (file, builtin, keyword, function).
func lookup(args []string, funcs map[string]*syntax.Stmt) []string {
	mode, names := "", []string(nil)
	flags := func(set func(string)) int {
		i := 1
		for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1 && args[i] != "--"; i++ {
			set(args[i])
		}
		if i < len(args) && args[i] == "--" {
			i++
		}
		return i
	}
	switch args[0] {
	case "builtin":
		if len(args) > 1 {
			return lookup(args[1:], funcs) // "builtin type x": the builtin runs as itself
		}
		return nil
	case "command":
		i := flags(func(f string) {
			switch {
			case strings.Contains(f, "V"):
				mode = "-V"
			case strings.Contains(f, "v") && mode == "":
				mode = "-v"
			}
		})
		if mode == "" {
			if i < len(args) {
				// command NAME ARGS runs NAME: a builtin that looks
				// names up ("command type x") runs without the handlers
				return lookup(args[i:], funcs)
			}
			return nil
		}
		names = args[i:]
	case "type":
		mode = "-V"
		i := flags(func(f string) {
			switch {
			case strings.ContainsAny(f, "pP"):
				mode = "-p"
			case strings.Contains(f, "t"):
				mode = "-t"
			}
		})
		names = args[i:]
	case "hash":
		mode = "-h"
		i := flags(func(f string) {
			if strings.Contains(f, "t") {
				mode = "-p"
			}
		})
		names = args[i:]
	default:
		return nil
	}
	out := []string{lookupCommand, mode}
	own := args[0] != "hash" // hash looks every name up on $PATH
	for _, n := range names {
		kind := "file"
		switch {
		case syntax.IsKeyword(n):
			kind = "keyword"
		case funcs[n] != nil:
			kind = "function"
		case interp.IsBuiltin(n):
			kind = "builtin"
		default:
			own = false
		}
		out = append(out, kind+"="+n)
	}
	if own {
		return nil
	}
	return out
}

// lookupRun answers lookupCommand MODE KIND=NAME...: builtins, keywords
// and functions as the shell would, any other name as a program
// installed at /usr/bin (or, given a path, at that path when the sandbox
// has something there).
func (s *dryRun) lookupRun(ctx context.Context, mode string, names []string) error {
	hc := interp.HandlerCtx(ctx)
	status := uint8(0)
	for _, kn := range names {
		kind, n, _ := strings.Cut(kn, "=")
		where := "/usr/bin/" + n
		if kind == "file" && strings.Contains(n, "/") {
			where = s.abs(hc.Dir, n)
			if _, err := s.stat(ctx, where, true); err != nil {
				status = 1
				continue
			}
		}
		switch mode {
		case "-h":
		case "-t":
			fmt.Fprintln(hc.Stdout, kind)
		case "-p":
			if kind == "file" {
				fmt.Fprintln(hc.Stdout, where)
			}
		case "-v":
			if kind == "file" {
				fmt.Fprintln(hc.Stdout, where)
			} else {
				fmt.Fprintln(hc.Stdout, n)
			}
		default: // -V
			switch kind {
			case "file":
				fmt.Fprintf(hc.Stdout, "%s is %s\n", n, where)
			case "builtin":
				fmt.Fprintf(hc.Stdout, "%s is a shell builtin\n", n)
			default:
				fmt.Fprintf(hc.Stdout, "%s is a shell %s\n", n, kind)
			}
		}
		if kind == "file" && !strings.Contains(n, "/") {
			s.unknown(s.at(ctx), "looks %s up: taken as installed at %s", n, where)
		}
	}
	if status != 0 {
		return interp.NewExitStatus(status)
	}
	return nil
}

// ownerTests replaces the -O and -G file tests (owned by the user, by
// the group), which the interpreter answers from the machine's user
// database, with -e: in the sandbox every file is root's.
func ownerTests(args []string) []string {
	if args[0] != "test" && args[0] != "[" {
		return args
	}
	var out []string
	for i, a := range args {
		if (a == "-O" || a == "-G") && i+1 < len(args) && (i == 1 || args[i-1] == "!" || args[i-1] == "-a" || args[i-1] == "-o" || args[i-1] == "(") {
			if out == nil {
				out = append([]string(nil), args...)
			}
			out[i] = "-e"
		}
	}
	if out == nil {
		return args
	}
	return out
}

// rewriteCode parses code that the interpreter will parse itself (eval's
// and trap's arguments) and prints it back rewritten as the sandbox
// rewrites scripts (rewrite); ok is false when it does not parse (the
// interpreter then reports the error) or is over maxCode.
func rewriteCode(code, self string) (string, bool) {
	if len(code) > maxCode {
		return "", false
	}
	code = inertMarkers(code)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(code), self)
	if err != nil || unsupported(f) != "" {
		return "", false
	}
	rewrite(f, self)
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, f); err != nil {
		return "", false
	}
	return b.String(), true
}

// inertMarkers escapes the unknown values in shell code made of a run's
// values (bash -c "... $X ...", eval "$(cmd)"): an unquoted
// <unknown:name> would read as redirections from and to files; quoted,
// it stays the word it was. Quoted ones are left as they are.
func inertMarkers(code string) string {
	if !strings.Contains(code, UnknownMarker) {
		return code
	}
	var b strings.Builder
	quote := byte(0) // ' or ", or 0 outside quotes
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case quote == 0 && strings.HasPrefix(code[i:], UnknownMarker):
			end := strings.IndexByte(code[i:], '>')
			if end < 0 {
				b.WriteString(code[i:])
				return b.String()
			}
			if m := code[i : i+end+1]; !strings.Contains(m, "'") {
				b.WriteString("'" + m + "'") // quoted, not escaped: the interpreter keeps a backslash in an assignment's value
			} else {
				b.WriteString(`\` + code[i:i+end] + `\>`)
			}
			i += end
			continue
		case c == '\\' && quote != '\'' && i+1 < len(code):
			b.WriteByte(c)
			i++
			c = code[i]
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		}
		b.WriteByte(c)
	}
	return b.String()
}

// maxCode bounds the shell code the sandbox parses (a script, a sourced
// file, bash -c's, eval's): the largest InferenceX script is 100 KB.
const maxCode = 1 << 20
