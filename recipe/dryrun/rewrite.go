package dryrun

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/internal/assockeys"
	"github.com/perflog/perflog/internal/lru"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Cache holds what dry runs parse, for the runs that follow: scripts by
// path and content (parsed and rewritten once; the interpreter does not
// change what it runs), sourced files as functions, and files as source
// reads them. A Cache is safe for concurrent use; its owner (a Sandbox,
// or a worker process) keeps it for as long as its dry runs read the
// same files. Measurements: docs/dev/performance.md.
type Cache struct {
	parsed  *lru.Cache[string, parsed]
	sourced *lru.Cache[string, *syntax.Stmt] // function name → body (nil: always sourced)
	text    *lru.Cache[string, []byte]       // content → as source reads it
	shapes  *lru.Cache[[sha256.Size]byte, *codeShape]
}

type parsed struct {
	f   *syntax.File
	err error
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{parsed: lru.New[string, parsed](256), sourced: lru.New[string, *syntax.Stmt](16), text: lru.New[string, []byte](64),
		shapes: lru.New[[sha256.Size]byte, *codeShape](64)}
}

// parseScript parses and rewrites a script, once per path and content.
func (c *Cache) parseScript(abs, name string, data []byte) (*syntax.File, error) {
	if len(data) > maxCode {
		// refused before anything copies it (a key of its bytes, a cache
		// entry): a huge script costs its read, no more
		return nil, fmt.Errorf("%s is %d KiB, over the %d KiB the sandbox runs", name, len(data)>>10, maxCode>>10)
	}
	key := abs + "\x00" + string(data)
	if p, ok := c.parsed.Get(key); ok {
		return p.f, p.err
	}
	f, src, err := parseBash(data, name)
	if err != nil {
		c.shapes.Put(sha256.Sum256(data), shapeFrom(f, err, src))
		err = fmt.Errorf("%s: bash the interpreter does not read: %v", name, err)
	} else if u := unsupported(f); u != "" {
		err = fmt.Errorf("%s: bash the interpreter does not read: %s", name, u)
	} else {
		c.shapes.Put(sha256.Sum256(data), shapeFrom(f, nil, src)) // before rewrite changes it
		rewrite(f, abs)
	}
	c.parsed.Put(key, parsed{f, err})
	return f, err
}

// Sourced files run as functions. The interpreter's source builtin parses
// the file each time; InferenceX's benchmark_lib.sh is 2,300 lines, and a
// third of a dry run went to parsing it. A file sourced once is parsed
// once (sourcedFunc) and offered to every later run as a function named
// after its path and content, which `source FILE` calls instead (call).
// Its top-level declarations are made global (declare -g), which is what
// sourcing does; a file whose top level reads the positional parameters
// is always sourced.

const sourcedPrefix = "perflog-sourced-"

// sourcedFuncs returns the functions of every file parsed so far.
func (c *Cache) sourcedFuncs() map[string]*syntax.Stmt {
	m := map[string]*syntax.Stmt{}
	c.sourced.Each(func(k string, v *syntax.Stmt) {
		if v != nil {
			m[k] = v
		}
	})
	return m
}

