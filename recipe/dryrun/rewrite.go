package dryrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/perflog/perflog/internal/lru"
	"mvdan.cc/sh/v3/syntax"
)

type parsed struct {
	f   *syntax.File
	err error
}

// parseCache holds parsed scripts by path and content.
var parseCache = lru.New[string, parsed](256)

// parseScript parses and rewrites a script, once per path and content
// (the interpreter does not change what it runs; every point at the corpus
// head: 4.3 s before, 3.4 s with this).
func parseScript(abs, name string, data []byte) (*syntax.File, error) {
	key := abs + "\x00" + string(data)
	if p, ok := parseCache.Get(key); ok {
		return p.f, p.err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), name)
	if err != nil {
		err = fmt.Errorf("%s: bash the interpreter does not read: %v", name, err)
	} else if u := unsupported(f); u != "" {
		err = fmt.Errorf("%s: bash the interpreter does not read: %s", name, u)
	} else {
		rewrite(f, abs)
	}
	parseCache.Put(key, parsed{f, err})
	return f, err
}

// Sourced files run as functions. The interpreter's source builtin parses
// the file each time; InferenceX's benchmark_lib.sh is 2,300 lines, and a
// third of a dry run went to parsing it (every point at the corpus head:
// 3.4 s before, 2.2 s with this). A file sourced once is parsed
// once (sourcedFunc) and offered to every later run as a function named
// after its content, which `source FILE` calls instead (call). Its
// top-level declarations are made global (declare -g), which is what
// sourcing does; a file whose top level reads the positional parameters
// is always sourced.
var sourcedByKey = lru.New[string, *syntax.Stmt](16) // function name → body (nil: always sourced)

const sourcedPrefix = "perflog-sourced-"

// sourcedFuncs returns the functions of every file parsed so far.
func sourcedFuncs() map[string]*syntax.Stmt {
	m := map[string]*syntax.Stmt{}
	sourcedByKey.Each(func(k string, v *syntax.Stmt) {
		if v != nil {
			m[k] = v
		}
	})
	return m
}

// sourcedFunc is the name of the function that runs a sourced file's
// content, made for the runs that start later when it is new ("" when
// the file cannot be run so).
func sourcedFunc(name string, data []byte) string {
	sum := sha256.Sum256(data)
	fn := sourcedPrefix + hex.EncodeToString(sum[:8])
	body, ok := sourcedByKey.Get(fn)
	if ok {
		if body == nil {
			return ""
		}
		return fn
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), name)
	if err != nil || unsupported(f) != "" || readsParams(f) {
		sourcedByKey.Put(fn, nil) // always sourced
		return ""
	}
	for _, st := range f.Stmts {
		if d, ok := st.Cmd.(*syntax.DeclClause); ok && (d.Variant.Value == "declare" || d.Variant.Value == "local" || d.Variant.Value == "typeset") {
			d.Variant.Value = "declare"
			d.Args = append([]*syntax.Assign{{Naked: true, Value: &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "-g"}}}}}, d.Args...)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			if n.Variant.Value == "local" {
				n.Variant.Value = "declare" // see sourceable
			}
		case *syntax.Word:
			processParams(n.Parts)
		case *syntax.DblQuoted:
			processParams(n.Parts)
		}
		return true
	})
	body = &syntax.Stmt{Cmd: &syntax.Block{Stmts: f.Stmts}}
	sourcedByKey.Put(fn, body)
	return fn
}

