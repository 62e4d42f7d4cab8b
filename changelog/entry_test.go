package changelog

import (
	"strings"
	"testing"
)

func TestWritesScenarioType(t *testing.T) {
	entry := func(scen bool) string {
		e := "- config-keys:\n    - k1\n"
		if scen {
			e += "  scenario-type:\n    - fixed-seq-len\n"
		}
		return e + "  description:\n    - \"x\"\n  pr-link: https://github.com/o/r/pull/1\n"
	}
	var none, one strings.Builder
	for i := 0; i < 20; i++ {
		none.WriteString(entry(false) + "\n")
		one.WriteString(entry(i == 3) + "\n")
	}
	if WritesScenarioType("perf-changelog.yaml", []byte(none.String())) {
		t.Error("a changelog whose entries never write scenario-type: a draft should not")
	}
	if !WritesScenarioType("perf-changelog.yaml", []byte(one.String())) {
		t.Error("a changelog that knows scenario-type (one entry of 20 writes it): a draft should write it")
	}
}
