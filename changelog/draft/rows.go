package draft

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/perflog/perflog/config"
)

// configBullets describes a recipe's field changes: the image, the
// search-space rows (added, removed, concurrency changed), other fields.
func configBullets(old, new *config.Recipe, d *config.RecipeDiff) []string {
	var out []string
	rowsTouched := false
	for _, c := range d.Changes {
		switch {
		case c.Path == "image":
			out = append(out, fmt.Sprintf("Update image from %s to %s", c.Old, c.New))
		case strings.HasPrefix(c.Path, "scenarios"):
			rowsTouched = true
			if b, ok := itemFieldBullet(new, c); ok {
				out = append(out, b)
			}
		case c.Kind == config.Added:
			out = append(out, fmt.Sprintf("Set %s to %s", c.Path, c.New))
		case c.Kind == config.Removed:
			out = append(out, fmt.Sprintf("Remove %s (was %s)", c.Path, c.Old))
		default:
			out = append(out, fmt.Sprintf("Change %s from %s to %s", c.Path, c.Old, c.New))
		}
	}
	if rowsTouched {
		out = append(out, rowBullets(old.Rows(), new.Rows())...)
	}
	return out
}

// itemFieldBullet says the change of a scenario item's own setting
// ("Change dram-utilization from 0.80 to 0.95"): a field of the item, not
// of its search space, and not its sequence lengths (the rows say those).
// A recipe of several items names the item the field is of.
func itemFieldBullet(r *config.Recipe, c config.Change) (string, bool) {
	item, field, ok := strings.Cut(c.Path, "].")
	if !ok || strings.Contains(field, ".") || strings.Contains(field, "[") {
		return "", false
	}
	switch field {
	case "isl", "osl", "search-space":
		return "", false
	}
	item += "]"
	var b string
	switch c.Kind {
	case config.Added:
		b = fmt.Sprintf("Set %s to %s", field, c.New)
	case config.Removed:
		b = fmt.Sprintf("Remove %s (was %s)", field, c.Old)
	default:
		b = fmt.Sprintf("Change %s from %s to %s", field, c.Old, c.New)
	}
	n, name := 0, ""
	for _, sc := range r.Scenarios() {
		for _, it := range sc.Items {
			n++
			if it.Path != item {
				continue
			}
			name = sc.Name
			if it.ISL != 0 {
				name = seqName(it.ISL) + seqName(it.OSL)
			}
		}
	}
	if n > 1 && name != "" {
		b += " for " + name // the item of several it is of
	}
	return b, true
}

// rowKey identifies a search-space row apart from its concurrencies.
// parallelKey is a row's key without its expert parallelism and DP
// attention: two rows of one key are one arm converted.
func parallelKey(r config.Row) string {
	r.EP, r.DPA = nil, nil
	return rowKey(r)
}

func rowKey(r config.Row) string {
	// a field written with its default is the field left out: "ep: 1,
	// dp-attn: false" is the row "tp: 8" was
	ep, dpa := r.EP, r.DPA
	if !slices.ContainsFunc(ep, func(v int64) bool { return v != 1 }) {
		ep = nil
	}
	if !slices.Contains(dpa, true) {
		dpa = nil
	}
	spec, kv := r.Spec, r.KVOffloading
	if spec == "none" {
		spec = ""
	}
	if kv == "none" {
		kv = ""
	}
	// pp and dcp-size: 1 and left out are the same, on each side
	split := func(l []int64) []int64 {
		if !slices.ContainsFunc(l, func(v int64) bool { return v > 1 }) {
			return nil
		}
		out := make([]int64, len(l))
		for i, v := range l {
			out[i] = max(v, 1)
		}
		return out
	}
	pp, dcp, pcp := split(r.PP), split(r.DCP), split(r.PCP)
	return fmt.Sprintf("%s|%d|%d|%v|%v|%v|%s|%s|%s|%v|%v|%v|%v", r.Scenario, r.ISL, r.OSL, r.TP, ep, dpa, spec, kv, r.KVBackend, r.Workers, pp, dcp, pcp)
}

// rowNamer names the rows among rows by what tells them apart: the
// sequence lengths and parallelism always, the scenario, the speculative
// decoding and the KV offload only when the rows differ in it (a recipe
// whose every row is agentic, MTP and offloaded to DRAM calls its arms
// "TP8" and "TP8/EP8 DPA", as its entries do).
func rowNamer(rows []config.Row) func(config.Row) string {
	varies := func(f func(config.Row) string) bool {
		for _, r := range rows[min(1, len(rows)):] {
			if f(r) != f(rows[0]) {
				return true
			}
		}
		return false
	}
	keep := nameParts{
		scenario: varies(func(r config.Row) string { return r.Scenario }),
		spec:     varies(func(r config.Row) string { return r.Spec }),
		kv:       varies(func(r config.Row) string { return r.KVOffloading + " " + r.KVBackend }),
	}
	return func(r config.Row) string { return rowNameOf(r, keep) }
}