// sourcedFunc is the name of the function that runs a sourced file's
// content (data, at abs), made for the runs that start later when it is
// new ("" when the file cannot be run so).
func (c *Cache) sourcedFunc(abs, name string, data []byte) string {
	h := sha256.New()
	h.Write([]byte(abs + "\x00"))
	h.Write(data)
	fn := sourcedPrefix + hex.EncodeToString(h.Sum(nil)[:8])
	body, ok := c.sourced.Get(fn)
	if ok {
		if body == nil {
			return ""
		}
		return fn
	}
	if len(data) > maxCode {
		c.sourced.Put(fn, nil)
		return ""
	}
	f, _, err := parseBash(data, name)
	if err != nil || unsupported(f) != "" || readsParams(f) {
		c.sourced.Put(fn, nil) // always sourced
		return ""
	}
	for _, st := range f.Stmts {
		if d := declOf(st); d != nil && (d.Variant.Value == "declare" || d.Variant.Value == "local" || d.Variant.Value == "typeset") {
			d.Variant.Value = "declare"
			d.Args = append([]*syntax.Assign{{Naked: true, Value: &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "-g"}}}}}, d.Args...)
		}
	}
	body = &syntax.Stmt{Cmd: &syntax.Block{Stmts: f.Stmts}}
	c.sourced.Put(fn, body)
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
	// $0 and BASH_SOURCE name the script as bash was given it: run from
	// the workspace, its path relative to it
	name := strings.TrimPrefix(self, Workspace+"/")
	waited := map[*syntax.Stmt]bool{}
	hdocs := map[*syntax.Word]bool{}   // here-documents: no tilde expansion
	bodies := map[*syntax.Block]bool{} // functions' bodies
	noops := map[*syntax.Stmt]bool{}   // what errexitSafe appended
	lit := func(v string) *syntax.Word { return &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: v}}} }
	exports := map[*syntax.DeclClause]bool{} // followed by exportCommand
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if d, ok := n.Cmd.(*syntax.DeclClause); ok && !exports[d] {
				exports[d] = true
				if names := exportNames(d); len(names) > 0 {
					// "{ export X=1; perflog-export AT $? X; }"
					args := []*syntax.Word{lit(exportCommand), lit(fmt.Sprintf("%s:%d", name, d.Pos().Line())),
						{Parts: []syntax.WordPart{&syntax.ParamExp{Short: true, Param: &syntax.Lit{Value: "?"}}}}}
					for _, v := range names {
						args = append(args, lit(v))
					}
					n.Cmd = &syntax.Block{Lbrace: d.Pos(), Stmts: []*syntax.Stmt{{Position: d.Pos(), Cmd: d},
						{Position: d.Pos(), Cmd: &syntax.CallExpr{Args: args}}}}
				}
			}
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
		case *syntax.UnaryTest:
			if n.Op == syntax.TsUsrOwn || n.Op == syntax.TsGrpOwn {
				n.Op = syntax.TsExists // see ownerTests
			}
		case *syntax.CallExpr:
			if names := evalNames(n); names != "" {
				n.Args = append(n.Args, lit(names))
			}
		case *syntax.DblQuoted:
			bashSource(n.Parts, name)
			bigParams(n.Parts)
			processParams(n.Parts)
			arithParts(n.Parts)
		case *syntax.DeclClause:
			if n.Variant != nil && n.Variant.Value == "local" {
				n.Variant.Value = "declare" // see sourceable
			}
		case *syntax.FuncDecl:
			if b, ok := n.Body.Cmd.(*syntax.Block); ok {
				bodies[b] = true
			}
		case *syntax.Block:
			if !bodies[n] {
				n.Stmts = errexitSafe(n.Stmts, noops)
			}
		case *syntax.ForClause:
			n.Do = errexitSafe(n.Do, noops)
		case *syntax.CaseClause:
			for _, it := range n.Items {
				it.Stmts = errexitSafe(it.Stmts, noops)
			}
		case *syntax.IfClause:
			n.Then = errexitSafe(n.Then, noops)
			if len(n.Cond) > 0 {
				trackBranches(n, fmt.Sprintf("%s:%d", name, n.Pos().Line()), lit)
			}
		case *syntax.WhileClause:
			n.Do = errexitSafe(n.Do, noops)
			// "perflog-loop FILE:LINE || break" first in the body
			at := fmt.Sprintf("%s:%d", strings.TrimPrefix(self, Workspace+"/"), n.Pos().Line())
			guard := &syntax.Stmt{Cmd: &syntax.BinaryCmd{Op: syntax.OrStmt,
				X: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit(loopCommand), lit(at)}}},
				Y: &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit("break")}}}}}
			n.Do = append([]*syntax.Stmt{guard}, n.Do...)
		case *syntax.Redirect:
			if n.Hdoc != nil {
				hdocs[n.Hdoc] = true
			}
			if n.Op == syntax.RdrIn && n.Word != nil && len(n.Word.Parts) == 1 {
				if ps, ok := n.Word.Parts[0].(*syntax.ProcSubst); ok && ps.Op == syntax.CmdIn {
					n.Op = syntax.WordHdoc
					n.Word = &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Parts: []syntax.WordPart{
						&syntax.CmdSubst{Left: ps.OpPos, Right: ps.Rparen, Stmts: ps.Stmts}}}}}
				}
			}
		case *syntax.Word:
			if !hdocs[n] {
				homes(n)
			}
			bashSource(n.Parts, name)
			bigParams(n.Parts)
			processParams(n.Parts)
			arithParts(n.Parts)
			for i, p := range n.Parts {
				if _, ok := p.(*syntax.ProcSubst); ok {
					n.Parts[i] = &syntax.Lit{Value: "/dev/null"}
				}
			}
		}
		return true
	})
	for b := range bodies {
		funcStatus(b, noops)
	}
}

