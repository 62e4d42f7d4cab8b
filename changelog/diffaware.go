package changelog

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// ClaimsMode selects which claim verdicts verify reports.
type ClaimsMode string

// Claim modes.
const (
	ClaimsContradicted ClaimsMode = "contradicted" // the default: only contradicted claims
	ClaimsAll          ClaimsMode = "all"          // every claim with its verdict
	ClaimsOff          ClaimsMode = "off"          // no claim check
)

// verifyDiffAware runs the checks that read the change beyond the
// changelog: recipe coverage, description claims and the recipe-script
// lint. added are the new head entries.
func verifyDiffAware(in *Input, rep *Report, added []*Entry, add func(Finding)) {
	ch := in.Change
	if ch == nil {
		return
	}
	if m, err := in.master(); m != nil || err != nil {
		ch.Head.UseMaster(m, err)
	}
	changes, err := ch.Recipes()
	if err != nil {
		add(Finding{Rule: RuleRecipeInvalid, Severity: Warning, Message: "the recipe diff could not be computed: " + err.Error()})
		return
	}
	rep.Recipes = changes
	headKeys, _ := ch.Head.Keys()

	// which recipes the new entries cover
	covered := map[string][]*Entry{}
	for _, e := range added {
		for _, p := range stringsOf(e.value, FieldConfigKeys) {
			re := config.GlobRegexp(p)
			for _, k := range headKeys {
				if re.MatchString(k) {
					covered[k] = append(covered[k], e)
				}
			}
		}
	}
	changed := map[string]recipe.RecipeChange{}
	for _, rc := range changes {
		changed[rc.Key] = rc
	}
	effects := launchEffects(in, ch, add)
	if in.canceled() {
		return
	}
	coverage(in, ch, changes, covered, added, headKeys, changed, effects, add)
	if in.canceled() {
		return
	}
	if in.Claims != ClaimsOff {
		checkClaimsRule(in, rep, ch, ownEntries(in, added), effects, add)
	}
	var causes, launched []Finding
	lintScripts(in, ch, changes, func(f Finding) { causes = append(causes, f) })
	launchRules(ch, effects, func(f Finding) { launched = append(launched, f) })
	for _, f := range withCauses(ch.Head, launched, causes) {
		add(f)
	}
	omitsChange(ch, effects, covered, add)
	rep.Effects = effects
}

