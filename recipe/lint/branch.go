package lint

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A RuntimeBranch is an if of a script whose condition depends on the
// machine the benchmark runs on: a program's exit status (`if python3 -c
// "import deep_gemm"`), a file of the container (`[[ -f /opt/x ]]`). A dry
// run takes one of its branches without knowing which one runs: what a
// branch sets is neither confirmed nor contradicted by the launch.
type RuntimeBranch struct {
	// Line is the if's line; Cond its condition as written.
	Line int
	Cond string
}

// RuntimeBranchAt returns the innermost if of the script whose branches
// hold line and whose condition depends on the machine; ok is false when
// there is none (or the script does not parse).
func (s *Script) RuntimeBranchAt(line int) (RuntimeBranch, bool) {
	f := s.File
	if f == nil {
		return RuntimeBranch{}, false
	}
	funcs := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok {
			funcs[fd.Name.Value] = true
		}
		return true
	})
	var found RuntimeBranch
	ok := false
	syntax.Walk(f, func(n syntax.Node) bool {
		ic, isIf := n.(*syntax.IfClause)
		if !isIf || len(ic.Cond) == 0 {
			return true
		}
		if !inBranch(ic, line) {
			return true
		}
		if runtimeCond(ic.Cond, funcs) {
			var b strings.Builder
			for i, st := range ic.Cond {
				if i > 0 {
					b.WriteString("; ")
				}
				syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, st)
			}
			found, ok = RuntimeBranch{Line: int(ic.Pos().Line()), Cond: b.String()}, true
		}
		return true // an inner if wins
	})
	return found, ok
}

// inBranch reports whether line is in a statement of the if's branches
// (an elif is its else branch, condition and all).
func inBranch(ic *syntax.IfClause, line int) bool {
	in := func(stmts []*syntax.Stmt) bool {
		for _, st := range stmts {
			if int(st.Pos().Line()) <= line && line <= int(st.End().Line()) {
				return true
			}
		}
		return false
	}
	if in(ic.Then) {
		return true
	}
	if e := ic.Else; e != nil {
		return in(e.Cond) || in(e.Then) || (e.Else != nil && inBranch(&syntax.IfClause{Else: e.Else}, line))
	}
	return false
}

// runtimeCond reports whether a condition runs a program (not a test,
// builtin or function of the script) or tests a file.
func runtimeCond(stmts []*syntax.Stmt, funcs map[string]bool) bool {
	dep := false
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CallExpr:
				if len(x.Args) == 0 {
					return true
				}
				name := x.Args[0].Lit()
				switch {
				case name == "[" || name == "test":
					for _, a := range x.Args[1:] {
						if fileTestOp(a.Lit()) {
							dep = true
						}
					}
				case name == "" || funcs[name] || shellBuiltins[name]:
				default:
					dep = true
				}
			case *syntax.UnaryTest:
				if fileTestOp(x.Op.String()) {
					dep = true
				}
			case *syntax.CmdSubst:
				dep = true // the output of a command
			}
			return !dep
		})
	}
	return dep
}

func fileTestOp(op string) bool {
	switch op {
	case "-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-a", "-b", "-c", "-p", "-S":
		return true
	}
	return false
}

// shellBuiltins decide nothing about the machine.
var shellBuiltins = map[string]bool{"true": true, "false": true, ":": true, "[[": true, "let": true, "declare": true,
	"local": true, "export": true, "eval": true, "shift": true, "set": true, "echo": true, "printf": true}
