package main

import (
	"regexp"
	"slices"
	"testing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/recipe/lint"
)

// TestLintHelpNamesEveryRule: lint's help lists every rule lint reports
// (the image rule is verify's alone), each with verify's severity.
func TestLintHelpNamesEveryRule(t *testing.T) {
	help := lintRulesHelp()
	for id := range lint.Severities {
		if id == lint.RuleNonUpstreamImage {
			continue // verify checks a recipe's image; lint reads scripts
		}
		if !slices.Contains(lintRules, id) {
			t.Errorf("lint reports %s; its help does not list it", id)
			continue
		}
		i := slices.IndexFunc(changelog.Rules, func(r changelog.RuleInfo) bool { return r.ID == id })
		if i < 0 {
			t.Errorf("%s is not in verify's rule table", id)
			continue
		}
		re := regexp.MustCompile(`(?s)  ` + regexp.QuoteMeta(id) + ` .*?\(` + string(changelog.Rules[i].Severity) + `\)\n`)
		if !re.MatchString(help) {
			t.Errorf("the help does not give %s its severity %s:\n%s", id, changelog.Rules[i].Severity, help)
		}
	}
	for _, l := range regexp.MustCompile(`[^\n]*\n`).FindAllString(help, -1) {
		if len(l) > 81 {
			t.Errorf("a help line wider than 80 columns: %q", l)
		}
	}
}
