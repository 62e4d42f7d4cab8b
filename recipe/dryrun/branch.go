package dryrun

import (
	"fmt"
	"io"
	"regexp"
	"slices"
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
	// the code is written after the lock is let go: out may be the run's
	// own output, whose writer takes the lock
	if code := s.branchCode(hc, op, at, operands); code != "" {
		fmt.Fprintln(out, code)
	}
}

// branchCode does branch's bookkeeping (s.mu held) and returns the code
// to write ("" for none).
func (s *dryRun) branchCode(hc interp.HandlerContext, op, at string, operands []string) string {
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
			return ""
		}
		s.branches = append(s.branches, openBranch{at: at, marker: marker, before: shellVars(hc.Env)})
	case "exit":
		i := len(s.branches) - 1
		for i >= 0 && s.branches[i].at != at {
			i--
		}
		if i < 0 {
			return ""
		}
		b := s.branches[i]
		s.branches = s.branches[:i] // an inner branch left by return or break closes too
		set := untakenSettings(b.marker, operands, func(name string) string { return hc.Env.Get(name).String() })
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
			return ""
		}
		slices.Sort(set)
		u := Unknown{At: b.at, What: fmt.Sprintf("a test of a value the sandbox does not know (%s) decides this branch: what it exports, and what the branch not taken would add, is unknown", b.marker)}
		if !slices.Contains(s.launch.Unknowns, u) && len(s.launch.Unknowns) < 50 {
			s.launch.Unknowns = append(s.launch.Unknowns, u)
		}
		return strings.Join(set, "\n")
	}
	return ""
}

// untakenSettings is the code that makes what the other branch of an
// if adds to a launch (its settings, see branchSettings) unknown: the
// branch that did not run may be the one the machine takes. Of the
// options it would put in a variable, those the variable does not hold
// already (as the branch taken, or the script before, set it) are added,
// followed by the unknown value the test read (marker):
// "--enable-two-batch-overlap <unknown:python3>" says the option may be
// passed, where it stands. A NAME=VALUE becomes NAME=<unknown> after
// what the variable holds; an export of NAME exports it unknown. get is
// the shell's variables.
func untakenSettings(marker string, settings []string, get func(string) string) []string {
	m, err := syntax.Quote(marker, syntax.LangBash)
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range settings {
		kind, rest, _ := strings.Cut(st, ":")
		name, text, _ := strings.Cut(rest, ":")
		if !syntax.ValidName(name) {
			continue
		}
		switch kind {
		case "append", "option":
			add, ok := expandSimple(text, get)
			if !ok {
				continue
			}
			cur := get(name)
			if extra := newGroups(cur, add); extra != "" {
				q, err := syntax.Quote(strings.TrimSpace(cur+" "+extra)+" "+marker, syntax.LangBash)
				if err == nil {
					out = append(out, name+"="+q)
				}
			}
		case "array":
			var words []string
			for _, w := range strings.Split(text, arraySep) {
				x, ok := expandSimple(w, get)
				q, err := syntax.Quote(x, syntax.LangBash)
				if !ok || err != nil {
					words = nil
					break
				}
				words = append(words, q)
			}
			if len(words) > 0 {
				out = append(out, name+"+=("+strings.Join(words, " ")+" "+m+")")
			}
		case "pair":
			if q, err := syntax.Quote(text+"="+marker, syntax.LangBash); err == nil && syntax.ValidName(text) {
				out = append(out, name+`="${`+name+`:+${`+name+`} }"`+q)
			}
		case "export":
			out = append(out, "export "+name+"="+m)
		}
	}
	return out
}

// newGroups is what of add's options (each with the words after it) cur
// does not hold as they are, in add's order ("" when none).
func newGroups(cur, add string) string {
	have := map[string]bool{}
	for _, g := range optionGroups(cur) {
		have[g] = true
	}
	var out []string
	for _, g := range optionGroups(add) {
		if !have[g] {
			out = append(out, g)
		}
	}
	return strings.Join(out, " ")
}

// optionGroups splits a command line's words into groups, each an option
// and the words up to the next one.
func optionGroups(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		if strings.HasPrefix(w, "-") || len(out) == 0 {
			out = append(out, w)
		} else {
			out[len(out)-1] += " " + w
		}
	}
	return out
}

