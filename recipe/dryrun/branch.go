package dryrun

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// openBranch is a branch of an if whose test read a value the sandbox
// does not know ("$version" -lt 177, the version from rocm-smi): which
// way it goes is the machine's, so what the branch exports is unknown.
// Shell variables it sets are left as set: they decide guards
// ("GPU_CLEAN=true; break" when a GPU reads idle), and the dry run is of
// a machine fit to run the point.
type openBranch struct {
	at     string            // file:line of the if
	marker string            // the unknown value the test read
	before map[string]string // the shell's variables when it opened
}

// branch runs a branchCommand: "enter AT OPERANDS..." opens the branch
// of the if at AT, given the test's operands as expanded; "exit AT"
// closes it and, when the test read an unknown value, writes to out the
// exports (eval'd by the script) that make each variable the branch
// exported unknown.
func (s *dryRun) branch(hc interp.HandlerContext, out io.Writer, op, at string, operands []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch op {
	case "enter":
		marker := ""
		for _, o := range operands {
			if i := strings.Index(o, UnknownMarker); i >= 0 {
				j := strings.IndexByte(o[i:], '>')
				if j < 0 {
					j = len(o) - i - 1
				}
				marker = o[i : i+j+1]
				break
			}
		}
		if marker == "" {
			return
		}
		s.branches = append(s.branches, openBranch{at: at, marker: marker, before: shellVars(hc.Env)})
	case "exit":
		i := len(s.branches) - 1
		for i >= 0 && s.branches[i].at != at {
			i--
		}
		if i < 0 {
			return
		}
		b := s.branches[i]
		s.branches = s.branches[:i] // an inner branch left by return or break closes too
		var set []string
		seen := map[string]bool{}
		hc.Env.Each(func(name string, _ expand.Variable) bool {
			if seen[name] {
				return true
			}
			seen[name] = true
			vr := hc.Env.Get(name) // Each also yields what a later assignment shadows
			if vr.Kind != expand.String || !vr.Exported || !shellVar(name) {
				return true
			}
			if old, ok := b.before[name]; ok && old == vr.Str {
				return true
			}
			v, err := syntax.Quote(b.marker, syntax.LangBash)
			if err != nil {
				return true
			}
			set = append(set, "export "+name+"="+v)
			return true
		})
		if len(set) == 0 {
			return
		}
		sort.Strings(set)
		fmt.Fprintln(out, strings.Join(set, "\n"))
		u := Unknown{At: b.at, What: fmt.Sprintf("a test of a value the sandbox does not know (%s) decides this branch: what it exports is unknown", b.marker)}
		for _, x := range s.launch.Unknowns {
			if x == u {
				return
			}
		}
		if len(s.launch.Unknowns) < 50 {
			s.launch.Unknowns = append(s.launch.Unknowns, u)
		}
	}
}

// shellVars are the string variables of env, by name.
func shellVars(env expand.Environ) map[string]string {
	m := map[string]string{}
	env.Each(func(name string, _ expand.Variable) bool {
		if vr := env.Get(name); vr.Kind == expand.String && shellVar(name) {
			m[name] = vr.Str // Each also yields what a later assignment shadows
		}
		return true
	})
	return m
}

// shellVar says whether a variable is the script's own, not one the
// shell keeps (LINENO, RANDOM, PIPESTATUS, $_).
func shellVar(name string) bool {
	switch name {
	case "_", "LINENO", "RANDOM", "SECONDS", "PIPESTATUS", "OPTIND", "OPTARG", "REPLY", "PWD", "OLDPWD", "FUNCNAME", statusVar:
		return false
	}
	return !strings.HasPrefix(name, "BASH")
}

// branchWords are the words an if's test compares: the operands of [[
// ]], [ and test in its condition. A condition of other commands gives
// none (it is not tracked).
func branchWords(cond []*syntax.Stmt) []*syntax.Word {
	var out []*syntax.Word
	for _, st := range cond {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.TestClause:
				syntax.Walk(n.X, func(m syntax.Node) bool {
					if w, ok := m.(*syntax.Word); ok {
						out = append(out, w)
						return false
					}
					return true
				})
				return false
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					if name := n.Args[0].Lit(); name == "[" || name == "test" {
						out = append(out, n.Args[1:]...)
					}
				}
				return false
			case *syntax.CmdSubst, *syntax.Subshell, *syntax.FuncDecl:
				return false
			}
			return true
		})
	}
	return out
}

// trackBranches makes each branch of an if whose test compares words
// ("if [[ $v -lt 177 ]]; then ... else ... fi") open with
// "perflog-branch enter AT WORDS..." and close with
// eval "$(perflog-branch exit AT)" (see dryRun.branch).
func trackBranches(n *syntax.IfClause, at string, lit func(string) *syntax.Word) {
	words := branchWords(n.Cond)
	if len(words) == 0 {
		return
	}
	wrap := func(body []*syntax.Stmt) []*syntax.Stmt {
		enter := []*syntax.Word{lit(branchCommand), lit("enter"), lit(at)}
		for _, w := range words {
			enter = append(enter, &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)})
		}
		exit := &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Parts: []syntax.WordPart{&syntax.CmdSubst{
			Stmts: []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit(branchCommand), lit("exit"), lit(at)}}}}}}}}}
		out := []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: enter}}}
		out = append(out, body...)
		return append(out, &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit("eval"), exit}}})
	}
	n.Then = wrap(n.Then)
	if n.Else != nil && len(n.Else.Cond) == 0 {
		n.Else.Then = wrap(n.Else.Then)
	}
}
