package changelog

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// Verify by effect: the recipes a change may have changed are dry-run at
// base and head (recipe.Change.Effects), and judged by what their points
// launch, whichever file caused it:
//
//   - launch/fails: a head point exits non-zero before its server starts;
//   - launch/stray-arg: an empty or whitespace-only argument reaches a
//     server;
//   - launch/not-wired: a point's tp, ep, dp-attn, spec-decoding or
//     kv-offloading is not realised by any option of its server (see
//     recipe.NotWired);
//   - coverage: a recipe whose launch changed needs an entry even when
//     only a launcher or a shared helper changed; one whose scripts
//     changed but whose every point launches the same needs none (a note,
//     coverage/launch-unchanged);
//   - description/omits-change: a launch change no bullet of the entries
//     for the recipe mentions.
//
// A problem the change did not introduce (the base point fails or is
// unwired the same way) is a warning, not an error.

// launchEffects dry-runs the candidates of the change (nil when there is
// nothing to run or the run was cancelled).
func launchEffects(in *Input, ch *recipe.Change, add func(Finding)) map[string]*recipe.Effect {
	ctx := in.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	out, err := LaunchEffects(ctx, ch, in.DryRun)
	if err != nil {
		if ctx.Err() == nil {
			add(Finding{Rule: RuleRecipeInvalid, Severity: Warning, Message: "the launches could not be dry-run: " + err.Error()})
		}
		return nil
	}
	return out
}

// LaunchEffects dry-runs the recipes a change may have changed, at base
// and head (recipe.Change.Effects), by key: what verify judges launches
// and claims by.
func LaunchEffects(ctx context.Context, ch *recipe.Change, o dryrun.Options) (map[string]*recipe.Effect, error) {
	effs, err := ch.Effects(ctx, o)
	return byKey(effs), err
}

// ClaimEffects is what the claims of entries are judged by (their launch
// at head, recipe.Change.HeadEffects): only the recipes the change may
// have changed that an entry with a flag or variable claim names are
// dry-run. claims.CheckLaunched with them judges as verify does.
func ClaimEffects(ctx context.Context, ch *recipe.Change, entries []claims.Entry, o dryrun.Options) (map[string]*recipe.Effect, error) {
	var patterns []*regexp.Regexp
	for _, e := range entries {
		if e.Bullets == nil || !slices.ContainsFunc(claims.Extract(e.Bullets), func(c claims.Claim) bool { return c.Kind == claims.KindFlag || c.Kind == claims.KindEnv }) {
			continue
		}
		for _, p := range e.Keys {
			patterns = append(patterns, config.GlobRegexp(p))
		}
	}
	if len(patterns) == 0 {
		return nil, nil
	}
	hk, err := ch.Head.Keys()
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, k := range hk {
		if slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(k) }) {
			keys = append(keys, k)
		}
	}
	effs, err := ch.HeadEffects(ctx, keys, o)
	return byKey(effs), err
}

func byKey(effs []recipe.Effect) map[string]*recipe.Effect {
	if effs == nil {
		return nil
	}
	out := make(map[string]*recipe.Effect, len(effs))
	for i := range effs {
		out[effs[i].Key] = &effs[i]
	}
	return out
}

// commandEnd is the last line of the command that starts at line: the
// lines after it that a backslash at the very end continues.
func commandEnd(r *recipe.Rev, file string, line int) int {
	data, ok, err := revfs.ReadFile(r.Files, file)
	if err != nil || !ok || line < 1 {
		return line
	}
	for n := 1; ; n++ {
		l, rest, more := bytes.Cut(data, []byte{'\n'})
		if n >= line && !bytes.HasSuffix(l, []byte{'\\'}) || !more {
			return max(n, line)
		}
		data = rest
	}
}

// causeOf maps a lint rule to the launch rules whose findings it can
// explain: a stray argument by a backslash followed by a space, a setting
// unwired by an array reset, a failure by a backend the script rejects.
var causeOf = map[string][]string{
	RuleContinuation: {RuleStrayArg},
	RuleArrayClobber: {RuleNotWired},
	RuleKVBackend:    {RuleLaunchFails, RuleNotWired},
	RuleRouter:       {RuleNotWired},
}

