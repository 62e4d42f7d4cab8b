// Package draft drafts a change's changelog entries (perflog changelog
// new, and the entry verify suggests for a recipe changed without one):
// bullets in the repository's style from the structural recipe diff, the
// scripts' diff and what the points launch at base and head.
//
// Dependencies: changelog, changelog/claims, config, recipe,
// recipe/dryrun, recipe/lint, recipe/revfs, internal/pyyaml,
// internal/safefile (AppendToWorktree writes the work tree).
package draft

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"math/bits"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// Options configure Entries.
type Options struct {
	// PRLink is the entry's pr-link (this PR, or the XXX placeholder).
	PRLink string
	// Ctx bounds the dry runs (nil: not bounded but by their budgets).
	Ctx context.Context
	// NoDryRun describes scripts by their text only (no launch diff).
	NoDryRun bool
	// DryRun is how the changed recipes are dry-run.
	DryRun dryrun.Options
	// Changelog is the changelog's path: when its recent entries at base
	// write scenario-type, the drafts do too ("": they do not).
	Changelog string
}

// Entries drafts the changelog entries of a change: one per group of
// changed recipes whose changes read the same (the way InferenceX entries
// list several keys under shared bullets), in head key order. Bullets are
// written from the structural recipe diff and the diff of the scripts that
// run each recipe, in the style of the repository's entries: "Update image
// from A to B", "Set NAME=VALUE", "Add --flag VALUE", "Add TP4/EP4 DPA row
// (1k1k, conc 64-256)". append-only: true is set only when the diff proves
// it: search-space points were only added (config.AppendOnlyCheck) and no
// script changed. Removed recipes get no entry (nothing to benchmark).
func Entries(ch *recipe.Change, o Options) ([]changelog.DraftEntry, error) {
	var effects map[string]*recipe.Effect
	if !o.NoDryRun {
		ctx := o.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		effs, err := ch.Effects(ctx, o.DryRun)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			effs = nil // the scripts' text describes them
		}
		effects = map[string]*recipe.Effect{}
		for i := range effs {
			effects[effs[i].Key] = &effs[i]
		}
	}
	return With(ch, effects, o)
}

// With drafts the entries from the launches already compared (effects;
// nil: the scripts' text describes them).
func With(ch *recipe.Change, effects map[string]*recipe.Effect, o Options) ([]changelog.DraftEntry, error) {
	changes, err := ch.Recipes()
	if err != nil {
		return nil, err
	}
	listed := map[string]bool{}
	for _, rc := range changes {
		listed[rc.Key] = true
	}
	for _, k := range slices.Sorted(maps.Keys(effects)) {
		e := effects[k]
		if !listed[e.Key] && e.Complete && e.Changed {
			// a launcher or a shared helper changed what it launches
			if rec, ok, _ := ch.Head.Recipe(e.Key); ok {
				changes = append(changes, recipe.RecipeChange{Key: e.Key, Kind: recipe.RecipeChanged, Files: e.Files, File: rec.File, Line: rec.Line})
			}
		}
	}
	type group struct {
		keys    []string
		bullets []string
		ao      bool
		scen    map[string]bool
	}
	writeScen := false
	if o.Changelog != "" {
		if raw, ok, err := revfs.ReadFile(ch.Base.Files, o.Changelog); err == nil && ok {
			writeScen = changelog.WritesScenarioType(o.Changelog, raw)
		}
	}
	var groups []*group
	byText := map[string]*group{}
	for _, rc := range changes {
		if rc.Kind == recipe.RecipeRemoved {
			continue
		}
		bullets := recipeBullets(ch, rc, effects[rc.Key], o)
		if len(bullets) == 0 {
			continue
		}
		ao := rc.Kind == recipe.RecipeChanged && len(rc.Files) == 0 && onlySearchSpace(rc.Diff) && appendOnlyProven(ch, rc.Key)
		sig := strings.Join(bullets, "\n") + fmt.Sprint(ao)
		if rc.Kind == recipe.RecipeAdded || rc.Kind == recipe.RecipeRenamed {
			sig = rc.Key // a new recipe is its own change
		}
		g := byText[sig]
		if g == nil {
			g = &group{bullets: bullets, ao: ao, scen: map[string]bool{}}
			byText[sig] = g
			groups = append(groups, g)
		}
		g.keys = append(g.keys, rc.Key)
		if writeScen {
			maps.Copy(g.scen, scenarioTypes(ch, rc, effects[rc.Key]))
		}
	}
	var out []changelog.DraftEntry
	for _, g := range groups {
		var scen []string
		for _, s := range config.ScenarioTypes {
			if g.scen[s] {
				scen = append(scen, s)
			}
		}
		out = append(out, changelog.DraftEntry{ConfigKeys: g.keys, ScenarioType: scen, Description: g.bullets, PRLink: o.PRLink, AppendOnly: g.ao})
	}
	return out, nil
}

