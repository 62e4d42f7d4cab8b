package draft

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/big"
	"math/bits"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// launchBullets describe a recipe's launch diff the repository's way:
// "Add --flag value", "Remove --flag", "Change --flag from a to b",
// "Set NAME=VALUE", "Change NAME from a to b"; an option whose values
// differ by point is "Change --flag (by point)".
func launchBullets(e *recipe.Effect) []string {
	type agg struct {
		d      recipe.LaunchDiff
		varied bool
		gone   bool // every diff a removal (of values that may differ by point)
		added  bool // every diff an addition
		points int
		at     map[int]bool    // the head points it reaches
		heads  map[int]string  // the head value at each point it reaches
		bases  map[string]bool // the base values it replaced
		pairs  [][2]string     // the base and head values of its changes, once each
	}
	var order []string
	m := map[string]*agg{}
	for _, d := range e.Diffs {
		if d.Kind == "status" || d.Harness() || d.Respelled() || (d.Kind == "flag" && strings.HasSuffix(d.Name, "--served-model-name")) {
			// (the name the server answers to follows the model: the
			// model's own change says it)
			continue
		}
		id := d.Kind + "\x00" + d.In + "\x00" + d.Name
		a, ok := m[id]
		if !ok {
			a = &agg{d: d, gone: d.HeadAbsent && !d.BaseAbsent, added: d.BaseAbsent && !d.HeadAbsent, at: map[int]bool{}, heads: map[int]string{}, bases: map[string]bool{}}
			m[id] = a
			order = append(order, id)
		} else if a.d.Base != d.Base || a.d.Head != d.Head || a.d.BaseAbsent != d.BaseAbsent || a.d.HeadAbsent != d.HeadAbsent {
			a.varied = true
		}
		a.gone = a.gone && d.HeadAbsent && !d.BaseAbsent
		a.added = a.added && d.BaseAbsent && !d.HeadAbsent
		a.points += len(d.Points)
		for _, i := range d.Points {
			a.at[i] = true
			if !d.HeadAbsent {
				a.heads[i] = d.Head
			}
		}
		if !d.BaseAbsent {
			a.bases[d.Base] = true
		}
		if pair := [2]string{d.Base, d.Head}; !d.BaseAbsent && !d.HeadAbsent && !slices.Contains(a.pairs, pair) {
			a.pairs = append(a.pairs, pair)
		}
	}
	matched := e.Matched()
	facts := headFacts(e) // (conditionalBullet)
	var out []string
	// the whole-recipe additions and removals of options, by bullet: a
	// pair of one family is one replacement (pairReplacements)
	swaps := map[int]swap{}
	for _, id := range order {
		a := m[id]
		d := a.d
		name := d.Name
		where := ""
		switch d.Kind {
		case "file":
			settings := strings.HasSuffix(d.In, dryrun.SettingsSuffix)
			switch {
			case strings.HasPrefix(name, "identity."):
				continue // the recipe's record of where it came from, not what runs
			case settings && (strings.HasSuffix(name, ".container") || strings.HasSuffix(name, ".image")):
				continue // the image: its own bullet says it
			case settings:
				// (each point's settings are its own file's: the points
				// of several files share the name)
				where = " in its srt-slurm recipe"
			default:
				where = " in " + path.Base(d.In)
			}
		case "client":
			where = " (benchmark client)"
		}
		val := func(v string) string {
			if v == "" || !literalValue(v) {
				return ""
			}
			if d.Kind == "env" {
				return "=" + v
			}
			if d.Kind == "file" {
				return ": " + v
			}
			return " " + v
		}
		// (the points the change added count where they launch otherwise:
		// a bullet about the recipe is read of them too)
		added, agreeing := e.Added(d)
		agree := len(agreeing) == len(added)
		arms, whole := "", a.points >= matched && agree
		cond := ""
		if !whole && !a.varied {
			reach := maps.Clone(a.at)
			maps.Copy(reach, agreeing)
			cond, whole = armCondition(e, reach)
		}
		if !whole && (agree || a.varied) {
			arms, whole = armsOf(e, a.at)
		}
		switch {
		case a.gone && a.varied && whole && arms == "":
			// removed at every point, of values that differed by point
			out = append(out, fmt.Sprintf("Remove %s%s", name, where))
			continue
		case !whole || (a.varied && arms == ""):
			// not the same change at every point, nor at every point of
			// some arms: what the points launch now, when a condition on
			// their parameters says where
			if b, ok := conditionalBullet(e, facts, d, where); ok {
				out = append(out, b)
				continue
			}
			vals := byPointValues(e, a.heads, a.bases)
			if !agree && vals != "" {
				// the values are the compared points'; a new point (its
				// concurrency changed, say) launches another
				vals = strings.TrimSuffix(vals, ")") + "; the new points otherwise)"
			}
			verb := "Change"
			if a.added {
				verb = addVerb(d) // no compared point passed it before
			}
			if j, ok := jsonDetailByPoint(a.pairs); ok && vals == "" && !a.added {
				vals = " (" + j + ")"
			}
			out = append(out, fmt.Sprintf("%s %s%s by point%s", verb, name, where, vals))
			continue
		case arms != "" && a.added && a.varied && byPointValues(e, a.heads, a.bases) != "":
			// added with a value that follows each point's own (= conc):
			// the rule is the news, not the arms it was compared at
			out = append(out, fmt.Sprintf("%s %s%s by point%s", addVerb(d), name, where, byPointValues(e, a.heads, a.bases)))
			continue
		case arms != "":
			// (arms the claims cannot read as a condition: named, with no
			// verb or value they would read of every point)
			verb, detail := "Change", ""
			if a.added {
				verb = addVerb(d) // no compared point passed it before
			}
			if a.gone {
				verb = "Remove" // removed from those arms, not changed
			} else if j, ok := jsonDetail(d.Base, d.Head); ok && !a.varied {
				detail = " (" + j + ")"
			} else if j, ok := jsonDetailByPoint(a.pairs); ok && a.varied {
				detail = " (" + j + ")"
			} else if v := byPointValues(e, a.heads, a.bases); a.varied && v != "" {
				detail = " by point" + v
			}
			out = append(out, fmt.Sprintf("%s %s%s%s for %s", verb, name, detail, where, arms))
			continue
		case cond != "":
			// an addition where the head's points that pass it are told
			// apart more simply than the points it was added at: their rule
			if d.BaseAbsent {
				if b, ok := conditionalBullet(e, facts, d, where); ok && strings.Count(b, " and ") < strings.Count(cond, " and ") {
					out = append(out, b)
					continue
				}
			}
			where += " " + cond
		}
		switch {
		case d.BaseAbsent && d.Kind == "env":
			out = append(out, fmt.Sprintf("Set %s%s%s", name, val(d.Head), where))
		case d.BaseAbsent:
			if d.Kind == "flag" {
				swaps[len(out)] = swap{add: true, name: name, value: val(d.Head), where: where}
			}
			out = append(out, fmt.Sprintf("Add %s%s%s", name, val(d.Head), where))
		case d.HeadAbsent:
			if d.Kind == "flag" {
				swaps[len(out)] = swap{name: name, value: val(d.Base), where: where}
			}
			out = append(out, fmt.Sprintf("Remove %s%s", name, where))
		case literalValue(d.Base) && literalValue(d.Head) && d.Base != "" && d.Head != "":
			out = append(out, fmt.Sprintf("Change %s from %s to %s%s", name, d.Base, d.Head, where))
		case d.Kind == "env" && literalValue(d.Base) && literalValue(d.Head) && (d.Base == "") != (d.Head == ""):
			// a variable set empty, or set from empty: both values said
			out = append(out, fmt.Sprintf("Change %s from %s to %s%s", name, emptyText(d.Base), emptyText(d.Head), where))
		default:
			detail := ""
			if j, ok := jsonDetail(d.Base, d.Head); ok {
				detail = " (" + j + ")"
			}
			out = append(out, fmt.Sprintf("Change %s%s%s", name, detail, where))
		}
	}
	return pairReplacements(out, swaps)
}