// readsParams reports whether a file's top level (outside its functions)
// reads the positional parameters.
func readsParams(f *syntax.File) bool {
	found := false
	for _, st := range f.Stmts {
		if _, ok := st.Cmd.(*syntax.FuncDecl); ok {
			continue
		}
		syntax.Walk(st, func(n syntax.Node) bool {
			if _, ok := n.(*syntax.FuncDecl); ok {
				return false
			}
			if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
				switch v := pe.Param.Value; {
				case v == "@" || v == "*" || v == "#" || (v >= "0" && v <= "9"):
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// unsupported names the first construct the interpreter cannot run.
func unsupported(f *syntax.File) string {
	var u string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CoprocClause:
			u = fmt.Sprintf("coproc at line %d", n.Pos().Line())
		case *syntax.TestDecl:
			u = fmt.Sprintf("@test at line %d", n.Pos().Line())
		}
		return u == ""
	})
	return u
}

// rewrite adapts a script the sandbox runs to what the interpreter
// supports: ${BASH_SOURCE[0]} becomes the script's path; a redirection
// of a file descriptor above 2 (exec 9>lock, for flock) is dropped;
// process substitutions, which the interpreter implements with named
// pipes on the real file system, are replaced: an input redirection from
// <(cmds) becomes a here-string of $(cmds), any other one /dev/null.
func rewrite(f *syntax.File, self string) {
	waited := map[*syntax.Stmt]bool{}
	lit := func(v string) *syntax.Word { return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: v}}} }
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background && !waited[n] {
				// "X &" runs as "{ X & wait $!; }": what a background
				// command launches is recorded before the script goes on
				// (a stub ends at once; a background loop at its turns)
				inner := *n
				waited[&inner] = true
				wait := &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit("wait"),
					{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "!"}}}}}}}
				*n = syntax.Stmt{Position: inner.Position, Semicolon: inner.Semicolon, Cmd: &syntax.Block{Lbrace: inner.Position,
					Stmts: []*syntax.Stmt{&inner, wait}}}
			}
			kept := n.Redirs[:0]
			for _, rd := range n.Redirs {
				if rd.N == nil || len(rd.N.Value) != 1 || rd.N.Value[0] > '2' {
					if rd.N != nil {
						continue
					}
				}
				kept = append(kept, rd)
			}
			n.Redirs = kept
		case *syntax.DblQuoted:
			bashSource(n.Parts, self)
			processParams(n.Parts)
		case *syntax.DeclClause:
			if n.Variant != nil && n.Variant.Value == "local" {
				n.Variant.Value = "declare" // see sourceable
			}
		case *syntax.WhileClause:
			// "perflog-loop FILE:LINE || break" first in the body
			at := fmt.Sprintf("%s:%d", strings.TrimPrefix(self, Workspace+"/"), n.Pos().Line())
			guard := &syntax.Stmt{Cmd: &syntax.BinaryCmd{Op: syntax.OrStmt,
				X: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit(loopCommand), lit(at)}}},
				Y: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit("break")}}}}}
			n.Do = append([]*syntax.Stmt{guard}, n.Do...)
		case *syntax.Redirect:
			if n.Op == syntax.RdrIn && n.Word != nil && len(n.Word.Parts) == 1 {
				if ps, ok := n.Word.Parts[0].(*syntax.ProcSubst); ok && ps.Op == syntax.CmdIn {
					n.Op = syntax.WordHdoc
					n.Word = &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Parts: []syntax.WordPart{
						&syntax.CmdSubst{Left: ps.OpPos, Right: ps.Rparen, Stmts: ps.Stmts}}}}}
				}
			}
		case *syntax.Word:
			bashSource(n.Parts, self)
			processParams(n.Parts)
			for i, p := range n.Parts {
				if _, ok := p.(*syntax.ProcSubst); ok {
					n.Parts[i] = &syntax.Lit{Value: "/dev/null"}
				}
			}
		}
		return true
	})
}

// asSourced is a shell file's text as source reads it (sourceable),
// kept for positions (at).
func (s *sandbox) asSourced(p string, data []byte) []byte {
	data = sourceable(data)
	s.mu.Lock()
	s.sources[s.rel(p)] = data
	s.mu.Unlock()
	return data
}

