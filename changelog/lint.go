package changelog

import (
	"strings"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/revfs"
)

// LintReport is the outcome of Lint.
type LintReport struct {
	Scripts  []string // the scripts linted, sorted
	Unparsed int      // how many of them do not parse
	// Findings are sorted by file and line, with the settings'
	// severities, and a `perflog:ignore` comment's suppression applied.
	Findings []Finding
}

// Lint is `perflog lint`: the recipe-script lint of a revision's scripts
// (recipe.LintRev; paths as there), reported as verify reports it.
func Lint(r *recipe.Rev, paths []string) (*LintReport, error) {
	rep, err := recipe.LintRev(r, paths)
	if err != nil {
		return nil, err
	}
	out := &LintReport{Scripts: rep.Scripts, Unparsed: rep.Unparsed}
	for _, lf := range recipe.Configured(rep.Findings, r.Settings) {
		out.Findings = append(out.Findings, Finding{Rule: lf.Rule, Severity: Severity(lf.Severity), File: lf.File, Line: lf.Line,
			ConfigKey: lf.Key, Message: lf.Message, Source: lf.Source})
	}
	out.Findings = Suppress(out.Findings, func(file string) []string {
		if data, ok, err := revfs.ReadFile(r.Files, file); err == nil && ok {
			return strings.Split(string(data), "\n")
		}
		return nil
	}, "", func(int) (int, int) { return 0, 0 })
	return out, nil
}
