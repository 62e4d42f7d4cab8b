package changelog

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe"
)

const link = "https://github.com/SemiAnalysisAI/InferenceX/pull/"

func entryText(key, desc, lnk, extra string) string {
	return "- config-keys:\n    - " + key + "\n  description:\n    - " + desc + "\n  pr-link: " + lnk + "\n" + extra
}

func E() string          { return entryText("dsr1-fp8-mi355x-sglang", `"Update image"`, link+"42", "") }
func Ek(k string) string { return entryText(k, `"Update image"`, link+"42", "") }
func El(l string) string { return entryText("dsr1-fp8-mi355x-sglang", `"Update image"`, l, "") }
func Ed(d string) string { return entryText("dsr1-fp8-mi355x-sglang", d, link+"42", "") }
func Ex(extra string) string {
	return entryText("dsr1-fp8-mi355x-sglang", `"Update image"`, link+"42", extra)
}
func lastEntry(t string) int         { return strings.LastIndex(t, "\n- config-keys:") + 1 }
func replace1(t, a, b string) string { return strings.Replace(t, a, b, 1) }

// mutations are the edits of the incumbent differential run (the Python
// harness applied the same edits); testdata/parity/mutations.tsv holds the
// incumbent's verdicts for each.
var mutations = map[string]func(string) string{
	"append":                func(t string) string { return t + "\n" + E() },
	"append-no-blank":       func(t string) string { return t + E() },
	"append-two-blank":      func(t string) string { return t + "\n\n" + E() },
	"append-space-sep":      func(t string) string { return t + "  \n" + E() },
	"append-trailing-blank": func(t string) string { return t + "\n" + E() + "\n" },
	"append-xxx":            func(t string) string { return t + "\n" + El("XXX") },
	"append-xxx-url":        func(t string) string { return t + "\n" + El(link+"XXX") },
	"append-other-pr":       func(t string) string { return t + "\n" + El(link+"41") },
	"append-noncanonical":   func(t string) string { return t + "\n" + El(link+"42/files") },
	"append-two":            func(t string) string { return t + "\n" + E() + "\n" + Ek("dsr1-fp4-mi355x-sglang") },
	"append-two-noblank":    func(t string) string { return t + "\n" + E() + Ek("dsr1-fp4-mi355x-sglang") },
	"insert-mid":            func(t string) string { i := lastEntry(t); return t[:i] + E() + "\n" + t[i:] },
	"unknown-key":           func(t string) string { return t + "\n" + Ek("no-such-key") },
	"wildcard-nomatch":      func(t string) string { return t + "\n" + Ek(`"zzz-*"`) },
	"wildcard-match":        func(t string) string { return t + "\n" + Ek(`"dsr1-fp8-*-sglang"`) },
	"question-key":          func(t string) string { return t + "\n" + Ek("dsr1-fp8-mi355x-sglan?") },
	"missing-desc": func(t string) string {
		return t + "\n- config-keys:\n    - dsr1-fp8-mi355x-sglang\n  pr-link: " + link + "42\n"
	},
	"extra-field":            func(t string) string { return t + "\n" + Ex("  foo: bar\n") },
	"dup-desc":               func(t string) string { return t + "\n" + Ex("  description:\n    - again\n") },
	"tab-in-quoted":          func(t string) string { return t + "\n" + Ed("\"a\tb\"") },
	"tab-after-colon":        func(t string) string { return t + "\n" + replace1(E(), "pr-link: ", "pr-link:\t") },
	"fix-history-link":       func(t string) string { return replace1(t, "pull/XXX\n", "pull/2533\n") },
	"strip-trailing-space":   func(t string) string { return stripFirstTrailing(t) },
	"del-ws-line-and-append": func(t string) string { return delFirstWSLine(t) + "\n" + E() },
	"delete-entry":           func(t string) string { return strings.TrimRight(t[:lastEntry(t)], "\n") + "\n" },
	"no-final-newline":       func(t string) string { return t + "\n" + strings.TrimRight(E(), "\n") },
	"append-only-evals":      func(t string) string { return t + "\n" + Ex("  append-only: true\n  evals-only: true\n") },
	"no-change-ws":           func(t string) string { return t + "\n" },
	"append-only-alone":      func(t string) string { return t + "\n" + Ex("  append-only: true\n") },
	"append-only-mix": func(t string) string {
		return t + "\n" + Ex("  append-only: true\n") + "\n" + Ek("dsr1-fp4-mi355x-sglang")
	},
	"prlink-yes": func(t string) string { return t + "\n" + El("yes") },
	"prlink-int": func(t string) string { return t + "\n" + El("123") },
	"desc-string": func(t string) string {
		return t + "\n- config-keys:\n    - dsr1-fp8-mi355x-sglang\n  description: just a string\n  pr-link: " + link + "42\n"
	},
	"scenario-bad":   func(t string) string { return t + "\n" + Ex("  scenario-type:\n    - agentic\n") },
	"scenario-ok":    func(t string) string { return t + "\n" + Ex("  scenario-type:\n    - fixed-seq-len\n") },
	"ep-zero":        func(t string) string { return t + "\n" + Ex("  eval-min-prefill-ep: 0\n") },
	"evals-only-yes": func(t string) string { return t + "\n" + Ex("  evals-only: yes\n") },
	"evals-only-2":   func(t string) string { return t + "\n" + Ex("  evals-only: 2\n") },
	"nested-malformed": func(t string) string {
		return t + "\n" + E() + "  " + replace1(Ek("dsr1-fp4-mi355x-sglang"), "\n", "\n  ")
	},
	"merge-key": func(t string) string {
		return t + "\n- config-keys:\n    - dsr1-fp8-mi355x-sglang\n  <<: {description: [x]}\n  pr-link: " + link + "42\n"
	},
	"doc-marker":  func(t string) string { return t + "\n---\n" + E() },
	"crlf-append": func(t string) string { return t + strings.ReplaceAll("\n"+E(), "\n", "\r\n") },
	"on-key":      func(t string) string { return t + "\n" + Ex("  on: x\n") },
	"empty-keys": func(t string) string {
		return t + "\n- config-keys: []\n  description:\n    - x\n  pr-link: " + link + "42\n"
	},
	"config-keys-string": func(t string) string {
		return t + "\n- config-keys: dsr1-fp8-mi355x-sglang\n  description:\n    - x\n  pr-link: " + link + "42\n"
	},
	"reformat-history":    func(t string) string { return replace1(t, "\n  description:\n", "\n  description:  \n") },
	"modify-history-desc": func(t string) string { return replace1(t, "\n    - ", "\n    - CHANGED ") },
	"fix-link-and-append": func(t string) string { return replace1(t, "pull/XXX\n", "pull/2533\n") + "\n" + E() },
	"only-comment":        func(t string) string { return t + "\n# a comment\n" },
	"yaml-scalar-added":   func(t string) string { return t + "\nfoo\n" },
	"all-evals-true":      func(t string) string { return t + "\n" + Ex("  all-evals: true\n") },
	"null-link":           func(t string) string { return t + "\n" + El("~") },
	"empty-link":          func(t string) string { return t + "\n" + El(`""`) },
	"nbsp-delete":         func(t string) string { return replace1(t, "\n\n", "\n\u00a0\n") },
	"flow-entry": func(t string) string {
		return t + "\n- {config-keys: [dsr1-fp8-mi355x-sglang], description: [x], pr-link: \"" + link + "42\"}\n"
	},
	"indented-list": func(t string) string { return t + "\n" + replace1(E(), "- config-keys", "-   config-keys") },
	"binary-nul":    func(t string) string { return t + "\n" + Ed("\"a\x00b\"") },
	// the model's Python field names (pydantic populate_by_name), alone
	// and beside their aliases
	"py-config-keys": func(t string) string { return t + "\n" + replace1(E(), "- config-keys:", "- config_keys:") },
	"py-pr-link":     func(t string) string { return t + "\n" + replace1(E(), "  pr-link:", "  pr_link:") },
	"py-evals-only":  func(t string) string { return t + "\n" + Ex("  evals_only: true\n") },
	"py-all-evals":   func(t string) string { return t + "\n" + Ex("  all_evals: true\n") },
	"py-append-only": func(t string) string { return t + "\n" + Ex("  append_only: true\n") },
	"py-eval-min-ep": func(t string) string { return t + "\n" + Ex("  eval_min_prefill_ep: 2\n") },
	"py-scenario":    func(t string) string { return t + "\n" + Ex("  scenario_type:\n    - fixed-seq-len\n") },
	"py-scenario-bad": func(t string) string {
		return t + "\n" + Ex("  scenario_type:\n    - agentic\n")
	},
	"py-both-evals": func(t string) string { return t + "\n" + Ex("  evals-only: true\n  evals_only: false\n") },
	"py-both-keys": func(t string) string {
		return t + "\n" + Ex("  config_keys:\n    - dsr1-fp4-mi355x-sglang\n")
	},
	"py-ep-zero": func(t string) string { return t + "\n" + Ex("  eval_min_prefill_ep: 0\n") },
}

