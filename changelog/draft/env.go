package draft

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// shortEnv is how many variables a new recipe's "Env:" bullet lists
// whole; more are said by what differs from its sibling's.
const shortEnv = 5

// scriptEnvBullets name the variables each benchmark script of a recipe
// sets (not the files they source): "Env in x.sh: A=1, B=2 (default), C";
// and those its srt-slurm recipes set (their env mappings), one bullet for
// them all: "Env in its srt-slurm recipes: A=1, B (by recipe)".
func scriptEnvBullets(ch *recipe.Change, key, sib string) []string {
	_, drivers, err := ch.Head.Related(key)
	if err != nil {
		return nil
	}
	var out []string
	yamlOrder, yamlVals, yamls := recipeYAMLEnv(ch, drivers)
	for _, p := range drivers {
		if isYAML(p) {
			continue
		}
		if !ch.Touched(p) {
			continue // a harness the recipe shares (agentic_srt.sh): not this change's news
		}
		sc, _ := ch.Head.Script(p)
		if !strings.HasSuffix(p, ".sh") || sc == nil || sc.ParseErr != nil {
			continue
		}
		var names []string
		seen := map[string]bool{}
		values := map[string]map[string]bool{} // a variable set to several values is named alone
		for _, e := range sc.Env {
			if values[e.Name] == nil {
				values[e.Name] = map[string]bool{}
			}
			values[e.Name][e.Value] = true
		}
		exported := exportedNames(sc)
		for _, e := range sc.Env {
			if !claims.IsEnvName(e.Name) || seen[e.Name] || !exported[e.Name] {
				continue
			}
			seen[e.Name] = true
			switch def, ok := defaultOf(e.Name, e.Value); {
			case len(values[e.Name]) > 1:
				names = append(names, e.Name)
			case ok && readsBack(e.Name, def):
				names = append(names, e.Name+"="+def+" (default)")
			case readsBack(e.Name, e.Value):
				names = append(names, e.Name+"="+e.Value)
			default:
				names = append(names, e.Name)
			}
		}
		switch {
		case len(names) > dumpEnv:
			out = append(out, fmt.Sprintf("Env in %s: %s", path.Base(p), envSummary(names)))
		case len(names) > 0:
			out = append(out, fmt.Sprintf("Env in %s: %s", path.Base(p), envList(names)))
		}
	}
	var names []string
	for _, n := range yamlOrder {
		vals := yamlVals[n]
		var v string
		for x := range vals {
			v = x
		}
		switch {
		case len(vals) > 1:
			names = append(names, n+" (by recipe)")
		case readsBack(n, v):
			names = append(names, n+"="+v)
		default:
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		where := "its srt-slurm recipe"
		if yamls > 1 {
			where += "s"
		}
		like := yamlEnvLike(ch, sib, yamlOrder, yamlVals)
		news := ""
		if len(names) > dumpEnv {
			news = newEnvText(ch, drivers, yamlOrder, yamlVals)
		}
		switch {
		case like != "" && len(names) > shortEnv && strings.Count(like, ", ") < len(names)/2:
			// (only when that is much shorter: a sibling that differs
			// in most variables says less than the list)
			// a long list said by what differs from the sibling's
			out = append(out, fmt.Sprintf("Env in %s as %s", where, like))
		case news != "":
			// no sibling says it shortly: what no other recipe's file
			// sets so is the news, the rest is the house's
			out = append(out, fmt.Sprintf("Env in %s: %d variables; %s", where, len(names), news))
		default:
			out = append(out, fmt.Sprintf("Env in %s: %s", where, envList(names)))
		}
	}
	return out
}

// envSummary says a driver script's long list of variables (names, as
// scriptEnvBullets writes them) by kind: those it sets to a value of its
// own, named; those with a default, by family ("MC_* (11)", one alone
// by its name); those it
// passes on from its caller, named briefly. 40 names in a row are a dump
// a maintainer cuts.
func envSummary(names []string) string {
	var set, passed []string
	families := map[string]int{}
	alone := map[string]string{} // a family's name when it has one
	var order []string
	defaults := 0
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, " (default)"):
			defaults++
			f, _, _ := strings.Cut(n, "_")
			if families[f] == 0 {
				order = append(order, f)
			}
			families[f]++
			alone[f], _, _ = strings.Cut(n, "=")
		case strings.Contains(n, "="):
			set = append(set, n)
		default:
			passed = append(passed, n)
		}
	}
	parts := []string{fmt.Sprintf("%d variables", len(names))}
	const most = 8
	list := func(l []string) string {
		if len(l) > most {
			return strings.Join(l[:most], ", ") + fmt.Sprintf(" and %d more", len(l)-most)
		}
		return strings.Join(l, ", ")
	}
	if len(set) > 0 {
		parts = append(parts, "set: "+list(set))
	}
	if defaults > 0 {
		slices.SortStableFunc(order, func(a, b string) int { return families[b] - families[a] })
		var fs []string
		for _, f := range order {
			if families[f] < 2 {
				fs = append(fs, alone[f]) // a family of one: by its name
				continue
			}
			fs = append(fs, fmt.Sprintf("%s_* (%d)", f, families[f]))
		}
		parts = append(parts, fmt.Sprintf("%d with defaults: %s", defaults, strings.Join(fs, ", ")))
	}
	if len(passed) > 0 {
		parts = append(parts, "passed in: "+list(passed))
	}
	return strings.Join(parts, "; ")
}