// addVerb is the verb of a setting no compared point had: an option is
// added, a variable set.
func addVerb(d recipe.LaunchDiff) string {
	if d.Kind == "env" {
		return "Set"
	}
	return "Add"
}

// headFacts reads each head point's launch fields once, when asked.
func headFacts(e *recipe.Effect) func(i int) map[string]string {
	read := make([]map[string]string, len(e.Head))
	return func(i int) map[string]string {
		if read[i] == nil {
			read[i] = e.Head[i].Facts()
		}
		return read[i]
	}
}

// emptyText is a variable's value in a bullet: "empty" for "".
func emptyText(v string) string {
	if v == "" {
		return "empty"
	}
	return v
}

// conditionalBullet says where the head's points pass an option or set
// a variable, one value at each of them, as the condition that selects
// them: "Pass --enable-tbo when DP_ATTENTION=true and CONC>=64", "Set
// SGLANG_X=1 when ISL=8192". ok is false when the points that pass it
// hold several values, or no condition on their parameters tells them
// from the rest. Every head point counts, the new ones too: the claims
// read the condition of each. facts(i) is head point i's launch fields.
func conditionalBullet(e *recipe.Effect, facts func(i int) map[string]string, d recipe.LaunchDiff, where string) (string, bool) {
	if (d.Kind != "flag" && d.Kind != "env") || strings.Contains(d.Name, " ") || where != "" {
		return "", false // a role's option, a file's setting: not the point's own
	}
	field := "launch.flags." + d.Name
	if d.Kind == "env" {
		field = "launch.env." + d.Name
	}
	var in, out []*recipe.LaunchPoint
	vals := map[string]bool{}
	for i := range e.Head {
		pl := &e.Head[i]
		if pl.Launch == nil || pl.Point.Multinode || pl.Launch.Status != dryrun.StatusLaunched {
			return "", false // a point whose launch is not known
		}
		if v, ok := facts(i)[field]; ok {
			in = append(in, &pl.Point)
			vals[v] = true
		} else {
			out = append(out, &pl.Point)
		}
	}
	multiple := ""
	if len(vals) > 1 {
		// values that follow the point's concurrency ("= conc") are one
		// setting
		heads := map[int]string{}
		for i := range e.Head {
			if v, ok := facts(i)[field]; ok {
				heads[e.Head[i].Point.Index] = v
			}
		}
		if multiple = concMultiple(e, heads); multiple == "" {
			return "", false
		}
	}
	cond, ok := pointCondition(in, out)
	if !ok {
		return "", false
	}
	if multiple != "" {
		by := "(= conc)"
		if multiple != "1" {
			by = "(" + multiple + " × conc)"
		}
		return fmt.Sprintf("Set %s %s %s", d.Name, by, cond), true
	}
	v := slices.Collect(maps.Keys(vals))[0]
	switch {
	case strings.Contains(v, dryrun.UnknownMarker) || !literalValue(v):
		return "", false
	case d.Kind == "env":
		return fmt.Sprintf("Set %s=%s %s", d.Name, v, cond), true
	case v == "":
		return fmt.Sprintf("Pass %s %s", d.Name, cond), true
	}
	return fmt.Sprintf("Set %s %s %s", d.Name, v, cond), true
}