// errexitSafe ends a compound command's body that ends in an && list
// ("[ $X -lt 1 ] && X=1") with ":". Under set -e bash does not exit when
// a compound command (not a function) returns non-zero because a command
// failed where -e was ignored; the interpreter does, and the dry run
// would stop before the server. The compound then returns 0 where bash
// returns the list's status: a test of $? right after it sees that, and
// so does a function's caller when the compound ends the function, unless
// funcStatus gives the function the list's status back. The no-op is
// recorded in noops.
func errexitSafe(body []*syntax.Stmt, noops map[*syntax.Stmt]bool) []*syntax.Stmt {
	i := len(body) - 1
	for i >= 0 && isBranchExit(body[i]) {
		i-- // an else branch trackBranches closed already
	}
	if i < 0 {
		return body
	}
	last := body[i]
	if b, ok := last.Cmd.(*syntax.BinaryCmd); !ok || b.Op != syntax.AndStmt || last.Negated || last.Background {
		return body
	}
	noop := &syntax.Stmt{Position: last.End(), Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: last.End(), Value: ":"}}}}}}
	noops[noop] = true
	out := append(append(append([]*syntax.Stmt(nil), body[:i+1]...), noop), body[i+1:]...)
	return out
}

// funcStatus gives a function whose last command is a compound ending,
// on some path, in a list errexitSafe made safe the status bash gives it:
// the list's. Each such no-op keeps the list's status in a variable
// (statusVar), which is zeroed before each compound on the way there, and
// the function returns it when the compound itself returned 0: a caller
// under set -e then exits where bash's does.
func funcStatus(b *syntax.Block, noops map[*syntax.Stmt]bool) {
	var before []*[]*syntax.Stmt // bodies whose last command is a compound on the way
	var tails []*syntax.Stmt
	var walk func(body *[]*syntax.Stmt)
	walk = func(body *[]*syntax.Stmt) {
		stmts := *body
		for len(stmts) > 0 && isBranchExit(stmts[len(stmts)-1]) {
			stmts = stmts[:len(stmts)-1] // trackBranches' close, which returns 0
		}
		if len(stmts) == 0 {
			return
		}
		last := stmts[len(stmts)-1]
		if noops[last] {
			tails = append(tails, last)
			return
		}
		n := len(tails)
		switch c := last.Cmd.(type) {
		case *syntax.IfClause:
			for x := c; x != nil; x = x.Else {
				walk(&x.Then)
			}
		case *syntax.ForClause:
			walk(&c.Do)
		case *syntax.WhileClause:
			walk(&c.Do)
		case *syntax.CaseClause:
			for _, it := range c.Items {
				walk(&it.Stmts)
			}
		case *syntax.Block:
			walk(&c.Stmts)
		}
		if len(tails) > n {
			before = append(before, body)
		}
	}
	walk(&b.Stmts)
	if len(tails) == 0 {
		return
	}
	for _, t := range tails {
		*t = *parseStmt(statusVar + "=$?")
	}
	for _, body := range before {
		stmts := *body
		i := len(stmts) - 1
		for i > 0 && isBranchExit(stmts[i]) {
			i--
		}
		out := append([]*syntax.Stmt(nil), stmts[:i]...)
		out = append(out, parseStmt(statusVar+"=0"))
		*body = append(out, stmts[i:]...)
	}
	b.Stmts = append(b.Stmts, parseStmt("return $(( $? != 0 ? $? : "+statusVar+" ))"))
}

// statusVar holds the status of a list errexitSafe made safe.
const statusVar = "PERFLOG_LIST_STATUS"

// parseStmt is one statement of the rewrites' own text.
func parseStmt(src string) *syntax.Stmt {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		panic("dryrun: a rewrite's statement does not parse: " + src)
	}
	return f.Stmts[0]
}

// isBranchExit says whether st is the close trackBranches appends to a
// branch (eval "$(perflog-branch exit AT)").
func isBranchExit(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 2 || c.Args[0].Lit() != "eval" {
		return false
	}
	found := false
	syntax.Walk(c.Args[1], func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 && ce.Args[0].Lit() == branchCommand {
			found = true
		}
		return !found
	})
	return found
}