// expandSimple expands the parameters of a text branchSettings kept
// (${v}, ${v:-x}, ${v-x}, ${v:+x}, ${v+x}) with get; ok is false for
// another form.
func expandSimple(text string, get func(string) string) (string, bool) {
	var b strings.Builder
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			b.WriteString(text)
			return b.String(), true
		}
		b.WriteString(text[:i])
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			return "", false
		}
		inner := text[i+2 : i+j]
		text = text[i+j+1:]
		k := strings.IndexAny(inner, ":-+")
		if k < 0 {
			b.WriteString(get(inner))
			continue
		}
		name, op := inner[:k], inner[k:]
		v := get(name)
		switch {
		case strings.HasPrefix(op, ":-"):
			if v == "" {
				v = op[2:]
			}
		case strings.HasPrefix(op, ":+"):
			if v != "" {
				v = op[2:]
			}
		case strings.HasPrefix(op, "-"), strings.HasPrefix(op, "+"):
			return "", false // set or unset: the shell's to tell
		default:
			return "", false
		}
		b.WriteString(v)
	}
}

// branchSettings lists, as "KIND:NAME:TEXT", what a branch's assignments
// add to a launch when it runs:
//   - append: options or NAME=VALUE appended to a variable ("X=\"$X
//     --flag\"", "X+=..."; TEXT is what is appended, as it stands between
//     double quotes);
//   - array: options or NAME=VALUE appended to an array (X+=(...); TEXT
//     the words, joined by arraySep);
//   - option: a variable set to options ("X=\"--a 1\""; TEXT the value);
//   - pair: a variable set to NAME=VALUE, for a command's environment
//     (TEXT is NAME);
//   - export: a variable exported.
//
// A TEXT holds only literal text and parameters ($v, ${v:-x}), so that
// running it again expands as the branch would; an assignment of
// anything else, and of other values, is left out: shell variables that
// decide guards are the machine's, as in openBranch.
func branchSettings(body []*syntax.Stmt) []string {
	var out []string
	add := func(kind, name, text string) {
		if st := kind + ":" + name + ":" + text; !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	for _, st := range body {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.FuncDecl, *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
				return false
			case *syntax.DeclClause:
				if n.Variant != nil && n.Variant.Value == "export" {
					for _, a := range n.Args {
						if a.Name != nil && a.Value != nil {
							add("export", a.Name.Value, "")
						}
					}
				}
				return false
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					return true
				}
				for _, a := range n.Assigns {
					if a.Name == nil || a.Index != nil {
						continue
					}
					name := a.Name.Value
					switch {
					case a.Append && a.Array != nil:
						var words []string
						for _, e := range a.Array.Elems {
							if e.Index != nil || e.Value == nil {
								words = nil
								break
							}
							t, ok := quotable(e.Value.Parts)
							if !ok {
								words = nil
								break
							}
							words = append(words, t)
						}
						if len(words) > 0 && launchText(words[0]) {
							add("array", name, strings.Join(words, arraySep))
						}
					case a.Value == nil:
					case a.Append:
						if t, ok := quotable(a.Value.Parts); ok && launchText(t) {
							add("append", name, t)
						}
					case startsWithParam(a.Value, name):
						if t, ok := quotable(unquoted(a.Value.Parts)[1:]); ok && launchText(t) {
							add("append", name, t)
						}
					default:
						t, ok := quotable(a.Value.Parts)
						if !ok {
							break
						}
						if m := reEnvPair.FindStringSubmatch(t); m != nil {
							add("pair", name, m[1])
						} else if strings.HasPrefix(t, "-") {
							add("option", name, t)
						}
					}
				}
				return false
			}
			return true
		})
	}
	return out
}

// launchText says whether text appended to a variable is of a command
// line: it opens with an option or a NAME=VALUE. What else a branch
// appends (the names a check found missing) decides guards.
func launchText(t string) bool {
	t = strings.TrimLeft(t, " ")
	return strings.HasPrefix(t, "-") || reEnvPair.MatchString(t)
}

// arraySep joins the words of an array setting.
const arraySep = "\x1f"