// swap is an option a launch diff added or removed at every point.
type swap struct {
	add         bool
	name, value string // value as the bullet writes it (" 270", or "")
	where       string
}

// pairReplacements writes an option removed and another of its family
// added where it was ("--hicache-ratio" for "--hicache-size 270") as one
// bullet, "Replace --hicache-ratio 0.75 with --hicache-size 270": two
// bullets are half a change each. Only a family with exactly one of each
// is paired.
func pairReplacements(out []string, swaps map[int]swap) []string {
	byFamily := map[string][]int{}
	for i, s := range swaps {
		if f := optionFamily(s.name); f != "" {
			byFamily[f+"\x00"+s.where] = append(byFamily[f+"\x00"+s.where], i)
		}
	}
	drop := map[int]bool{}
	for _, ix := range byFamily {
		if len(ix) != 2 || swaps[ix[0]].add == swaps[ix[1]].add {
			continue
		}
		slices.Sort(ix)
		rm, add := swaps[ix[0]], swaps[ix[1]]
		if rm.add {
			rm, add = add, rm
		}
		out[ix[0]] = fmt.Sprintf("Replace %s%s with %s%s%s", rm.name, rm.value, add.name, add.value, add.where)
		drop[ix[1]] = true
	}
	var kept []string
	for i, b := range out {
		if !drop[i] {
			kept = append(kept, b)
		}
	}
	return kept
}

// optionFamily is the leading word of an option's name that says what it
// is of ("hicache" of --hicache-size), "" for a name whose leading word
// says nothing of the kind (--max-num-seqs, --enable-x).
func optionFamily(name string) string {
	w, _, ok := strings.Cut(strings.TrimLeft(name, "-"), "-")
	if !ok {
		return ""
	}
	switch w {
	case "max", "min", "num", "enable", "disable", "no", "use", "kv", "data", "tensor", "expert":
		return ""
	}
	return w
}