// nameParts says which optional parts a row's name carries.
type nameParts struct{ scenario, spec, kv bool }

// rowNameOf names a row the way InferenceX bullets do, "8k1k TP4/EP4 DPA
// MTP", with the optional parts keep asks for.
func rowNameOf(r config.Row, keep nameParts) string {
	var parts []string
	if r.ISL != 0 {
		parts = append(parts, seqName(r.ISL)+seqName(r.OSL))
	} else if keep.scenario && r.Scenario != "" && r.Scenario != "fixed-seq-len" {
		parts = append(parts, r.Scenario)
	}
	par := sideNames(r)
	if len(par) == 2 && r.Aggregated() {
		// no decode workers: the prefill side is the aggregated server
		agg := "aggregated " + par[0]
		if r.Workers[0] > 1 {
			agg = fmt.Sprintf("%d× %s", r.Workers[0], agg)
		}
		parts = append(parts, agg)
	} else if len(par) == 2 {
		if len(r.Workers) == 2 && r.Workers[0] > 0 && r.Workers[1] > 0 {
			// the worker counts tell 1P2D from 1P4D, as the recipes' names do
			parts = append(parts, fmt.Sprintf("%dP%dD", r.Workers[0], r.Workers[1]))
		}
		parts = append(parts, "prefill "+par[0]+", decode "+par[1])
	} else if len(par) == 1 {
		parts = append(parts, par[0])
	}
	if keep.spec && r.Spec != "" && r.Spec != "none" {
		parts = append(parts, strings.ToUpper(r.Spec))
	}
	if keep.kv && r.KVOffloading != "" && r.KVOffloading != "none" {
		kv := r.KVOffloading
		if r.KVBackend != "" {
			kv += " " + r.KVBackend
		}
		parts = append(parts, "KV offload "+kv)
	}
	return strings.Join(parts, " ")
}

// sideNames names a row's parallelism, one name per side (prefill then
// decode for a multi-node row): "TP4/EP4 DPA".
func sideNames(r config.Row) []string {
	var par []string
	sides := max(len(r.TP), len(r.EP))
	for i := 0; i < sides; i++ {
		var p []string
		for _, d := range []struct {
			name string
			v    []int64
		}{{"EP", r.EP}, {"PP", r.PP}, {"DCP", r.DCP}, {"PCP", r.PCP}} {
			if i < len(d.v) && d.v[i] > 1 {
				p = append(p, fmt.Sprintf("%s%d", d.name, d.v[i]))
			}
		}
		if i < len(r.TP) && (r.TP[i] > 1 || len(p) == 0) {
			// (TP1 beside other parallelism says nothing: "PCP8")
			p = append([]string{fmt.Sprintf("TP%d", r.TP[i])}, p...)
		}
		s := strings.Join(p, "/")
		if i < len(r.DPA) && r.DPA[i] {
			s += " DPA"
		}
		par = append(par, s)
	}
	return par
}

func seqName(n int64) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%dk", n/1024)
	}
	return fmt.Sprint(n)
}

// concText writes concurrencies as a range when they double ("4-64") and
// as a list otherwise.
func concText(c []int64) string {
	if len(c) == 0 {
		return "none"
	}
	if len(c) == 1 {
		return fmt.Sprint(c[0])
	}
	doubling := true
	for i := 1; i < len(c); i++ {
		if c[i] != c[i-1]*2 && !(i == len(c)-1 && c[i] > c[i-1] && c[i] < c[i-1]*2) {
			doubling = false
		}
	}
	if doubling {
		return fmt.Sprintf("%d-%d", c[0], c[len(c)-1])
	}
	return concList(c)
}

// concFromTo says a change of concurrencies, "from 4-64 to 4-128", both
// sides in one notation: as lists when either is one ("from [1, 4, 8] to
// [1, 2, 4, 8]", not "to 1-8").
func concFromTo(old, new []int64) string {
	o, n := concText(old), concText(new)
	if strings.HasPrefix(o, "[") != strings.HasPrefix(n, "[") && len(old) > 1 && len(new) > 1 {
		o, n = concList(old), concList(new)
	}
	return "from " + o + " to " + n
}