// declOf is the declaration a statement is: the statement's own, or the
// one an export's wrapping ("{ export X=1; perflog-export AT $? X; }")
// holds; nil when it is none.
func declOf(st *syntax.Stmt) *syntax.DeclClause {
	if d, ok := st.Cmd.(*syntax.DeclClause); ok {
		return d
	}
	b, ok := st.Cmd.(*syntax.Block)
	if !ok || len(b.Stmts) != 2 {
		return nil
	}
	if c, ok := b.Stmts[1].Cmd.(*syntax.CallExpr); !ok || len(c.Args) == 0 || c.Args[0].Lit() != exportCommand {
		return nil
	}
	d, _ := b.Stmts[0].Cmd.(*syntax.DeclClause)
	return d
}

// exportNames are the variables a declaration exports: every name of
// export (not export -n or -f), those of declare or typeset -x.
func exportNames(d *syntax.DeclClause) []string {
	if d.Variant == nil {
		return nil
	}
	export := d.Variant.Value == "export"
	if !export && d.Variant.Value != "declare" && d.Variant.Value != "typeset" {
		return nil
	}
	var names []string
	for _, a := range d.Args {
		if a.Name == nil {
			opt := a.Value.Lit()
			switch {
			case opt == "":
				return nil // an option not known before it runs
			case strings.HasPrefix(opt, "-") && strings.ContainsAny(opt, "nf"):
				return nil // un-exporting, or functions
			case strings.HasPrefix(opt, "-") && strings.Contains(opt, "x"):
				export = true
			}
			continue
		}
		if nameLike(a.Name.Value) {
			names = append(names, a.Name.Value)
		}
	}
	if !export {
		return nil
	}
	return names
}

// readsProcSubst is the process substitution a redirection reads from
// (`< <(cmds)`), nil for any other redirection.
func readsProcSubst(rd *syntax.Redirect) *syntax.ProcSubst {
	if rd.Op != syntax.RdrIn || rd.N != nil || rd.Word == nil || len(rd.Word.Parts) != 1 {
		return nil
	}
	if ps, ok := rd.Word.Parts[0].(*syntax.ProcSubst); ok && ps.Op == syntax.CmdIn {
		return ps
	}
	return nil
}

// asSourced is a shell file's text as source reads it (sourceable),
// kept for positions (at).
func (s *dryRun) asSourced(p string, data []byte) []byte {
	data = s.cache.sourceable(data)
	s.mu.Lock()
	s.sources[s.rel(p)] = data
	s.mu.Unlock()
	return data
}