// byPointValues says what a setting whose values differ by point became:
// " (4 × conc; was 256)" (" (= conc)") when every point's value is the same multiple of
// its concurrency, else " (now 16, 32 or 64; was 256)"; the old value
// only when there was one. The words are not read as a claim of one
// value ("now" and "was" say no setting's value to the claims).
func byPointValues(e *recipe.Effect, heads map[int]string, bases map[string]bool) string {
	var parts []string
	if k := concMultiple(e, heads); k == "1" {
		parts = append(parts, "= conc")
	} else if k != "" {
		parts = append(parts, k+" × conc")
	} else {
		var vals []string
		for _, v := range heads {
			if !literalValue(v) || v == "" {
				return ""
			}
			vals = append(vals, v)
		}
		vals = dedupe(sortedValues(vals))
		switch n := len(vals); {
		case n == 0:
		case n <= 4:
			parts = append(parts, "now "+joinOr(vals))
		default:
			parts = append(parts, fmt.Sprintf("now %s to %s, %d values", vals[0], vals[n-1], n))
		}
	}
	if len(bases) == 1 {
		for b := range bases {
			if literalValue(b) && b != "" {
				parts = append(parts, "was "+b)
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// concMultiple is k when every point's value is k times its concurrency
// (k a whole number, or 1/n: "conc/2" is written "0.5"), over at least
// two concurrencies; "" otherwise.
func concMultiple(e *recipe.Effect, heads map[int]string) string {
	conc := map[int]int64{}
	for i := range e.Head {
		conc[e.Head[i].Point.Index] = e.Head[i].Point.Conc
	}
	var num, den int64 // value/conc as a fraction of the first point
	concs := map[int64]bool{}
	for i, v := range heads {
		n, err := strconv.ParseInt(v, 10, 64)
		c := conc[i]
		if err != nil || c <= 0 || n <= 0 {
			return ""
		}
		if den == 0 {
			num, den = n, c
		} else if n*den != num*c {
			return ""
		}
		concs[c] = true
	}
	if len(concs) < 2 {
		return ""
	}
	if num%den == 0 {
		return strconv.FormatInt(num/den, 10)
	}
	return strconv.FormatFloat(float64(num)/float64(den), 'f', -1, 64)
}

// sortedValues sorts values as numbers when they all are, else as text.
func sortedValues(vs []string) []string {
	slices.SortFunc(vs, func(a, b string) int {
		x, errA := strconv.ParseFloat(a, 64)
		y, errB := strconv.ParseFloat(b, 64)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
	return vs
}

// armCondition writes the points at (whole arms: armsOf) as the
// condition the claims read, "when ISL=8192" or "when ISL=8192 and TP=4":
// the fewest of the point's sequence lengths and parallelism whose values
// every point of at shares and no other point has (the claims read it of
// every point, the new ones too). ok is false
// when no such condition exists (arms told apart by DP attention, or a
// set of arms that share no values).
func armCondition(e *recipe.Effect, at map[int]bool) (string, bool) {
	var in, out []*recipe.LaunchPoint
	for i := range e.Head {
		p := &e.Head[i].Point
		if e.Head[i].Launch == nil || p.Multinode {
			continue
		}
		if at[p.Index] {
			in = append(in, p)
		} else {
			out = append(out, p)
		}
	}
	return pointCondition(in, out)
}

// pointVar is a parameter of a point a condition can test.
type pointVar struct {
	name string
	of   func(p *recipe.LaunchPoint) int64
}

// pointVars are the parameters conditions test, equal to a value (the
// claims read "when ISL=8192 and DP_ATTENTION=true").
var pointVars = []pointVar{
	{"ISL", func(p *recipe.LaunchPoint) int64 { return p.ISL }},
	{"OSL", func(p *recipe.LaunchPoint) int64 { return p.OSL }},
	{"TP", func(p *recipe.LaunchPoint) int64 { return p.TP }},
	{"DP_ATTENTION", func(p *recipe.LaunchPoint) int64 {
		if p.DPAttn {
			return 2
		}
		return 1
	}},
	{"EP", func(p *recipe.LaunchPoint) int64 { return p.EP }},
}

// atom is one comparison of a condition.
type atom struct {
	text  string
	holds func(p *recipe.LaunchPoint) bool
}

// equal is the comparison of v with val ("TP=8", "DP_ATTENTION=true").
func (v pointVar) equal(val int64) atom {
	text := fmt.Sprintf("%s=%d", v.name, val)
	if v.name == "DP_ATTENTION" {
		text = fmt.Sprintf("DP_ATTENTION=%v", val == 2)
	}
	return atom{text, func(p *recipe.LaunchPoint) bool { return v.of(p) == val }}
}

// pointCondition writes the fewest comparisons (at most three) that every
// point of in meets and no point of out does: a parameter equal to in's
// shared value, and a concurrency bound ("CONC>=64", "CONC<64"). ok is
// false when there is none.
func pointCondition(in, out []*recipe.LaunchPoint) (string, bool) {
	if len(in) == 0 || len(out) == 0 {
		return "", false
	}
	var atoms []atom
	for _, v := range pointVars {
		val := v.of(in[0])
		if val == 0 || slices.ContainsFunc(in[1:], func(p *recipe.LaunchPoint) bool { return v.of(p) != val }) {
			continue // not shared (or no sequence lengths: agentic)
		}
		atoms = append(atoms, v.equal(val))
	}
	lo, hi := in[0].Conc, in[0].Conc
	for _, p := range in {
		lo, hi = min(lo, p.Conc), max(hi, p.Conc)
	}
	if lo > 0 {
		// bounds every point of in meets (with other atoms, they may
		// leave out the rest)
		atoms = append(atoms, atom{fmt.Sprintf("CONC>=%d", lo), func(p *recipe.LaunchPoint) bool { return p.Conc >= lo }})
		atoms = append(atoms, atom{fmt.Sprintf("CONC<=%d", hi), func(p *recipe.LaunchPoint) bool { return p.Conc <= hi }})
	}
	n := len(atoms)
	for size := 1; size <= min(3, n); size++ {
		for mask := 1; mask < 1<<n; mask++ {
			if bits.OnesCount(uint(mask)) != size {
				continue
			}
			meets := func(p *recipe.LaunchPoint) bool {
				for j := range atoms {
					if mask&(1<<j) != 0 && !atoms[j].holds(p) {
						return false
					}
				}
				return true
			}
			if slices.ContainsFunc(out, meets) {
				continue
			}
			var parts []string
			for j := range atoms {
				if mask&(1<<j) != 0 {
					parts = append(parts, atoms[j].text)
				}
			}
			return "when " + strings.Join(parts, " and "), true
		}
	}
	return pointDisjunction(in, out)
}

// pointDisjunction is pointCondition's last resort: two comparisons, each
// met by some points of in and by none of out, that together cover in
// ("when DP_ATTENTION=true or CONC>=64"; the claims read "or" as an
// alternative).
func pointDisjunction(in, out []*recipe.LaunchPoint) (string, bool) {
	var atoms []atom
	add := func(text string, holds func(p *recipe.LaunchPoint) bool) {
		if !slices.ContainsFunc(out, holds) && !slices.ContainsFunc(atoms, func(a atom) bool { return a.text == text }) {
			atoms = append(atoms, atom{text, holds})
		}
	}
	for _, v := range pointVars {
		for _, p := range in {
			val := v.of(p)
			if val == 0 {
				continue
			}
			a := v.equal(val)
			add(a.text, a.holds)
		}
	}
	for _, p := range in {
		c := p.Conc
		add(fmt.Sprintf("CONC>=%d", c), func(p *recipe.LaunchPoint) bool { return p.Conc >= c })
		add(fmt.Sprintf("CONC<=%d", c), func(p *recipe.LaunchPoint) bool { return p.Conc <= c })
	}
	for i := range atoms {
		for j := i + 1; j < len(atoms); j++ {
			a, b := atoms[i], atoms[j]
			if !slices.ContainsFunc(in, func(p *recipe.LaunchPoint) bool { return !a.holds(p) && !b.holds(p) }) {
				return "when " + a.text + " or " + b.text, true
			}
		}
	}
	return "", false
}

// armsOf names the arms (search-space rows, apart from concurrency) whose
// every matched point is among at: "TP8", "TP4/EP4 DPA, TP8"; whole is
// false when at reaches only some points of an arm.
func armsOf(e *recipe.Effect, at map[int]bool) (names string, whole bool) {
	base := map[string]bool{}
	for i := range e.Base {
		base[e.Base[i].Point.ID()] = true
	}
	var rows []config.Row
	type arm struct {
		row            config.Row
		points, inside int
	}
	arms := map[string]*arm{}
	var order []string
	for i := range e.Head {
		p := &e.Head[i].Point
		r := config.Row{Scenario: p.Scenario, ISL: p.ISL, OSL: p.OSL, TP: []int64{p.TP}, EP: []int64{p.EP}, DPA: []bool{p.DPAttn},
			Spec: p.Spec, KVOffloading: p.KVOffloading, KVBackend: p.KVBackend}
		rows = append(rows, r)
		if e.Head[i].Launch == nil || !base[p.ID()] {
			continue // not compared
		}
		k := rowKey(r)
		if arms[k] == nil {
			arms[k] = &arm{row: r}
			order = append(order, k)
		}
		arms[k].points++
		if at[p.Index] {
			arms[k].inside++
		}
	}
	name := rowNamer(rows)
	var out []string
	for _, k := range order {
		switch a := arms[k]; {
		case a.inside == a.points:
			out = append(out, name(a.row))
		case a.inside > 0:
			return "", false
		}
	}
	return strings.Join(out, ", "), len(out) > 0
}

// sibling is the recipe a new one is most like: of the recipes the base
// already has, one of the same model, precision, framework and node
// layout, preferring the one whose key differs in one part only (the same
// recipe on other hardware: qwen3.5-fp8-mi300x-sglang-agentic-mtp for
// qwen3.5-fp8-mi325x-sglang-agentic-mtp), then the config most alike (a
// quarter of its fields at least), then the closer name; "" when none is.
func sibling(ch *recipe.Change, key string, rec *config.Recipe) string {
	base, err := ch.Base.Master()
	if err != nil {
		return ""
	}
	best, bestScore := "", 0.25
	for _, k := range base.Keys {
		r := base.Recipes[k]
		if k == key || r.ModelPrefix != rec.ModelPrefix || r.Precision != rec.Precision || r.Framework != rec.Framework || r.Multinode != rec.Multinode ||
			(r.File != "" && rec.File != "" && r.File != rec.File) {
			// (another master config is another vendor's machines: its
			// images and options are not this recipe's to differ from)
			continue
		}
		if _, ok, _ := ch.Head.Recipe(k); !ok {
			continue // gone at head: nothing to compare with
		}
		s := rec.Similarity(r)
		if oneApart(k, key) {
			s++
		}
		if s > bestScore || (s == bestScore && best != "" && commonPrefix(k, key) > commonPrefix(best, key)) {
			best, bestScore = k, s
		}
	}
	return best
}

// envSibling is the recipe a new multi-node recipe's variables are said
// against: its sibling, else the closest recipe of the same model prefix,
// framework and kind at head, of any precision, that is not new in this
// change or comes before it in the master configs (two new recipes are
// never said by each other).
func envSibling(ch *recipe.Change, key string, rec *config.Recipe) string {
	if sib := sibling(ch, key, rec); sib != "" {
		return sib
	}
	head, err := ch.Head.Master()
	if err != nil {
		return ""
	}
	inBase := func(string) bool { return false }
	if base, err := ch.Base.Master(); err == nil {
		inBase = func(k string) bool { return base.Recipes[k] != nil }
	}
	best, bestScore := "", 0.25
	after := false // past key in the head's order
	for _, k := range head.Keys {
		if k == key {
			after = true
			continue
		}
		r := head.Recipes[k]
		if (after && !inBase(k)) || r.ModelPrefix != rec.ModelPrefix || r.Framework != rec.Framework || r.Multinode != rec.Multinode {
			continue
		}
		s := rec.Similarity(r)
		if oneApart(k, key) {
			s++
		}
		if r.Precision == rec.Precision {
			s += 0.5
		}
		if s > bestScore {
			best, bestScore = k, s
		}
	}
	return best
}

// oneApart reports whether two keys differ in exactly one of their
// dash-separated parts.
func oneApart(a, b string) bool {
	pa, pb := strings.Split(a, "-"), strings.Split(b, "-")
	if len(pa) != len(pb) {
		return false
	}
	n := 0
	for i := range pa {
		if pa[i] != pb[i] {
			n++
		}
	}
	return n == 1
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// siblingBullets describe a new recipe's server as what it does unlike
// its sibling (sibling), whose points at head are dry-run for it: the
// options every point of one passes and the other does not, or with
// another value. A reader knows the sibling; a list of every
// option is not news. nil when the sibling's launch is not known whole.
func siblingBullets(ch *recipe.Change, sib string, eff *recipe.Effect, o Options) []string {
	ctx := o.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	pls, err := ch.Head.DryRunKey(ctx, sib, 0, o.DryRun)
	if err != nil || len(pls) == 0 {
		return nil
	}
	for i := range pls {
		if pls[i].Launch == nil || pls[i].Launch.Status != dryrun.StatusLaunched {
			return nil
		}
	}
	mine, theirs := recipe.LaunchFields(eff.Head), recipe.LaunchFields(pls)
	// the settings every point shares (a per-point one is said by name)
	shared := func(f map[string]string, kind string) (all map[string]string, any map[string]bool) {
		all, any = map[string]string{}, map[string]bool{}
		for k, v := range f {
			b, point := recipe.SplitField(k)
			if !strings.HasPrefix(b, kind) {
				continue
			}
			if name := strings.TrimPrefix(b, "launch.flags."); name != b && ((recipe.LaunchDiff{Kind: "flag", Name: name}).Harness() ||
				strings.HasPrefix(name, "--model") || strings.HasPrefix(name, "--served-model")) {
				continue
			}
			if name := strings.TrimPrefix(b, "launch.env."); name != b && (recipe.LaunchDiff{Kind: "env", Name: name}).Harness() {
				continue
			}
			any[b] = true
			if point == "" {
				all[b] = v
			}
		}
		return all, any
	}
	mineAll, mineAny := shared(mine, "launch.flags.")
	theirAll, theirAny := shared(theirs, "launch.flags.")
	name := func(b string) string {
		if n, ok := strings.CutPrefix(b, "launch.flags."); ok {
			return n
		}
		return strings.TrimPrefix(b, "launch.env.")
	}
	with := func(b, v string) string {
		if strings.ContainsAny(v, ", ") {
			v = `"` + v + `"` // one value in a list: CUDA_VISIBLE_DEVICES="0,1,2,3"
		}
		switch {
		case v == "" || !literalValue(v):
			return name(b)
		case strings.HasPrefix(b, "launch.env."):
			return name(b) + "=" + v
		}
		return name(b) + " " + v
	}
	order := func(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
	except := func(mineAll map[string]string, mineAny map[string]bool, theirAll map[string]string, theirAny map[string]bool) []string {
		var diffs []string
		for _, b := range order(mineAny) {
			v, all := mineAll[b]
			tv, tall := theirAll[b]
			if all && tall && (recipe.LaunchDiff{Base: tv, Head: v}).Respelled() {
				tv = v // the same value written otherwise (JSON keys reordered, 0.9 and 0.90)
			}
			switch {
			case !theirAny[b] && all:
				diffs = append(diffs, "adds "+with(b, v))
			case !theirAny[b]:
				diffs = append(diffs, "adds "+name(b)+" (by point)")
			case all && tall && v != tv && literalValue(v) && literalValue(tv) && v != "" && tv != "":
				diffs = append(diffs, with(b, v)+" instead of "+tv)
			case strings.Contains(v+tv, dryrun.UnknownMarker):
				// (a value the dry run could not know: whether they differ
				// is not known either)
			case all != tall || (all && v != tv) || (!all && !tall && !sameRule(eff.Head, pls, b)):
				diffs = append(diffs, name(b)+" set otherwise")
			}
		}
		for _, b := range order(theirAny) {
			if !mineAny[b] {
				diffs = append(diffs, "no "+name(b))
			}
		}
		return diffs
	}
	list := func(diffs []string) string { return capped(diffs, 12) }
	var out []string
	if diffs := except(mineAll, mineAny, theirAll, theirAny); len(diffs) == 0 {
		out = append(out, "Server options as "+sib+"'s")
	} else {
		out = append(out, "Server options as "+sib+"'s, except: "+list(diffs))
	}
	// the variables too: only what differs from the sibling's is news
	envAll, envAny := shared(mine, "launch.env.")
	theirEnvAll, theirEnvAny := shared(theirs, "launch.env.")
	if len(envAny) > 0 || len(theirEnvAny) > 0 {
		if diffs := except(envAll, envAny, theirEnvAll, theirEnvAny); len(diffs) == 0 {
			out = append(out, "Env as "+sib+"'s")
		} else {
			out = append(out, "Env as "+sib+"'s, except: "+list(diffs))
		}
	}
	return out
}

// sameRule reports whether launch field b, set by point in two recipes
// that run different points, follows the same rule in both wherever they
// run points of one kind (scenario, sequence lengths, DP attention,
// speculative decoding, kv offload; parallelism and concurrency aside):
// the same values (absence one of them), the same multiples of each
// point's concurrency (2 × conc, not conc / 4), or the point's own tp or
// ep. "--prefill-schedule-interval 16" at DP attention against 8 is
// another rule; "--tensor-parallel-size" 8 against 4 at tp 4 is not.
func sameRule(a, c []recipe.PointLaunch, b string) bool {
	type rule struct{ vals, ratios, own map[string]bool }
	rules := func(pls []recipe.PointLaunch) map[string]*rule {
		out := map[string]*rule{}
		for i := range pls {
			f := pls[i].Facts()
			if f == nil {
				continue
			}
			p := &pls[i].Point
			kind := fmt.Sprintf("%s|%d|%d|%t|%s|%s|%s", p.Scenario, p.ISL, p.OSL, p.DPAttn, p.Spec, p.KVOffloading, p.KVBackend)
			r := out[kind]
			if r == nil {
				r = &rule{map[string]bool{}, map[string]bool{}, map[string]bool{}}
				out[kind] = r
			}
			v, ok := f[b]
			if !ok {
				v = "\x00" // absent
			}
			r.vals[v] = true
			own := v
			switch v {
			case strconv.FormatInt(p.TP, 10):
				own = "tp"
			case strconv.FormatInt(p.EP, 10):
				own = "ep"
			}
			r.own[own] = true
			switch n, err := strconv.ParseInt(v, 10, 64); {
			case r.ratios == nil:
			case !ok:
				r.ratios[v] = true
			case err == nil && p.Conc > 0:
				r.ratios[big.NewRat(n, p.Conc).RatString()] = true
			default:
				r.ratios = nil // not a number at every point: no multiple
			}
		}
		return out
	}
	ra, rc := rules(a), rules(c)
	for kind, x := range ra {
		y := rc[kind]
		if y == nil {
			continue // points of a kind only one of them runs say nothing
		}
		same := maps.Equal(x.vals, y.vals) || maps.Equal(x.own, y.own) || (x.ratios != nil && y.ratios != nil && maps.Equal(x.ratios, y.ratios))
		if !same && len(x.vals) == 1 && len(y.vals) == 1 {
			for v := range x.vals {
				for w := range y.vals {
					same = (recipe.LaunchDiff{Base: w, Head: v}).Respelled() || strings.Contains(v+w, dryrun.UnknownMarker)
				}
			}
		}
		if !same {
			return false
		}
	}
	return true
}

// addedLaunchBullets describe what a new recipe's points launch: the
// server, its options and the variables its launch path sets, those
// every point shares (one that differs by point is named in the list
// "(by point)").
func addedLaunchBullets(e *recipe.Effect) []string {
	fields := recipe.LaunchFields(e.Head)
	pos := map[string]int{} // an option's place on the first server's command line
	for _, pl := range e.Head {
		if pl.Launch != nil && pl.Launch.Server() != nil {
			for i, f := range pl.Launch.Server().Flags {
				if _, ok := pos[f.Name]; !ok {
					pos[f.Name] = i
				}
			}
			break
		}
	}
	var server string
	var flags, env []string
	byPoint := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		v := fields[k]
		base, point := recipe.SplitField(k)
		qualified := point != ""
		switch {
		case base == "launch.server":
			server = v
		case strings.HasPrefix(base, "launch.flags."):
			name := strings.TrimPrefix(base, "launch.flags.")
			if (recipe.LaunchDiff{Kind: "flag", Name: name}).Harness() || strings.HasPrefix(name, "--model") || strings.HasPrefix(name, "--served-model") {
				continue
			}
			if qualified {
				if !byPoint[base] {
					byPoint[base] = true
					flags = append(flags, name+" (by point)")
				}
				continue
			}
			if v != "" && literalValue(v) {
				name += " " + v
			}
			flags = append(flags, name)
		case strings.HasPrefix(base, "launch.env."):
			name := strings.TrimPrefix(base, "launch.env.")
			if qualified {
				if !byPoint[base] {
					byPoint[base] = true
					env = append(env, name+" (by point)")
				}
				continue
			}
			if literalValue(v) {
				name += "=" + v
			}
			env = append(env, name)
		}
	}
	sort.SliceStable(flags, func(i, j int) bool {
		return pos[strings.Fields(flags[i])[0]] < pos[strings.Fields(flags[j])[0]]
	})
	var out []string
	if server != "" && len(flags) > 0 {
		out = append(out, fmt.Sprintf("Server: %s %s", server, strings.Join(byPointCounted(flags), ", ")))
	}
	if len(env) > 0 {
		out = append(out, "Env: "+strings.Join(byPointCounted(env), ", "))
	}
	return out
}

// maxListed is how many settings a new recipe's Server or Env bullet
// lists one by one; past it, those set by point are counted, not named:
// their names without values tell a reader little, and a bullet of
// sixteen is a dump a maintainer cuts.
const maxListed = 8

// byPointCounted is a new recipe's settings (NAME, NAME VALUE or "NAME
// (by point)"), those by point counted when there are more than
// maxListed.
func byPointCounted(items []string) []string {
	if len(items) <= maxListed {
		return items
	}
	var out []string
	n := 0
	for _, it := range items {
		if strings.HasSuffix(it, " (by point)") {
			n++
			continue
		}
		out = append(out, it)
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%d more set by point", n))
	}
	return out
}

// newPointsBullets describe how the points a change adds launch unlike
// the recipe's points before it (the matched points' differences,
// launchBullets, do not see them): a server option every new point has
// with a value no base point had, where the base points had none or one
// value of it. (A variable only new points set is
// newVariableBullets'. What the new points no longer pass is not said:
// the recipe's other points still pass it, which the claims read as a
// removal that did not happen.)
// followsPoints says whether option k follows a parameter of the points
// (their tp, ep or conc): the new points (added) pass their own value of
// it, v, and every base point that passes it passes its own ("--ep-size
// 1" at ep 1, "--ep-size 8" at ep 8). The search space says it then. A
// literal that only equals the parameter ("--cuda-graph-max-bs 4" at tp
// 4, which no base point passes) does not follow it.
func followsPoints(k, v string, added, base []recipe.PointLaunch) bool {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || len(added) == 0 {
		return false
	}
	for _, f := range []func(p *recipe.LaunchPoint) int64{
		func(p *recipe.LaunchPoint) int64 { return p.TP },
		func(p *recipe.LaunchPoint) int64 { return p.EP },
		func(p *recipe.LaunchPoint) int64 { return p.Conc },
	} {
		if slices.ContainsFunc(added, func(pl recipe.PointLaunch) bool { return f(&pl.Point) != n }) {
			continue
		}
		seen, all := false, true
		for i := range base {
			bv, ok := base[i].Facts()[k]
			if !ok {
				continue
			}
			seen = true
			all = all && bv == strconv.FormatInt(f(&base[i].Point), 10)
		}
		if seen && all {
			return true
		}
	}
	return false
}

func newPointsBullets(e *recipe.Effect) []string {
	if len(e.Base) == 0 {
		return nil
	}
	had := map[string]bool{}
	for i := range e.Base {
		had[e.Base[i].Point.ID()] = true
	}
	var added []recipe.PointLaunch
	for i := range e.Head {
		if !had[e.Head[i].Point.ID()] {
			added = append(added, e.Head[i])
		}
	}
	if len(added) == 0 {
		return nil
	}
	// the values any of the points have, and the fields all of them share
	names := func(pls []recipe.PointLaunch) (any map[string]map[string]bool, alike map[string]string) {
		any, alike = map[string]map[string]bool{}, map[string]string{}
		for k, v := range recipe.LaunchFields(pls) {
			b, point := recipe.SplitField(k)
			if any[b] == nil {
				any[b] = map[string]bool{}
			}
			any[b][v] = true
			if point == "" {
				alike[k] = v
			}
		}
		return any, alike
	}
	baseAny, _ := names(e.Base)
	_, newAlike := names(added)
	told := map[string]bool{} // options launchBullets names
	for _, d := range e.Diffs {
		if d.Kind == "flag" {
			told["launch.flags."+d.Name] = true
		}
	}
	option := func(k string) (string, bool) {
		name, ok := strings.CutPrefix(k, "launch.flags.")
		if !ok || (recipe.LaunchDiff{Kind: "flag", Name: name}).Harness() || strings.HasPrefix(name, "--model") || strings.HasPrefix(name, "--served-model") {
			return "", false
		}
		return name, true
	}
	facts := headFacts(e)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(newAlike)) {
		// (an option the base points pass with values of their own, such
		// as --max-num-seqs 2*CONC, follows the point: a new point's own
		// value of it is not news)
		if name, ok := option(k); ok && !baseAny[k][newAlike[k]] && !told[k] && len(baseAny[k]) < 2 && !followsPoints(k, newAlike[k], added, e.Base) {
			// the rule that selects the points passing it, when one does
			// ("Pass --enable-prefill-delayer when DP_ATTENTION=true"):
			// the new points are where it shows, not what it is about
			if b, ok := conditionalBullet(e, facts, recipe.LaunchDiff{Kind: "flag", Name: name}, ""); ok {
				out = append(out, b)
				continue
			}
			if v := newAlike[k]; v != "" && literalValue(v) {
				name += " " + v
			}
			out = append(out, fmt.Sprintf("Add %s (the new points only)", name))
		}
	}
	return out
}