// scenarioTypes are the scenarios a recipe's change touched: those of
// the search-space rows it changed and of the points whose launch changed
// or that it added or removed; every scenario of the recipe when the
// change reaches all of them (a new recipe, its image or model, a script
// no dry run tells the points of).
func scenarioTypes(ch *recipe.Change, rc recipe.RecipeChange, eff *recipe.Effect) map[string]bool {
	all := map[string]bool{}
	if rec, ok, _ := ch.Head.Recipe(rc.Key); ok {
		for _, r := range rec.Rows() {
			all[r.Scenario] = true
		}
	}
	if rc.Kind != recipe.RecipeChanged {
		return all
	}
	touched := map[string]bool{}
	if rc.Diff != nil {
		for _, c := range rc.Diff.Changes {
			rest, ok := strings.CutPrefix(c.Path, "scenarios.")
			if !ok {
				return all // a setting of the whole recipe
			}
			if i := strings.IndexAny(rest, ".["); i >= 0 {
				rest = rest[:i]
			}
			touched[rest] = true
		}
	}
	if len(rc.Files) > 0 {
		if eff == nil || !eff.Complete {
			return all // the scripts changed; which points it reaches is not known
		}
		maps.Copy(touched, eff.Scenarios())
	}
	if len(touched) == 0 {
		return all
	}
	return touched
}

func onlySearchSpace(d *config.RecipeDiff) bool {
	if d == nil || len(d.Changes) == 0 {
		return false
	}
	for _, c := range d.Changes {
		if !strings.HasPrefix(c.Path, "scenarios.") || !strings.Contains(c.Path, "search-space") {
			return false
		}
	}
	return true
}

func appendOnlyProven(ch *recipe.Change, key string) bool {
	head, herr := ch.Head.Master()
	base, berr := ch.Base.Master()
	if herr != nil || berr != nil {
		return false
	}
	sel := map[string]map[string]bool{key: {}}
	for _, t := range config.ScenarioTypes {
		sel[key][t] = true
	}
	return config.AppendOnlyCheck(base, berr, head, []string{key}, sel) == nil
}