// sourceable returns a shell file as `source` should read it in the
// sandbox: every "local" declaration written "declare", which is the
// same inside a function, but which the interpreter also accepts in a
// function whose body is a subshell (f() ( local x; ... )), where it
// forgets that it runs a function; a background command waited for, as
// rewrite has it; $$, $RANDOM and the like unknown
// (processParam); and process substitutions, which the interpreter makes
// as named pipes on disk, replaced as rewrite replaces them: `< <(cmds)`
// reads `<<<"$(cmds)"`, any other <(cmds) or >(cmds) is /dev/null (and
// cmds does not run). Lines stay where they are. Files are rewritten
// once per content.
func (c *Cache) sourceable(data []byte) []byte {
	if len(data) > maxCode {
		return data // the interpreter refuses it (checkCode), uncopied
	}
	key := string(data)
	if v, ok := c.text.Get(key); ok {
		return v
	}
	out := data
	var f *syntax.File
	err := errors.New("too large")
	if len(data) <= maxCode {
		var src []byte
		f, src, err = parseBash(data, "")
		c.shapes.Put(sha256.Sum256(data), shapeFrom(f, err, src)) // for a memo
		out = src                                                 // the offsets below are of the text parsed
	}
	if err == nil {
		type edit struct {
			off, end int
			text     string
		}
		var edits []edit
		var quoted [][2]int                  // double-quoted strings and here-documents
		read := map[*syntax.ProcSubst]bool{} // those of `< <(cmds)`
		hdocs := map[*syntax.Word]bool{}     // here-documents: no tilde expansion
		syntax.Walk(f, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				if n.Background && n.Semicolon.IsValid() {
					// "X &" runs as "{ X & wait $!; }", as rewrite has it
					o, amp := int(n.Position.Offset()), int(n.Semicolon.Offset())+1
					closing := " wait $!; }"
					if next := strings.TrimLeft(string(out[amp:min(len(out), amp+64)]), " \t"); next != "" && !strings.ContainsAny(next[:1], "\n);}#&|") {
						closing += ";" // "X & Y" on one line: Y after the block
					}
					edits = append(edits, edit{o, o, "{ "}, edit{amp, amp, closing})
				}
				if d, ok := n.Cmd.(*syntax.DeclClause); ok {
					if names := exportNames(d); len(names) > 0 {
						// "{ export X=1; perflog-export - $? X; }", as rewrite
						// has it ("-": the file:line is found by position)
						o, e := int(d.Pos().Offset()), int(d.End().Offset())
						edits = append(edits, edit{o, o, "{ "}, edit{e, e, "; " + exportCommand + " - $? " + strings.Join(names, " ") + "; }"})
					}
				}
			case *syntax.UnaryTest:
				if n.Op == syntax.TsUsrOwn || n.Op == syntax.TsGrpOwn {
					o := int(n.OpPos.Offset())
					edits = append(edits, edit{o, o + 2, "-e"}) // see ownerTests
				}
			case *syntax.CallExpr:
				if names := evalNames(n); names != "" {
					e := int(n.Args[1].End().Offset())
					edits = append(edits, edit{e, e, " " + names}) // as rewrite has it
				}
			case *syntax.Word:
				if lit, home, name, ok := tildeUser(n); ok && !hdocs[n] {
					o := int(lit.ValuePos.Offset())
					edits = append(edits, edit{o, o + 1 + name, home})
				}
			case *syntax.ProcSubst:
				if !read[n] {
					o := int(n.OpPos.Offset())
					edits = append(edits, edit{o, o + 2, "/dev/null$(exit;"})
				}
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
					hdocs[n.Hdoc] = true
				}
				if ps := readsProcSubst(n); ps != nil {
					read[ps] = true
					o, r := int(n.OpPos.Offset()), int(ps.Rparen.Offset())
					edits = append(edits, edit{o, int(ps.OpPos.Offset()) + 2, `<<<"$(`}, edit{r, r + 1, `)"`})
				}
			case *syntax.ArithmExp:
				// $((A / B)) reading variables: evaluated as rewrite has it
				// (arithParts), so that an unknown operand is an unknown
				// result, not 0
				if !n.Bracket && readsVarOnly(n.X) {
					var b strings.Builder
					if syntax.NewPrinter().Print(&b, n.X) == nil && !strings.Contains(b.String(), "'") {
						edits = append(edits, edit{int(n.Pos().Offset()), int(n.End().Offset()), "$(" + arithCommand + " '" + b.String() + "')"})
						return false
					}
				}
			case *syntax.ParamExp:
				if v := processParam(n); v != "" {
					edits = append(edits, edit{int(n.Pos().Offset()), int(n.End().Offset()), v})
				} else if x := bigParam(n); x != nil {
					var b strings.Builder
					if syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{x}}) == nil {
						edits = append(edits, edit{int(n.Pos().Offset()), int(n.End().Offset()), b.String()})
					}
				}
			}
			return true
		})
		if len(edits) > 0 {
			slices.SortStableFunc(edits, func(a, b edit) int { return a.off - b.off })
			var b bytes.Buffer
			last := 0
			for _, e := range edits {
				if e.off < last || e.end > len(out) {
					continue
				}
				text := e.text
				if strings.HasPrefix(text, UnknownMarker) && !slices.ContainsFunc(quoted, func(q [2]int) bool { return q[0] <= e.off && e.end <= q[1] }) {
					text = "'" + text + "'" // an unquoted word: < is a redirection
				}
				b.Write(out[last:e.off])
				b.WriteString(text)
				last = e.end
			}
			b.Write(out[last:])
			out = b.Bytes()
		}
	}
	c.text.Put(key, out)
	return out
}