// withCauses reports a launch finding (the effect) and a lint finding
// (its cause) on the same command once: the lint finding joins the
// launch finding whose command spans its line, as its cause.
func withCauses(head *recipe.Rev, effects, causes []Finding) []Finding {
	out := effects
	for _, c := range causes {
		merged := false
		if explains := causeOf[c.Rule]; explains != nil {
			for i := range out[:len(effects)] {
				f := &out[i]
				if !slices.Contains(explains, f.Rule) || f.File != c.File || c.Line < f.Line || c.Line > commandEnd(head, f.File, f.Line) {
					continue
				}
				if c.ConfigKey != "" && f.ConfigKey != "" && c.ConfigKey != f.ConfigKey {
					continue
				}
				if !slices.Contains(f.Causes, c.Rule) {
					f.Causes = append(f.Causes, c.Rule)
					f.Message += fmt.Sprintf("; the cause is line %d (%s)", c.Line, c.Rule)
					if c.Line != f.Line {
						f.Evidence = append(f.Evidence, c.Evidence...)
					}
				}
				if c.Severity.rank() < f.Severity.rank() {
					f.Severity = c.Severity
				}
				merged = true
			}
		}
		if !merged {
			out = append(out, c)
		}
	}
	return out
}

// pointList names points for a message: "points 6-11 (tp8 mtp conc 32, ...)".
func pointList(pts []*recipe.LaunchPoint) string {
	if len(pts) == 1 {
		return "point " + pts[0].Label()
	}
	idx := make([]int, len(pts))
	for i, p := range pts {
		idx[i] = p.Index
	}
	return fmt.Sprintf("points %s (first: %s)", ranges(idx), pts[0].Label())
}