// dumpEnv is how many variables of a new recipe's srt-slurm files are
// listed whole; more are said by those no other recipe sets so.
const dumpEnv = 12

// newEnvText is what a new recipe's srt-slurm environment (order, vals)
// has that the repository did not before the change: "new to the
// repository: A=1, B (by recipe)" for names no file held, "values new
// to it: C=0" for names set otherwise; "" when it has nothing of its own
// (the list then says it: an author names what a recipe sets as others
// do, too).
func newEnvText(ch *recipe.Change, drivers []string, order []string, vals map[string]map[string]bool) string {
	own := map[string]bool{}
	root := ""
	for _, p := range drivers {
		if isYAML(p) {
			own[p] = true
			if i := strings.Index(p, "/srt-slurm-recipes/"); i >= 0 {
				root = p[:i+len("/srt-slurm-recipes")]
			}
		}
	}
	if root == "" {
		return ""
	}
	// what the repository held before the change: every srt-slurm file's
	// environment, the names of any file, the assignments of its scripts
	base := ch.Base.Files
	others, named := map[string]bool{}, map[string]bool{} // NAME=VALUE, NAME
	_ = fs.WalkDir(base, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || own[p] || !isYAML(p) {
			return nil
		}
		for _, kv := range yamlEnv(base, p) {
			others[kv[0]+"="+kv[1]], named[kv[0]] = true, true
		}
		return nil
	})
	for _, top := range []string{"benchmarks", "runners"} {
		_ = fs.WalkDir(base, top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || own[p] {
				return nil
			}
			data, ok, err := revfs.ReadFile(base, p)
			if err != nil || !ok || len(data) > 1<<20 {
				return nil
			}
			// a name any other file holds (read with a default, set in a
			// job file, a model table) is no new name
			for _, w := range reEnvWord.FindAll(data, -1) {
				named[string(w)] = true
			}
			if isYAML(p) && !strings.HasPrefix(p, root+"/") {
				// another launcher's recipes (llm-d's) set theirs in env: too
				for _, kv := range yamlEnv(base, p) {
					others[kv[0]+"="+kv[1]], named[kv[0]] = true, true
				}
				return nil
			}
			if !strings.HasSuffix(p, ".sh") && !strings.HasSuffix(p, ".slurm") {
				return nil
			}
			for _, m := range reShellAssign.FindAllSubmatch(data, -1) {
				v := string(m[2])
				if u, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
					v = u
				} else {
					v = strings.Trim(v, "'")
				}
				others[string(m[1])+"="+v], named[string(m[1])] = true, true
			}
			return nil
		})
	}
	var news, values []string
	for _, n := range order {
		var fresh []string
		for v := range vals[n] {
			if !others[n+"="+v] {
				fresh = append(fresh, v)
			}
		}
		text := n
		switch {
		case len(fresh) == 0:
			continue
		case len(vals[n]) > 1:
			text = n + " (by recipe)"
		case readsBack(n, fresh[0]):
			text = n + "=" + fresh[0]
		}
		if named[n] {
			values = append(values, text) // set elsewhere, to another value
		} else {
			news = append(news, text)
		}
	}
	var parts []string
	if len(news) > 0 {
		parts = append(parts, "new to the repository: "+capped(news, 12))
	}
	if len(values) > 0 {
		parts = append(parts, "values new to it: "+capped(values, 12))
	}
	return strings.Join(parts, "; ")
}

