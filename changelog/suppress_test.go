package changelog

import (
	"strings"
	"testing"
)

func TestSuppress(t *testing.T) {
	files := map[string][]string{
		"a.sh":   strings.Split("x\n# perflog:ignore recipe/* family reason\ny\nz # perflog:ignore recipe/other not this rule\nw # perflog:ignore recipe/array-clobber", "\n"),
		"c.yaml": strings.Split("- config-keys: # perflog:ignore coverage/unchanged-key on purpose\n    - k\n", "\n"),
	}
	fs := []Finding{
		{Rule: "recipe/array-clobber", File: "a.sh", Line: 3, Severity: Error}, // the line above: the family
		{Rule: "recipe/array-clobber", File: "a.sh", Line: 4, Severity: Error}, // another rule named
		{Rule: "recipe/array-clobber", File: "a.sh", Line: 5, Severity: Error}, // no reason
		{Rule: "coverage/unchanged-key", File: "c.yaml", Line: 2, Entry: 1},    // on the entry
		{Rule: "coverage/missing-entry", File: "c.yaml", Line: 2, Entry: 1},    // not named
	}
	out := Suppress(fs, func(f string) []string { return files[f] }, "c.yaml", func(int) (int, int) { return 1, 2 })
	want := []string{"family reason", "", "", "on purpose", ""}
	for i, w := range want {
		if out[i].Suppressed != w {
			t.Errorf("finding %d: suppressed %q, want %q", i, out[i].Suppressed, w)
		}
	}
	if len(out) != 6 || out[5].Rule != RuleSuppressionReason || out[5].Line != 5 {
		t.Fatalf("warnings: %+v", out[len(fs):])
	}
	if !HasErrors(out) || HasErrors(out[:1]) {
		t.Error("a suppressed error must not count, the others must")
	}
}
