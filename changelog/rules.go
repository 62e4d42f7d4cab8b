package changelog

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/perflog/perflog/config"
)

// RuleInfo documents one rule.
type RuleInfo struct {
	ID string `json:"id"`
	// Profiles lists the profiles that can report the rule.
	Profiles []Profile `json:"profiles"`
	// Severity is the default severity in the full profile (settings may
	// override it there; gate and strict always report errors).
	Severity Severity `json:"severity"`
	Summary  string   `json:"summary"`
}

var (
	inAll        = []Profile{ProfileGate, ProfileStrict, ProfileFull}
	inStrictFull = []Profile{ProfileStrict, ProfileFull}
	inGateFull   = []Profile{ProfileGate, ProfileFull}
	inGate       = []Profile{ProfileGate}
	inFull       = []Profile{ProfileFull}
)

// Rules lists every rule id perflog reports, in documentation order.
var Rules = []RuleInfo{
	{RuleMissingFile, inAll, Error, "the changelog does not exist at head (or, strict, at base)"},
	{RuleFinalNewline, inAll, Error, "the file does not end with a newline"},
	{RuleNotUTF8, inAll, Error, "the file (or, gate, its diff) is not valid UTF-8"},
	{RuleCR, inStrictFull, Error, "a CR character (full: warning when only history has it)"},
	{RuleTab, inStrictFull, Error, "a tab character (full: warning when only history has it)"},
	{RuleNUL, inStrictFull, Error, "a NUL byte (full: warning when only history has it)"},
	{RuleYAML, inAll, Error, "not valid YAML as PyYAML loads it (gate: the added lines)"},
	{RuleDuplicateKey, inStrictFull, Error, "a mapping repeats a key (the gate's loader keeps the last)"},
	{RuleRootNotList, inAll, Error, "the root (gate: the added lines) is not a YAML list of entries"},
	{RuleEntryStart, inStrictFull, Error, "an entry does not start with a \"- config-keys:\" line at column 0"},
	{RuleSeparator, inStrictFull, Error, "an appended entry is not preceded by exactly one empty line"},
	{RuleTrailingBlank, inStrictFull, Error, "the file ends with a blank line"},
	{RuleNotMapping, inAll, Error, "an entry is not a mapping"},
	{RuleRequired, inAll, Error, "config-keys, description or pr-link is missing"},
	{RuleExtraField, inAll, Error, "a field the ChangelogEntry model does not know"},
	{RuleType, inAll, Error, "a field has the wrong type (pydantic lax coercion)"},
	{RuleTooShort, inAll, Error, "config-keys, description or scenario-type is an empty list"},
	{RuleValue, inAll, Error, "a scenario-type or eval-min-prefill-ep value out of range"},
	{RuleFlagCombo, inAll, Error, "append-only combined with evals-only, all-evals or eval-min-prefill-ep"},
	{RuleModeMix, inGateFull, Error, "append-only and regular entries in one change"},
	{RuleDeletedLine, inGate, Error, "git's diff of the file deletes a non-blank line"},
	{RuleNoAdditions, inGateFull, Error, "the change adds nothing (full: a note)"},
	{RuleDeletedEntry, inStrictFull, Error, "an existing entry was removed"},
	{RuleModifiedEntry, inStrictFull, Error, "an existing entry's content changed"},
	{RuleReformatted, inStrictFull, Error, "an existing entry was reformatted without a semantic change"},
	{RuleHistoryBytes, inStrictFull, Error, "historical bytes (whitespace between or around entries) changed"},
	{RuleNotAtEnd, inFull, Error, "a new entry is inserted before existing ones instead of appended"},
	{RuleMixedCorrection, inStrictFull, Error, "historical pr-link corrections mixed with new entries"},
	{RuleCorrectionLines, inStrictFull, Error, "a pr-link correction changed more than the pr-link line"},
	{RuleAppendOnlyDelta, inGateFull, Error, "an append-only: true change is not purely additive"},
	{RulePRMismatch, inStrictFull, Error, "a new entry's pr-link points at another pull request"},
	{RulePRWrongCorrection, inFull, Error, "a historical pr-link corrected to a PR other than the one whose commit introduced the entry"},
	{RulePRCopied, inFull, Warning, "outside a pull request, a new entry's pr-link is an existing entry's (copied from it?)"},
	{RulePRPlaceholder, inStrictFull, Error, "an XXX placeholder outside a pull request (on a PR run: a note)"},
	{RulePRFormat, inStrictFull, Error, "a pr-link that is not a canonical pull-request link"},
	{RuleUnknownKey, inGateFull, Error, "a config-key or glob matches no recipe in the master configs at head"},
	{RuleRepeatedKey, inFull, Warning, "a new entry lists the same config-key twice"},
	{RuleMasterInvalid, inGateFull, Error, "the master configs are missing or do not load"},
	{RuleMissingEntry, inFull, Error, "a recipe's config or the script that runs it changed and no new entry lists it"},
	{RuleUnchangedKey, inFull, Warning, "a new entry lists a recipe whose config and scripts did not change"},
	{RuleRenamedKey, inFull, Info, "a recipe was renamed (an entry should name the new key)"},
	{RuleLaunchSame, inFull, Info, "a recipe's scripts changed but every point launches the same: no entry is needed"},
	{RuleLaunchFails, inFull, Error, "a recipe point's dry run exits non-zero before its server starts (warning when it did at base)"},
	{RuleNotWired, inFull, Error, "a point's tp, ep, dp-attn, spec-decoding or kv-offloading is not realised by its server (warning when not at base either)"},
	{RuleStrayArg, inFull, Error, "an empty or whitespace-only argument reaches a server (a backslash followed by a space)"},
	{RuleLaunchUnknown, inFull, Warning, "a changed recipe's point could not be dry-run to an end (a time, memory or step budget, code the sandbox refuses or does not read): what it launches is not known (info when so at base)"},
	{RulePlaceholderDesc, inFull, Error, "a new entry's bullet says nothing: empty, TBD, XXX, WIP, test, a bare update or fix, or the config-key alone"},
	{RuleOmitsChange, inFull, Warning, "a recipe's launch changed (flag, environment, config file, image) and no bullet of its entry mentions it"},
	{RuleContradicted, inFull, Error, "a description claim the change contradicts (image, env, flag, concurrency, parallelism, ...)"},
	{RuleUnverified, inFull, Info, "a description claim that could not be checked (--claims all)"},
	{RuleConfirmed, inFull, Info, "a description claim the change confirms (--claims all)"},
	{RuleUnread, inFull, Info, "a description bullet nothing is read of as a claim, so nothing of it is checked (--claims all)"},
	{RuleSuppressionReason, inFull, Warning, "a perflog:ignore comment gives no reason (it suppresses nothing)"},
	{RuleSettingsChanged, inFull, Warning, "the change edits .perflog.yaml: verify judged it by the base's settings (what it would turn off or lower)"},
	{RuleClaimsCapped, inFull, Info, "a change adds more entries than claims are checked for (the first 1000 are)"},
	{RuleArrayClobber, inFull, Error, "a script array grown with += is reset with NAME=(...) before its use"},
	{RuleContinuation, inFull, Error, "a backslash followed by trailing whitespace ends a line continuation"},
	{RuleKVBackend, inFull, Error, "a script requires a KV-offload backend other than the recipe's kv-offload-backend"},
	{RuleRouter, inFull, Error, "a DP-aware router is started for servers without data-parallel attention"},
	{RuleEnginePatch, inFull, Warning, "a benchmark script patches the inference engine (no waiver in docs/waiver/)"},
	{RuleNonUpstream, inFull, Warning, "a vLLM or SGLang recipe runs an image not from the upstream repository"},
	{RuleScriptParse, inFull, Warning, "a script does not parse as bash, so it was not linted (verify: a changed one)"},
	{RuleRecipeInvalid, inFull, Warning, "the recipe diff could not be computed"},
}