// recipeBullets describes one recipe change: its config diff, and what
// its launch gained, lost or changed when the dry run compared every
// point (eff), else the diff of its scripts' text. A recipe whose scripts
// changed but whose every point launches the same gets no bullet (it
// needs no entry).
func recipeBullets(ch *recipe.Change, rc recipe.RecipeChange, eff *recipe.Effect, o Options) []string {
	// a renamed recipe is said by its launch when most of its points are
	// the old key's (compared); a rename that also rewrote its search
	// space is said by its files' diff, whose values hold for every point
	renamed := rc.Kind == recipe.RecipeRenamed && eff != nil && eff.OldKey == rc.OldKey && 2*eff.Matched() >= len(eff.Head)
	if eff != nil && eff.Complete && (rc.Kind == recipe.RecipeChanged || renamed) {
		var out []string
		oldKey := rc.Key
		if renamed {
			out = append(out, fmt.Sprintf("Rename %s to %s", rc.OldKey, rc.Key))
			oldKey = rc.OldKey
		}
		if rc.Diff != nil {
			head, _, _ := ch.Head.Recipe(rc.Key)
			base, _, _ := ch.Base.Recipe(oldKey)
			if head != nil && base != nil {
				out = append(out, configBullets(base, head, rc.Diff)...)
			}
		}
		// (what the servers launch from a changed srt-slurm file, the
		// launch bullets say, when every point was compared; else the
		// file's own diff says it, and the launch's "by point" account of
		// the same settings is left out: a point whose concurrency changed
		// is new, and its launch compared with none)
		allMatched := eff.Matched() == len(eff.Head) && len(eff.Base) == len(eff.Head)
		launched := len(eff.Diffs) > 0 && allMatched
		byFile := eff
		if !launched {
			e := *eff
			changedIn := yamlLeaves(ch, rc.Files)
			e.Diffs = slices.DeleteFunc(slices.Clone(eff.Diffs), func(d recipe.LaunchDiff) bool {
				f := strings.TrimSuffix(d.In, dryrun.SettingsSuffix)
				if d.Kind == "file" && isYAML(f) && slices.ContainsFunc(rc.Files, func(p string) bool { return p == f || strings.HasSuffix(p, "/"+f) }) {
					return true
				}
				// a role's option or variable the file's diff says
				at, _ := recipe.SplitAt(d.At)
				name := d.Name[strings.LastIndex(d.Name, " ")+1:]
				return (d.Kind == "flag" || d.Kind == "env") && changedIn[at][strings.TrimLeft(name, "-")]
			})
			byFile = &e
		}
		// a long list of variables that align the recipe with a sibling:
		// said by the sibling
		if b, told := alignedEnv(ch, rc.Key, oldKey, launchEnvChanges(eff), o); b != "" {
			out = append(out, b)
			e := *byFile
			e.Diffs = slices.DeleteFunc(slices.Clone(byFile.Diffs), func(d recipe.LaunchDiff) bool { return d.Kind == "env" && told[d.Name] })
			byFile = &e
		}
		out = append(out, launchBullets(byFile)...)
		out = append(out, newPointsBullets(eff)...)
		out = append(out, newVariableBullets(eff)...)
		// (one file of several names its variables' changes: one arm's
		// file may go one way and another's the other)
		named := len(slices.DeleteFunc(slices.Clone(rc.Files), func(f string) bool { return !isYAML(f) })) > 1
		for _, f := range rc.Files {
			if isYAML(f) {
				out = append(out, yamlBullets(ch, f, launched, named)...)
			}
		}
		return groupBullets(mergeRoles(mergeFiles(dedupe(newFilesSaid(rc, out)))))
	}
	var out []string
	head, _, _ := ch.Head.Recipe(rc.Key)
	switch rc.Kind {
	case recipe.RecipeAdded:
		if head == nil {
			return nil
		}
		out = append(out, fmt.Sprintf("Add %s: %s %s on %s with %s", rc.Key, head.Model, strings.ToUpper(head.Precision), head.Runner, head.Framework))
		if head.Image != "" {
			out = append(out, "Image: "+head.Image)
		}
		if ss := searchSpaceText(head.Rows()); ss != "" {
			out = append(out, "Search space: "+ss)
		}
		var launch []string
		if eff != nil && eff.Complete {
			launch = addedLaunchBullets(eff)
			if sib := sibling(ch, rc.Key, head); sib != "" && !o.NoDryRun {
				if like := siblingBullets(ch, sib, eff, o); like != nil {
					// its server and its variables said by what differs from
					// the sibling's (the whole list is a dump a maintainer cuts)
					// (a short list of variables is said whole, as authors
					// write it; a long one by what differs)
					short := slices.ContainsFunc(launch, func(b string) bool {
						return strings.HasPrefix(b, "Env: ") && strings.Count(b, ", ") < shortEnv
					})
					like = slices.DeleteFunc(like, func(l string) bool { return short && strings.HasPrefix(l, "Env as ") })
					launch = append(like, slices.DeleteFunc(launch, func(b string) bool {
						return strings.HasPrefix(b, "Server: ") || (!short && strings.HasPrefix(b, "Env: "))
					})...)
				}
			}
		}
		if len(launch) == 0 {
			// its launch is not known (multi-node, or the dry run did not
			// reach the server): the variables its own scripts set
			launch = scriptEnvBullets(ch, rc.Key, envSibling(ch, rc.Key, head))
		}
		out = append(out, launch...)
		return out
	case recipe.RecipeRenamed:
		out = append(out, fmt.Sprintf("Rename %s to %s", rc.OldKey, rc.Key))
	}
	var base *config.Recipe
	oldKey := rc.Key
	if rc.OldKey != "" {
		oldKey = rc.OldKey
	}
	base, _, _ = ch.Base.Recipe(oldKey)
	if rc.Diff != nil && head != nil && base != nil {
		out = append(out, configBullets(base, head, rc.Diff)...)
	}
	// a long list of variables that align the recipe with a sibling: said
	// by the sibling
	var envChanges []envChange
	for _, f := range rc.Files {
		if hs, bs := scriptPair(ch, f); hs != nil && bs != nil {
			envChanges = append(envChanges, scriptEnvChanges(exportedEnv(bs), exportedEnv(hs))...)
		}
	}
	b, told := alignedEnv(ch, rc.Key, oldKey, envChanges, o)
	if b != "" {
		out = append(out, b)
	}
	for _, f := range rc.Files {
		out = append(out, scriptBullets(ch, f, told)...)
	}
	if head != nil && base != nil && head.Multinode {
		out = append(out, modelTableBullets(ch, head.Model)...)
	}
	// the files the recipe's scripts source (shared env files) changed too
	if all, drivers, err := ch.Head.Related(rc.Key); err == nil && (len(out) > 0 || rc.Kind == recipe.RecipeChanged) {
		isDriver := map[string]bool{}
		for _, d := range drivers {
			isDriver[d] = true
		}
		for _, p := range all {
			if !isDriver[p] && strings.HasPrefix(p, "benchmarks/") && ch.Touched(p) {
				out = append(out, scriptBullets(ch, p, nil)...)
			}
		}
	}
	return groupBullets(mergeFiles(dedupe(newFilesSaid(rc, out))))
}