// sourceable returns a shell file as `source` should read it in the
// sandbox: every "local" declaration written "declare", which is the
// same inside a function, but which the interpreter also accepts in a
// function whose body is a subshell (f() ( local x; ... )), where it
// forgets that it runs a function. Lines stay where they are. Files are
// rewritten once per content.
func sourceable(data []byte) []byte {
	key := string(data)
	if v, ok := sourceCache.Get(key); ok {
		return v
	}
	out := data
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), "")
	shapesByContent.Put(sha256.Sum256(data), shapeFrom(f, err, data)) // for Memo
	if err == nil {
		type edit struct {
			off, end int
			text     string
		}
		var edits []edit
		var quoted [][2]int // double-quoted strings and here-documents
		syntax.Walk(f, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.DeclClause:
				if n.Variant != nil && n.Variant.Value == "local" {
					o := int(n.Variant.ValuePos.Offset())
					edits = append(edits, edit{o, o + len("local"), "declare"})
				}
			case *syntax.DblQuoted:
				quoted = append(quoted, [2]int{int(n.Pos().Offset()), int(n.End().Offset())})
			case *syntax.Redirect:
				if n.Hdoc != nil {
					quoted = append(quoted, [2]int{int(n.Hdoc.Pos().Offset()), int(n.Hdoc.End().Offset())})
				}
			case *syntax.ParamExp:
				if v := processParam(n); v != "" {
					edits = append(edits, edit{int(n.Pos().Offset()), int(n.End().Offset()), v})
				}
			}
			return true
		})
		if len(edits) > 0 {
			slices.SortFunc(edits, func(a, b edit) int { return a.off - b.off })
			var b bytes.Buffer
			last := 0
			for _, e := range edits {
				if e.off < last || e.end > len(data) {
					continue
				}
				text := e.text
				if strings.HasPrefix(text, UnknownMarker) && !slices.ContainsFunc(quoted, func(q [2]int) bool { return q[0] <= e.off && e.end <= q[1] }) {
					text = "'" + text + "'" // an unquoted word: < is a redirection
				}
				b.Write(data[last:e.off])
				b.WriteString(text)
				last = e.end
			}
			b.Write(data[last:])
			out = b.Bytes()
		}
	}
	sourceCache.Put(key, out)
	return out
}

// sourceCache holds files as `source` reads them, by content.
var sourceCache = lru.New[string, []byte](64)

// bashSource replaces $BASH_SOURCE and ${BASH_SOURCE[0]}, which the
// interpreter does not set, with the script's path.
func bashSource(parts []syntax.WordPart, self string) {
	for i, p := range parts {
		pe, ok := p.(*syntax.ParamExp)
		if !ok || pe.Param == nil || pe.Param.Value != "BASH_SOURCE" || pe.Length || pe.Excl || pe.Slice != nil || pe.Repl != nil || pe.Exp != nil {
			continue
		}
		if pe.Index != nil {
			if w, ok := pe.Index.(*syntax.Word); !ok || w.Lit() != "0" {
				continue
			}
		}
		parts[i] = &syntax.Lit{Value: self}
	}
}

// processParams replaces what only the running shell knows ($$, $PPID,
// $BASHPID, $RANDOM, $SRANDOM) with an unknown value: the interpreter
// would give perflog's own pid or a random number, and a dry run would
// differ from run to run. (Sourced files are rewritten as text:
// sourceable.)
func processParams(parts []syntax.WordPart) {
	for i, p := range parts {
		if pe, ok := p.(*syntax.ParamExp); ok {
			if v := processParam(pe); v != "" {
				parts[i] = &syntax.Lit{ValuePos: pe.Pos(), ValueEnd: pe.End(), Value: v}
			}
		}
	}
}

// processParam is the unknown value processParams gives pe, "" for a
// parameter it keeps.
func processParam(pe *syntax.ParamExp) string {
	if pe.Param == nil || pe.Length || pe.Excl || pe.Slice != nil || pe.Repl != nil || pe.Exp != nil || pe.Index != nil {
		return ""
	}
	switch pe.Param.Value {
	case "$", "PPID", "BASHPID":
		return UnknownMarker + "pid>"
	case "RANDOM", "SRANDOM":
		return UnknownMarker + "random>"
	}
	return ""
}
