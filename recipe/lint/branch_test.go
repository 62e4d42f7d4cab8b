package lint

import (
	"strings"
	"testing"
)

func TestRuntimeBranchAt(t *testing.T) {
	script := `#!/usr/bin/env bash
check() { [[ "$TP" == 8 ]]; }
if python3 -c "import deep_gemm" >/dev/null 2>&1; then
    export A=0
else
    export A=1
fi
if [[ "$TP" == 8 ]]; then
    export B=1
fi
if check; then
    export C=1
fi
if [[ -f /opt/engine/patched ]]; then
    if [[ "$CONC" -gt 64 ]]; then
        export D=1
    fi
fi
if [ "$(nproc)" -gt 8 ]; then export E=1; fi
export F=1
`
	for _, c := range []struct {
		line int
		cond string // "" for no runtime branch
		at   int
	}{
		{4, `python3 -c "import deep_gemm" >/dev/null 2>&1`, 3},
		{6, `python3 -c "import deep_gemm" >/dev/null 2>&1`, 3}, // the else branch too
		{3, "", 0},                               // the condition itself is not in a branch
		{9, "", 0},                               // a test of the point's variables
		{12, "", 0},                              // a function of the script
		{16, `[[ -f /opt/engine/patched ]]`, 14}, // an inner if that depends on nothing runtime: the outer one
		{19, `[ "$(nproc)" -gt 8 ]`, 19},
		{20, "", 0},
	} {
		b, ok := Parse("s.sh", []byte(script)).RuntimeBranchAt(c.line)
		if ok != (c.cond != "") || (ok && (b.Cond != c.cond || b.Line != c.at)) {
			t.Errorf("line %d (%q): got %+v, %v; want if %q at line %d", c.line, strings.Split(script, "\n")[c.line-1], b, ok, c.cond, c.at)
		}
	}
	if _, ok := Parse("bad.sh", []byte("if then fi (((")).RuntimeBranchAt(1); ok {
		t.Error("a script that does not parse has a runtime branch")
	}
}