// reEnvWord is a variable's name in any text.
var reEnvWord = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// reShellAssign finds the variables a shell script assigns: "NAME=V",
// "export NAME=V", "-e NAME=V" (the value quoted or a plain word).
var reShellAssign = regexp.MustCompile(`(?m)(?:^|[\s;(])(?:export\s+)?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=("[^"\n]*"|'[^'\n]*'|[^\s;)"'\x60]*)`)

// readsBack says whether NAME=v, written in a bullet, is read back as
// that value by the claims (a value with a comma or a space is not: the
// bullet then names the variable alone).
func readsBack(name, v string) bool {
	if v == "" || !literalValue(v) {
		return false
	}
	for _, c := range claims.Extract([]string{"Set " + name + "=" + v}) {
		if c.Kind == claims.KindEnv && c.Name == name {
			return c.Value == v
		}
	}
	return false
}

// envList joins the names of a variables bullet, at most 40 of them.
func envList(names []string) string {
	const most = 40
	if len(names) > most {
		names = append(names[:most:most], fmt.Sprintf("%d more", len(names)-most))
	}
	return strings.Join(names, ", ")
}

// recipeYAMLEnv reads the env mappings of the srt-slurm recipe files
// among drivers: the names in order, their values, and how many files.
func recipeYAMLEnv(ch *recipe.Change, drivers []string) (order []string, vals map[string]map[string]bool, files int) {
	vals = map[string]map[string]bool{}
	for _, p := range drivers {
		if !isYAML(p) {
			continue
		}
		files++
		for _, kv := range yamlEnv(ch.Head.Files, p) {
			if vals[kv[0]] == nil {
				vals[kv[0]] = map[string]bool{}
				order = append(order, kv[0])
			}
			vals[kv[0]][kv[1]] = true
		}
	}
	return order, vals, files
}