// ranges renders sorted numbers as "1-3, 7".
func ranges(n []int) string {
	sort.Ints(n)
	var parts []string
	for i := 0; i < len(n); {
		j := i
		for j+1 < len(n) && n[j+1] == n[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", n[i], n[j]))
		} else {
			parts = append(parts, strconv.Itoa(n[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// failKey identifies a failure across revisions: the file that ended the
// run and what it said, not the line (an edit above it moves it).
func failKey(l *dryrun.Launch) string {
	file, _ := recipe.SplitAt(l.EndedAt)
	return file + "\x00" + l.Reason
}

// unknownKey identifies why a run is unknown across revisions: its
// reason without the numbers (a budget's size, a line).
func unknownKey(l *dryrun.Launch) string { return withoutDigits(l.Reason) }

// withoutDigits is s without its digits: a message that names lines
// compared across an edit that moved them.
func withoutDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}

// launchRules reports the head launches' problems: failures, stray
// arguments and settings not wired to the server.
func launchRules(ch *recipe.Change, effects map[string]*recipe.Effect, add func(Finding)) {
	// a problem the base already had is said once for every recipe that
	// has it, not once per recipe
	type carried struct {
		f    Finding
		keys []string
		msg  string
	}
	var olds []*carried
	oldBy := map[string]*carried{}
	defer func() {
		for _, c := range olds {
			if len(c.keys) > 1 {
				names := c.keys
				more := ""
				if len(names) > 5 {
					names, more = names[:5], fmt.Sprintf(" and %d more", len(c.keys)-5)
				}
				c.f.Message = fmt.Sprintf("%d recipes (%s%s): %s (so they did at base: not introduced by this change)", len(c.keys), strings.Join(names, ", "), more, c.msg)
			}
			add(c.f)
		}
	}()
	for _, k := range slices.Sorted(maps.Keys(effects)) {
		e := effects[k]
		type group struct {
			rule, at, msg string
			pts           []*recipe.LaunchPoint
			old           bool // every point had it at base too
		}
		var groups []*group
		byID := map[string]*group{}
		note := func(rule, at, msg string, p *recipe.LaunchPoint, old bool) {
			id := rule + "\x00" + at + "\x00" + msg
			g, ok := byID[id]
			if !ok {
				g = &group{rule: rule, at: at, msg: msg, old: true}
				byID[id] = g
				groups = append(groups, g)
			}
			g.pts = append(g.pts, p)
			g.old = g.old && old
		}
		// what the base already did, point by point and for the recipe
		// as a whole (a point the change adds fails the way the others
		// already did: not introduced by it)
		baseFails, baseStray, baseUnwired, baseUnknown := map[string]bool{}, false, map[string]bool{}, map[string]bool{}
		for i := range e.Base {
			bl := e.Base[i].Launch
			if bl == nil {
				continue
			}
			if bl.Status == dryrun.StatusUnknown {
				baseUnknown[unknownKey(bl)] = true
			}
			if bl.Status == dryrun.StatusFailed {
				baseFails[failKey(bl)] = true
			}
			if srv := bl.Server(); srv != nil && bl.Status == dryrun.StatusLaunched {
				baseStray = baseStray || len(srv.Stray) > 0
				for _, u := range recipe.NotWired(&e.Base[i].Point, srv, ch.Base.Wiring(e.Base[i].Point.Env["FRAMEWORK"])) {
					baseUnwired[u.Setting] = true
				}
			}
		}
		for i := range e.Head {
			h := &e.Head[i]
			l := h.Launch
			if l == nil {
				continue
			}
			if l.Status == dryrun.StatusUnknown {
				// not a pass: what the point launches is not known, and
				// a change behind it is not checked
				at := l.EndedAt
				if at == "" && len(l.Unknowns) > 0 {
					at = l.Unknowns[0].At
				}
				if at == "" {
					at = h.Point.Script
				}
				note(RuleLaunchUnknown, at, "its dry run did not end, so what it launches is not known: "+l.Reason, &h.Point, baseUnknown[unknownKey(l)])
			}
			if l.Status == dryrun.StatusFailed {
				msg := fmt.Sprintf("exits %d before the server starts", l.Exit)
				if l.Reason != "" {
					msg += ": " + l.Reason
				}
				note(RuleLaunchFails, l.EndedAt, msg, &h.Point, baseFails[failKey(l)])
			}
			srv := l.Server()
			if srv == nil || l.Status != dryrun.StatusLaunched {
				continue // a described multi-node recipe is read, not run: not wired by the point's settings
			}
			for _, s := range srv.Stray {
				note(RuleStrayArg, srv.At, fmt.Sprintf("%s gets the stray argument %q (element %d): a backslash followed by a space, or an empty variable quoted", srv.Program(), s.Value, s.Index), &h.Point, baseStray)
			}
			for _, u := range recipe.NotWired(&h.Point, srv, ch.Head.Wiring(h.Point.Env["FRAMEWORK"])) {
				msg := fmt.Sprintf("the config says %s: %s, but %s is launched without %s", u.Setting, u.Value, srv.Program(), strings.Join(u.Want, ", "))
				if u.Got != "" {
					msg = fmt.Sprintf("the config says %s: %s, but %s is launched with %s", u.Setting, u.Value, srv.Program(), u.Got)
				}
				note(RuleNotWired, srv.At, msg, &h.Point, baseUnwired[u.Setting])
			}
		}
		for _, g := range groups {
			sev, was := Error, Warning
			if g.rule == RuleLaunchUnknown {
				sev, was = Warning, Info
			}
			msg := fmt.Sprintf("%s %s: %s", k, pointList(g.pts), g.msg)
			old := g.old && len(e.Base) > 0
			if old {
				sev = was
				msg += " (so it did at base: not introduced by this change)"
			}
			file, line := recipe.SplitAt(g.at)
			f := Finding{Rule: g.rule, Severity: sev, File: file, Line: line, ConfigKey: k, Message: msg,
				Evidence: []Evidence{{File: file, Line: line, Text: ch.Head.LineText(file, line), Rev: "head"}}}
			if !old {
				add(f)
				continue
			}
			id := g.rule + "\x00" + g.at + "\x00" + g.msg
			if c := oldBy[id]; c != nil {
				c.keys = append(c.keys, k)
				continue
			}
			c := &carried{f: f, keys: []string{k}, msg: g.msg}
			oldBy[id] = c
			olds = append(olds, c)
		}
	}
}

// launchChanged is the coverage test by effect: whether the change
// changed what a recipe launches. known is false when the launches
// cannot tell (not dry-run, or not every point ran to an end): then the
// files touched decide, as before.
func launchChanged(effects map[string]*recipe.Effect, key string) (changed, known bool) {
	e, ok := effects[key]
	if !ok || !e.Complete {
		return false, false
	}
	return e.Changed, true
}

// describeLaunchChange says what changed in a recipe's launch, for
// coverage messages: the first differences and where.
func describeLaunchChange(e *recipe.Effect) string {
	var parts []string
	for i, d := range e.Diffs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more", len(e.Diffs)-3))
			break
		}
		parts = append(parts, d.String())
	}
	s := strings.Join(parts, ", ")
	if len(e.Files) > 0 {
		s += " (by " + strings.Join(e.Files, ", ") + ")"
	}
	return s
}

// omitsChange reports the launch changes of the recipes the new entries
// cover that no bullet of those entries mentions.
func omitsChange(ch *recipe.Change, effects map[string]*recipe.Effect, covered map[string][]*Entry, add func(Finding)) {
	for _, k := range slices.Sorted(maps.Keys(effects)) {
		e := effects[k]
		entries := covered[k]
		if len(entries) == 0 || !e.Complete {
			continue
		}
		var text strings.Builder
		headOpts, baseOpts := ch.Head.Options(), ch.Base.Options() // as the claims read them: either side
		for _, en := range entries {
			bs := stringsOf(en.value, FieldDescription)
			for _, b := range bs {
				text.WriteString(mentionForm(b))
				text.WriteByte('\n')
			}
			// a feature named in English ("Disable torch.compile") names the
			// option that switches it
			for _, c := range claims.ExtractIn(bs, func(w string) bool { return headOpts[w] || baseOpts[w] }) {
				if c.Switch() {
					text.WriteString(mentionForm(strings.TrimLeft(c.Name, "-")))
					text.WriteByte('\n')
				}
			}
		}
		bullets := text.String()
		// "remove obsolete environment variables": a bullet that speaks of
		// the variables as a whole tells their changes
		envTold := reEnvGeneric.MatchString(bullets)
		seen := map[string]bool{}
		type omitted struct {
			d  recipe.LaunchDiff
			at string
		}
		var missed []omitted
		// the image the points run: the config's, not a launch option
		if bi, hi := sharedImage(e.Base), sharedImage(e.Head); bi != "" && hi != "" && bi != hi && !imageMentioned(bullets, hi) {
			at := ""
			if ims := ch.Head.Images(k); len(ims) > 0 {
				at = fmt.Sprintf("%s:%d", ims[0].File, ims[0].Line)
			}
			var pts []int
			for i := range e.Head {
				pts = append(pts, e.Head[i].Point.Index)
			}
			missed = append(missed, omitted{recipe.LaunchDiff{Kind: "image", Name: "image", Base: bi, Head: hi, Points: pts, At: at}, at})
		}
		for _, d := range e.Diffs {
			id := d.Kind + "\x00" + d.In + "\x00" + d.Name
			// a multi-node recipe's topology and harness settings are
			// told by its rows and name, seldom by setting
			settings := d.Kind == "file" && strings.HasSuffix(d.In, dryrun.SettingsSuffix)
			if d.Kind == "status" || settings || d.Harness() || d.Respelled() || seen[id] || (d.Kind == "env" && envTold) || mentioned(bullets, e, d) {
				seen[id] = true
				continue
			}
			seen[id] = true
			var pts []int
			for _, o := range e.Diffs {
				if o.Kind == d.Kind && o.In == d.In && o.Name == d.Name {
					pts = append(pts, o.Points...)
				}
			}
			d.Points = pts
			missed = append(missed, omitted{d, d.At})
		}
		if len(missed) == 0 {
			continue
		}
		// one finding per recipe and entry, whatever the number of changes
		const shown = 8
		var parts, details []string
		var ev []Evidence
		for i, m := range missed {
			if i >= shown { // the rest in the details
				details = append(details, fmt.Sprintf("%s, %s %s (%s)", clip(m.d.String(), 300), plural(len(m.d.Points), "point", "points"), ranges(m.d.Points), m.at))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s, %s %s", clip(m.d.String(), 160), plural(len(m.d.Points), "point", "points"), ranges(m.d.Points)))
			file, line := recipe.SplitAt(m.at)
			if !slices.ContainsFunc(ev, func(x Evidence) bool { return x.File == file && x.Line == line }) {
				ev = append(ev, Evidence{File: file, Line: line, Text: ch.Head.LineText(file, line), Rev: "head"})
			}
		}
		msg := fmt.Sprintf("the launch of %s changed (%s) and no bullet of entry %d mentions it", k, parts[0], entries[0].Index)
		if len(missed) > 1 {
			msg = fmt.Sprintf("the launch of %s changed in %d ways no bullet of entry %d mentions: (%s)", k, len(missed), entries[0].Index, strings.Join(parts, "); ("))
			if len(missed) > shown {
				msg += fmt.Sprintf(" and %d more, listed below", len(missed)-shown)
			}
		}
		add(Finding{Rule: RuleOmitsChange, Severity: Warning, Line: entries[0].Line, ConfigKey: k, Entry: entries[0].Index,
			Message: msg, Evidence: ev, Details: details})
	}
}

// sharedImage is the image every point of pls runs ("" when they differ
// or none is known).
func sharedImage(pls []recipe.PointLaunch) string {
	img := ""
	for i := range pls {
		v := pls[i].Point.Env["IMAGE"]
		if v == "" || (img != "" && v != img) {
			return ""
		}
		img = v
	}
	return img
}

// imageMentioned reports whether bullets (in mention form) speak of the
// image: by the word, or by the new tag or its version ("v0.5.13" of
// v0.5.13-rocm700-mi35x).
func imageMentioned(bullets, image string) bool {
	if reImageWord.MatchString(bullets) {
		return true
	}
	tag := image
	if i := strings.LastIndex(image, ":"); i >= 0 {
		tag = image[i+1:]
	}
	tag = mentionForm(tag)
	if tag != "" && strings.Contains(bullets, tag) {
		return true
	}
	if v := strings.TrimPrefix(reVersionCore.FindString(tag), "v"); v != "" && strings.Contains(bullets, v) {
		return true
	}
	// a build named by its commit ("vLLM 426e59f" of
	// nightly-dev-x86_64-cu13.0.1-426e59f)
	for _, part := range strings.FieldsFunc(strings.SplitN(tag, "@", 2)[0], func(r rune) bool { return r == '-' || r == '_' }) {
		if len(part) >= 7 && reHexish.MatchString(part) && strings.Contains(bullets, part[:7]) {
			return true
		}
	}
	return false
}

var (
	reImageWord   = regexp.MustCompile(`(^|[^a-z])(images?|containers?|docker|tag|nightly|nightlies)([^a-z]|$)`)
	reHexish      = regexp.MustCompile(`^[0-9a-f]+$`)
	reVersionCore = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+)+(\.post[0-9]+|rc[0-9]+)?`)
)

// reEnvGeneric matches bullets (in mention form) that speak of a recipe's
// environment variables as a whole.
var reEnvGeneric = regexp.MustCompile(`(^|[^a-z])(environment-variables?|env-vars?|env-variables?|environment)([^a-z]|$)`)

// clip shortens a long value for a message (on a character's boundary).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// mentionForm folds text for mention tests: lower case, "_" and spaces
// as "-" ("stream interval", "stream_interval" and "--stream-interval"
// are one name).
func mentionForm(s string) string {
	return strings.NewReplacer("_", "-", " ", "-").Replace(strings.ToLower(s))
}

// mentioned reports whether the bullets name a difference: the option
// (without its dashes), the variable or the setting, a file's name, or
// a word its new value brings (FULL_AND_PIECEWISE), in any of the
// recipe's differences of that name.
func mentioned(bullets string, e *recipe.Effect, d recipe.LaunchDiff) bool {
	n := d.Name
	if i := strings.LastIndex(n, " "); i >= 0 {
		n = n[i+1:] // a described worker's: "decode --mem-fraction-static"
	}
	if i := strings.LastIndex(n, "."); i >= 0 && d.Kind == "file" {
		n = n[i+1:] // a config's dotted key: kv_cache_config.dtype
	}
	name := mentionForm(strings.TrimLeft(n, "-"))
	if d.Kind == "file" && d.Name == "content" {
		name = mentionForm(strings.TrimSuffix(path.Base(d.In), path.Ext(d.In)))
	}
	if name != "" && strings.Contains(bullets, name) {
		return true
	}
	// the end of an option's name, as bullets shorten it
	// ("num-draft-tokens" for --speculative-num-draft-tokens): two words
	// or more, ten characters or more, not inside a longer word
	if d.Kind == "flag" {
		parts := strings.Split(name, "-")
		for i := 1; i+2 <= len(parts); i++ {
			if tail := strings.Join(parts[i:], "-"); len(tail) >= 10 && containsWordForm(bullets, tail) {
				return true
			}
		}
	}
	for _, o := range e.Diffs {
		if o.Kind != d.Kind || o.In != d.In || o.Name != d.Name {
			continue
		}
		old := map[string]bool{}
		for _, w := range valueWords(o.Base) {
			old[w] = true
		}
		for _, w := range valueWords(o.Head) {
			if !old[w] && strings.Contains(bullets, w) {
				return true
			}
		}
	}
	return false
}

// containsWordForm reports whether s (in mention form, where spaces are
// hyphens too) holds w not inside a longer word ("tokens" in "tokensx").
func containsWordForm(s, w string) bool {
	word := func(b byte) bool { return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' }
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if (j == 0 || !word(s[j-1])) && (j+len(w) == len(s) || !word(s[j+len(w)])) {
			return true
		}
		i = j + 1
	}
}

// valueWords are the words of a value that can be told in a bullet:
// four characters or more, with a letter ("FULL_AND_PIECEWISE",
// "flashinfer"), folded as mentionForm folds.
func valueWords(v string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(v, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) {
		if len(w) >= 4 && strings.ContainsAny(strings.ToLower(w), "abcdefghijklmnopqrstuvwxyz") {
			out = append(out, mentionForm(w))
		}
	}
	return out
}
