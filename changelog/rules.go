package changelog

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
	gsf = []Profile{ProfileGate, ProfileStrict, ProfileFull}
	sf  = []Profile{ProfileStrict, ProfileFull}
	gf  = []Profile{ProfileGate, ProfileFull}
	g   = []Profile{ProfileGate}
	f   = []Profile{ProfileFull}
)

// Rules lists every rule id perflog reports, in documentation order.
var Rules = []RuleInfo{
	{RuleMissingFile, gsf, Error, "the changelog does not exist at head (or, strict, at base)"},
	{RuleFinalNewline, gsf, Error, "the file does not end with a newline"},
	{RuleNotUTF8, gsf, Error, "the file (or, gate, its diff) is not valid UTF-8"},
	{RuleCR, sf, Error, "a CR character (full: warning when only history has it)"},
	{RuleTab, sf, Error, "a tab character (full: warning when only history has it)"},
	{RuleNUL, sf, Error, "a NUL byte (full: warning when only history has it)"},
	{RuleYAML, gsf, Error, "not valid YAML as PyYAML loads it (gate: the added lines)"},
	{RuleDuplicateKey, sf, Error, "a mapping repeats a key (the gate's loader keeps the last)"},
	{RuleRootNotList, gsf, Error, "the root (gate: the added lines) is not a YAML list of entries"},
	{RuleEntryStart, sf, Error, "an entry does not start with a \"- config-keys:\" line at column 0"},
	{RuleSeparator, sf, Error, "an appended entry is not preceded by exactly one empty line"},
	{RuleTrailingBlank, sf, Error, "the file ends with a blank line"},
	{RuleNotMapping, gsf, Error, "an entry is not a mapping"},
	{RuleRequired, gsf, Error, "config-keys, description or pr-link is missing"},
	{RuleExtraField, gsf, Error, "a field the ChangelogEntry model does not know"},
	{RuleType, gsf, Error, "a field has the wrong type (pydantic lax coercion)"},
	{RuleTooShort, gsf, Error, "config-keys, description or scenario-type is an empty list"},
	{RuleValue, gsf, Error, "a scenario-type or eval-min-prefill-ep value out of range"},
	{RuleFlagCombo, gsf, Error, "append-only combined with evals-only, all-evals or eval-min-prefill-ep"},
	{RuleModeMix, gf, Error, "append-only and regular entries in one change"},
	{RuleDeletedLine, g, Error, "git's diff of the file deletes a non-blank line"},
	{RuleNoAdditions, gf, Error, "the change adds nothing (full: a note)"},
	{RuleDeletedEntry, sf, Error, "an existing entry was removed"},
	{RuleModifiedEntry, sf, Error, "an existing entry's content changed"},
	{RuleReformatted, sf, Error, "an existing entry was reformatted without a semantic change"},
	{RuleHistoryBytes, sf, Error, "historical bytes (whitespace between or around entries) changed"},
	{RuleNotAtEnd, f, Error, "a new entry is inserted before existing ones instead of appended"},
	{RuleMixedCorrection, sf, Error, "historical pr-link corrections mixed with new entries"},
	{RuleCorrectionLines, sf, Error, "a pr-link correction changed more than the pr-link line"},
	{RuleAppendOnlyDelta, gf, Error, "an append-only: true change is not purely additive"},
	{RulePRMismatch, sf, Error, "a new entry's pr-link points at another pull request"},
	{RulePRPlaceholder, sf, Error, "an XXX placeholder outside a pull request (on a PR run: a note)"},
	{RulePRFormat, sf, Error, "a pr-link that is not a canonical pull-request link"},
	{RuleUnknownKey, gf, Error, "a config-key or glob matches no recipe in the master configs at head"},
	{RuleMasterInvalid, gf, Error, "the master configs are missing or do not load"},
}