func coverage(in *Input, ch *recipe.Change, changes []recipe.RecipeChange, covered map[string][]*Entry, added []*Entry, headKeys []string, changed map[string]recipe.RecipeChange, effects map[string]*recipe.Effect, add func(Finding)) {
	firstLine := firstChangedLines(ch)
	// by effect: a recipe whose scripts alone changed and whose every
	// point launches the same did not change; one whose launch changed
	// through a launcher or a shared helper did
	same := map[string]bool{}
	for _, rc := range changes {
		if c, known := launchChanged(effects, rc.Key); known && !c && rc.Diff == nil && rc.Kind == recipe.RecipeChanged {
			same[rc.Key] = true
			delete(changed, rc.Key)
			e := effects[rc.Key]
			add(Finding{Rule: RuleLaunchSame, Severity: Info, File: rc.File, Line: rc.Line, ConfigKey: rc.Key,
				Message: fmt.Sprintf("recipe %s: %s changed, but each of its %d points launches the same server command line, environment and files: no entry is needed",
					rc.Key, strings.Join(rc.Files, ", "), len(e.Head))})
		}
	}
	var viaPath []string
	for k, e := range effects {
		if _, ok := changed[k]; ok || same[k] {
			continue
		}
		if c, known := launchChanged(effects, k); known && c {
			viaPath = append(viaPath, k)
			changed[k] = recipe.RecipeChange{Key: k, Kind: recipe.RecipeChanged, Files: e.Files}
		}
	}
	sort.Strings(viaPath)
	for _, k := range viaPath {
		if len(covered[k]) > 0 {
			continue
		}
		e := effects[k]
		f := Finding{Rule: RuleMissingEntry, Severity: Error, ConfigKey: k,
			Message: fmt.Sprintf("the launch of recipe %s changed in this change (%s), but no new changelog entry lists it; append an entry with config-keys: [%s] (perflog changelog new drafts it)", k, describeLaunchChange(e), k)}
		if len(e.Diffs) > 0 {
			f.File, f.Line = recipe.SplitAt(e.Diffs[0].At)
			f.Evidence = []Evidence{{File: f.File, Line: f.Line, Text: ch.Head.LineText(f.File, f.Line), Rev: "head"}}
		} else if rec, ok, _ := ch.Head.Recipe(k); ok {
			f.File, f.Line = rec.File, rec.Line
		}
		add(f)
	}
	for _, rc := range changes {
		if same[rc.Key] {
			continue
		}
		ev := recipeEvidence(ch, rc, firstLine)
		switch rc.Kind {
		case recipe.RecipeRemoved:
			continue // a removed recipe needs no benchmark run
		case recipe.RecipeRenamed:
			add(Finding{Rule: RuleRenamedKey, Severity: Info, File: rc.File, Line: rc.Line, ConfigKey: rc.Key, Evidence: ev,
				Message: fmt.Sprintf("recipe %s was renamed to %s; a changelog entry should name %s", rc.OldKey, rc.Key, rc.Key)})
		}
		if len(covered[rc.Key]) > 0 {
			continue
		}
		what := describeRecipeChange(rc)
		// at the change itself, where a PR's annotation shows it: the
		// recipe's changed line in its config, else the changed script's
		f := Finding{Rule: RuleMissingEntry, Severity: Error, ConfigKey: rc.Key, Evidence: ev,
			Message: fmt.Sprintf("recipe %s %s in this change, but no new changelog entry lists it; append an entry with config-keys: [%s] (perflog changelog new drafts it)", rc.Key, what, rc.Key)}
		if len(ev) > 0 {
			f.File, f.Line = ev[0].File, ev[0].Line
		}
		add(f)
	}
	for _, e := range added {
		if evalsOnly(e) {
			continue // an eval rerun lists recipes that did not change
		}
		for _, ka := range configKeysOf(e.value) {
			re := config.GlobRegexp(ka.Key)
			var matched []string
			any := false
			for _, k := range headKeys {
				if re.MatchString(k) {
					matched = append(matched, k)
					if _, ok := changed[k]; ok {
						any = true
					}
				}
			}
			if len(matched) == 0 || any {
				continue // unknown keys are config-keys/unknown
			}
			what := "recipe " + matched[0]
			if len(matched) > 1 {
				what = fmt.Sprintf("none of the %d recipes %s matches", len(matched), ka.Key)
			}
			var ev []Evidence
			if rec, ok, _ := ch.Head.Recipe(matched[0]); ok {
				ev = append(ev, Evidence{File: rec.File, Line: rec.Line, Text: matched[0] + ":", Rev: "head"})
			}
			msg := fmt.Sprintf("entry %d lists %s, but this change did not change it or the scripts that run it", e.Index, ka.Key)
			if len(matched) > 1 {
				msg = fmt.Sprintf("entry %d lists %s, but %s changed, nor the scripts that run them", e.Index, ka.Key, what)
			}
			add(Finding{Rule: RuleUnchangedKey, Severity: Warning, Line: ka.Line, Entry: e.Index, ConfigKey: ka.Key, Evidence: ev, Message: msg})
		}
	}
}

// evalsOnly reports whether an entry reruns evals (evals-only or
// all-evals true), read from its fields or, when it fails the schema,
// from the mapping as written (either spelling of the field).
func evalsOnly(e *Entry) bool {
	if e.Fields != nil {
		return e.Fields.EvalsOnly || e.Fields.AllEvals
	}
	for _, f := range []string{"evals-only", "evals_only", "all-evals", "all_evals"} {
		if v, ok := e.value.Get(f); ok && v.Truthy() {
			return true
		}
	}
	return false
}

// ownEntries are the added entries whose claims are this change's: all
// of them, except in the change that creates the changelog, which writes
// the history before it (InferenceX's first changelog commit backfilled
// 9 entries, each linked to the PR it describes, changes this commit
// does not make).
func ownEntries(in *Input, added []*Entry) []*Entry {
	if in.Base != nil || in.PR == 0 {
		return added
	}
	var out []*Entry
	for _, e := range added {
		link := e.PRLink()
		if link == "" {
			link = prInText(e) // 2025's entries: "PR: https://.../pull/110" in the description
		}
		if n := pullNumber(link); n != 0 && n != in.PR {
			continue // another PR's, in this repository or under its former name
		}
		out = append(out, e)
	}
	return out
}

var rePullLink = regexp.MustCompile(`https://github\.com/[\w.-]+/[\w.-]+/pull/\d+`)

// prInText is the first pull-request link an entry's description holds
// when it is one text.
func prInText(e *Entry) string {
	if d, ok := e.val().Get(FieldDescription); ok && d.Kind == pyyaml.Str {
		return rePullLink.FindString(d.Str)
	}
	return ""
}