// reEnvPair matches a NAME=VALUE text, NAME a variable's name.
var reEnvPair = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=`)

// unquoted is a word's parts, a double-quoted word's inner ones.
func unquoted(parts []syntax.WordPart) []syntax.WordPart {
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			return dq.Parts
		}
	}
	return parts
}

// startsWithParam says whether w opens with $name or ${name}.
func startsWithParam(w *syntax.Word, name string) bool {
	parts := unquoted(w.Parts)
	if len(parts) == 0 {
		return false
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == name && pe.Index == nil && !pe.Length && !pe.Excl && pe.Slice == nil && pe.Repl == nil && pe.Exp == nil
}

// quotable is parts as text that stands between double quotes and
// expands as the parts do: literals without quotes, backslashes or
// backquotes, single-quoted text without those, and plain parameters
// ($v, ${v}, ${v:-x} with a literal x). ok is false for anything else.
func quotable(parts []syntax.WordPart) (string, bool) {
	var b strings.Builder
	for _, p := range unquoted(parts) {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "$`\"\\") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			// between double quotes its $ and ` would expand: not kept
			if p.Dollar || strings.ContainsAny(p.Value, "$`\"\\") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.ParamExp:
			if p.Param == nil || !syntax.ValidName(p.Param.Value) || p.Index != nil || p.Length || p.Excl || p.Slice != nil || p.Repl != nil || p.Names != 0 {
				return "", false
			}
			if p.Exp == nil {
				b.WriteString("${" + p.Param.Value + "}")
				break
			}
			if p.Exp.Word == nil || (p.Exp.Op != syntax.DefaultUnsetOrNull && p.Exp.Op != syntax.AlternateUnsetOrNull) {
				return "", false // ${v:?msg} exits, ${v:=x} assigns: the branch not taken would do neither
			}
			def, ok := quotable(p.Exp.Word.Parts)
			if !ok || strings.Contains(def, "}") {
				return "", false
			}
			b.WriteString("${" + p.Param.Value + p.Exp.Op.String() + def + "}")
		default:
			return "", false
		}
	}
	t := b.String()
	if strings.ContainsAny(t, "\"\\`\n") {
		return "", false
	}
	return t, true
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

// ifSettings is what each branch of an if sets (branchSettings) when its
// else, if any, is plain (not an elif: an elif is an if of its own).
func ifSettings(n *syntax.IfClause) (plain bool, thenSets, elseSets []string) {
	plain = n.Else == nil || len(n.Else.Cond) == 0
	if plain {
		thenSets = branchSettings(n.Then)
		if n.Else != nil {
			elseSets = branchSettings(n.Else.Then)
		}
	}
	return plain, thenSets, elseSets
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
	// each branch's close also makes what the other branch sets unknown
	// (untakenSettings); an if without an else that sets any gets one
	plain, thenSets, elseSets := ifSettings(n)
	wrap := func(body []*syntax.Stmt, other []string) []*syntax.Stmt {
		enter := []*syntax.Word{lit(branchCommand), lit("enter"), lit(at)}
		for _, w := range words {
			enter = append(enter, &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)})
		}
		exitArgs := []*syntax.Word{lit(branchCommand), lit("exit"), lit(at)}
		for _, o := range other {
			if !strings.Contains(o, "'") { // quoted: a literal would be globbed against the files
				exitArgs = append(exitArgs, &syntax.Word{Parts: []syntax.WordPart{&syntax.SglQuoted{Value: o}}})
			}
		}
		exit := &syntax.Word{Parts: []syntax.WordPart{&syntax.DblQuoted{Parts: []syntax.WordPart{&syntax.CmdSubst{
			Stmts: []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: exitArgs}}}}}}}}
		out := []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: enter}}}
		out = append(out, body...)
		return append(out, &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{lit("eval"), exit}}})
	}
	n.Then = wrap(n.Then, elseSets)
	switch {
	case n.Else != nil && plain:
		n.Else.Then = wrap(n.Else.Then, thenSets)
	case n.Else == nil && len(thenSets) > 0:
		n.Else = &syntax.IfClause{Position: n.End(), Then: wrap(nil, thenSets)}
	}
}