// newFilesSaid leaves out "Add <srt-slurm file>" of a recipe whose config
// changed: a new srt-slurm file serves the arm that names it, whose own
// bullet ("Add 2P1D prefill TP8/EP8 DPA, decode TP12/EP12 DPA conc
// 1152") says it.
func newFilesSaid(rc recipe.RecipeChange, out []string) []string {
	if rc.Diff == nil || len(rc.Diff.Changes) == 0 {
		return out
	}
	return slices.DeleteFunc(out, func(b string) bool {
		f, ok := strings.CutPrefix(b, "Add ")
		return ok && isYAML(f) && slices.Contains(rc.Files, f)
	})
}

// shortEnv is how many variables a new recipe's "Env:" bullet lists
// whole; more are said by what differs from its sibling's.
const shortEnv = 5

// reGroupable is a bullet that adds, removes or sets one thing: a
// variable (with its value or none) or an option without a value.
var reGroupable = regexp.MustCompile(`^(Add|Remove|Set) ((?:--[a-z0-9][a-z0-9_.-]*)|(?:[A-Z][A-Z0-9_]*(?:=[^\s,]+)?))( when [A-Z_]+(?:=|<=|>=)[a-z0-9]+(?: and [A-Z_]+(?:=|<=|>=)[a-z0-9]+)*)?$`)

