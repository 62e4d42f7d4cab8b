package claims

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/perflog/perflog/recipe"
)

// flagOccurrences finds a flag as --name (shell, argument lists) or as a
// name: / name_with_underscores: key (srt-slurm and engine YAML configs).
func flagOccurrences(srcs []source, flag, rev string, comments bool) []assignment {
	name := strings.TrimPrefix(flag, "--")
	us := strings.ReplaceAll(name, "-", "_")
	re := regexp.MustCompile(`(?:(?:^|[^A-Za-z0-9_-]|:-)--` + regexp.QuoteMeta(name) + `(?:[= ]+("[^"]*"|'[^']*'|[^\s"'\\;)\]}]+))?(?:$|[^A-Za-z0-9_.-])|(?:^|[\s{,"'])(?:` + regexp.QuoteMeta(name) + `|` + regexp.QuoteMeta(us) + `)["']?\s*:\s*("[^"]*"|'[^']*'|[^\s,}#]*))`)
	var out []assignment
	for _, s := range srcs {
		for i, l := range s.lines {
			if !strings.Contains(l, name) && !strings.Contains(l, us) {
				continue
			}
			code := strings.TrimSpace(l)
			if !comments && strings.HasPrefix(code, "#") {
				continue
			}
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				v := m[1]
				if v == "" {
					v = m[2]
				}
				v = strings.Trim(v, `"'`)
				if strings.HasPrefix(v, "-") {
					v = ""
				}
				v = strings.TrimRight(v, ",.;")
				out = append(out, assignment{Evidence{File: s.file, Line: s.first + i, Text: code, Rev: rev}, v, !strings.ContainsAny(v, "$`{["), strings.HasPrefix(code, "#")})
			}
		}
	}
	return out
}

func (s *subject) checkFlag(r *Result) {
	if r.feature != nil {
		s.checkSwitch(r)
		return
	}
	if r.prose && !s.resolveProse(r) {
		return
	}
	if len(r.When) > 0 && s.launchedWhen(r) {
		return
	}
	if len(r.When) > 0 && r.Negated && len(s.points) == 0 {
		// the text still holds what the points outside the condition
		// keep: only their launches tell
		r.set(Unverified, "whether the points that meet "+condText(r.When)+" launch without "+r.Name+" is told by their launches, which were not dry-run")
		return
	}
	if s.launchedFlag(r) {
		return
	}
	head := flagOccurrences(s.head.sources, r.Name, "head", !r.Negated)
	elsewhere := false // found only in changed files that run other recipes
	if len(head) == 0 {
		head = flagOccurrences(s.changed, r.Name, "head", !r.Negated)
		elsewhere = len(head) > 0
	}
	if !slices.ContainsFunc(head, func(a assignment) bool { return !a.weak }) {
		head = nil // only comments name it: nothing passes it
	}
	if r.Negated {
		base := flagOccurrences(s.base.sources, r.Name, "base", false)
		switch {
		case len(head) == 0:
			r.set(Confirmed, r.Name+" is passed by none of the files that run the recipes")
		case len(base) > 0 && len(head) >= len(base) && !elsewhere:
			r.set(Contradicted, r.Name+" is still passed, as before this change", head[0].Evidence)
		default:
			r.set(Unverified, r.Name+" is still passed in some files", head[0].Evidence)
		}
		return
	}
	if len(head) == 0 && s.head.drivers == 0 {
		r.set(Unverified, "no script that runs the listed recipes was found ("+s.filesText()+")")
		return
	}
	if len(head) == 0 && s.aliasUndecided(r) {
		return
	}
	if elsewhere && len(head) > 0 && s.head.drivers > 0 && !slices.ContainsFunc(head, s.mayRun) {
		// only a benchmark script no launcher runs, or a launcher of other
		// runners, passes it
		r.set(Contradicted, fmt.Sprintf("%s is passed only in %s, which runs none of the listed recipes (%s)", r.Name, head[0].File, s.filesText()), head[0].Evidence)
		return
	}
	if len(head) == 0 {
		r.set(Contradicted, fmt.Sprintf("%s is passed by none of the files that run the listed recipes (%s)", r.Name, s.filesText()))
		r.firm = r.mention && len(flagOccurrences(s.base.sources, r.Name, "base", false)) == 0
		if alt := s.similarEnv(r.Name); alt != nil {
			r.Reason += "; they set " + alt.Text + " instead"
			r.Evidence = append(r.Evidence, *alt)
		}
		return
	}
	if r.Value == "" || strings.ContainsAny(r.Value, "=:{[") {
		r.set(Confirmed, r.Name+" is passed", head[0].Evidence)
		return
	}
	var ev []Evidence
	var vals []string
	for _, a := range head {
		if a.weak {
			continue // a comment
		}
		if a.value == "" || !a.literal || sameValue(a.value, r.Value) || strings.EqualFold(strings.Trim(a.value, `"'`), r.Value) {
			if a.value != "" && a.literal {
				r.set(Confirmed, fmt.Sprintf("%s %s is passed", r.Name, a.value), a.Evidence)
				return
			}
			r.set(Confirmed, r.Name+" is passed (its value is not literal)", a.Evidence)
			return
		}
		ev = append(ev, a.Evidence)
		vals = append(vals, a.value)
	}
	if len(ev) == 0 {
		r.set(Confirmed, r.Name+" is mentioned", head[0].Evidence)
		return
	}
	r.set(Contradicted, fmt.Sprintf("%s is passed with %s, not %s", r.Name, strings.Join(dedupe(vals), ", "), r.Value), ev...)
	// a mention's word is a value when it looks like one, is an item of a
	// list of options, or when the base passed the option with it
	// ("--load-format fastsafetensors" where the script now passes
	// another)
	r.firm = r.mention && (valueWord(r.Value) || r.listed || slices.ContainsFunc(flagOccurrences(s.base.sources, r.Name, "base", false), func(a assignment) bool {
		return !a.weak && a.literal && sameValue(a.value, r.Value)
	}))
}