// CheckRuleOverrides says whether every rule id or family ("pr-link/*") the
// settings override is one perflog reports; an unknown one (a typo would
// silently change nothing) is config.ErrSettings naming the closest ids.
func CheckRuleOverrides(s *config.Settings) error {
	if s == nil {
		return nil
	}
	ids := map[string]bool{}
	var known []string
	for _, r := range Rules {
		ids[r.ID] = true
		known = append(known, r.ID)
		if fam, _, ok := strings.Cut(r.ID, "/"); ok && !ids[fam+"/*"] {
			ids[fam+"/*"] = true
			known = append(known, fam+"/*")
		}
	}
	var bad []string
	for id := range s.Rules {
		if !ids[id] {
			bad = append(bad, id)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	msg := fmt.Sprintf("rules.%s: no such rule", bad[0])
	if c := config.Closest(bad[0], known, 3); len(c) > 0 {
		msg += "; did you mean " + strings.Join(c, ", ") + "?"
	}
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (and %d more unknown: %s)", len(bad)-1, strings.Join(bad[1:], ", "))
	}
	return fmt.Errorf("%w: %s (perflog changelog rules lists them)", config.ErrSettings, msg)
}

// SettingsEdit is a change's edit of perflog's settings file, which
// verify does not let judge the change itself: the base's settings do.
type SettingsEdit struct {
	// Path is the settings file; Added and Removed say the change adds or
	// removes it.
	Path           string
	Added, Removed bool
	// Relaxed are the rules the change's settings would turn off or
	// lower ("claim/contradicted: error -> off"), in Rules order.
	Relaxed []string
}

// RelaxedRules lists the rules whose full-profile severity change turns
// off or lowers from base's ("id: error -> off"); a family whose every
// rule it turns off is one item ("claim/* -> off").
func RelaxedRules(base, change *config.Settings) []string {
	rank := map[string]int{"": 0, string(Info): 1, string(Warning): 2, string(Error): 3}
	var out []string
	rules, off := map[string]int{}, map[string]int{} // by family
	for _, r := range Rules {
		if !slices.Contains(r.Profiles, ProfileFull) {
			continue
		}
		fam, _, _ := strings.Cut(r.ID, "/")
		rules[fam]++
		was, wasOn := base.SeverityOf(r.ID, string(r.Severity))
		now, nowOn := change.SeverityOf(r.ID, string(r.Severity))
		if !nowOn {
			off[fam]++
		}
		if wasOn && (!nowOn || rank[now] < rank[was]) {
			if !nowOn {
				now = "off"
			}
			out = append(out, r.ID+": "+was+" -> "+now)
		}
	}
	var grouped []string
	for _, item := range out {
		fam, _, _ := strings.Cut(item, "/")
		switch {
		case off[fam] < rules[fam]:
			grouped = append(grouped, item)
		case !slices.Contains(grouped, fam+"/* -> off"):
			grouped = append(grouped, fam+"/* -> off")
		}
	}
	return grouped
}

// settingsFinding is what verify says of a change that edits the
// settings file.
func settingsFinding(e *SettingsEdit) Finding {
	what := "edits"
	switch {
	case e.Added:
		what = "adds"
	case e.Removed:
		what = "removes"
	}
	msg := fmt.Sprintf("the change %s %s; verify judged it by the base's settings (the change's apply once merged, or now with --config %s)", what, e.Path, e.Path)
	if n := len(e.Relaxed); n > 0 {
		shown := e.Relaxed[:min(n, 6)]
		msg += "; they would relax " + strings.Join(shown, ", ")
		if n > len(shown) {
			msg += fmt.Sprintf(" and %d more", n-len(shown))
		}
	}
	return Finding{Rule: RuleSettingsChanged, Severity: Warning, File: e.Path, Message: msg}
}
