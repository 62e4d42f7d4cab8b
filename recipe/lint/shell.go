// Package lint reads what a benchmark script does without running it
// (a Script: the options it passes, the variables it exports, its arrays,
// the KV-offload backends it accepts; parsed with mvdan.cc/sh) and checks
// it: the recipe-script lint (a flag dropped by an array reset, a
// backslash followed by a space, a backend the script rejects, an engine
// patched, a DP-aware router without DP attention). Checks that need a
// revision's recipes (recipe.CheckRecipe, recipe.LintRev) are recipe's.
//
// Dependencies: recipe/revfs (the size perflog parses), internal/assockeys,
// mvdan.cc/sh/v3.
package lint

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/perflog/perflog/internal/assockeys"
	"github.com/perflog/perflog/recipe/revfs"
	"mvdan.cc/sh/v3/syntax"
)

// Script is a parsed benchmark script with what it does, as far as a
// reader can tell without running it.
type Script struct {
	Path string
	Src  []byte
	File *syntax.File
	// ParseErr is set when the script does not parse (the facts are then
	// empty): mvdan.cc/sh refuses a few constructs bash accepts.
	ParseErr error

	Flags []Flag   // every word starting with "--"
	Env   []EnvSet // every NAME=VALUE assignment (plain, export, env prefix)
	// Exported are the names "export NAME" (without a value) exports;
	// AllExport says the script runs "set -a", which exports every
	// assignment after it.
	Exported  []string
	AllExport bool
	Arrays    []ArrayOp
	Uses      []ArrayUse
	// KVRequires are require_agentic_kv_offload_backend calls.
	KVRequires []KVRequire
	Sources    []string // files sourced (as written)
	Lines      []string // the source, by line (1-based: Lines[n-1])
}

// Flag is a command-line flag passed somewhere in the script.
type Flag struct {
	Name  string // --foo
	Value string // the value after '=' or the next word when literal ("" otherwise)
	Line  int
	Gated string // the condition text of the if/case branch it is in ("" when unconditional)
}

// EnvSet is an environment or shell variable assignment.
type EnvSet struct {
	Name  string
	Value string // literal text (quotes removed) or the source text of the value
	Line  int
	Gated string
	// Export: the assignment exports the variable (export NAME=V,
	// declare -x, or NAME=V before a command, for that command).
	Export bool
}

// ArrayOp is an array assignment NAME=(...) or NAME+=(...).
type ArrayOp struct {
	Name   string
	Append bool
	Line   int
	path   []branch // the if/case branches it is in
	scope  string   // the function it is in ("" at top level)
}

// ArrayUse is a use of ${NAME[@]} or ${NAME[*]}.
type ArrayUse struct {
	Name  string
	Line  int
	scope string
}

// KVRequire is a call require_agentic_kv_offload_backend ARG.
type KVRequire struct {
	Arg     string // literal argument ("" when not literal: pass-through)
	Line    int
	Arms    []string // the case patterns on $KV_OFFLOAD_BACKEND it is under (nil: none)
	Wild    bool     // that case has a catch-all arm
	Guarded bool     // under an if or a case on something else
}

// branch identifies one branch of an if or case statement.
type branch struct {
	node syntax.Node
	arm  int
}

// exclusive reports whether two branch paths are in different arms of one
// if or case (they never both run).
func exclusive(a, b []branch) bool {
	for _, x := range a {
		for _, y := range b {
			if x.node == y.node && x.arm != y.arm {
				return true
			}
		}
	}
	return false
}

// Parse parses a bash script and collects its facts.
func Parse(path string, src []byte) *Script {
	if len(src) > revfs.MaxScriptSize {
		// not a benchmark script (they are a few KB): parsing one of 100 MB
		// took gigabytes; it counts as one that does not parse
		return &Script{Path: path, Src: src, ParseErr: fmt.Errorf("%s is %.1f MB, over the %d MiB perflog parses as a script", path, float64(len(src))/1e6, revfs.MaxScriptSize>>20)}
	}
	s := &Script{Path: path, Src: src, Lines: strings.Split(string(src), "\n")}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(bytes.NewReader(src), path)
	if err != nil {
		// mvdan.cc/sh reads an associative array key such as
		// [1024:4:4:false:4]=4 as arithmetic; quote such keys (same
		// lines, same columns but two) and try again
		if fixed := assockeys.Quote(src); !bytes.Equal(fixed, src) {
			if f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false)).Parse(bytes.NewReader(fixed), path); err2 == nil {
				f, err = f2, nil
			}
		}
	}
	if err != nil {
		s.ParseErr = err
		return s
	}
	s.File = f
	w := &walker{s: s}
	w.stmts(f.Stmts)
	return s
}