var trailingSpace = regexp.MustCompile(`(?m)^(\S.*?|\s+\S.*?) +$`)

func stripFirstTrailing(t string) string {
	loc := trailingSpace.FindStringSubmatchIndex(t)
	if loc == nil {
		return t
	}
	return t[:loc[0]] + t[loc[2]:loc[3]] + t[loc[1]:]
}

var wsLine = regexp.MustCompile(`(?m)^ +\n`)

func delFirstWSLine(t string) string {
	loc := wsLine.FindStringIndex(t)
	if loc == nil {
		return t
	}
	return t[:loc[0]] + t[loc[1]:]
}

// TestMutationsMatchIncumbent replays the mutation differential: every
// edit gets the incumbent's gate verdict and its strict verdicts on a PR
// run (PR 42) and on main. A plain run checks every third edit
// (PERFLOG_LONG_TESTS=1, as CI runs it: all).
func TestMutationsMatchIncumbent(t *testing.T) {
	t.Parallel()
	r := openCorpus(t)
	head, err := r.Resolve("main")
	if err != nil {
		t.Fatal(err)
	}
	base, err := r.ReadFile(head, "perf-changelog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := recipe.MasterFiles(r.Tree(head), &config.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	master, err := config.LoadMaster(files)
	if err != nil {
		t.Fatal(err)
	}
	rows := readMutations(t)
	if len(rows) != len(mutations) {
		t.Fatalf("%d recorded mutations, %d in the test", len(rows), len(mutations))
	}
	agree, n := 0, 0
	for i, row := range rows {
		if !testcorpus.Long() && i%3 != 0 {
			continue // a plain run checks every third mutation; the long run all
		}
		n++
		fn, ok := mutations[row[0]]
		if !ok {
			t.Fatalf("no mutation %q", row[0])
		}
		headRaw := []byte(fn(string(base)))
		in := func(pr int) *Input {
			return &Input{Path: "perf-changelog.yaml", Base: base, Head: headRaw, BaseRev: "HEAD~1", HeadRev: "HEAD",
				PR: pr, Master: master, BaseMaster: func() (*config.Master, error) { return master, nil }}
		}
		want := func(i int) bool { n, _ := strconv.Atoi(row[i]); return n == 0 }
		checks := []struct {
			name string
			rep  *Report
			ok   bool
		}{
			{"gate", Verify(in(0), ProfileGate), want(1)},
			{"strict --pr 42", Verify(in(42), ProfileStrict), want(2)},
			{"strict (main)", Verify(in(0), ProfileStrict), want(3)},
		}
		for _, c := range checks {
			if c.rep.OK() != c.ok {
				t.Errorf("%s, %s: perflog ok=%v, incumbent ok=%v (%s); findings %v", row[0], c.name, c.rep.OK(), c.ok, row[4], c.rep.Findings)
				continue
			}
			agree++
		}
	}
	t.Logf("%d/%d mutation verdicts agree", agree, 3*n)
}

func readMutations(t *testing.T) [][]string {
	var out [][]string
	for _, r := range readLines(t, "../testdata/parity/mutations.tsv") {
		f := strings.Split(r, "\t")
		for len(f) < 5 {
			f = append(f, "")
		}
		out = append(out, f)
	}
	return out
}