// yamlEnvLike says a new multi-node recipe's srt-slurm env by what
// differs from its sibling's: "SIB's, except: adds A=1, B=2 instead of
// 3, no C" ("" without a sibling that sets any).
func yamlEnvLike(ch *recipe.Change, sib string, order []string, vals map[string]map[string]bool) string {
	if sib == "" {
		return ""
	}
	_, drivers, err := ch.Head.Related(sib)
	if err != nil {
		return ""
	}
	theirOrder, theirs, _ := recipeYAMLEnv(ch, drivers)
	if len(theirOrder) == 0 {
		return ""
	}
	one := func(m map[string]bool) (string, bool) {
		if len(m) != 1 {
			return "", false
		}
		for v := range m {
			return v, true
		}
		return "", false
	}
	var adds, diffs []string
	for _, n := range order {
		v, single := one(vals[n])
		tv, tsingle := one(theirs[n])
		switch {
		case theirs[n] == nil && single && readsBack(n, v):
			adds = append(adds, n+"="+v)
		case theirs[n] == nil:
			adds = append(adds, n)
		case single && tsingle && v != tv && readsBack(n, v):
			diffs = append(diffs, n+"="+v+" instead of "+tv)
		case single && !theirs[n][v] && len(theirs[n]) <= 3 && readsBack(n, v):
			// the sibling's files set it several ways, none of them this
			diffs = append(diffs, n+"="+v+" instead of "+joinOr(sortedValues(slices.Collect(maps.Keys(theirs[n])))))
		case !maps.Equal(vals[n], theirs[n]):
			diffs = append(diffs, n+" set otherwise")
		}
	}
	if len(adds) > 0 {
		diffs = append([]string{"adds " + strings.Join(adds, ", ")}, diffs...)
	}
	for _, n := range theirOrder {
		if vals[n] == nil {
			diffs = append(diffs, "no "+n)
		}
	}
	if len(diffs) == 0 {
		return sib + "'s"
	}
	return sib + "'s, except: " + envList(diffs)
}

// yamlEnv lists the variables a YAML file at head sets, in document
// order: the entries of every mapping named env or ending in environment
// (an srt-slurm recipe's benchmark, frontend and worker environments).
func yamlEnv(files fs.FS, p string) [][2]string {
	v := loadYAML(files, p)
	if v == nil {
		return nil
	}
	var out [][2]string
	var walk func(v *pyyaml.Value, depth int)
	walk = func(v *pyyaml.Value, depth int) {
		if v == nil || depth > 8 {
			return
		}
		for _, it := range v.Items {
			walk(it, depth+1)
		}
		for _, kv := range v.Pairs {
			k := strings.ToLower(kv.Key.Str)
			if (k == "env" || strings.HasSuffix(k, "environment")) && kv.Value.Kind == pyyaml.Map {
				for _, e := range kv.Value.Pairs {
					if !claims.IsEnvName(e.Key.Str) {
						continue
					}
					val := pyyaml.Render(e.Value)
					if e.Value.Kind == pyyaml.Str {
						val = e.Value.Str
					}
					out = append(out, [2]string{e.Key.Str, val})
				}
				continue
			}
			walk(kv.Value, depth+1)
		}
	}
	walk(v, 0)
	return out
}