// describeRecipeChange says in a few words what changed.
func describeRecipeChange(rc recipe.RecipeChange) string {
	switch rc.Kind {
	case recipe.RecipeAdded:
		return "was added"
	case recipe.RecipeRenamed:
		return "was renamed from " + rc.OldKey
	}
	var parts []string
	if rc.Diff != nil && len(rc.Diff.Changes) > 0 {
		var paths []string
		for _, c := range rc.Diff.Changes {
			paths = append(paths, c.Path)
		}
		parts = append(parts, "changed ("+claims.ListText(paths, 3)+")")
	}
	if len(rc.Files) > 0 {
		parts = append(parts, "is run by "+strings.Join(rc.Files, ", ")+", which changed")
	}
	if len(parts) == 0 {
		return "changed"
	}
	return strings.Join(parts, " and ")
}

// changedLine is the first line of a file's head version that differs
// from its base version, and its text.
type changedLine struct {
	line int
	text string
}

// firstChangedLines returns the changedLine of a file the change touched
// (line 1 of a new file), memoised.
func firstChangedLines(ch *recipe.Change) func(path string) changedLine {
	memo := map[string]changedLine{}
	return func(p string) changedLine {
		if c, ok := memo[p]; ok {
			return c
		}
		c := changedLine{line: 1, text: "changed"}
		head, hok, _ := revfs.ReadFile(ch.Head.Files, p)
		base, bok, _ := revfs.ReadFile(ch.Base.Files, p)
		if hok {
			hl, bl := strings.Split(string(head), "\n"), []string(nil)
			if bok {
				bl = strings.Split(string(base), "\n")
			}
			n := 0
			for n < len(hl) && n < len(bl) && hl[n] == bl[n] {
				n++
			}
			n = min(n, len(hl)-1) // a deletion at the end: the last line
			c = changedLine{line: n + 1, text: strings.TrimSpace(hl[n])}
		}
		memo[p] = c
		return c
	}
}

func recipeEvidence(ch *recipe.Change, rc recipe.RecipeChange, firstLine func(string) changedLine) []Evidence {
	var ev []Evidence
	rev := "head"
	if rc.Kind == recipe.RecipeRemoved {
		rev = "base"
	}
	if rc.Diff != nil {
		for _, c := range rc.Diff.Changes {
			text := c.Path + ": " + c.Old + " → " + c.New
			switch {
			case c.Kind == config.Added:
				text = c.Path + ": " + c.New
			case c.Kind == config.Removed:
				text = c.Path + " removed (was " + c.Old + ")"
			}
			line := c.Line
			if line == 0 || c.Kind == config.Removed {
				line = rc.Line
			}
			if rc.File != "" {
				ev = append(ev, Evidence{File: rc.File, Line: line, Text: text, Rev: rev})
			}
			if len(ev) >= 3 {
				break
			}
		}
	}
	var scripts []Evidence
	for _, f := range rc.Files {
		c := firstLine(f)
		scripts = append(scripts, Evidence{File: f, Line: c.line, Text: c.text, Rev: "head"})
	}
	if len(ev) == 0 && rc.File != "" {
		// no field changed: the scripts' lines first, then where the recipe is
		return append(scripts, Evidence{File: rc.File, Line: rc.Line, Text: rc.Key + ":", Rev: rev})
	}
	return append(ev, scripts...)
}

// MaxClaimEntries bounds the new entries whose claims verify checks: a
// pull request adds a few; one that adds thousands (a file replaced, a
// generated log) would otherwise take minutes.
const MaxClaimEntries = 1000

// checkClaimsRule checks the new entries' claims.
func checkClaimsRule(in *Input, rep *Report, ch *recipe.Change, added []*Entry, effects map[string]*recipe.Effect, add func(Finding)) {
	var entries []claims.Entry
	for _, e := range added {
		if e.value != nil {
			entries = append(entries, claimInput(e.Index, e.value))
		}
	}
	if n := len(entries); n > MaxClaimEntries {
		add(Finding{Rule: RuleClaimsCapped, Severity: Info, Line: entries[MaxClaimEntries].Line, Entry: entries[MaxClaimEntries].Index,
			Message: fmt.Sprintf("the change adds %d entries; the claims of the first %d were checked, not those of the other %d", n, MaxClaimEntries, n-MaxClaimEntries)})
		entries = entries[:MaxClaimEntries]
	}
	results := claims.CheckLaunched(in.Ctx, ch, entries, effects)
	rep.Claims = results
	appendOnlyReported := false
	for _, f := range rep.Findings {
		appendOnlyReported = appendOnlyReported || f.Rule == RuleAppendOnlyDelta
	}
	for _, r := range results {
		f := Finding{Line: r.Line, Entry: r.Entry, Evidence: r.Evidence}
		if len(r.Keys) == 1 {
			f.ConfigKey = r.Keys[0]
		}
		switch r.Verdict {
		case claims.Contradicted:
			if r.Kind == claims.KindAppendOnly && appendOnlyReported {
				continue
			}
			f.Rule, f.Severity = RuleContradicted, Error
			f.Message = fmt.Sprintf("entry %d says %q, but %s", r.Entry, r.Text, r.Reason)
		case claims.Unverified:
			if in.Claims != ClaimsAll {
				continue
			}
			f.Rule, f.Severity = RuleUnverified, Info
			f.Message = fmt.Sprintf("entry %d says %q; not checked: %s", r.Entry, r.Text, r.Reason)
		default:
			if in.Claims != ClaimsAll {
				continue
			}
			f.Rule, f.Severity = RuleConfirmed, Info
			f.Message = fmt.Sprintf("entry %d says %q: %s", r.Entry, r.Text, r.Reason)
		}
		add(f)
	}
	if in.Claims != ClaimsAll {
		return
	}
	// every bullet says what was read of it: one nothing was read of is
	// said too (unread is not confirmed)
	read := map[[2]int]bool{}
	for _, r := range results {
		read[[2]int{r.Entry, r.Bullet}] = true
	}
	for _, e := range entries {
		for i, b := range e.Bullets {
			if read[[2]int{e.Index, i}] {
				continue
			}
			add(Finding{Rule: RuleUnread, Severity: Info, Line: e.LineOf(i), Entry: e.Index,
				Message: fmt.Sprintf("entry %d says %q: nothing in it is read as a claim (an image, flag, variable, concurrency, parallelism or sequence length), so nothing of it is checked", e.Index, clip(b, 120))})
		}
	}
}

