package changelog

import (
	"sort"
)

// Severity of a finding.
type Severity string

// Severities, most severe first.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

func (s Severity) rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Rule ids. They are a public contract (JSON output, settings overrides,
// GitHub annotation titles): add new ones, never rename.
const (
	// format: the bytes and the YAML of the file.
	RuleMissingFile   = "format/missing"        // the changelog does not exist at a revision
	RuleFinalNewline  = "format/final-newline"  // head does not end with "\n"
	RuleNotUTF8       = "format/utf8"           // not valid UTF-8
	RuleCR            = "format/cr"             // contains CR characters
	RuleTab           = "format/tab"            // contains tabs
	RuleNUL           = "format/nul"            // contains NUL bytes
	RuleYAML          = "format/yaml"           // not valid YAML
	RuleDuplicateKey  = "format/duplicate-key"  // a mapping repeats a key
	RuleRootNotList   = "format/root"           // root is not a YAML list
	RuleEntryStart    = "format/entry-start"    // entries not each started by a "- config-keys:" line
	RuleSeparator     = "format/separator"      // not exactly one empty line before an appended entry
	RuleTrailingBlank = "format/trailing-blank" // file ends with a blank line

	// schema: the ChangelogEntry model.
	RuleNotMapping = "schema/not-mapping"     // entry is not a mapping
	RuleRequired   = "schema/required"        // a required field is missing
	RuleExtraField = "schema/extra-field"     // a field the model does not know
	RuleType       = "schema/type"            // a field has the wrong type
	RuleTooShort   = "schema/too-short"       // an empty list where one item is required
	RuleValue      = "schema/value"           // a value outside the allowed set or range
	RuleFlagCombo  = "schema/flags"           // append-only combined with eval selection
	RuleModeMix    = "schema/append-only-mix" // append-only and regular entries in one change

	// append-only: history is immutable.
	RuleDeletedLine     = "append-only/deleted-line"     // the diff deletes a non-blank line (gate)
	RuleNoAdditions     = "append-only/no-additions"     // the diff adds nothing (gate)
	RuleDeletedEntry    = "append-only/deleted-entry"    // an existing entry was removed
	RuleModifiedEntry   = "append-only/modified-entry"   // an existing entry's content changed
	RuleReformatted     = "append-only/reformatted"      // an existing entry reformatted without semantic change
	RuleHistoryBytes    = "append-only/history-bytes"    // historical bytes changed
	RuleNotAtEnd        = "append-only/not-at-end"       // a new entry inserted before existing ones
	RuleMixedCorrection = "append-only/mixed-correction" // pr-link corrections mixed with new entries
	RuleCorrectionLines = "append-only/correction-lines" // a correction touched more than pr-link lines
	RuleAppendOnlyDelta = "append-only/flag"             // an append-only: true entry whose diff is not additive

	// pr-link.
	RulePRMismatch    = "pr-link/mismatch"    // points at another PR
	RulePRPlaceholder = "pr-link/placeholder" // XXX placeholder (allowed only on PR runs)
	RulePRFormat      = "pr-link/format"      // not a canonical pull-request link
	RulePRCopied      = "pr-link/copied"      // outside a PR: an existing entry's link
	// a bullet nothing is read of as a claim (--claims all)
	RuleUnread = "claim/unread"
	// a historical pr-link corrected to a PR other than the one that
	// introduced the entry
	RulePRWrongCorrection = "pr-link/wrong-correction"

	// config keys.
	RuleUnknownKey    = "config-keys/unknown"  // key or glob matches no recipe
	RuleRepeatedKey   = "config-keys/repeated" // an entry lists a key twice
	RuleMasterInvalid = "config/invalid"       // the master configs cannot be loaded

	// coverage: which recipes the change changed vs the entries it adds.
	RuleMissingEntry = "coverage/missing-entry"    // a recipe changed and no new entry covers it
	RuleUnchangedKey = "coverage/unchanged-key"    // a new entry lists a recipe that did not change
	RuleRenamedKey   = "coverage/renamed-key"      // a recipe was renamed
	RuleLaunchSame   = "coverage/launch-unchanged" // scripts changed, every launch the same: no entry needed

	// launch: what the recipes' points launch (a dry run of the launch path).
	RuleLaunchFails   = "launch/fails"             // a point exits non-zero before its server starts
	RuleNotWired      = "launch/not-wired"         // a point's setting no server option realises
	RuleStrayArg      = "launch/stray-arg"         // an empty or whitespace-only server argument
	RuleLaunchUnknown = "launch/unknown"           // a point whose dry run did not end (a budget, refused or unread code)
	RuleOmitsChange   = "description/omits-change" // a launch change no bullet mentions

	// description: what the bullets say.
	RulePlaceholderDesc = "description/placeholder" // a bullet that says nothing (TBD, test, a bare "update", the config-key alone)

	// claims: the description against the change.
	RuleContradicted = "claim/contradicted" // a description claim the change contradicts
	RuleUnverified   = "claim/unverified"   // a claim that could not be checked (--claims all)
	RuleConfirmed    = "claim/confirmed"    // a claim the change confirms (--claims all)
	RuleClaimsCapped = "claim/not-checked"  // entries past MaxClaimEntries whose claims were not checked

	// suppression: the perflog:ignore comments (see Suppress).
	RuleSuppressionReason = "suppression/no-reason" // a perflog:ignore comment without a reason

	// settings: perflog's own settings file in the change.
	RuleSettingsChanged = "settings/changed" // the change edits .perflog.yaml: judged by the base's

	// recipe: the scripts that run the recipes (the ids of package recipe).
	RuleArrayClobber  = "recipe/array-clobber"           // an array grown with += then reset with =
	RuleContinuation  = "recipe/continuation-whitespace" // a backslash followed by whitespace
	RuleKVBackend     = "recipe/kv-backend-mismatch"     // the KV-offload backend a script requires vs the recipe's
	RuleRouter        = "recipe/router-mismatch"         // a DP-aware router before servers without DP attention
	RuleEnginePatch   = "recipe/engine-patch"            // the inference engine patched inside a script
	RuleNonUpstream   = "recipe/non-upstream-image"      // a vLLM/SGLang recipe on a non-upstream image
	RuleScriptParse   = "recipe/parse"                   // a changed script does not parse
	RuleRecipeInvalid = "recipe/invalid"                 // the recipe diff could not be computed
)

// Finding is one problem (or note) about the changelog. JSON field names
// are a public contract: add, never rename.
type Finding struct {
	Rule      string   `json:"rule"`
	Severity  Severity `json:"severity"`
	File      string   `json:"file"`
	Line      int      `json:"line"`
	ConfigKey string   `json:"config_key"`
	Message   string   `json:"message"`
	// Entry is the 1-based index of the entry the finding is about in the
	// head file (0 when not about one entry).
	Entry int `json:"entry,omitempty"`
	// Source is the offending line's text, for display.
	Source string `json:"source,omitempty"`
	// Evidence lists the lines that support the finding (diff-aware rules:
	// the recipe fields, script lines and base values it rests on).
	Evidence []Evidence `json:"evidence,omitempty"`
	// Causes are the rule ids of lint findings reported as this
	// finding's cause (a launch finding and the script line behind it are
	// one finding, not two).
	Causes []string `json:"causes,omitempty"`
	// Details are the items a summarising message leaves out ("and 4
	// more": description/omits-change's further unmentioned changes, each
	// with its points and where it is set).
	Details []string `json:"details,omitempty"`
	// Suppressed is the reason a perflog:ignore comment gives for
	// setting the finding aside ("" when it stands); a suppressed finding
	// counts as no error.
	Suppressed string `json:"suppressed,omitempty"`
}

// SortFindings orders findings by file, line, severity and rule.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Severity.rank() != b.Severity.rank() {
			return a.Severity.rank() < b.Severity.rank()
		}
		return a.Rule < b.Rule
	})
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Error && f.Suppressed == "" {
			return true
		}
	}
	return false
}