type walker struct {
	s     *Script
	path  []branch
	conds []string // condition texts of enclosing branches
	scope string
	kvArm *kvCase
}

type kvCase struct {
	arms []string
	wild bool
}

func (w *walker) text(n syntax.Node) string {
	var b bytes.Buffer
	syntax.NewPrinter(syntax.Minify(true)).Print(&b, n)
	return b.String()
}

func (w *walker) gate() string { return strings.Join(w.conds, " && ") }

func (w *walker) stmts(ss []*syntax.Stmt) {
	for _, st := range ss {
		w.stmt(st)
	}
}

func (w *walker) stmt(st *syntax.Stmt) {
	if st == nil {
		return
	}
	w.uses(st)
	switch c := st.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c)
	case *syntax.DeclClause:
		export := c.Variant != nil && c.Variant.Value == "export"
		for _, a := range c.Args {
			if a.Name == nil && a.Value != nil && literal(a.Value) == "-x" {
				export = true // declare -x
			}
		}
		for _, a := range c.Args {
			w.assign(a, export)
		}
	case *syntax.IfClause:
		w.ifClause(c, 0)
	case *syntax.CaseClause:
		word := w.text(c.Word)
		var kc *kvCase
		if strings.Contains(word, "KV_OFFLOAD_BACKEND") {
			kc = &kvCase{}
			for _, it := range c.Items {
				for _, p := range it.Patterns {
					lit := literal(p)
					if lit == "*" {
						kc.wild = true
					} else if lit != "" {
						kc.arms = append(kc.arms, strings.Split(lit, "|")...)
					}
				}
			}
		}
		for i, it := range c.Items {
			var pats []string
			for _, p := range it.Patterns {
				pats = append(pats, w.text(p))
			}
			w.enter(branch{c, i}, "case "+word+" in "+strings.Join(pats, "|"))
			prev := w.kvArm
			if kc != nil {
				arm := &kvCase{wild: kc.wild}
				for _, p := range it.Patterns {
					if lit := literal(p); lit != "" && lit != "*" {
						arm.arms = append(arm.arms, strings.Split(lit, "|")...)
					}
				}
				w.kvArm = arm
			}
			w.stmts(it.Stmts)
			w.kvArm = prev
			w.leave()
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond)
		w.stmts(c.Do)
	case *syntax.ForClause:
		w.stmts(c.Do)
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.Subshell:
		w.stmts(c.Stmts)
	case *syntax.BinaryCmd:
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.FuncDecl:
		prev := w.scope
		w.scope = "()"
		if c.Name != nil {
			w.scope = c.Name.Value
		}
		w.stmt(c.Body)
		w.scope = prev
	}
}

func (w *walker) enter(b branch, cond string) {
	w.path = append(w.path, b)
	w.conds = append(w.conds, cond)
}

func (w *walker) leave() {
	w.path = w.path[:len(w.path)-1]
	w.conds = w.conds[:len(w.conds)-1]
}

func (w *walker) ifClause(c *syntax.IfClause, arm int) {
	cond := ""
	for _, st := range c.Cond {
		cond += w.text(st)
	}
	w.stmts(c.Cond)
	if cond == "" {
		cond = "else"
	}
	w.enter(branch{c, arm}, cond)
	w.stmts(c.Then)
	w.leave()
	if c.Else != nil {
		// elif/else are further arms of the same statement
		e := c.Else
		for arm2 := arm + 1; e != nil; arm2++ {
			ec := ""
			for _, st := range e.Cond {
				ec += w.text(st)
			}
			if ec == "" {
				ec = "not (" + cond + ")"
			}
			w.stmts(e.Cond)
			w.enter(branch{c, arm2}, ec)
			w.stmts(e.Then)
			w.leave()
			e = e.Else
		}
	}
}

// literal returns a word's text when it has no expansions (quotes removed).
func literal(w *syntax.Word) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return ""
				}
				b.WriteString(l.Value)
			}
		default:
			return ""
		}
	}
	return b.String()
}

