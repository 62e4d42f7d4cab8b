package draft

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/lint"
)

// scriptBullets describes what changed in a script (environment and
// engine flags) or names a changed recipe file.
func scriptBullets(ch *recipe.Change, p string, told map[string]bool) []string {
	if isYAML(p) {
		return yamlBullets(ch, p, false, false)
	}
	if !strings.HasSuffix(p, ".sh") {
		return []string{"Update " + p}
	}
	hs, _ := ch.Head.Script(p)
	bs, _ := ch.Base.Script(p)
	if hs == nil {
		return nil
	}
	if bs == nil {
		return []string{"Add " + p}
	}
	if hs.ParseErr != nil || bs.ParseErr != nil {
		return []string{"Update " + p}
	}
	out := envBullets(exportedEnv(bs), exportedEnv(hs), told)
	flagsOf := func(s *lint.Script) *named {
		var m named
		for _, f := range s.Flags {
			if _, ok := m.val[f.Name]; !ok { // the first one
				v := f.Value
				if v == "" {
					v = shellValue(s, f)
				}
				m.set(f.Name, v)
			}
		}
		return &m
	}
	hf, bf := flagsOf(hs), flagsOf(bs)
	gate := map[string]string{} // the branch each head flag is first passed in
	for _, f := range hs.Flags {
		if _, ok := gate[f.Name]; !ok {
			gate[f.Name] = f.Gated
		}
	}
	// the options added in one branch (the HiCache arm, the router's
	// block) are one bullet, "Add --a 1, --b 2 and --c"
	added := map[string][]string{}
	first := map[string]int{}
	for _, n := range hf.order {
		if n == "--served-model-name" {
			continue // follows the model (launchBullets)
		}
		ov, was := bf.val[n]
		nv := hf.val[n]
		opt := n
		if nv != "" {
			opt += " " + nv
		}
		switch {
		case !was && gate[n] != "":
			if _, ok := first[gate[n]]; !ok {
				first[gate[n]] = len(out)
				out = append(out, "") // its place
			}
			added[gate[n]] = append(added[gate[n]], opt)
		case !was:
			out = append(out, "Add "+opt)
		case ov != nv && nv != "" && ov != "":
			out = append(out, fmt.Sprintf("Change %s from %s to %s", n, ov, nv))
		}
	}
	for g, at := range first {
		out[at] = "Add " + joinAnd(added[g])
	}
	for _, n := range bf.order {
		if _, ok := hf.val[n]; !ok {
			out = append(out, "Remove "+n)
		}
	}
	if len(out) == 0 {
		out = append(out, "Update "+p)
	}
	return out
}

// reVarWord is an option's value written as one variable ("$X",
// "${X}", quoted or not).
var reVarWord = regexp.MustCompile(`^[ =]"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?(?:[\s);]|$)`)

// shellValue is the value of an option whose word is one shell variable
// ("--hicache-ratio "$HICACHE_RATIO"") that the script assigns once, a
// literal: what a reader of the diff would read off it. "" otherwise.
func shellValue(s *lint.Script, f lint.Flag) string {
	if f.Line < 1 || f.Line > len(s.Lines) {
		return ""
	}
	line := s.Lines[f.Line-1]
	i := strings.Index(line, f.Name)
	if i < 0 {
		return ""
	}
	m := reVarWord.FindStringSubmatch(line[i+len(f.Name):])
	if m == nil {
		return ""
	}
	v, n := "", 0
	for _, e := range s.Env {
		if e.Name == m[1] {
			v, n = e.Value, n+1
		}
	}
	if n != 1 || !literalValue(v) || strings.ContainsAny(v, "$`") {
		return ""
	}
	return v
}

// flagStringBullets compare the options of two flag strings, in one
// bullet per kind: "Add --a 1, --b to decode_flags of M in f.yaml".
func flagStringBullets(old, new []dryrun.ArgFlag, where string) []string {
	val := func(fs []dryrun.ArgFlag) *named {
		var m named
		for _, f := range fs {
			m.set(f.Name, strings.Join(f.Values, " "))
		}
		return &m
	}
	om, nm := val(old), val(new)
	var added, changed, removed []string
	for _, n := range nm.order {
		ov, was := om.val[n]
		nv := nm.val[n]
		switch {
		case !was && nv != "" && literalValue(nv):
			added = append(added, n+" "+nv)
		case !was:
			added = append(added, n)
		case ov != nv && literalValue(ov) && literalValue(nv):
			changed = append(changed, fmt.Sprintf("%s from %s to %s", n, ov, nv))
		case ov != nv:
			changed = append(changed, n)
		}
	}
	for _, n := range om.order {
		if _, ok := nm.val[n]; !ok {
			removed = append(removed, n)
		}
	}
	var out []string
	if len(added) > 0 {
		out = append(out, fmt.Sprintf("Add %s to %s", strings.Join(added, ", "), where))
	}
	if len(changed) > 0 {
		out = append(out, fmt.Sprintf("Change %s in %s", strings.Join(changed, ", "), where))
	}
	if len(removed) > 0 {
		out = append(out, fmt.Sprintf("Remove %s from %s", strings.Join(removed, ", "), where))
	}
	return out
}

// scriptPair is the shell script p at head and at base, when both parse
// (nil otherwise).
func scriptPair(ch *recipe.Change, p string) (head, base *lint.Script) {
	if !strings.HasSuffix(p, ".sh") {
		return nil, nil
	}
	hs, _ := ch.Head.Script(p)
	bs, _ := ch.Base.Script(p)
	if hs == nil || bs == nil || hs.ParseErr != nil || bs.ParseErr != nil {
		return nil, nil
	}
	return hs, bs
}
