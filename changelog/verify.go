package changelog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/pyyaml"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// Profile selects a rule set.
type Profile string

// Rule profiles.
const (
	ProfileGate   Profile = "gate"
	ProfileStrict Profile = "strict"
	ProfileFull   Profile = "full"
)

// Profiles lists the profiles in documentation order.
var Profiles = []Profile{ProfileGate, ProfileStrict, ProfileFull}

// ErrProfile is returned for an unknown profile name.
var ErrProfile = errors.New("unknown profile")

// ParseProfile validates a profile name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w %q (want gate, strict or full)", ErrProfile, s)
}

// Input is everything Verify judges: the changelog at base and head, this
// run's PR number, and the master configs at head (and base, for
// append-only entries).
type Input struct {
	// Ctx, when set, cancels the check: the full profile stops between its
	// steps and between entries, and the report is then incomplete (the
	// caller reports Ctx.Err(), not the report).
	Ctx  context.Context
	Path string
	// Base and Head are the file's bytes; a nil slice means the file does
	// not exist at that revision.
	Base, Head []byte
	// BaseRev and HeadRev name the revisions in messages ("origin/main").
	BaseRev, HeadRev string
	// BaseCommit is the base's commit as git reads it (a short hash; ""
	// when unknown), for commands a message gives to run.
	BaseCommit string
	// PR is this pull request's number; 0 means a non-PR run (main).
	PR int
	// Master is the merged master configs at head; MasterErr why they could
	// not be loaded. When both are nil, HeadMaster loads them on demand.
	Master     *config.Master
	MasterErr  error
	HeadMaster func() (*config.Master, error)
	// BaseMaster loads the master configs at base; it is called only when
	// an added entry is append-only.
	BaseMaster func() (*config.Master, error)
	// Repository is owner/name for canonical pr-links (default InferenceX).
	Repository string
	// Settings overrides rule severities (may be nil).
	Settings *config.Settings
	// SettingsEdit is the change's edit of the settings file (nil: none
	// or not looked at); Settings are then the base's.
	SettingsEdit *SettingsEdit
	// Change is base..head beyond the changelog, for the full profile's
	// diff-aware rules (coverage, claims, recipe lint); nil skips them.
	Change *recipe.Change
	// Claims selects the claim verdicts reported ("" = contradicted).
	Claims ClaimsMode
	// DryRun is how the full profile dry-runs the changed recipes (its
	// Sandbox: where).
	DryRun dryrun.Options
	// Introduced, when set, says which PR's commit introduced the base's
	// entry at a 1-based index, and that commit (ok false: not known,
	// and the entry's history does not say it was introduced once, by a
	// PR); the full profile judges a pr-link correction by it. It is
	// called only when the change corrects a pr-link.
	Introduced func(baseIndex int) (pr int, commit string, ok bool)
}

// Report is the outcome of Verify.
type Report struct {
	Profile  Profile
	Findings []Finding
	// Head is the parsed head file (nil when it does not parse).
	Head *File
	// Added are the head entries this change adds (full and strict).
	Added []*Entry
	// Recipes are the recipes the change changed and Claims the checked
	// claims of the new entries (full profile with a Change).
	Recipes []recipe.RecipeChange
	Claims  []claims.Result
	// Effects are the launches of the changed recipes the full profile
	// compared, by key (a draft of the missing entries reads them: see
	// MissingEntries).
	Effects map[string]*recipe.Effect
	// Suggested are drafted entries for the recipes the change changed
	// that no new entry lists (coverage/missing-entry): what `perflog
	// changelog new` would append for them (filled by the caller: the
	// draft package, a layer above, drafts them).
	Suggested []DraftEntry
	// FixRefused, when findings `perflog changelog fix` repairs are
	// reported, is why fix would refuse this file ("" when it would
	// repair them).
	FixRefused string
	// FixNothing says fix would leave the file as it is although findings
	// it repairs are reported (a deleted line that is a pr-link
	// correction, which fix keeps): no hint sends a contributor to it.
	FixNothing bool
}

// MissingEntries are the recipes a coverage/missing-entry finding names.
func (r *Report) MissingEntries() map[string]bool {
	out := map[string]bool{}
	for _, f := range r.Findings {
		if f.Rule == RuleMissingEntry && f.ConfigKey != "" {
			out[f.ConfigKey] = true
		}
	}
	return out
}

// OK reports whether the change passes (no error findings).
func (r *Report) OK() bool { return !HasErrors(r.Findings) }

// Verify judges a change to the changelog under a profile.
func Verify(in *Input, p Profile) *Report {
	if in.Repository == "" {
		in.Repository = config.DefaultRepository
	}
	if in.Path == "" {
		in.Path = config.DefaultChangelog
	}
	if p != ProfileStrict && in.Master == nil && in.MasterErr == nil && in.HeadMaster != nil {
		go in.HeadMaster() // parse the configs on the other core meanwhile
	}
	var rep *Report
	switch p {
	case ProfileGate:
		rep = verifyGate(in)
	case ProfileStrict:
		rep = verifyStrict(in)
	default:
		p = ProfileFull
		rep = verifyFull(in)
	}
	rep.Profile = p
	if p == ProfileFull { // gate and strict reproduce contracts: nothing is set aside there
		rep.Findings = Suppress(rep.Findings, in.headLines(rep), in.Path, func(e int) (int, int) {
			if rep.Head == nil || e < 1 || e > len(rep.Head.Entries) {
				return 0, 0
			}
			return rep.Head.Entries[e-1].Line, rep.Head.Entries[e-1].EndLine
		})
	}
	if p == ProfileFull && in.SettingsEdit != nil {
		rep.Findings = append(rep.Findings, settingsFinding(in.SettingsEdit))
	}
	rep.Findings = applySeverities(rep.Findings, in.Settings, p)
	SortFindings(rep.Findings)
	rep.FixRefused, rep.FixNothing = fixOutcome(in, rep.Findings)
	return rep
}

