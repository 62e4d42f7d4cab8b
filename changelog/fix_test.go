package changelog

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestFix: each repair fix makes, alone, and what it refuses.
func TestFix(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	a, b := mergeBlock("a", L+"1"), mergeBlock("b", L+"2")
	base := a + "\n" + b
	mine := mergeBlock("mine", "XXX")
	for _, c := range []struct {
		name, head string
		pr         int
		want       string
		repairs    []string // substrings, in order
		not        string   // a repair it must not say
		note       string   // a note it must say
		refused    string
	}{
		{name: "nothing to repair", head: base + "\n" + mine, want: base + "\n" + mine,
			note: "the new entry for mine keeps its pr-link XXX: this change's PR is not known (pass --pr N)"},
		{name: "a separator of spaces", head: base + "  \n" + mine,
			want: base + "\n" + mine, repairs: []string{"one empty line before each new entry"}, not: "restored the history's bytes"},
		{name: "inserted above existing entries", head: a + "\n" + mine + "\n" + b,
			want: base + "\n" + mine, repairs: []string{"moved 1 new entry of this change to the end, after the 2 entries of the base"}},
		{name: "a stray whitespace line in history", head: a + "  \n" + b + "\n" + mine,
			want: base + "\n" + mine, repairs: []string{"restored the history's bytes from the base (the first difference is at line 6)"}},
		{name: "no separator, no final newline", head: base + strings.TrimSuffix(mine, "\n"),
			want: base + "\n" + mine, repairs: []string{"one empty line before each new entry"}},
		{name: "two empty lines", head: base + "\n\n" + mine + "\n",
			want: base + "\n" + mine, repairs: []string{"one empty line before each new entry"}},
		{name: "the placeholder, the PR known", head: base + "\n" + mine, pr: 42,
			want: base + "\n" + mergeBlock("mine", L+"42"), repairs: []string{"set the pr-link of the new entry for mine to " + L + "42 (was XXX)"}},
		{name: "a whitespace line and two trailing empty lines", head: a + "  \n" + b + "\n" + mine + "\n\n",
			want: base + "\n" + mine, repairs: []string{"restored the history's bytes", "one empty line before each new entry, and one newline at the end"}},
		{name: "a pr-link correction is kept", head: mergeBlock("a", L+"10") + "\n" + b + "  \n",
			want: mergeBlock("a", L+"10") + "\n" + b, repairs: []string{"restored the history's bytes"}},
		{name: "a reformatted entry", head: strings.Replace(a, "  description:\n    - \"Update a\"", "  description: [\"Update a\"]", 1) + "\n" + b + "\n" + mine,
			want: base + "\n" + mine, repairs: []string{"restored the history's bytes"}},
		{name: "an entry's content changed", head: strings.Replace(a, "Update a", "Update A", 1) + "\n" + b + "\n" + mine,
			refused: "entry 1 of the base (a) is gone from the file or its content changed"},
		{name: "an entry deleted", head: a + "\n" + mine, refused: "entry 2 of the base (b) is gone from the file or its content changed; fix restores bytes, not content: restore it by hand (git show main:perf-changelog.yaml)"},
		{name: "YAML that does not parse", head: base + "\n- config-keys: [\n", refused: "does not parse"},
	} {
		res, err := Fix([]byte(base), []byte(c.head), FixOptions{Repository: "SemiAnalysisAI/InferenceX", PR: c.pr, BaseRev: "main"})
		if c.refused != "" {
			var r *FixRefusal
			if !errors.As(err, &r) || !strings.Contains(err.Error(), c.refused) {
				t.Errorf("%s: want refused (%s), got %v", c.name, c.refused, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(res.Bytes) != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, res.Bytes, c.want)
		}
		got := strings.Join(res.Repairs, "\n")
		for _, r := range c.repairs {
			if !strings.Contains(got, r) {
				t.Errorf("%s: repairs %q, want %q", c.name, res.Repairs, r)
			}
		}
		if c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s: repairs %q, none of them %q", c.name, res.Repairs, c.not)
		}
		if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, c.note) || (c.note == "" && notes != "" && c.pr > 0) {
			t.Errorf("%s: notes %q, want %q", c.name, res.Notes, c.note)
		}
		if c.want == c.head && len(res.Repairs) > 0 {
			t.Errorf("%s: nothing to repair, yet %q", c.name, res.Repairs)
		}
		if c.want != c.head && len(res.Repairs) == 0 {
			t.Errorf("%s: repaired without saying so", c.name)
		}
		again, err := Fix([]byte(base), res.Bytes, FixOptions{Repository: "SemiAnalysisAI/InferenceX", PR: c.pr})
		if err != nil || len(again.Repairs) > 0 {
			t.Errorf("%s: fixing the fixed file: %v %q", c.name, err, again.Repairs)
		}
	}
}

// TestVerifySaysWhenFixWouldRefuse: verify reports findings fix repairs
// and, where fix would refuse the file, why (its hint must not send a
// contributor to a refusal).
func TestVerifySaysWhenFixWouldRefuse(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	a, b := mergeBlock("a", L+"1"), mergeBlock("b", L+"2")
	base := a + "\n" + b
	mine := mergeBlock("mine", L+"42")
	for _, c := range []struct {
		name, head, refused string
	}{
		{"inserted above an entry: fix repairs it", a + "\n" + mine + "\n" + b, ""},
		{"inserted above an entry whose text changed", strings.Replace(a, "Update a", "Update A", 1) + "\n" + mine + "\n" + b,
			"entry 1 of the base (a) is gone from the file or its content changed"},
	} {
		rep := Verify(&Input{Base: []byte(base), Head: []byte(c.head), PR: 42, BaseRev: "main"}, ProfileFull)
		if !slices.ContainsFunc(rep.Findings, func(f Finding) bool { return f.Rule == RuleNotAtEnd }) {
			t.Fatalf("%s: no %s among %v", c.name, RuleNotAtEnd, rep.Findings)
		}
		if (c.refused == "") != (rep.FixRefused == "") || !strings.Contains(rep.FixRefused, c.refused) {
			t.Errorf("%s: FixRefused %q, want %q", c.name, rep.FixRefused, c.refused)
		}
	}
}