func (w *walker) assign(a *syntax.Assign, export bool) {
	if a.Name == nil {
		return
	}
	line := int(a.Pos().Line())
	if a.Array != nil {
		w.s.Arrays = append(w.s.Arrays, ArrayOp{Name: a.Name.Value, Append: a.Append, Line: line,
			path: append([]branch(nil), w.path...), scope: w.scope})
		for _, el := range a.Array.Elems {
			w.words(el.Value)
		}
		return
	}
	if a.Naked {
		if export {
			w.s.Exported = append(w.s.Exported, a.Name.Value)
		}
		return
	}
	val := literal(a.Value)
	if val == "" && a.Value != nil {
		val = w.text(a.Value)
	}
	w.s.Env = append(w.s.Env, EnvSet{Name: a.Name.Value, Value: val, Line: line, Gated: w.gate(), Export: export})
	if a.Value != nil {
		w.words(a.Value)
	}
}

func (w *walker) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		w.assign(a, len(c.Args) > 0) // before a command: that command's environment
	}
	if len(c.Args) == 0 {
		return
	}
	name := literal(c.Args[0])
	switch name {
	case "set":
		for i, a := range c.Args[1:] {
			if v := literal(a); v == "-a" || (v == "-o" && i+2 < len(c.Args) && literal(c.Args[i+2]) == "allexport") || (strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "a")) {
				w.s.AllExport = true
			}
		}
	case "source", ".":
		if len(c.Args) > 1 {
			w.s.Sources = append(w.s.Sources, w.text(c.Args[1]))
		}
	case "require_agentic_kv_offload_backend":
		r := KVRequire{Line: int(c.Pos().Line()), Guarded: len(w.path) > 0}
		if len(c.Args) > 1 {
			r.Arg = literal(c.Args[1])
		}
		if w.kvArm != nil {
			r.Arms, r.Wild = w.kvArm.arms, w.kvArm.wild
		}
		w.s.KVRequires = append(w.s.KVRequires, r)
	}
	for i, a := range c.Args {
		lit := literal(a)
		if !strings.HasPrefix(lit, "--") || len(lit) < 3 {
			continue
		}
		f := Flag{Name: lit, Line: int(a.Pos().Line()), Gated: w.gate()}
		if k, v, ok := strings.Cut(lit, "="); ok {
			f.Name, f.Value = k, v
		} else if i+1 < len(c.Args) {
			if v := literal(c.Args[i+1]); !strings.HasPrefix(v, "-") {
				f.Value = v
			}
		}
		w.s.Flags = append(w.s.Flags, f)
	}
}

// words records flags written inside arrays and strings of other words
// (a flag in an array element is still a flag passed later).
func (w *walker) words(word *syntax.Word) {
	if word == nil {
		return
	}
	lit := literal(word)
	if strings.HasPrefix(lit, "--") && len(lit) > 2 {
		f := Flag{Name: lit, Line: int(word.Pos().Line()), Gated: w.gate()}
		if k, v, ok := strings.Cut(lit, "="); ok {
			f.Name, f.Value = k, v
		}
		w.s.Flags = append(w.s.Flags, f)
	}
}

// uses records ${NAME[@]} expansions in a statement.
func (w *walker) uses(st *syntax.Stmt) {
	syntax.Walk(st, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.IfClause, *syntax.CaseClause, *syntax.FuncDecl, *syntax.WhileClause, *syntax.ForClause, *syntax.Block, *syntax.Subshell, *syntax.BinaryCmd:
			return false // their statements are visited on their own
		case *syntax.ParamExp:
			if x.Param != nil && x.Index != nil {
				if idx := w.text(x.Index); idx == "@" || idx == "*" {
					w.s.Uses = append(w.s.Uses, ArrayUse{Name: x.Param.Value, Line: int(x.Pos().Line()), scope: w.scope})
				}
			}
		}
		return true
	})
}

// Location names a line of a script for messages.
func (s *Script) Location(line int) string { return fmt.Sprintf("%s:%d", s.Path, line) }

// FlagNames returns the set of flags the script passes.
func (s *Script) FlagNames() map[string]bool {
	out := map[string]bool{}
	for _, f := range s.Flags {
		out[f.Name] = true
	}
	return out
}
