package claims

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/perflog/perflog/recipe"
)

type assignment struct {
	Evidence
	value   string
	literal bool
	// weak: a ${NAME:-default} or a comment, not a setting
	weak bool
}

// assignments finds NAME=VALUE (shell, docker -e, additional-settings),
// NAME: VALUE (YAML environment maps) and ${NAME:-VALUE} defaults. A
// bullet may abbreviate a name (FAST_WARMUP for
// SGLANG_JIT_DEEPGEMM_FAST_WARMUP): names ending in _NAME count.
func assignments(srcs []source, name, rev string) []assignment {
	q := `(?:[A-Z0-9]+_)*` + regexp.QuoteMeta(name)
	re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_])` + q + `(\s*=\s*|:\s+|:-)("[^"]*"|'[^']*'|[^\s"';,}#)]*)`)
	var out []assignment
	for _, s := range srcs {
		for i, l := range s.lines {
			if !strings.Contains(l, name) {
				continue
			}
			for _, m := range re.FindAllStringSubmatch(recipe.CodeOf(l), -1) {
				v := strings.Trim(m[2], `"'`)
				out = append(out, assignment{Evidence{File: s.file, Line: s.first + i, Text: strings.TrimSpace(l), Rev: rev}, v, !strings.ContainsAny(v, "$`"), m[1] == ":-"})
			}
		}
	}
	return out
}

func truthy(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "1", "true", "yes", "on":
		return true, true
	case "0", "false", "no", "off", "":
		return false, true
	}
	return false, false
}

// emptyWord says whether a value is empty as a bullet writes it: nothing,
// the word "empty", or a pair of quotes.
func emptyWord(v string) bool {
	switch strings.ToLower(v) {
	case "", "empty", `""`, "''":
		return true
	}
	return false
}

func sameValue(a, b string) bool {
	if strings.EqualFold(a, b) || (emptyWord(a) && emptyWord(b)) {
		return true
	}
	x, ok1 := truthy(a)
	y, ok2 := truthy(b)
	return ok1 && ok2 && a != "" && b != "" && x == y
}

