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
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
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
		switch rc.Kind {
		case recipe.RecipeRenamed:
			sig = rc.Key // a renamed recipe is its own change
		case recipe.RecipeAdded:
			// new recipes of one family (model, precision, machines,
			// framework, image: an aggregated and a disaggregated
			// submission, say) are one entry, as authors write them
			sig = "\x00new " + rc.Key
			if r, ok, _ := ch.Head.Recipe(rc.Key); ok && r != nil {
				sig = "\x00new " + strings.Join([]string{r.Model, r.Precision, r.Runner, r.Framework, r.Image}, "\x01")
			}
		}
		g := byText[sig]
		switch {
		case g == nil:
			g = &group{bullets: bullets, ao: ao, scen: map[string]bool{}}
			byText[sig] = g
			groups = append(groups, g)
		case rc.Kind == recipe.RecipeAdded:
			for _, b := range bullets {
				if !slices.Contains(g.bullets, b) { // (the shared image said once)
					g.bullets = append(g.bullets, b)
				}
			}
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
		// (a launch whose servers take settings the dry run could not read,
		// as AMD's multi-node servers read models.yaml through a program,
		// leaves those to the file's diff)
		launched := len(eff.Diffs) > 0 && allMatched && !readsUnread(eff)
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
		if head, _, _ := ch.Head.Recipe(rc.Key); head != nil && head.Multinode && readsUnread(eff) {
			// the servers' settings a program reads from the model's table
			// (AMD's models.yaml): the table's diff says them
			out = append(out, modelTableBullets(ch, head.Model)...)
		}
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
		out = append(out, fmt.Sprintf("Add %s: %s %s on %s with %s", rc.Key, head.Model, strings.ToUpper(head.Precision), strings.TrimPrefix(head.Runner, "cluster:"), head.Framework)) // (a runner pool, "cluster:mi355x-amds", by its machines)
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

// isYAML says whether a path names a YAML file.
// readsUnread says whether a server of the effect's launches, at either
// side, takes options or variables the dry run could not read (an
// unknown word where options stand, a variable a program it does not run
// would set).
func readsUnread(eff *recipe.Effect) bool {
	for _, side := range [][]recipe.PointLaunch{eff.Base, eff.Head} {
		for _, pl := range side {
			if pl.Launch == nil {
				continue
			}
			for i := range pl.Launch.Servers {
				c := &pl.Launch.Servers[i]
				if len(c.HiddenOptions()) > 0 {
					return true
				}
				for _, v := range c.Env {
					if strings.HasPrefix(v, dryrun.UnknownMarker) && strings.Count(v, dryrun.UnknownMarker) == 1 && strings.HasSuffix(v, ">") {
						return true
					}
				}
			}
		}
	}
	return false
}

func isYAML(p string) bool { return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") }

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
}

// capped joins at most most items with ", ", and says how many more
// there are ("a, b, 3 more").
func capped(items []string, most int) string {
	if len(items) > most {
		items = append(items[:most:most], fmt.Sprintf("%d more", len(items)-most))
	}
	return strings.Join(items, ", ")
}

// joinOr is "a", "a or b", "a, b or c".
func joinOr(vs []string) string {
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
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