// groupBullets says one change of several settings in one bullet:
// "Remove SGLANG_A", "Remove SGLANG_B", ... become "Remove SGLANG_A,
// SGLANG_B and SGLANG_C" where the first was (options and variables
// apart, and only those of one condition: "Set A=1 and B=1 when
// DP_ATTENTION=true"), as a maintainer writes it; the claims read each
// name of the list, under the condition.
func groupBullets(bullets []string) []string {
	type group struct {
		at    int // its place in out
		verb  string
		names []string
		when  string
	}
	var out []string
	groups := map[string]*group{}
	for _, b := range bullets {
		m := reGroupable.FindStringSubmatch(b)
		if m == nil {
			out = append(out, b)
			continue
		}
		key := m[1] + "\x00" + strconv.FormatBool(strings.HasPrefix(m[2], "--")) + "\x00" + m[3]
		if g, ok := groups[key]; ok {
			g.names = append(g.names, m[2])
			continue
		}
		groups[key] = &group{at: len(out), verb: m[1], names: []string{m[2]}, when: m[3]}
		out = append(out, b)
	}
	for _, g := range groups {
		if n := len(g.names); n > 1 {
			out[g.at] = g.verb + " " + strings.Join(g.names[:n-1], ", ") + " and " + g.names[n-1] + g.when
		}
	}
	return out
}

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
// more are summarised (searchSpaceSummary).
const longSearchSpace = 6

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
	var out []string
	for _, k := range order {
		nr := newBy[k]
		or := oldBy[k]
		nc, oc := concOf(nr), concOf(or)
		switch {
		case len(or) == 0:
			out = append(out, fmt.Sprintf("Add %s conc %s", name(nr[0]), concText(nc)))
		case !slices.Equal(nc, oc):
			out = append(out, fmt.Sprintf("Change %s conc from %s to %s", name(nr[0]), concText(oc), concText(nc)))
		}
	}
	var gone []string
	var goneRows []config.Row
	for k, or := range oldBy {
		if _, ok := newBy[k]; !ok {
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
// own, named; those with a default, by family ("MC_* (11)"); those it
// passes on from its caller, named briefly. 40 names in a row are a dump
// a maintainer cuts.
func envSummary(names []string) string {
	var set, passed []string
	families := map[string]int{}
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
		alone := 0 // families of one: counted
		for _, f := range order {
			if families[f] < 2 {
				alone++
				continue
			}
			fs = append(fs, fmt.Sprintf("%s_* (%d)", f, families[f]))
		}
		switch {
		case alone == 1:
			fs = append(fs, "1 other")
		case alone > 1:
			fs = append(fs, fmt.Sprintf("%d others", alone))
		}
		parts = append(parts, fmt.Sprintf("%d with defaults: %s", defaults, list(fs)))
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
// has that no other srt-slurm file of the head sets so ("A=1, B (by
// recipe)"); "" when it has nothing of its own (the list then says it:
// an author names what a recipe sets as others do, too).
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
	// what the repository's other files set: every other srt-slurm file's
	// environment, and the assignments of its scripts
	others, named := map[string]bool{}, map[string]bool{} // NAME=VALUE, NAME
	_ = fs.WalkDir(ch.Head.Files, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || own[p] || !isYAML(p) {
			return nil
		}
		for _, kv := range yamlEnv(ch, p) {
			others[kv[0]+"="+kv[1]], named[kv[0]] = true, true
		}
		return nil
	})
	for _, top := range []string{"benchmarks", "runners"} {
		_ = fs.WalkDir(ch.Head.Files, top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sh") {
				return nil
			}
			data, ok, err := revfs.ReadFile(ch.Head.Files, p)
			if err != nil || !ok {
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
	const most = 12
	list := func(l []string) string {
		if len(l) > most {
			l = append(l[:most:most], fmt.Sprintf("%d more", len(l)-most))
		}
		return strings.Join(l, ", ")
	}
	var parts []string
	if len(news) > 0 {
		parts = append(parts, "new to the repository: "+list(news))
	}
	if len(values) > 0 {
		parts = append(parts, "values new to it: "+list(values))
	}
	return strings.Join(parts, "; ")
}

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
		for _, kv := range yamlEnv(ch, p) {
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
func yamlEnv(ch *recipe.Change, p string) [][2]string {
	v := loadYAML(ch.Head.Files, p)
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
	}
	matched := e.Matched()
	// each head point's launch fields, read once (conditionalBullet)
	headFacts := make([]map[string]string, len(e.Head))
	facts := func(i int) map[string]string {
		if headFacts[i] == nil {
			headFacts[i] = e.Head[i].Facts()
		}
		return headFacts[i]
	}
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
				verb = "Add" // no compared point passed it before
				if d.Kind == "env" {
					verb = "Set"
				}
			}
			out = append(out, fmt.Sprintf("%s %s%s by point%s", verb, name, where, vals))
			continue
		case arms != "":
			// (arms the claims cannot read as a condition: named, with no
			// verb or value they would read of every point)
			verb, detail := "Change", ""
			if a.gone {
				verb = "Remove" // removed from those arms, not changed
			} else if j, ok := jsonDetail(d.Base, d.Head); ok && !a.varied {
				detail = " (" + j + ")"
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

// isYAML says whether a path names a YAML file.
func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
}

// joinOr is "a", "a or b", "a, b or c".
func joinOr(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
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
		if k == key || r.ModelPrefix != rec.ModelPrefix || r.Precision != rec.Precision || r.Framework != rec.Framework || r.Multinode != rec.Multinode {
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
			case all != tall || (all && v != tv):
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
	const most = 12
	list := func(diffs []string) string {
		if len(diffs) > most {
			diffs = append(diffs[:most:most], fmt.Sprintf("%d more", len(diffs)-most))
		}
		return strings.Join(diffs, ", ")
	}
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
		out = append(out, fmt.Sprintf("Server: %s %s", server, strings.Join(flags, ", ")))
	}
	if len(env) > 0 {
		out = append(out, "Env: "+strings.Join(env, ", "))
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
	var out []string
	for _, k := range slices.Sorted(maps.Keys(newAlike)) {
		// (an option the base points pass with values of their own, such
		// as --max-num-seqs 2*CONC, follows the point: a new point's own
		// value of it is not news)
		if name, ok := option(k); ok && !baseAny[k][newAlike[k]] && !told[k] && len(baseAny[k]) < 2 {
			if v := newAlike[k]; v != "" && literalValue(v) {
				name += " " + v
			}
			out = append(out, fmt.Sprintf("Add %s (the new points only)", name))
		}
	}
	return out
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

// literalValue reports whether a value reads as written (no expansion).
func literalValue(v string) bool {
	return !strings.ContainsAny(v, "$`") && len(v) <= 80 && !strings.Contains(v, dryrun.UnknownMarker)
}

// dedupe drops the repeats of ss, in place, keeping the first of each.
func dedupe(ss []string) []string {
	seen := map[string]bool{}
	return slices.DeleteFunc(ss, func(s string) bool {
		dup := seen[s]
		seen[s] = true
		return dup
	})
}

// Check checks the claims of drafted entries the way verify will (by
// the files, without dry runs), in their order.
func Check(ch *recipe.Change, entries []changelog.DraftEntry) []claims.Result {
	var ces []claims.Entry
	for i, e := range entries {
		pe, err := changelog.ParseEntry([]byte(changelog.RenderEntry(e)))
		if err != nil {
			continue
		}
		pe.Index = i + 1
		ces = append(ces, pe.ClaimInput())
	}
	out := claims.Check(ch, ces)
	if out == nil {
		out = []claims.Result{}
	}
	return out
}

// loadYAML reads the YAML file at p of f (nil when it is absent or does
// not load).
func loadYAML(f fs.FS, p string) *pyyaml.Value {
	data, ok, err := revfs.ReadFile(f, p)
	if err != nil || !ok {
		return nil
	}
	v, err := pyyaml.Load(data, pyyaml.Options{})
	if err != nil {
		return nil
	}
	return v
}

// yamlBullets describes a changed srt-slurm recipe file: its images,
// the variables of its environment maps, and (briefly) its other fields.
// launched leaves out all but its images (the launch diff said its
// servers' options, variables and settings); named says the file with
// each variable's change (a recipe of several).
func yamlBullets(ch *recipe.Change, p string, launched, named bool) []string {
	nd, ok, err := revfs.ReadFile(ch.Head.Files, p)
	if err != nil || !ok {
		return nil
	}
	od, ok, err := revfs.ReadFile(ch.Base.Files, p)
	if err != nil || !ok {
		od = nil
	}
	d, err := config.DiffYAML(od, nd)
	if err != nil && od != nil {
		od = nil // a base that does not parse: as if absent
		d, err = config.DiffYAML(nil, nd)
	}
	if err != nil {
		return nil
	}
	if od == nil {
		return []string{"Add " + p}
	}
	var out []string
	var other []config.Change
	for _, c := range d.Changes {
		segs := strings.Split(c.Path, ".")
		leaf := segs[len(segs)-1]
		if launched && leaf != "container" && leaf != "image" {
			// the servers' options and variables, and the file's other
			// settings (the described launch's "settings"): the launch's
			// diff says them
			continue
		}
		parent := ""
		if len(segs) > 1 {
			parent = strings.ToLower(segs[len(segs)-2])
		}
		switch {
		case leaf == "container" || leaf == "image":
			out = append(out, fmt.Sprintf("Update image from %s to %s", c.Old, c.New))
		case len(segs) == 4 && segs[0] == "backend" && strings.HasSuffix(segs[1], "_config") && (c.OldPath == "" || c.OldPath == c.Path):
			// a server option of a role ("backend.vllm_config.aggregated.
			// max-num-seqs"): said as the launch says options
			out = append(out, roleOptionBullet(segs[2], "--"+leaf, c, " in "+path.Base(p)))
		case strings.Contains(parent, "env") && claims.IsEnvName(leaf):
			file := ""
			if named {
				file = " in " + path.Base(p)
			}
			switch c.Kind {
			case config.Added:
				out = append(out, fmt.Sprintf("Set %s=%s%s", leaf, scalarText(c.New), file))
			case config.Removed:
				out = append(out, "Remove "+leaf+file)
			default:
				out = append(out, fmt.Sprintf("Change %s from %s to %s%s", leaf, scalarText(c.Old), scalarText(c.New), file))
			}
		default:
			other = append(other, c)
		}
	}
	// a few other fields, each said with its verb; many, the file named
	in := " in " + path.Base(p)
	if len(other) > 3 {
		var paths []string
		for _, c := range other {
			paths = append(paths, c.Path)
		}
		return append(out, fmt.Sprintf("Update %s (%s)", p, claims.ListText(paths, 3)))
	}
	for _, c := range other {
		switch {
		case c.Kind == config.Removed:
			out = append(out, "Remove "+c.Path+in)
		case c.Kind == config.Added && literalValue(c.New) && !strings.ContainsAny(c.New, "\n{[") && c.New != "":
			out = append(out, fmt.Sprintf("Set %s: %s%s", c.Path, c.New, in))
		case c.Kind == config.Added:
			out = append(out, "Add "+c.Path+in)
		case literalValue(c.Old) && literalValue(c.New) && !strings.ContainsAny(c.Old+c.New, "\n{[") && c.Old != "" && c.New != "":
			out = append(out, fmt.Sprintf("Change %s from %s to %s%s", c.Path, c.Old, c.New, in))
		default:
			out = append(out, "Change "+c.Path+in)
		}
	}
	return out
}

// reRole is a bullet about one worker role's setting ("Set decode
// X=1").
var reRole = regexp.MustCompile(`^(Set|Add|Remove|Change) (prefill|decode) ((?:--|[A-Z][A-Z0-9_]*[= ]).+)$`)

// mergeRoles says once a change both worker roles share: "Set prefill
// X=1" and "Set decode X=1" become "Set X=1 for prefill and decode",
// where the first was.
func mergeRoles(bullets []string) []string {
	roles := map[string][]string{}
	for _, b := range bullets {
		if m := reRole.FindStringSubmatch(b); m != nil {
			k := m[1] + "\x00" + m[3]
			roles[k] = append(roles[k], m[2])
		}
	}
	var out []string
	said := map[string]bool{}
	for _, b := range bullets {
		m := reRole.FindStringSubmatch(b)
		if m == nil {
			out = append(out, b)
			continue
		}
		k := m[1] + "\x00" + m[3]
		switch {
		case len(roles[k]) < 2:
			out = append(out, b)
		case !said[k]:
			said[k] = true
			out = append(out, m[1]+" "+m[3]+" for prefill and decode")
		}
	}
	return out
}

// mergeFiles says once a change several files share: "Remove slurm in
// a.yaml", "Remove slurm in b.yaml" become "Remove slurm in 2 files
// (a.yaml, b.yaml)".
func mergeFiles(bullets []string) []string {
	inFile := func(b string) (what, file string, ok bool) {
		j := strings.LastIndex(b, " in ")
		if j < 0 || strings.Contains(b[j+4:], " ") || !isYAML(b) {
			return "", "", false
		}
		return b[:j], b[j+4:], true
	}
	files := map[string][]string{}
	for _, b := range bullets {
		if what, file, ok := inFile(b); ok {
			files[what] = append(files[what], file)
		}
	}
	var out []string
	said := map[string]bool{}
	for _, b := range bullets {
		what, _, ok := inFile(b)
		switch {
		case !ok || len(files[what]) < 2:
			out = append(out, b)
		case !said[what]:
			said[what] = true
			out = append(out, fmt.Sprintf("%s in %d files (%s)", what, len(files[what]), claims.ListText(files[what], 3)))
		}
	}
	return out
}

// modelTableBullets describe what a change did to a multi-node recipe's
// model in the per-model tables of server settings its harness reads
// (InferenceX's AMD models_vllm.yaml: a top-level key per model, e.g.
// Kimi-K2.5-MXFP4, holding prefill and decode flag strings and an env
// string), for each such YAML file under benchmarks/ the change touched:
// the options each flag string gained, lost or changed, and the variables
// of the env string.
func modelTableBullets(ch *recipe.Change, model string) []string {
	if model == "" {
		return nil
	}
	names := []string{path.Base(model), strings.ReplaceAll(model, "/", "-")}
	entry := func(f fs.FS, p string) *pyyaml.Value {
		v := loadYAML(f, p)
		for _, n := range names {
			if e, ok := v.Get(n); ok && e.Kind == pyyaml.Map {
				return e
			}
		}
		return nil
	}
	var out []string
	for _, p := range ch.Changed {
		if !strings.HasPrefix(p, "benchmarks/") || !isYAML(p) {
			continue
		}
		ne, oe := entry(ch.Head.Files, p), entry(ch.Base.Files, p)
		if ne == nil || oe == nil {
			continue
		}
		where := fmt.Sprintf("%s in %s", path.Base(model), path.Base(p))
		for _, pr := range ne.Pairs {
			ov, _ := oe.Get(pr.Key.Str)
			if pr.Value.Kind != pyyaml.Str || ov == nil || ov.Kind != pyyaml.Str || ov.Str == pr.Value.Str {
				continue
			}
			leaf := pr.Key.Str
			if strings.Contains(strings.ToLower(leaf), "env") {
				for _, b := range envStringBullets(ov.Str, pr.Value.Str) {
					out = append(out, b+" (in "+where+")")
				}
				continue
			}
			nf, nok := dryrun.FlagString(pr.Value.Str)
			of, ook := dryrun.FlagString(ov.Str)
			if !nok || !ook || !strings.Contains(pr.Value.Str+ov.Str, "--") {
				out = append(out, fmt.Sprintf("Update %s of %s", leaf, where))
				continue
			}
			out = append(out, flagStringBullets(of, nf, fmt.Sprintf("%s of %s", leaf, where))...)
		}
	}
	return mergeTableBullets(out)
}

// mergeTableBullets joins a model table's bullets that say one change
// twice: the same options added to prefill_flags and decode_flags ("Add
// --a to prefill_flags and decode_flags of M in f.yaml"), and variables
// set or removed in one entry ("Set A=1 and B=2 (in M in f.yaml)").
func mergeTableBullets(bs []string) []string {
	var out []string
	for i, b := range bs {
		if b == "" {
			continue
		}
		if strings.Contains(b, "prefill_flags of ") {
			twin := strings.Replace(b, "prefill_flags of ", "decode_flags of ", 1)
			if j := slices.Index(bs[i+1:], twin); j >= 0 {
				bs[i+1+j] = ""
				b = strings.Replace(b, "prefill_flags of ", "prefill_flags and decode_flags of ", 1)
			}
		}
		verb, _, _ := strings.Cut(b, " ")
		k := strings.LastIndex(b, " (in ")
		if (verb == "Set" || verb == "Remove") && k > 0 && strings.HasSuffix(b, ")") {
			suffix := b[k:]
			items := []string{strings.TrimPrefix(b[:k], verb+" ")}
			for j := i + 1; j < len(bs); j++ {
				if o := bs[j]; strings.HasPrefix(o, verb+" ") && strings.HasSuffix(o, suffix) && strings.LastIndex(o, " (in ") == len(o)-len(suffix) {
					items = append(items, strings.TrimSuffix(strings.TrimPrefix(o, verb+" "), suffix))
					bs[j] = ""
				}
			}
			b = verb + " " + joinAnd(items) + suffix
		}
		out = append(out, b)
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

// named is values by name, with the names in the order first set.
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

// Suggest drafts the entries verify's report suggests (Report.Suggested):
// for each recipe the change changed without an entry, from the launches
// the report compared (no dry run again), with in's pr-link.
func Suggest(in *changelog.Input, rep *changelog.Report) {
	missing := rep.MissingEntries()
	if len(missing) == 0 || in.Change == nil {
		return
	}
	drafts, err := With(in.Change, rep.Effects, Options{PRLink: changelog.EntryLink(in.Repository, in.PR), Changelog: in.Path, Ctx: in.Ctx, DryRun: in.DryRun})
	if err != nil {
		return
	}
	for _, d := range drafts {
		var keys []string
		for _, k := range d.ConfigKeys {
			if missing[k] {
				keys = append(keys, k)
			}
		}
		if len(keys) > 0 {
			d.ConfigKeys = keys
			rep.Suggested = append(rep.Suggested, d)
		}
	}
}

// yamlLeaves are the names of the settings each changed YAML file of
// files changes (the last part of each changed path), by file.
func yamlLeaves(ch *recipe.Change, files []string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, p := range files {
		if !isYAML(p) {
			continue
		}
		nd, ok, err := revfs.ReadFile(ch.Head.Files, p)
		if err != nil || !ok {
			continue
		}
		od, ok, err := revfs.ReadFile(ch.Base.Files, p)
		if err != nil || !ok {
			continue
		}
		d, err := config.DiffYAML(od, nd)
		if err != nil {
			continue
		}
		out[p] = map[string]bool{}
		for _, c := range d.Changes {
			out[p][c.Path[strings.LastIndex(c.Path, ".")+1:]] = true
		}
	}
	return out
}

// roleOptionBullet says the change c of a role's server option in an
// srt-slurm recipe file: "Change aggregated --max-num-seqs from 32 to
// 16 in agg.yaml", "Remove decode --enable-cumem-allocator in agg.yaml".
// A switch (true) is the option alone.
func roleOptionBullet(role, opt string, c config.Change, in string) string {
	name := role + " " + opt
	val := func(v string) string {
		if v == "true" || v == "" || v == "null" {
			return ""
		}
		if literalValue(v) && !strings.ContainsAny(v, "\n{[") {
			return " " + v
		}
		return ""
	}
	switch c.Kind {
	case config.Added:
		return "Add " + name + val(c.New) + in
	case config.Removed:
		return "Remove " + name + in
	}
	o, n := val(c.Old), val(c.New)
	switch {
	case o != "" && n != "":
		return fmt.Sprintf("Change %s from %s to %s%s", name, o[1:], n[1:], in)
	default:
		if j, ok := jsonDetail(scalarText(c.Old), scalarText(c.New)); ok {
			return fmt.Sprintf("Change %s (%s)%s", name, j, in)
		}
	}
	return "Change " + name + in
}

// scalarText is the text of a scalar rendered in YAML flow style
// (quotes taken off).
func scalarText(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
	}
	return v
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
