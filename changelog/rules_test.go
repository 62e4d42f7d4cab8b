package changelog

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe/lint"
)

// TestRulesListIsComplete: every Rule* constant of finding.go is documented
// in Rules (what `perflog changelog rules` prints), exactly once.
func TestRulesListIsComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "finding.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int{}
	for _, r := range Rules {
		listed[r.ID]++
		if len(r.Profiles) == 0 || r.Summary == "" || !strings.Contains(r.ID, "/") {
			t.Errorf("rule %q is not fully documented", r.ID)
		}
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || !strings.HasPrefix(vs.Names[0].Name, "Rule") {
			return true
		}
		id, _ := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
		n++
		if listed[id] != 1 {
			t.Errorf("%s (%q) is listed %d times in Rules", vs.Names[0].Name, id, listed[id])
		}
		return true
	})
	if n != len(Rules) {
		t.Errorf("%d rule constants, %d documented", n, len(Rules))
	}
}

// TestRecipeRuleIDs: the recipe lint's ids are the ones documented here,
// with the severity `perflog lint` reports them at (one rule, one
// severity, whichever command reports it).
func TestRecipeRuleIDs(t *testing.T) {
	if len(lint.Severities) != 7 {
		t.Errorf("%d lint severities, 7 rules", len(lint.Severities))
	}
	for id, sev := range lint.Severities {
		i := slices.IndexFunc(Rules, func(r RuleInfo) bool { return r.ID == id })
		if i < 0 || string(Rules[i].Severity) != sev {
			t.Errorf("%s: lint reports it as %s, verify documents %+v", id, sev, Rules[max(i, 0)])
		}
	}
	for _, p := range [][2]string{
		{lint.RuleArrayClobber, RuleArrayClobber}, {lint.RuleContinuation, RuleContinuation},
		{lint.RuleKVBackend, RuleKVBackend}, {lint.RuleRouter, RuleRouter},
		{lint.RuleEnginePatch, RuleEnginePatch}, {lint.RuleNonUpstreamImage, RuleNonUpstream},
		{lint.RuleParse, RuleScriptParse},
	} {
		if p[0] != p[1] {
			t.Errorf("recipe rule %q is documented as %q", p[0], p[1])
		}
	}
}

func TestCheckRuleOverrides(t *testing.T) {
	ok := &config.Settings{Rules: map[string]string{"pr-link/mismatch": "warning", "coverage/*": "off", "recipe/engine-patch": "error"}}
	if err := CheckRuleOverrides(ok); err != nil {
		t.Fatal(err)
	}
	bad := &config.Settings{Rules: map[string]string{"pr-link/mismatc": "warning", "coverag/*": "off"}}
	err := CheckRuleOverrides(bad)
	if !errors.Is(err, config.ErrSettings) || !strings.Contains(err.Error(), "rules.coverag/*: no such rule; did you mean coverage/*?") ||
		!strings.Contains(err.Error(), "pr-link/mismatc") {
		t.Fatalf("%v", err)
	}
}

// TestRelaxedRules: what a change's settings turn off or lower against
// the base's, a family turned off whole said once; what they raise or
// leave is not listed.
func TestRelaxedRules(t *testing.T) {
	base := &config.Settings{Rules: map[string]string{"coverage/missing-entry": "warning"}}
	change := &config.Settings{Rules: map[string]string{
		"claim/*":                  "off",
		"launch/fails":             "warning",
		"coverage/missing-entry":   "error", // raised
		"description/omits-change": "error", // raised from warning
	}}
	got := strings.Join(RelaxedRules(base, change), ", ")
	if want := "launch/fails: error -> warning, claim/* -> off"; got != want {
		t.Errorf("relaxed %q, want %q", got, want)
	}
	if got := RelaxedRules(base, base); len(got) != 0 {
		t.Errorf("the same settings relax %v", got)
	}
	if got := RelaxedRules(nil, &config.Settings{Rules: map[string]string{"pr-link/mismatch": "info"}}); strings.Join(got, "") != "pr-link/mismatch: error -> info" {
		t.Errorf("from none: %v", got)
	}
}