// bashSource replaces $BASH_SOURCE and ${BASH_SOURCE[0]}, which the
// interpreter does not set, with the script's path from the workspace,
// and $0, which it loses in a background job, with arg0Var: the word
// the running script was started by (bash ./submit.sh: ./submit.sh),
// which a file it sources sees too.
func bashSource(parts []syntax.WordPart, self string) {
	for i, p := range parts {
		pe, ok := p.(*syntax.ParamExp)
		if !ok || pe.Param == nil || pe.Length || pe.Excl || pe.Slice != nil || pe.Repl != nil || pe.Exp != nil {
			continue
		}
		if pe.Param.Value == "0" && pe.Index == nil {
			parts[i] = &syntax.ParamExp{Dollar: pe.Dollar, Rbrace: pe.Rbrace, Param: &syntax.Lit{ValuePos: pe.Param.ValuePos, ValueEnd: pe.Param.ValueEnd, Value: arg0Var}}
			continue
		}
		if pe.Param.Value != "BASH_SOURCE" {
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

// evalNames reads `eval "$(cmd)"`: the variables the output of cmd may
// set, as the word "perflog-evalnames=A,B" that rewrite appends to the
// eval ("" for another command). When cmd is a program the sandbox does
// not run (python3 -c '... print(f"A={x}") ...'), its output is unknown,
// and so is every variable it would set (call): the names are those its
// text assigns to in upper case (NAME=" or NAME=').
func evalNames(c *syntax.CallExpr) string {
	if len(c.Args) != 2 || c.Args[0].Lit() != "eval" || len(c.Args[1].Parts) != 1 {
		return ""
	}
	dq, ok := c.Args[1].Parts[0].(*syntax.DblQuoted)
	if !ok || len(dq.Parts) != 1 {
		return ""
	}
	cs, ok := dq.Parts[0].(*syntax.CmdSubst)
	if !ok {
		return ""
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, &syntax.File{Stmts: cs.Stmts}); err != nil {
		return ""
	}
	names := assignedNames(b.String())
	if len(names) == 0 {
		return ""
	}
	return evalNamesWord + strings.Join(names, ",")
}

// assignedNames are the names a program's text assigns to in upper case
// (NAME=" or NAME='), each once, in order.
func assignedNames(code string) []string {
	var names []string
	for _, m := range assignedName.FindAllStringSubmatch(code, -1) {
		if !slices.Contains(names, m[1]) && isVarName(m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// evalNamesWord starts the word evalNames appends.
const evalNamesWord = "perflog-evalnames="

// assignedName matches an assignment a program prints for a shell to
// evaluate: NAME=" or NAME=' (escaped or not), NAME in upper case.
var assignedName = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Z_][A-Z0-9_]*)=\\?["']`)

// bigParams replaces the positional parameters from ${10} on, which
// mvdan.cc/sh's interpreter reads as unset (it knows $1 to $9), with
// what reads them (bigParam).
func bigParams(parts []syntax.WordPart) {
	for i, p := range parts {
		if pe, ok := p.(*syntax.ParamExp); ok {
			if x := bigParam(pe); x != nil {
				parts[i] = x
			}
		}
	}
}

// bigParam is what reads ${N}, N >= 10: ${@:N:1}, and with an expansion
// (${10:-true}) the same in a command substitution that first sets a
// variable to it, or leaves it unset when there are fewer parameters
// (nil: pe is another parameter, or a form it leaves as it is).
func bigParam(pe *syntax.ParamExp) syntax.WordPart {
	if pe.Param == nil || len(pe.Param.Value) < 2 || strings.Trim(pe.Param.Value, "0123456789") != "" ||
		pe.Length || pe.Excl || pe.Width || pe.IsSet || pe.Index != nil || pe.Slice != nil || pe.Repl != nil || pe.Names != 0 {
		return nil
	}
	n := pe.Param.Value
	if pe.Exp == nil {
		return &syntax.ParamExp{Param: &syntax.Lit{Value: "@"},
			Slice: &syntax.Slice{Offset: &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: n}}},
				Length: &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: "1"}}}}}
	}
	var b strings.Builder
	x := &syntax.ParamExp{Param: &syntax.Lit{Value: bigParamVar}, Exp: pe.Exp}
	if syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{x}}) != nil {
		return nil
	}
	src := fmt.Sprintf(`if [ $# -ge %s ]; then %s="${@:%s:1}"; else unset %s; fi; printf '%%s' "%s"`, n, bigParamVar, n, bigParamVar, b.String())
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil
	}
	return &syntax.CmdSubst{Stmts: f.Stmts}
}