// valueWord says whether the word after a mentioned option is its value:
// a number, or a name with capitals, digits or punctuation; a plain word
// may be prose ("--max-cudagraph-capture-size scaled to ...").
func valueWord(v string) bool {
	if v == "" {
		return false
	}
	return strings.ContainsAny(v, "0123456789_./:-ABCDEFGHIJKLMNOPQRSTUVWXYZ") && !stopWords[strings.ToLower(v)]
}

// similarEnv finds an environment variable set in the head files whose
// name shares the flag's words (--disable-radix-cache vs
// SGLANG_ENABLE_UNIFIED_RADIX_TREE=1): the usual reason a copied bullet
// is wrong.
func (s *subject) similarEnv(flag string) *Evidence {
	words := strings.Split(strings.TrimPrefix(flag, "--"), "-")
	var key []string
	for _, w := range words {
		if len(w) >= 4 && w != "enable" && w != "disable" {
			key = append(key, strings.ToUpper(w))
		}
	}
	if len(key) == 0 {
		return nil
	}
	re := regexp.MustCompile(`\b[A-Z][A-Z0-9_]*` + regexp.QuoteMeta(key[0]) + `[A-Z0-9_]*=\S+`)
	for _, e := range grep(s.head.sources, re, "head", key[0]) {
		e.Text = re.FindString(e.Text)
		return &e
	}
	return nil
}

var reOptionWord = regexp.MustCompile(`--([a-z0-9]+(?:[-_][a-z0-9]+)+)`)

// aliasUndecided leaves a claimed option unverified when the files pass
// an option whose name is the claim's with one word more or less
// (SGLang's --fp8-gemm-backend, whose destination is
// fp8_gemm_runner_backend, for --fp8-gemm-runner-backend): likely the
// same option under another name, which only the engine can tell.
func (s *subject) aliasUndecided(r *Result) bool {
	want := strings.Split(strings.ReplaceAll(strings.TrimPrefix(r.Name, "--"), "_", "-"), "-")
	if len(want) < 2 {
		return false
	}
	for _, src := range s.head.sources {
		for i, l := range src.lines {
			if !strings.Contains(l, "--") {
				continue
			}
			for _, m := range reOptionWord.FindAllStringSubmatch(recipe.CodeOf(l), -1) {
				got := strings.Split(strings.ReplaceAll(m[1], "_", "-"), "-")
				if !oneWordApart(want, got) {
					continue
				}
				ev := Evidence{File: src.file, Line: src.first + i, Text: strings.TrimSpace(l), Rev: "head"}
				r.set(Unverified, fmt.Sprintf("%s is passed by none of the files, but --%s is: the same option under another name, perhaps", r.Name, m[1]), ev)
				return true
			}
		}
	}
	return false
}

// oneWordApart says whether b is a with one word inserted, or a is b with
// one word inserted, that word no polarity ("--no-x" is not "--x").
func oneWordApart(a, b []string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a) != len(b)+1 {
		return false
	}
	for i := range a {
		switch a[i] {
		case "no", "not", "enable", "disable", "enabled", "disabled", "use", "skip", "without":
			continue
		}
		if slices.Equal(slices.Concat(a[:i:i], a[i+1:]), b) {
			return true
		}
	}
	return false
}

// resolveProse reads a name written without dashes as the option the
// launches of the listed recipes pass, at head or at base: the one so
// named, or the only one whose name ends so ("num-draft-tokens" for
// --speculative-num-draft-tokens). ok is false when it is read as no
// option: r is then no claim (notAClaim: no launches to read it by, or no
// option so named) or unverified (several options so named).
func (s *subject) resolveProse(r *Result) (ok bool) {
	word := strings.TrimPrefix(r.Name, "--")
	if len(s.effects) == 0 {
		r.Verdict = notAClaim // no launches to read it by: prose, as far as perflog can tell
		return false
	}
	norm := func(n string) string { return strings.ReplaceAll(strings.TrimLeft(n, "-"), "_", "-") }
	names := map[string]bool{}
	for _, e := range s.effects {
		for _, side := range [][]recipe.PointLaunch{e.Head, e.Base} {
			for _, pl := range side {
				if pl.Launch == nil {
					continue
				}
				for _, c := range pl.Launch.Servers {
					for _, f := range c.Flags {
						if n := norm(f.Name); n == norm(word) || strings.HasSuffix(n, "-"+norm(word)) {
							names["--"+n] = true
						}
					}
				}
			}
		}
	}
	switch len(names) {
	case 0:
		r.Verdict = notAClaim // no option the points launch: a word of prose
		return false
	case 1:
	default:
		r.set(Unverified, fmt.Sprintf("%q may be any of %d options the points launch (%s)", word, len(names), strings.Join(slices.Sorted(maps.Keys(names)), ", ")))
		return false
	}
	for n := range names {
		r.Name = n
	}
	return true
}