func (s *subject) checkEnv(r *Result) {
	if len(r.When) > 0 && s.launchedWhen(r) {
		return
	}
	if len(r.When) > 0 && r.Negated && len(s.points) == 0 {
		// the text still holds what the points outside the condition
		// keep: only their launches tell
		r.set(Unverified, "whether the points that meet "+condText(r.When)+" launch without "+r.Name+" is told by their launches, which were not dry-run")
		return
	}
	if s.launchedEnv(r) {
		return
	}
	name := r.Name
	head := assignments(s.head.sources, name, "head")
	elsewhere := false // set only in changed files that run none of the recipes
	if len(head) == 0 {
		head = assignments(s.changed, name, "head")
		elsewhere = len(head) > 0 && s.head.drivers > 0 && !slices.ContainsFunc(head, s.mayRun)
	}
	mention := regexp.MustCompile(`(^|[^A-Za-z0-9_])(?:[A-Z0-9]+_)*` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	mentioned := grep(s.head.sources, mention, "head", name)
	if len(mentioned) == 0 {
		mentioned = grep(s.changed, mention, "head", name)
	}
	if r.Negated {
		base := assignments(s.base.sources, name, "base")
		set := 0
		for _, a := range head {
			if b, ok := truthy(a.value); !ok || b || r.Value != "" {
				set++
			}
		}
		switch {
		case len(head) == 0:
			r.set(Confirmed, name+" is no longer set by the files that run the recipes")
		case set == 0:
			r.set(Confirmed, name+" is set to a false value", head[0].Evidence)
		case len(base) > 0 && len(head) >= len(base):
			r.set(Contradicted, fmt.Sprintf("%s is still set (%s=%s), as before this change", name, name, head[0].value), head[0].Evidence)
		default:
			r.set(Unverified, name+" is still set in some files", head[0].Evidence)
		}
		return
	}
	if r.Value == "" {
		var set []assignment // a ${NAME:-x} reads NAME; it sets nothing
		for _, a := range head {
			if !a.weak {
				set = append(set, a)
			}
		}
		switch {
		case len(set) > 0 && elsewhere:
			r.set(Contradicted, fmt.Sprintf("%s is set only in %s, which runs none of the listed recipes (%s)", name, set[0].File, s.filesText()), set[0].Evidence)
		case len(set) > 0:
			r.set(Confirmed, fmt.Sprintf("%s is set (%s=%s)", name, name, set[0].value), set[0].Evidence)
		case r.Strong && len(head) > 0:
			// "Set X" asserts a setting; a file that reads X sets nothing
			r.set(Unverified, name+" is read, but no file that runs the listed recipes sets it", head[0].Evidence)
		case r.Strong && len(mentioned) > 0 && s.expanded(name) && s.unsetAtEveryPoint(name):
			// read, set by no file and not given by the workflow: the
			// scripts run with it unset
			r.set(Contradicted, name+" is read, yet set by no file that runs the listed recipes and by no point's workflow environment", mentioned[0])
		case r.Strong && len(mentioned) > 0:
			r.set(Unverified, name+" is named, but no file that runs the listed recipes sets it", mentioned[0])
		case len(head) > 0:
			r.set(Confirmed, name+" is used", head[0].Evidence)
		case len(mentioned) > 0:
			r.set(Confirmed, name+" is used", mentioned[0])
		case s.head.drivers == 0:
			r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
		default:
			r.set(Contradicted, name+" appears in none of the files that run the listed recipes ("+s.filesText()+")")
		}
		return
	}
	var other []assignment
	nonLiteral := false
	for _, a := range head {
		if sameValue(a.value, r.Value) && elsewhere {
			r.set(Contradicted, fmt.Sprintf("%s=%s is set only in %s, which runs none of the listed recipes (%s)", name, a.value, a.File, s.filesText()), a.Evidence)
			return
		}
		if sameValue(a.value, r.Value) {
			r.set(Confirmed, fmt.Sprintf("%s=%s is set", name, a.value), a.Evidence)
			return
		}
		if !a.literal || a.weak {
			nonLiteral = true
		} else {
			other = append(other, a)
		}
	}
	switch {
	case nonLiteral:
		r.set(Unverified, name+" is set from a variable or has a default only", head[0].Evidence)
	case len(other) > 0:
		var vals []string
		var ev []Evidence
		for _, a := range other {
			vals = append(vals, name+"="+a.value)
			ev = append(ev, a.Evidence)
		}
		r.set(Contradicted, fmt.Sprintf("the files that run the recipes set %s, not %s=%s", strings.Join(dedupe(vals), ", "), name, r.Value), ev...)
		for _, a := range assignments(s.base.sources, name, "base") {
			r.Evidence = append(r.Evidence, a.Evidence)
			break
		}
	case len(mentioned) > 0:
		r.set(Unverified, name+" is read but its value is set elsewhere (the workflow, the environment)", mentioned[0])
	case s.head.drivers == 0:
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
	default:
		r.set(Contradicted, fmt.Sprintf("%s is set nowhere in the files that run the listed recipes (%s)", name, s.filesText()))
		if alt := s.sameSetting(name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
	}
}

// reBenchScript matches the launchers and the benchmark scripts they run
// (not a helper of a multi-node driver, not a data file a driver reads).
var reBenchScript = regexp.MustCompile(`^(?:benchmarks/(?:single_node/.+|[^/]+)|runners/launch_[^/]+)\.sh$`)

// mayRun says whether the file of an assignment may run for the listed
// recipes though their launch paths do not reach it: anything but a
// launcher of other runners or a benchmark script the recipes' files do
// not name (a multi-node driver reads its helpers and model tables by
// computed paths).
func (s *subject) mayRun(a assignment) bool {
	if !reBenchScript.MatchString(a.File) || strings.HasSuffix(a.File, "/benchmark_lib.sh") {
		return true
	}
	base := path.Base(a.File)
	for _, src := range s.head.sources {
		for _, l := range src.lines {
			if strings.Contains(l, base) {
				return true
			}
		}
	}
	return false
}

// expanded says whether the recipes' files expand name ($NAME, ${NAME…}):
// a variable read, not a word of a value (--attention-backend TRITON_ATTN).
func (s *subject) expanded(name string) bool {
	re := regexp.MustCompile(`\$\{?` + regexp.QuoteMeta(name) + `\b`)
	return len(grep(s.head.sources, re, "head", name)) > 0
}

// unsetAtEveryPoint says whether the listed recipes have points at head
// and the workflow's environment of none of them holds name.
func (s *subject) unsetAtEveryPoint(name string) bool {
	n := 0
	for _, k := range s.keys {
		pts, err := s.ch.Head.LaunchPoints(k)
		if err != nil {
			return false
		}
		for _, pt := range pts {
			if _, ok := pt.Env[name]; ok || pt.Env == nil {
				return false
			}
			n++
		}
	}
	return n > 0
}

// sameSetting finds the setting an environment variable names written
// another way in the head files (VLLM_MINIMAX_M3_MSA_DECODE_BACKEND as an
// engine option minimax_m3_msa_decode_backend): the usual reason a bullet
// naming the variable is wrong.
func (s *subject) sameSetting(name string) *Evidence {
	key := strings.ToLower(name)
	for _, p := range []string{"vllm_", "sglang_", "sgl_", "trtllm_", "atom_", "aiter_"} {
		key = strings.TrimPrefix(key, p)
	}
	if len(key) < 8 || !strings.Contains(key, "_") {
		return nil
	}
	re := regexp.MustCompile(`[A-Za-z0-9_.-]*` + regexp.QuoteMeta(key) + `[A-Za-z0-9_.-]*(?:["']?\s*[:= ]\s*["']?[A-Za-z0-9_.-]+)?`)
	for _, e := range grep(s.head.sources, re, "head", key) {
		e.Text = quotedMatch(e.Text, re)
		return &e
	}
	return nil
}

// quotedMatch is re's first match in line, widened by a quote on either
// side when the match holds that quote: a JSON option reads
// "name": "value", not name": "value.
func quotedMatch(line string, re *regexp.Regexp) string {
	loc := re.FindStringIndex(line)
	if loc == nil {
		return ""
	}
	lo, hi := loc[0], loc[1]
	for _, q := range []byte{'"', '\''} {
		if strings.IndexByte(line[loc[0]:loc[1]], q) < 0 {
			continue
		}
		if lo > 0 && line[lo-1] == q {
			lo--
		}
		if hi < len(line) && line[hi] == q {
			hi++
		}
	}
	return line[lo:hi]
}

func (s *subject) filesText() string {
	var fs []string
	for _, src := range s.head.sources {
		fs = append(fs, src.file)
	}
	return ListText(fs, 4)
}
