package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Rule ids of the recipe-script lint (a public contract: add, never
// rename). Severities are defaults; .perflog.yaml rules: can change them.
const (
	RuleArrayClobber     = "recipe/array-clobber"
	RuleContinuation     = "recipe/continuation-whitespace"
	RuleKVBackend        = "recipe/kv-backend-mismatch"
	RuleRouter           = "recipe/router-mismatch"
	RuleEnginePatch      = "recipe/engine-patch"
	RuleNonUpstreamImage = "recipe/non-upstream-image"
	RuleParse            = "recipe/parse"
)

// Finding is one lint finding; changelog turns it into a verify finding.
type Finding struct {
	Rule     string
	Severity string // error, warning, info
	File     string
	Line     int
	Key      string // the recipe concerned, when one is
	Message  string
	Source   string // the offending line
}

// Severities are the rules' severities (verify's full profile reports
// them the same, unless the settings override them).
var Severities = map[string]string{
	RuleArrayClobber: "error", RuleContinuation: "error", RuleKVBackend: "error", RuleRouter: "error",
	RuleEnginePatch: "warning", RuleNonUpstreamImage: "warning", RuleParse: "warning",
}

func (s *Script) finding(rule string, line int, format string, a ...any) Finding {
	f := Finding{Rule: rule, Severity: Severities[rule], File: s.Path, Line: line, Message: fmt.Sprintf(format, a...)}
	if line > 0 && line <= len(s.Lines) {
		f.Source = s.Lines[line-1]
	}
	return f
}

// Lint checks a script on its own: array clobbering, a backslash followed
// by whitespace, engine patching, a script that does not parse.
func Lint(s *Script) []Finding {
	if s.ParseErr != nil {
		line := 0
		if pe, ok := s.ParseErr.(syntax.ParseError); ok {
			line = int(pe.Pos.Line())
		}
		return []Finding{s.finding(RuleParse, line, "the script does not parse (%v); it was not linted", s.ParseErr)}
	}
	var out []Finding
	out = append(out, s.continuation()...)
	out = append(out, s.arrayClobber()...)
	out = append(out, s.enginePatch()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// continuation finds "\" followed by spaces, tabs or a carriage return (a
// CRLF line ending) at the end of a line:
// the line continuation ends there (the next line runs as a command of its
// own) and "\ " becomes an argument of one space.
func (s *Script) continuation() []Finding {
	var out []Finding
	syntax.Walk(s.File, func(n syntax.Node) bool {
		w, ok := n.(*syntax.Word)
		if !ok || len(w.Parts) != 1 {
			return true
		}
		l, ok := w.Parts[0].(*syntax.Lit)
		if !ok || (l.Value != `\ ` && l.Value != "\\\t") {
			return true
		}
		line := int(w.Pos().Line())
		if line > len(s.Lines) || strings.TrimSpace(s.Lines[line-1][min(int(w.End().Col())-1, len(s.Lines[line-1])):]) != "" {
			return true // an escaped space in the middle of a line is intended
		}
		out = append(out, s.finding(RuleContinuation, line,
			"a backslash followed by trailing whitespace at line %d: the line continuation ends here, the next line runs as a separate command, and a stray %q argument is passed; delete the whitespace after the backslash", line, l.Value[1:]))
		return true
	})
	// the parser takes "\" CR LF for a continuation, as bash does not:
	// found in the text (a line that ends in an odd run of backslashes and
	// a carriage return, outside a comment)
	for i, l := range s.Lines {
		body, ok := strings.CutSuffix(l, "\r")
		if !ok || strings.HasPrefix(strings.TrimSpace(body), "#") {
			continue
		}
		n := len(body) - len(strings.TrimRight(body, `\`))
		if n%2 == 1 {
			out = append(out, s.finding(RuleContinuation, i+1,
				"a backslash followed by a CRLF line ending at line %d: bash reads the carriage return as an argument and ends the command there, so the next line runs as a separate command; save the script with LF line endings", i+1))
		}
	}
	return out
}

// arrayClobber finds NAME=(...) after NAME+=(...) on a path that reaches
// a use of ${NAME[@]}: the elements added before are dropped.
func (s *Script) arrayClobber() []Finding {
	var out []Finding
	for i, set := range s.Arrays {
		if set.Append {
			continue
		}
		var grew *ArrayOp
		for j := 0; j < i; j++ {
			a := s.Arrays[j]
			if a.Name == set.Name && a.Append && a.scope == set.scope && !exclusive(a.path, set.path) {
				grew = &s.Arrays[j]
			}
		}
		if grew == nil {
			continue
		}
		use := 0
		for _, u := range s.Uses {
			if u.Name == set.Name && u.Line > set.Line && (u.scope == set.scope || set.scope == "") {
				use = u.Line
				break
			}
		}
		if use == 0 {
			continue
		}
		out = append(out, s.finding(RuleArrayClobber, set.Line,
			"%s is grown with += at line %d, then reset with %s=(...) at line %d before its use at line %d: what was added before is silently dropped; append with += (or reset before growing)",
			set.Name, grew.Line, set.Name, set.Line, use))
	}
	return out
}

var (
	sitePackages = regexp.MustCompile(`(site|dist)-packages`)
	patchFile    = regexp.MustCompile(`\.(patch|diff)\b`)
)

// enginePatch finds patching of the inference engine inside a script
// (docs/PR_REVIEW_CHECKLIST.md: the pinned image must run as shipped).
func (s *Script) enginePatch() []Finding {
	var out []Finding
	tools := s.toolCheckouts()
	syntax.Walk(s.File, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		var args []string
		for _, a := range c.Args {
			args = append(args, literal(a))
		}
		cmd := args[0]
		line := int(c.Pos().Line())
		text := strings.Join(args, " ")
		why := ""
		switch {
		case cmd == "git" && len(args) > 1 && (args[1] == "apply" || args[1] == "am"):
			why = "applies a patch with git " + args[1]
		case cmd == "patch":
			why = "applies a patch"
		case cmd == "sed" && strings.Contains(text, "-i") && sitePackages.MatchString(text):
			why = "edits installed packages in place with sed -i"
		case (cmd == "pip" || cmd == "pip3" || (cmd == "python3" || cmd == "python") && strings.Contains(text, "-m pip")) &&
			strings.Contains(text, "install") && (strings.Contains(text, "git+") || strings.Contains(text, ".whl")) &&
			engineName.MatchString(text):
			why = "installs an engine build over the pinned image"
		case (cmd == "cp" || cmd == "mv") && sitePackages.MatchString(text):
			why = "overwrites installed package files"
		}
		if why == "" && patchFile.MatchString(text) && (cmd == "git" || cmd == "patch" || cmd == "cat") {
			why = "uses a patch file"
		}
		if why != "" && (cmd == "git" || cmd == "patch") {
			// a patch of a tool the script checked out (the srt-slurm
			// clone a launcher makes) is not a patch of the engine
			if dir := s.patchDir(c, line); dir != "" && tools[dir] {
				why = ""
			}
		}
		if why != "" {
			out = append(out, s.finding(RuleEnginePatch, line,
				"the script %s: the pinned image must run as shipped (PR review checklist) unless a waiver in docs/waiver/ covers it", why))
		}
		return true
	})
	return out
}

// toolCheckouts are the directories (as written: "$SRT_REPO_DIR") the
// script clones a repository into that is not an inference engine.
func (s *Script) toolCheckouts() map[string]bool {
	out := map[string]bool{}
	syntax.Walk(s.File, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) < 4 || literal(c.Args[0]) != "git" || literal(c.Args[1]) != "clone" {
			return true
		}
		var pos []string
		for _, a := range c.Args[2:] {
			if t := s.wordText(a); !strings.HasPrefix(t, "-") {
				pos = append(pos, t)
			}
		}
		if len(pos) == 2 && !engineName.MatchString(pos[0]) {
			out[unquoteWord(pos[1])] = true
		}
		return true
	})
	return out
}

// patchDir is the directory a git apply or patch call works in, as
// written: its -C / --directory / -d option, else the last cd or pushd
// before it in the script ("" when none).
func (s *Script) patchDir(c *syntax.CallExpr, line int) string {
	args := c.Args
	for i := 1; i < len(args); i++ {
		t := s.wordText(args[i])
		switch {
		case (t == "-C" || t == "-d" || t == "--directory") && i+1 < len(args):
			return unquoteWord(s.wordText(args[i+1]))
		case strings.HasPrefix(t, "--directory="):
			return unquoteWord(strings.TrimPrefix(t, "--directory="))
		}
	}
	dir, at := "", 0
	syntax.Walk(s.File, func(n syntax.Node) bool {
		cd, ok := n.(*syntax.CallExpr)
		if !ok || len(cd.Args) < 2 {
			return true
		}
		if w := literal(cd.Args[0]); (w == "cd" || w == "pushd") && int(cd.Pos().Line()) <= line && int(cd.Pos().Line()) >= at {
			dir, at = unquoteWord(s.wordText(cd.Args[1])), int(cd.Pos().Line())
		}
		return true
	})
	return dir
}

// wordText is a word as the script writes it.
func (s *Script) wordText(w *syntax.Word) string {
	a, b := int(w.Pos().Offset()), int(w.End().Offset())
	if a < 0 || b > len(s.Src) || a > b {
		return ""
	}
	return string(s.Src[a:b])
}

// unquoteWord drops the double quotes around a word ("$DIR" is $DIR).
func unquoteWord(t string) string {
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		return t[1 : len(t)-1]
	}
	return t
}

var engineName = regexp.MustCompile(`(?i)\b(vllm|sglang|tensorrt[-_]llm|trtllm|atom|aiter|flashinfer|deep_?ep|deep_?gemm)\b`)

// Run is a search-space point of a recipe that a script runs.
type Run struct {
	Key          string
	File         string // master config and line of the point, for evidence
	Line         int
	KVOffloading string // none, dram, "" (not agentic)
	KVBackend    string // kv-offload-backend.name
	DPAttn       bool
}

// CheckRuns checks a script against the recipe points that run it: the
// KV-offload backend it requires and its DP-aware router options.
func CheckRuns(s *Script, runs []Run) []Finding {
	if s.ParseErr != nil {
		return nil
	}
	var out []Finding
	seen := map[string]bool{}
	add := func(f Finding) {
		k := f.Rule + f.Key + fmt.Sprint(f.Line)
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	for _, r := range runs {
		if r.KVOffloading == "dram" && r.KVBackend != "" {
			if f, bad := s.kvMismatch(r); bad {
				add(f)
			}
		}
	}
	// a DP-aware router in front of servers launched without data-parallel
	// attention
	for _, fl := range s.Flags {
		if fl.Name != "--dp-aware" && fl.Name != "--dp-aware-routing" {
			continue
		}
		if s.dpGated(fl.Gated, 0) {
			continue // only passed when data-parallel attention is on
		}
		for _, r := range runs {
			if !r.DPAttn {
				f := s.finding(RuleRouter, fl.Line,
					"%s starts the router with %s, but %s runs it without data-parallel attention (dp-attn is not true at %s:%d): a DP-aware router needs DP-attention servers",
					s.Path, fl.Name, r.Key, r.File, r.Line)
				f.Key = r.Key
				add(f)
				break
			}
		}
	}
	return out
}

var (
	reDPGate = regexp.MustCompile(`(?i)DP_ATTENTION|DP_ATTN|\bDPA\b|DP_ATTN_ENABLED`)
	reVarRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
)

// dpGated reports whether a branch condition holds only with
// data-parallel attention: it tests DP_ATTENTION itself, or a variable
// (USE_ROUTER) that is set to a true value only inside such branches.
func (s *Script) dpGated(gate string, depth int) bool {
	if gate == "" || depth > 2 {
		return false
	}
	if reDPGate.MatchString(gate) {
		return true
	}
	for _, m := range reVarRef.FindAllStringSubmatch(gate, -1) {
		name := m[1]
		truthy, gated := 0, 0
		for _, e := range s.Env {
			if e.Name != name {
				continue
			}
			switch strings.ToLower(e.Value) {
			case "", "0", "false", "no", "off":
				continue
			}
			truthy++
			if s.dpGated(e.Gated, depth+1) {
				gated++
			}
		}
		if truthy > 0 && truthy == gated {
			return true
		}
	}
	return false
}

// kvMismatch compares the backend a script requires with a point's.
func (s *Script) kvMismatch(r Run) (Finding, bool) {
	var required []KVRequire
	for _, q := range s.KVRequires {
		if q.Arg == "" || strings.HasPrefix(q.Arg, "$") {
			return Finding{}, false // passed through: the script accepts any backend
		}
		required = append(required, q)
	}
	if len(required) == 0 {
		return Finding{}, false
	}
	// an unconditional requirement decides; else the arms of the case on
	// $KV_OFFLOAD_BACKEND (a catch-all arm accepts anything)
	for _, q := range required {
		if !q.Guarded {
			if q.Arg == r.KVBackend {
				return Finding{}, false
			}
			f := s.finding(RuleKVBackend, q.Line,
				"%s requires the KV-offload backend %q, but %s runs it with kv-offload-backend %q (%s:%d): benchmark_lib.sh exits 1 on the mismatch",
				s.Path, q.Arg, r.Key, r.KVBackend, r.File, r.Line)
			f.Key = r.Key
			return f, true
		}
	}
	var arms []string
	for _, q := range required {
		if q.Wild {
			return Finding{}, false
		}
		if q.Arms == nil {
			return Finding{}, false // guarded by something else: not decidable
		}
		arms = append(arms, q.Arms...)
		if q.Arg == r.KVBackend {
			return Finding{}, false
		}
	}
	f := s.finding(RuleKVBackend, required[0].Line,
		"%s handles the KV-offload backends %s, but %s runs it with kv-offload-backend %q (%s:%d): benchmark_lib.sh exits 1",
		s.Path, strings.Join(arms, ", "), r.Key, r.KVBackend, r.File, r.Line)
	f.Key = r.Key
	return f, true
}
