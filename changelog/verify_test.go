package changelog

import (
	"slices"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
)

func ent(key, lnk string) string {
	return "- config-keys:\n  - " + key + "\n  description:\n  - Update " + key + " image\n  pr-link: " + lnk + "\n"
}

const l1 = link + "1"

func testMaster(t *testing.T) *config.Master {
	m, err := config.LoadMaster([]config.File{{Path: "configs/amd-master.yaml", Data: []byte("config-a: {}\nconfig-b: {}\nconfig-c: {}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func verify(t *testing.T, p Profile, base, head string, pr int) *Report {
	t.Helper()
	var b []byte
	if base != "\x00none" {
		b = []byte(base)
	}
	return Verify(&Input{Base: b, Head: []byte(head), BaseRev: "base", HeadRev: "head", PR: pr, Master: testMaster(t)}, p)
}

func hasRule(r *Report, rule string) bool {
	for _, f := range r.Findings {
		if f.Rule == rule && f.Severity == Error {
			return true
		}
	}
	return false
}

// The cases of the incumbent's utils/changelog_gate_tests/test_validate_perf_changelog.py,
// as strict-profile verdicts (and where it differs, what full reports).
func TestIncumbentStrictInventory(t *testing.T) {
	a := ent("config-a", l1)
	cases := []struct {
		name, base, head string
		pr               int
		rule             string // "" = passes
	}{
		{"parse ok", a, a + "\n" + ent("config-b", "XXX"), 42, ""},
		{"missing final newline", a, a + "\n" + strings.TrimSuffix(ent("config-b", "XXX"), "\n"), 42, RuleFinalNewline},
		{"malformed nested entry", a, a + "  " + strings.Replace(ent("config-b", "XXX"), "\n", "\n  ", 1), 42, RuleYAML},
		{"duplicate mapping key", a, a + "\n" + ent("config-b", "XXX") + "  description:\n  - Second\n", 42, RuleDuplicateKey},
		{"append XXX on a PR", a, a + "\n" + ent("config-b", "XXX"), 42, ""},
		{"wrong PR link", a, a + "\n" + ent("config-b", link+"41"), 42, RulePRMismatch},
		{"main requires canonical", a, a + "\n" + ent("config-b", "XXX"), 0, RulePRPlaceholder},
		{"pr-link-only correction", ent("config-a", "XXX"), ent("config-a", link+"42"), 99, ""},
		{"content change", a, strings.Replace(a, "Update config-a", "Different", 1), 42, RuleModifiedEntry},
		{"deletion", a, "[]\n", 42, RuleDeletedEntry},
		{"correction mixed with append", ent("config-a", "XXX"), ent("config-a", link+"42") + "\n" + ent("config-b", "XXX"), 42, RuleMixedCorrection},
		{"historical prefix changed", a, strings.Replace(a, "Update config-a image", "Update config-a image ", 1) + "\n" + ent("config-b", "XXX"), 42, RuleHistoryBytes},
		{"two empty separator lines", a, a + "\n" + ent("config-b", "XXX") + "\n\n" + ent("config-c", "XXX"), 42, RuleSeparator},
		{"final entry with extra newline", a, a + "\n" + ent("config-b", "XXX") + "\n", 42, RuleTrailingBlank},
		{"correction plus whitespace", ent("config-a", "XXX"), strings.Replace(ent("config-a", link+"42"), "  - Update config-a image\n", "  - Update config-a image  \n", 1), 42, RuleCorrectionLines},
		{"tabs", a, a + "\n" + strings.Replace(ent("config-b", "XXX"), "Update", "Up\tdate", 1), 42, RuleTab},
	}
	for _, c := range cases {
		rep := verify(t, ProfileStrict, c.base, c.head, c.pr)
		if c.rule == "" {
			if !rep.OK() {
				t.Errorf("%s: want pass, got %v", c.name, rep.Findings)
			}
			continue
		}
		if !hasRule(rep, c.rule) {
			t.Errorf("%s: want %s, got %v", c.name, c.rule, rep.Findings)
		}
	}
}

func TestFullProfileRules(t *testing.T) {
	a, b := ent("config-a", l1), ent("config-b", link+"2")
	// insertion in the middle: one not-at-end finding, nothing positional
	rep := verify(t, ProfileFull, a+"\n"+b, a+"\n"+ent("config-c", link+"42")+"\n"+b, 42)
	if !hasRule(rep, RuleNotAtEnd) || hasRule(rep, RuleModifiedEntry) || len(rep.Findings) != 1 {
		t.Fatalf("insert: %v", rep.Findings)
	}
	if rep.Findings[0].Line != 7 || rep.Findings[0].Entry != 2 {
		t.Fatalf("insert finding at line %d entry %d", rep.Findings[0].Line, rep.Findings[0].Entry)
	}
	// settings can demote it
	s := &config.Settings{Rules: map[string]string{RuleNotAtEnd: "warning"}}
	in := &Input{Base: []byte(a + "\n" + b), Head: []byte(a + "\n" + ent("config-c", link+"42") + "\n" + b), PR: 42, Master: testMaster(t), Settings: s}
	if r := Verify(in, ProfileFull); !r.OK() || r.Findings[0].Severity != Warning {
		t.Fatalf("demoted: %v", r.Findings)
	}
	// unknown key with a suggestion, pointing at the key's line
	rep = verify(t, ProfileFull, a, a+"\n"+ent("config-bb", link+"42"), 42)
	if !hasRule(rep, RuleUnknownKey) || !strings.Contains(rep.Findings[0].Message, "Did you mean 'config-b'") || rep.Findings[0].Line != 8 || rep.Findings[0].ConfigKey != "config-bb" {
		t.Fatalf("unknown key: %+v", rep.Findings)
	}
	// the pr-link copied from an earlier entry names it
	rep = verify(t, ProfileFull, a, a+"\n"+ent("config-b", l1), 42)
	if !hasRule(rep, RulePRMismatch) || !strings.Contains(rep.Findings[0].Message, "entry 1, line 1, has the same link") {
		t.Fatalf("copied link: %v", rep.Findings)
	}
	// a new changelog (no base) is all additions
	if rep := verify(t, ProfileFull, "\x00none", a, 1); !rep.OK() {
		t.Fatalf("new file: %v", rep.Findings)
	}
	// a tab only in history is a warning, in new lines an error
	tabbed := strings.Replace(a, "- Update config-a image", "- \"Up\tdate config-a image\"", 1)
	if rep := verify(t, ProfileFull, tabbed, tabbed+"\n"+ent("config-b", link+"42"), 42); !rep.OK() {
		t.Fatalf("inherited tab: %v", rep.Findings)
	}
	// a key listed twice: a warning at its second line, the change passes
	twice := "- config-keys:\n  - config-b\n  - config-c\n  - config-b\n  description:\n  - Update b and c\n  pr-link: " + link + "42\n"
	rep = verify(t, ProfileFull, a, a+"\n"+twice, 42)
	if !rep.OK() || len(rep.Findings) != 1 || rep.Findings[0].Rule != RuleRepeatedKey || rep.Findings[0].Severity != Warning ||
		rep.Findings[0].Line != 10 || rep.Findings[0].ConfigKey != "config-b" || !strings.Contains(rep.Findings[0].Message, "first on line 8") {
		t.Fatalf("repeated key: %+v", rep.Findings)
	}
	// a byte-order mark, invisible in an excerpt, is named
	for _, p := range []Profile{ProfileFull, ProfileStrict} {
		rep := verify(t, p, a, "\ufeff"+a+"\n"+ent("config-b", link+"42"), 42)
		if !hasRule(rep, RuleEntryStart) || !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return strings.Contains(f.Message, "byte-order mark") }) {
			t.Fatalf("%s, BOM: %v", p, rep.Findings)
		}
	}
	if rep := verify(t, ProfileFull, a, "  "+a, 42); slices.ContainsFunc(rep.Findings, func(f Finding) bool { return strings.Contains(f.Message, "byte-order mark") }) {
		t.Fatalf("no BOM, yet named: %v", rep.Findings)
	}
	// the gate never checks links but checks keys
	if rep := verify(t, ProfileGate, a, a+"\n"+ent("config-b", link+"7"), 42); !rep.OK() {
		t.Fatalf("gate: %v", rep.Findings)
	}
	if rep := verify(t, ProfileGate, a, a+"\n"+ent("nope", "XXX"), 0); !hasRule(rep, RuleUnknownKey) {
		t.Fatalf("gate key: %v", rep.Findings)
	}
}

func TestEntrySpans(t *testing.T) {
	raw := []byte("- config-keys:\n  - a\n  pr-link: x\n  \n\n-\n  config-keys:\n  - b\n  pr-link: y\n")
	f, _, err := parseWithRoot("f", raw)
	if err != nil || len(f.Entries) != 2 {
		t.Fatalf("%v %v", f, err)
	}
	e1, e2 := f.Entries[0], f.Entries[1]
	if e1.Line != 1 || e1.EndLine != 3 || string(e1.Raw(f)) != "- config-keys:\n  - a\n  pr-link: x\n" {
		t.Fatalf("entry 1: %d-%d %q", e1.Line, e1.EndLine, e1.Raw(f))
	}
	if e2.Line != 6 || e2.EndLine != 9 || e2.End != len(raw) {
		t.Fatalf("entry 2: %d-%d", e2.Line, e2.EndLine)
	}
	// identity ignores pr-link and formatting
	g, _ := Parse("g", []byte("- config-keys: [a]\n  pr-link: other\n"))
	if g.Entries[0].Identity() != e1.Identity() {
		t.Fatal("identity must ignore pr-link and style")
	}
}

func FuzzVerify(f *testing.F) {
	a := ent("config-a", l1)
	f.Add(a, a+"\n"+ent("config-b", "XXX"))
	f.Add(a, "- config-keys: [\n")
	f.Add("", "- {config-keys: [a], <<: {x: 1}}\n")
	f.Fuzz(func(t *testing.T, base, head string) {
		for _, p := range Profiles {
			for _, pr := range []int{0, 42} {
				Verify(&Input{Base: []byte(base), Head: []byte(head), PR: pr, Master: testMaster(t)}, p)
			}
		}
	})
}

// TestFindingsNotHidden: an entry that fails the schema still gets its
// unknown config-keys reported, each at its line.
func TestFindingsNotHidden(t *testing.T) {
	a := ent("config-a", l1)
	bad := "- config-keys:\n  - config-a\n  - config-bb\n  description:\n  - Update\n" // no pr-link
	rep := verify(t, ProfileFull, a, a+"\n"+bad, 42)
	var unknown, required *Finding
	for i, f := range rep.Findings {
		switch f.Rule {
		case RuleUnknownKey:
			unknown = &rep.Findings[i]
		case RuleRequired:
			required = &rep.Findings[i]
		}
	}
	if required == nil || unknown == nil {
		t.Fatalf("findings %v", rep.Findings)
	}
	if unknown.Line != 9 || unknown.ConfigKey != "config-bb" || unknown.Entry != 2 || !strings.Contains(unknown.Message, "config-b") {
		t.Errorf("unknown key %+v", unknown)
	}
}

// TestRetriggerIsANote: an appended copy of an earlier entry that links
// that entry's PR re-runs its sweep (a note naming the entry it repeats);
// a copied link with other content is still a mismatch.
func TestRetriggerIsANote(t *testing.T) {
	a := ent("config-a", l1)
	rep := verify(t, ProfileFull, a, a+"\n"+a, 42)
	if !rep.OK() || len(rep.Findings) != 1 || rep.Findings[0].Rule != RulePRMismatch || rep.Findings[0].Severity != Info ||
		!strings.Contains(rep.Findings[0].Message, "repeats entry 1") {
		t.Fatalf("re-trigger: %v", rep.Findings)
	}
	rep = verify(t, ProfileFull, a, a+"\n"+ent("config-b", l1), 42)
	if !hasRule(rep, RulePRMismatch) {
		t.Fatalf("copied link: %v", rep.Findings)
	}
}

// TestFormerRepositoryLinks: a link into the repository's former name is
// canonical while the changelog has no link of the current name, a format
// warning with the fix after the rename, and a mismatch when it names
// another PR.
func TestFormerRepositoryLinks(t *testing.T) {
	old := "https://github.com/InferenceMAX/InferenceMAX/pull/"
	before := ent("config-a", old+"1")
	rep := verify(t, ProfileFull, before, before+"\n"+ent("config-b", old+"42"), 42)
	if !rep.OK() || len(rep.Findings) != 0 {
		t.Errorf("before the rename: %v", rep.Findings)
	}
	after := ent("config-a", l1)
	rep = verify(t, ProfileFull, after, after+"\n"+ent("config-b", old+"42"), 42)
	if !rep.OK() || len(rep.Findings) != 1 || rep.Findings[0].Rule != RulePRFormat || rep.Findings[0].Severity != Warning ||
		!strings.Contains(rep.Findings[0].Message, link+"42") {
		t.Errorf("after the rename: %v", rep.Findings)
	}
	rep = verify(t, ProfileFull, before, before+"\n"+ent("config-b", old+"7"), 42)
	if !hasRule(rep, RulePRMismatch) || !strings.Contains(rep.Findings[0].Message, "another PR") {
		t.Errorf("another PR in the former name: %v", rep.Findings)
	}
}

// TestYAMLErrorAtTheBreakingEntry: an entry indented under the one before
// it breaks the document; the error is reported at its line, not where
// the parser gives up inside the previous entry.
func TestYAMLErrorAtTheBreakingEntry(t *testing.T) {
	a, b := ent("config-a", l1), ent("config-b", link+"42")
	c := strings.TrimSuffix(strings.ReplaceAll("  "+ent("config-c", link+"42"), "\n", "\n  "), "  ")
	for _, p := range []Profile{ProfileFull, ProfileStrict} {
		rep := verify(t, p, a, a+"\n"+b+c, 42)
		if len(rep.Findings) == 0 || rep.Findings[0].Rule != RuleYAML || rep.Findings[0].Line != 12 ||
			!strings.Contains(rep.Findings[0].Message, "indented by 2 spaces") {
			t.Errorf("%s: %v", p, rep.Findings)
		}
	}
}

// TestBaseEmptyLinesAreHistory: an entry appended right after a base that
// ends with two empty lines added none of them (the incumbent accepts it,
// and removing one would edit history); empty lines the change adds
// itself are still its own.
func TestBaseEmptyLinesAreHistory(t *testing.T) {
	e1 := ent("config-a", link+"1")
	e2 := ent("config-a", link+"2")
	for _, p := range []Profile{ProfileGate, ProfileFull} {
		if r := verify(t, p, e1+"\n\n", e1+"\n\n"+e2, 2); !r.OK() {
			t.Errorf("%v: appended after the base's empty lines: %+v", p, r.Findings)
		}
	}
	if r := verify(t, ProfileFull, e1+"\n", e1+"\n\n"+e2, 2); !hasRule(r, RuleSeparator) {
		t.Errorf("full: two empty lines the change added: %+v", r.Findings)
	}
	if r := verify(t, ProfileFull, e1+"\n\n", e1+"\n\n\n"+e2, 2); !hasRule(r, RuleSeparator) {
		t.Errorf("full: an empty line added after the base's: %+v", r.Findings)
	}
}

// TestSeparatorSaidOnce: two empty lines between two appended entries are
// one finding, at the second entry.
func TestSeparatorSaidOnce(t *testing.T) {
	e1 := ent("config-a", link+"1")
	r := verify(t, ProfileFull, e1, e1+"\n"+ent("config-b", link+"2")+"\n\n"+ent("config-c", link+"2"), 2)
	n := 0
	for _, f := range r.Findings {
		if f.Rule == RuleSeparator {
			n++
			if f.Entry != 3 {
				t.Errorf("the separator said at entry %d, want 3: %+v", f.Entry, f)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d separator findings, want 1: %+v", n, r.Findings)
	}
}

// TestPlaceholderDescription: a new entry's bullet that says nothing is
// an error of the full profile, each such bullet at its line; a history
// of such bullets is not judged again.
func TestPlaceholderDescription(t *testing.T) {
	a := ent("config-a", l1)
	with := func(bullets ...string) string {
		return "- config-keys:\n  - config-b\n  description:\n" + "  - " + strings.Join(bullets, "\n  - ") + "\n  pr-link: " + link + "42\n"
	}
	for _, tc := range []struct {
		bullets []string
		bad     int
	}{
		{[]string{"TBD"}, 1},
		{[]string{`""`}, 1},
		{[]string{"WIP."}, 1},
		{[]string{"test"}, 1},
		{[]string{"update"}, 1},
		{[]string{"config-b"}, 1},
		{[]string{"Update config-b"}, 1},
		{[]string{"Raise conc to 64", "XXX"}, 1},
		{[]string{"Raise conc to 64"}, 0},
		{[]string{"Update config-b image to v0.5.6"}, 0},
		{[]string{"Fix the router's port"}, 0},
	} {
		rep := verify(t, ProfileFull, a, a+"\n"+with(tc.bullets...), 42)
		var got []Finding
		for _, f := range rep.Findings {
			if f.Rule == RulePlaceholderDesc {
				got = append(got, f)
			}
		}
		if len(got) != tc.bad {
			t.Errorf("%q: %d placeholder findings, want %d: %v", tc.bullets, len(got), tc.bad, rep.Findings)
			continue
		}
		if tc.bad > 0 && (got[0].Severity != Error || got[0].Entry != 2 || got[0].Line != 10+len(tc.bullets)-1) {
			t.Errorf("%q: %+v", tc.bullets, got[0])
		}
	}
	// the gate profile (the incumbent's rules) does not have the rule
	if rep := verify(t, ProfileGate, a, a+"\n"+with("TBD"), 42); hasRule(rep, RulePlaceholderDesc) {
		t.Errorf("gate: %v", rep.Findings)
	}
	// an old entry that says nothing is history, not this change's
	if rep := verify(t, ProfileFull, with("TBD"), with("TBD")+"\n"+ent("config-c", link+"43"), 43); hasRule(rep, RulePlaceholderDesc) {
		t.Errorf("history: %v", rep.Findings)
	}
}

// TestHistoryIsNotNew: entries a change did not write are not judged as
// its own. A base that does not load even leniently (one mis-indented
// entry, #1798's parent) is read entry by entry, so only the entry the
// change adds is new (the entry it re-indents is history); a cleanup that moves history (#1161) moves entries
// that are not this PR's, whose links name their own PRs.
func TestHistoryIsNotNew(t *testing.T) {
	a, b, c := ent("config-a", l1), ent("config-b", link+"2"), ent("config-c", link+"42")
	broken := strings.TrimSuffix(strings.ReplaceAll("  "+b, "\n", "\n  "), "  ")
	base := a + broken
	if _, err := Parse("perf-changelog.yaml", []byte(base)); err == nil {
		t.Fatal("the base must not load")
	}
	rep := verify(t, ProfileFull, base, a+"\n"+b+"\n"+c, 42)
	var mismatched []int
	for _, f := range rep.Findings {
		if f.Rule == RulePRMismatch {
			mismatched = append(mismatched, f.Entry)
		}
	}
	if len(rep.Added) != 1 || rep.Added[0].Index != 3 || len(mismatched) != 0 {
		t.Errorf("a base that does not load: added %d entries, pr-link/mismatch on %v (want entry 3 added, the re-indented entry 2 history)", len(rep.Added), mismatched)
	}
	// only its first line indented (#1767 in #1798's parent)
	base = a + "  " + b
	if _, err := Parse("perf-changelog.yaml", []byte(base)); err == nil {
		t.Fatal("the base must not load")
	}
	rep = verify(t, ProfileFull, base, a+"\n"+b+"\n"+c, 42)
	if len(rep.Added) != 1 || rep.Added[0].Index != 3 {
		t.Errorf("a base whose entry's first line is indented: added %d entries, want entry 3", len(rep.Added))
	}
	// moved history: not this PR's
	rep = verify(t, ProfileFull, a+"\n"+b, b+"\n"+a+"\n"+c, 42)
	for _, f := range rep.Findings {
		if f.Rule == RulePRMismatch {
			t.Errorf("a moved entry judged as this PR's: %s", f.Message)
		}
	}
	if !hasRule(rep, RuleDeletedEntry) {
		t.Errorf("moving history is still an edit of it: %v", rep.Findings)
	}
	// a re-run's copy of an older entry is this PR's
	rep = verify(t, ProfileFull, a+"\n"+b, a+"\n"+b+"\n"+b, 42)
	found := false
	for _, f := range rep.Findings {
		found = found || f.Rule == RulePRMismatch && f.Entry == 3
	}
	if !found {
		t.Errorf("a copy of entry 2 appended: its link is not judged: %v", rep.Findings)
	}
}

// TestOwnEntries: the change that creates the changelog answers for the
// entries of its own PR, not for those it backfills with other PRs' links
// (a pr-link, or 2025's "PR: <link>" in a description text).
func TestOwnEntries(t *testing.T) {
	head := "- config-keys:\n    - a\n  description: |\n    - Add X=1\n    PR: https://github.com/InferenceMAX/InferenceMAX/pull/110\n" +
		ent("config-b", link+"266") + ent("config-c", link+"267")
	f, err := Parse("perf-changelog.yaml", []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	own := ownEntries(&Input{PR: 267}, f.Entries)
	if len(own) != 1 || own[0].Index != 3 {
		t.Errorf("a new changelog: own entries %v, want entry 3", own)
	}
	if got := ownEntries(&Input{PR: 267, Base: []byte{}}, f.Entries); len(got) != 3 {
		t.Errorf("a changelog that exists at base: every added entry is the change's, got %d", len(got))
	}
}