// fixOutcome is why Fix would refuse the head file, or that it would
// repair nothing, when a finding it repairs is reported: a hint to run
// it must not send a contributor to a refusal or to "nothing to repair".
func fixOutcome(in *Input, fs []Finding) (refused string, nothing bool) {
	if in.Base == nil || in.Head == nil || !slices.ContainsFunc(fs, func(f Finding) bool { return Fixable[f.Rule] && f.Suppressed == "" }) {
		return "", false
	}
	res, err := Fix(in.Base, in.Head, FixOptions{Repository: in.Repository, PR: in.PR, Path: in.Path, BaseRev: cmp.Or(in.BaseCommit, in.BaseRev)})
	var r *FixRefusal
	if errors.As(err, &r) {
		return r.Reason, false
	}
	return "", err == nil && len(res.Repairs) == 0
}

// headLines returns a file's lines at head: the changelog's from the
// report, the others' from the change (nil when unknown).
func (in *Input) headLines(rep *Report) func(file string) []string {
	memo := map[string][]string{}
	return func(file string) []string {
		if ls, ok := memo[file]; ok {
			return ls
		}
		var ls []string
		switch {
		case file == in.Path || file == "":
			if rep.Head != nil {
				ls = strings.Split(string(rep.Head.Raw), "\n")
			}
		case in.Change != nil:
			if data, ok, err := revfs.ReadFile(in.Change.Head.Files, file); err == nil && ok {
				ls = strings.Split(string(data), "\n")
			}
		}
		memo[file] = ls
		return ls
	}
}

// canceled says whether the run was cancelled.
func (in *Input) canceled() bool { return in.Ctx != nil && in.Ctx.Err() != nil }

// master returns the head master configs, loading them if needed.
func (in *Input) master() (*config.Master, error) {
	if in.Master == nil && in.MasterErr == nil && in.HeadMaster != nil {
		in.Master, in.MasterErr = in.HeadMaster()
	}
	return in.Master, in.MasterErr
}

// applySeverities applies settings overrides. The gate and strict profiles
// reproduce the incumbent verdict for verdict, so overrides apply to full
// only.
func applySeverities(fs []Finding, s *config.Settings, p Profile) []Finding {
	if s == nil || p != ProfileFull {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		sev, on := s.SeverityOf(f.Rule, string(f.Severity))
		if !on {
			continue
		}
		f.Severity = Severity(sev)
		out = append(out, f)
	}
	return out
}

// links builds the canonical link patterns for a repository.
type links struct {
	canonical   *regexp.Regexp
	prefix      string
	placeholder string
}

func newLinks(repo string) links {
	prefix := "https://github.com/" + repo + "/pull/"
	return links{
		// Python's \d matches any Unicode decimal digit
		canonical:   regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `\p{Nd}+$`),
		prefix:      prefix,
		placeholder: prefix + "XXX",
	}
}

func (l links) isPlaceholder(s string) bool { return s == "XXX" || s == l.placeholder }
func (l links) forPR(n int) string          { return l.prefix + strconv.Itoa(n) }

// prNumber returns the PR number of a canonical link.
func (l links) prNumber(s string) (int, bool) {
	if !l.canonical.MatchString(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s[len(l.prefix):])
	return n, err == nil
}

// loadFailure turns a YAML load error into a finding.
// atBreakingEntry moves a YAML error of a whole file to the entry that
// breaks the document: an entry start indented under the one before it
// ("  - config-keys:"), where the parser only gives up lines later inside
// the previous entry. The first such line is taken; without one, f stays.
func atBreakingEntry(f Finding, raw []byte) Finding {
	if f.Rule != RuleYAML {
		return f
	}
	for n, l := range bytes.Split(raw, []byte("\n")) {
		t := bytes.TrimLeft(l, " ")
		if len(t) < len(l) && bytes.HasPrefix(t, []byte("- config-keys:")) {
			f.Line = n + 1
			f.Message += fmt.Sprintf(" (the entry at line %d is indented by %d spaces: entries start at column 0)", n+1, len(l)-len(t))
			return f
		}
	}
	return f
}

func loadFailure(path string, err error, label string, lineMap func(int) int) Finding {
	f := Finding{Rule: RuleYAML, Severity: Error, File: path}
	var ye *pyyaml.Error
	if errors.As(err, &ye) {
		f.Line = ye.Line
		if lineMap != nil {
			f.Line = lineMap(ye.Line)
		}
		if ye.Duplicate {
			f.Rule = RuleDuplicateKey
		}
		f.Message = fmt.Sprintf("%s is not valid YAML: %s", label, ye.Msg)
	} else {
		f.Message = fmt.Sprintf("%s is not valid YAML: %v", label, err)
	}
	return f
}