func concList(c []int64) string {
	parts := make([]string, len(c))
	for i, x := range c {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// searchSpaceText writes a recipe's rows, what they all share said once
// in front: "(agentic-coding, MTP) TP4 conc 1-8; TP8 conc 4-64".
func searchSpaceText(rows []config.Row) string {
	if len(rows) == 0 {
		return ""
	}
	name := rowNamer(rows)
	full := name(rows[0])
	// rows of one name are one arm: their concurrencies said together
	// ("TP8 conc 2, 4, 8", not one clause per entry)
	var names []string
	conc := map[string][]int64{}
	for _, r := range rows {
		n := name(r)
		if _, ok := conc[n]; !ok {
			names = append(names, n)
		}
		conc[n] = append(conc[n], r.Conc...)
	}
	var text string
	if len(names) > longSearchSpace {
		text = searchSpaceSummary(rows, len(names))
	} else {
		var parts []string
		for _, n := range names {
			c := slices.Clone(conc[n])
			slices.Sort(c)
			parts = append(parts, fmt.Sprintf("%s conc %s", n, concText(slices.Compact(c))))
		}
		text = strings.Join(parts, "; ")
	}
	// what the full name of a row says beyond its short one, every row
	// says: the shared scenario, speculative decoding, KV offload
	var shared []string
	r := rows[0]
	if r.ISL == 0 && r.Scenario != "" && r.Scenario != "fixed-seq-len" && !strings.Contains(full, r.Scenario) {
		shared = append(shared, r.Scenario)
	}
	if r.Spec != "" && r.Spec != "none" && !strings.Contains(full, strings.ToUpper(r.Spec)) {
		shared = append(shared, strings.ToUpper(r.Spec))
	}
	if r.KVOffloading != "" && r.KVOffloading != "none" && !strings.Contains(full, "KV offload") {
		kv := "KV offload " + r.KVOffloading
		if r.KVBackend != "" {
			kv += " " + r.KVBackend
		}
		shared = append(shared, kv)
	}
	if len(shared) > 0 {
		text = "(" + strings.Join(shared, ", ") + ") " + text
	}
	return text
}

// longSearchSpace is how many arms searchSpaceText says one by one;
// more are summarised (searchSpaceSummary). Authors list up to a dozen
// shapes with their concurrencies themselves (kimik2.5-fp4-gb300's 11).
const longSearchSpace = 12

// searchSpaceSummary summarises many arms (n): by sequence lengths (or
// scenario) their number and concurrency range, then each side's
// parallelism and worker counts: "14 arms: 1k1k 6 (conc 8-4301), 8k1k 8
// (conc 5-2253); prefill TP4/EP4 DPA, 1-12 workers; decode TP8/EP8 DPA,
// TP4/EP4, TP32/EP32 DPA or TP16/EP16 DPA, 1-5 workers". A list of 14
// arms is a dump a reader skims; the shape is what they need.
func searchSpaceSummary(rows []config.Row, n int) string {
	type group struct {
		arms     map[string]bool
		min, max int64
	}
	var order []string
	groups := map[string]*group{}
	var sides [][]string // the side names in order, by side
	var workers [][2]int64
	for _, r := range rows {
		g := r.Scenario
		if r.ISL != 0 {
			g = seqName(r.ISL) + seqName(r.OSL)
		}
		gr := groups[g]
		if gr == nil {
			gr = &group{arms: map[string]bool{}, min: -1}
			groups[g] = gr
			order = append(order, g)
		}
		gr.arms[rowNameOf(r, nameParts{scenario: true, spec: true, kv: true})] = true
		for _, c := range r.Conc {
			if gr.min < 0 || c < gr.min {
				gr.min = c
			}
			gr.max = max(gr.max, c)
		}
		for i, name := range sideNames(r) {
			for len(sides) <= i {
				sides = append(sides, nil)
				workers = append(workers, [2]int64{})
			}
			if !slices.Contains(sides[i], name) {
				sides[i] = append(sides[i], name)
			}
			if i < len(r.Workers) && r.Workers[i] > 0 {
				w := &workers[i]
				if w[0] == 0 || r.Workers[i] < w[0] {
					w[0] = r.Workers[i]
				}
				w[1] = max(w[1], r.Workers[i])
			}
		}
	}
	var gs []string
	for _, g := range order {
		gr := groups[g]
		c := fmt.Sprint(gr.min)
		if gr.max != gr.min {
			c = fmt.Sprintf("%d-%d", gr.min, gr.max)
		}
		gs = append(gs, fmt.Sprintf("%s %d (conc %s)", g, len(gr.arms), c))
	}
	out := fmt.Sprintf("%d arms: %s", n, strings.Join(gs, ", "))
	role := []string{"prefill ", "decode "}
	if len(sides) != 2 {
		role = []string{""}
	}
	for i, names := range sides {
		if i >= len(role) {
			break
		}
		text := role[i] + joinOr(names)
		switch w := workers[i]; {
		case w[1] > 0 && w[0] != w[1]:
			text += fmt.Sprintf(", %d-%d workers", w[0], w[1])
		case w[1] > 1:
			text += fmt.Sprintf(", %d workers", w[1])
		}
		out += "; " + text
	}
	return out
}

// rowBullets compares search-space rows by everything but concurrency.
func rowBullets(old, new []config.Row) []string {
	name := rowNamer(slices.Concat(old, new))
	oldBy := map[string][]config.Row{}
	for _, r := range old {
		oldBy[rowKey(r)] = append(oldBy[rowKey(r)], r)
	}
	newBy := map[string][]config.Row{}
	var order []string
	for _, r := range new {
		k := rowKey(r)
		if _, ok := newBy[k]; !ok {
			order = append(order, k)
		}
		newBy[k] = append(newBy[k], r)
	}
	// an arm converted (its EP or DP attention changed, nothing else): one
	// change, not an addition and a removal
	converted := map[string]string{} // new key → old key
	for _, k := range order {
		if _, ok := oldBy[k]; ok {
			continue
		}
		var cands []string
		for ok := range oldBy {
			if _, kept := newBy[ok]; !kept && parallelKey(oldBy[ok][0]) == parallelKey(newBy[k][0]) {
				cands = append(cands, ok)
			}
		}
		if len(cands) == 1 && !slices.Contains(slices.Collect(maps.Values(converted)), cands[0]) {
			converted[k] = cands[0]
		}
	}
	var out []string
	for _, k := range order {
		nr := newBy[k]
		or := oldBy[k]
		nc, oc := concOf(nr), concOf(or)
		if ok, was := converted[k]; was {
			or = oldBy[ok]
			oc = concOf(or)
			text := fmt.Sprintf("Change %s to %s", name(or[0]), name(nr[0]))
			if !slices.Equal(nc, oc) {
				text += ", conc " + concFromTo(oc, nc)
			}
			out = append(out, text)
			continue
		}
		switch {
		case len(or) == 0:
			out = append(out, fmt.Sprintf("Add %s conc %s", name(nr[0]), concText(nc)))
		case !slices.Equal(nc, oc):
			out = append(out, fmt.Sprintf("Change %s conc %s", name(nr[0]), concFromTo(oc, nc)))
		}
	}
	var gone []string
	var goneRows []config.Row
	wasConverted := map[string]bool{}
	for _, ok := range converted {
		wasConverted[ok] = true
	}
	for k, or := range oldBy {
		if _, ok := newBy[k]; !ok && !wasConverted[k] {
			gone = append(gone, fmt.Sprintf("Remove %s conc %s", name(or[0]), concText(concOf(or))))
			goneRows = append(goneRows, or[0])
		}
	}
	if b, ok := removedTogether(goneRows, new); ok {
		return append(out, b)
	}
	sort.Strings(gone)
	return append(out, gone...)
}

// manyGone is how many removed arms are said one by one; more that share
// what no remaining arm has are said together (removedTogether).
const manyGone = 3

// removedTogether says many removed arms (gone) as what they share and
// no remaining arm (kept) has: their sequence lengths ("Remove the 8k1k
// arms (8)") or a side's parallelism ("Remove the decode TP8 arms
// (6: 1k1k and 8k1k)"). ok is false for few arms, or none such trait.
func removedTogether(gone, kept []config.Row) (string, bool) {
	if len(gone) <= manyGone {
		return "", false
	}
	seqOf := func(r config.Row) string {
		if r.ISL == 0 {
			return r.Scenario
		}
		return seqName(r.ISL) + seqName(r.OSL)
	}
	// one trait every gone arm has and no kept arm has
	shared := func(trait func(config.Row) []string) (string, bool) {
		count := map[string]int{}
		for _, r := range gone {
			for _, t := range slices.Compact(slices.Sorted(slices.Values(trait(r)))) {
				count[t]++
			}
		}
		for _, t := range slices.Sorted(maps.Keys(count)) {
			if count[t] == len(gone) && !slices.ContainsFunc(kept, func(r config.Row) bool { return slices.Contains(trait(r), t) }) {
				return t, true
			}
		}
		return "", false
	}
	var seqs []string
	for _, r := range gone {
		if s := seqOf(r); !slices.Contains(seqs, s) {
			seqs = append(seqs, s)
		}
	}
	if t, ok := shared(func(r config.Row) []string { return []string{seqOf(r)} }); ok && t != "" {
		return fmt.Sprintf("Remove the %s arms (%d)", t, len(gone)), true
	}
	slices.Sort(seqs)
	role := func(r config.Row) []string {
		sides := sideNames(r)
		if len(sides) != 2 {
			return sides
		}
		return []string{"prefill " + sides[0], "decode " + sides[1]}
	}
	if t, ok := shared(role); ok && t != "" {
		return fmt.Sprintf("Remove the %s arms (%d: %s)", t, len(gone), joinAnd(seqs)), true
	}
	return "", false
}

func concOf(rows []config.Row) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, r := range rows {
		for _, c := range r.Conc {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
