package changelog

import (
	"fmt"
	"regexp"
	"strings"
)

// A finding is suppressed by a comment that names its rule and says why:
//
//	vllm serve "$MODEL" \ # perflog:ignore recipe/continuation-whitespace the space is the argument
//	# perflog:ignore recipe/engine-patch upstream fix not released yet (vllm#12345)
//	- config-keys: # perflog:ignore coverage/unchanged-key re-run after the driver update
//
// In a script or config the comment stands on the finding's line or the
// line above it; in the changelog, on any line of the finding's entry. A
// rule is an id or a family (coverage/*). A suppressed finding stays in
// the report (JSON, SARIF) with its reason and counts as no error; a
// suppression without a reason suppresses nothing and is itself a warning.
var suppressRE = regexp.MustCompile(`#\s*perflog:ignore(?:\s+(\S+))?(?:\s+(.*\S))?\s*$`)

// Suppress marks the findings fs that comments suppress (see suppressRE).
// lines returns a file's lines at head (nil when unknown); entrySpan
// returns the first and last line of a changelog entry (0, 0 when none).
func Suppress(fs []Finding, lines func(file string) []string, changelogPath string, entrySpan func(entry int) (int, int)) []Finding {
	var warnings []Finding
	warned := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		if f.Rule == RuleSuppressionReason {
			continue
		}
		ls := lines(f.File)
		if ls == nil {
			continue
		}
		var cands []int // 1-based lines that may hold the comment
		if f.File == changelogPath && f.Entry > 0 {
			if first, last := entrySpan(f.Entry); first > 0 {
				for n := first; n <= last; n++ {
					cands = append(cands, n)
				}
			}
		} else if f.Line > 0 {
			cands = []int{f.Line, f.Line - 1}
		}
		for _, n := range cands {
			if n < 1 || n > len(ls) {
				continue
			}
			m := suppressRE.FindStringSubmatch(ls[n-1])
			if m == nil || !ruleMatches(m[1], f.Rule) {
				continue
			}
			if m[2] == "" {
				key := fmt.Sprintf("%s:%d", f.File, n)
				if !warned[key] {
					warned[key] = true
					warnings = append(warnings, Finding{Rule: RuleSuppressionReason, Severity: Warning, File: f.File, Line: n, Entry: f.Entry,
						Message: fmt.Sprintf("perflog:ignore %s without a reason suppresses nothing; say why after the rule id", m[1])})
				}
				break
			}
			f.Suppressed = m[2]
			break
		}
	}
	return append(fs, warnings...)
}

func ruleMatches(pattern, rule string) bool {
	if fam, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(rule, fam+"/")
	}
	return pattern == rule
}