// defaultOf reads a value that only defaults the variable itself,
// ${NAME:-v} or ${NAME-v} (quoted or not), as v.
func defaultOf(name, value string) (string, bool) {
	if len(value) > 1 && value[0] == '"' && value[len(value)-1] == '"' {
		value = value[1 : len(value)-1]
	}
	for _, op := range []string{":-", "-"} {
		if v, ok := strings.CutPrefix(value, "${"+name+op); ok {
			if v, ok := strings.CutSuffix(v, "}"); ok && literalValue(v) && !strings.ContainsAny(v, "{}") && v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// newVariableBullets name the variables some head point's launch sets and
// no base point's did (the points a change adds often bring their own):
// the matched points' differences (launchBullets) miss them.
func newVariableBullets(e *recipe.Effect) []string {
	had := map[string]bool{}
	for _, f := range []map[string]string{recipe.LaunchFields(e.Base)} {
		for k := range f {
			b, _ := recipe.SplitField(k)
			had[b] = true
		}
	}
	for _, d := range e.Diffs {
		if d.Kind == "env" {
			had["launch.env."+d.Name] = true // told by launchBullets
		}
	}
	type set struct {
		vals  map[string]bool
		quals []string
		all   bool // set at every point alike
	}
	var order []string
	sets := map[string]*set{}
	head := recipe.LaunchFields(e.Head)
	for _, k := range slices.Sorted(maps.Keys(head)) {
		b, _ := recipe.SplitField(k)
		if !strings.HasPrefix(b, "launch.env.") || had[b] {
			continue
		}
		st := sets[b]
		if st == nil {
			st = &set{vals: map[string]bool{}}
			sets[b] = st
			order = append(order, b)
		}
		st.vals[head[k]] = true
		if k == b {
			st.all = true
		} else {
			st.quals = append(st.quals, strings.TrimSuffix(k[len(b)+1:], "]"))
		}
	}
	var out []string
	for _, b := range order {
		st := sets[b]
		name := strings.TrimPrefix(b, "launch.env.")
		var v string
		for x := range st.vals {
			v = x
		}
		switch {
		case len(st.vals) == 1 && st.all && literalValue(v):
			out = append(out, fmt.Sprintf("Set %s=%s", name, v))
		case len(st.vals) == 1 && len(st.quals) <= 3 && literalValue(v):
			out = append(out, fmt.Sprintf("Set %s=%s (only %s)", name, v, strings.Join(st.quals, "; ")))
		default:
			out = append(out, fmt.Sprintf("Set %s (by point)", name))
		}
	}
	return out
}

// exportedNames are the variables a script exports (a shell variable,
// a port or a PID the script only uses itself, is no server's news).
func exportedNames(sc *lint.Script) map[string]bool {
	m := map[string]bool{}
	for _, n := range sc.Exported {
		m[n] = true
	}
	for _, e := range sc.Env {
		if e.Export || sc.AllExport {
			m[e.Name] = true
		}
	}
	return m
}

// exportedEnv are the variables a script exports, by name, with their
// value; one set to several values ("X=$CONC", then "X=128" when it is
// larger) has a value that is no literal, so no bullet states one.
func exportedEnv(sc *lint.Script) *named {
	exported := exportedNames(sc)
	vals := map[string][]string{}
	var m named
	for _, e := range sc.Env {
		if !claims.IsEnvName(e.Name) || !exported[e.Name] {
			continue
		}
		if !slices.Contains(vals[e.Name], e.Value) {
			vals[e.Name] = append(vals[e.Name], e.Value)
		}
		v := e.Value
		if len(vals[e.Name]) > 1 {
			v = "$" + strings.Join(vals[e.Name], "|")
		}
		m.set(e.Name, v)
	}
	return &m
}

type named struct {
	val   map[string]string
	order []string
}

// set sets name's value (a name set again keeps its place).
func (m *named) set(name, v string) {
	if m.val == nil {
		m.val = map[string]string{}
	}
	if _, ok := m.val[name]; !ok {
		m.order = append(m.order, name)
	}
	m.val[name] = v
}

// envStringBullets compare two env strings of NAME=VALUE words.
func envStringBullets(old, new string) []string {
	parse := func(s string) *named {
		var m named
		for _, w := range strings.Fields(s) {
			if k, v, ok := strings.Cut(w, "="); ok && claims.IsEnvName(k) {
				m.set(k, v)
			}
		}
		return &m
	}
	return envBullets(parse(old), parse(new), nil)
}

// envBullets compare two sets of variables: "Set A=1", "Change B from x
// to y", "Remove C"; a value that does not read as written is not quoted
// ("Set A", "Change how B is set").
func envBullets(old, new *named, told map[string]bool) []string {
	var out []string
	for _, k := range new.order {
		if told[k] {
			continue
		}
		ov, was := old.val[k]
		nv := new.val[k]
		switch {
		case !was && literalValue(nv):
			out = append(out, fmt.Sprintf("Set %s=%s", k, nv))
		case !was:
			out = append(out, "Set "+k)
		case ov != nv && literalValue(ov) && literalValue(nv):
			out = append(out, fmt.Sprintf("Change %s from %s to %s", k, ov, nv))
		case ov != nv:
			out = append(out, "Change how "+k+" is set")
		}
	}
	for _, k := range old.order {
		if _, ok := new.val[k]; !ok && !told[k] {
			out = append(out, "Remove "+k)
		}
	}
	return out
}