// bigParamVar holds a parameter for bigParam's substitution.
const bigParamVar = "__perflog_param"

// parseBash parses a script as bash. One that mvdan.cc/sh refuses for an
// associative-array key it reads as arithmetic ([a:b]=x, ${M[$a:$b]}) is
// parsed with those keys quoted, which bash reads alike (assockeys); src
// is the text parsed, to hand the interpreter where it parses again.
func parseBash(data []byte, name string) (f *syntax.File, src []byte, err error) {
	f, err = syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(data), name)
	if err == nil {
		return f, data, nil
	}
	if q := assockeys.Quote(data); !bytes.Equal(q, data) {
		if f2, err2 := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(bytes.NewReader(q), name); err2 == nil {
			return f2, q, nil
		}
	}
	return f, data, err
}

// arithParts makes each arithmetic expansion that reads a variable and
// changes none ($((40000 + JOB_ID % 10000))) a call of arithCommand with
// the expression's text: a variable whose value is unknown (a job id
// from salloc's captured output) then leaves the result unknown, where
// the interpreter would read it as 0 and give 40000 as known.
func arithParts(parts []syntax.WordPart) {
	for i, p := range parts {
		ae, ok := p.(*syntax.ArithmExp)
		if !ok || ae.Bracket || !readsVarOnly(ae.X) {
			continue
		}
		var b strings.Builder
		if err := syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{ae}}); err != nil {
			continue
		}
		text, ok := strings.CutPrefix(b.String(), "$((")
		if text, ok = strings.CutSuffix(text, "))"); !ok {
			continue
		}
		b.Reset()
		b.WriteString(text)
		parts[i] = &syntax.CmdSubst{Left: ae.Left, Right: ae.Right, Stmts: []*syntax.Stmt{{Position: ae.Left,
			Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: arithCommand}}},
				{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: b.String()}}}}}}}}
	}
}

// readsVarOnly reports whether an arithmetic expression reads a variable
// and has no effect: no assignment, ++ or --, no command substitution.
func readsVarOnly(x syntax.ArithmExpr) bool {
	reads, pure := false, true
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			switch n.Op {
			case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
				syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn,
				syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
				pure = false
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				pure = false
			}
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			pure = false
		case *syntax.ParamExp:
			// the shell's own parameters ($1, $#, $?) are not in the
			// environment arith reads: the interpreter evaluates those
			reads = true
			pure = n.Param != nil && isVarName(n.Param.Value)
		case *syntax.Lit:
			if isVarName(n.Value) {
				reads = true
			}
		}
		return pure
	})
	return reads && pure
}

// bashInteger is an integer as bash's arithmetic reads a variable's
// value: decimal, 0x hexadecimal or 0 octal, with a sign.
var bashInteger = regexp.MustCompile(`^[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)$`)

func isVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// arith is the value of an arithmetic expression (arithParts) in env:
// unknown when a variable it reads holds an unknown value (or any text
// but an integer) or it does not evaluate.
func arith(env expand.Environ, text string) string {
	unknown := UnknownMarker + "arithmetic>"
	f, err := syntax.NewParser().Parse(strings.NewReader("_=$(("+text+"))"), "")
	if err != nil || len(f.Stmts) != 1 {
		return unknown
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 1 || call.Assigns[0].Value == nil || len(call.Assigns[0].Value.Parts) != 1 {
		return unknown
	}
	ae, ok := call.Assigns[0].Value.Parts[0].(*syntax.ArithmExp)
	if !ok || !readsVarOnly(ae.X) {
		return unknown
	}
	known := true
	syntax.Walk(ae.X, func(n syntax.Node) bool {
		name := ""
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param != nil {
				name = n.Param.Value
			}
		case *syntax.Lit:
			if isVarName(n.Value) {
				name = n.Value
			}
		}
		if name != "" {
			// bash reads a value that is no integer as an expression of
			// its own; the interpreter does not: unknown, never a guess
			if v := strings.TrimSpace(env.Get(name).String()); v != "" && !bashInteger.MatchString(v) {
				known = false
			}
		}
		return known
	})
	if !known {
		return unknown
	}
	n, err := expand.Arithm(&expand.Config{Env: env}, ae.X)
	if err != nil {
		return unknown
	}
	return strconv.Itoa(n)
}