// lintScripts runs the recipe-script lint on the scripts the change touched and
// checks every changed recipe against the scripts that run it. A finding
// the base had too (the same rule, file, line text and message; an edit
// above it moves it) is not the change's: it is said once, as info.
func lintScripts(in *Input, ch *recipe.Change, changes []recipe.RecipeChange, add func(Finding)) {
	key := func(lf lint.Finding) string {
		// (the message's line numbers move with an edit above)
		return lf.Rule + "\x00" + lf.File + "\x00" + strings.TrimSpace(lf.Source) + "\x00" + withoutDigits(lf.Message)
	}
	atBase, said := map[string]bool{}, map[string]bool{}
	emit := func(lf lint.Finding) {
		k := key(lf)
		if said[k+"\x00"+strconv.Itoa(lf.Line)] {
			return
		}
		said[k+"\x00"+strconv.Itoa(lf.Line)] = true
		f := Finding{Rule: lf.Rule, Severity: Severity(lf.Severity), File: lf.File, Line: lf.Line, ConfigKey: lf.Key, Message: lf.Message, Source: lf.Source,
			Evidence: []Evidence{{File: lf.File, Line: lf.Line, Text: strings.TrimSpace(lf.Source), Rev: "head"}}}
		switch {
		case atBase[k]:
			f.Severity = Info
			f.Message += " (so it did at base: not introduced by this change)"
		case lf.Rule == lint.RuleEnginePatch && in.PR > 0 && revfs.Exists(ch.Head.Files, fmt.Sprintf("docs/waiver/%d.md", in.PR)):
			f.Severity = Info
			f.Message += fmt.Sprintf(" (docs/waiver/%d.md covers it)", in.PR)
		}
		add(f)
	}
	var scripts []string
	for _, p := range ch.Changed {
		if strings.HasSuffix(p, ".sh") && (strings.HasPrefix(p, "benchmarks/") || strings.HasPrefix(p, "runners/")) {
			scripts = append(scripts, p)
		}
	}
	// what the base said of the same scripts and recipes
	for _, p := range scripts {
		if s, err := ch.Base.Script(p); err == nil && s != nil {
			for _, lf := range lint.Lint(s) {
				atBase[key(lf)] = true
			}
		}
	}
	for _, rc := range changes {
		if rc.Kind == recipe.RecipeChanged {
			for _, lf := range recipe.CheckRecipe(ch.Base, rc.Key) {
				atBase[key(lf)] = true
			}
		}
	}
	for _, p := range scripts {
		s, err := ch.Head.Script(p)
		if err != nil || s == nil {
			continue // deleted
		}
		for _, lf := range lint.Lint(s) {
			emit(lf)
		}
	}
	// recipes whose config or scripts changed: the runs each script serves
	for _, rc := range changes {
		if rc.Kind == recipe.RecipeRemoved {
			continue
		}
		for _, lf := range recipe.CheckRecipe(ch.Head, rc.Key) {
			emit(lf)
		}
		if rc.Diff != nil && (rc.Kind != recipe.RecipeChanged || touches(rc.Diff, "image")) {
			for _, lf := range recipe.CheckImage(ch.Head, rc.Key) {
				emit(lf)
			}
		}
	}
}

func touches(d *config.RecipeDiff, field string) bool {
	for _, c := range d.Changes {
		if config.HasPathPrefix(c.Path, field) {
			return true
		}
	}
	return false
}
