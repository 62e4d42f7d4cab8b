package dryrun

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/testfs"
)

// TestHostileBranchSettings: what a branch not taken would set is said
// unknown without running anything of it: a file named to match a glob
// of the settings (they were literal words, so globbed) injects no code,
// and an expansion that exits or assigns (${X:?msg}, ${X:=v}) is not
// kept. (A hostile-input review found both.)
func TestHostileBranchSettings(t *testing.T) {
	for name, snip := range map[string]string{
		"glob": `: > 'array:ARGS:"--x" "") ; echo INJECTED >&2 ; exit 42 ; Z=(""'
if [[ "$v" == "x" ]]; then ARGS+=(--x "*"); fi`,
		"exits":   `if [ "$v" = x ]; then ARGS+=(--x "${NOPE:?untaken-ran}"); fi`,
		"assigns": `if [ "$v" = x ]; then ARGS+=(--x "${SET_BY:=untaken}"); fi; [ -z "${SET_BY:-}" ] || exit 43`,
	} {
		l := runScriptT(t, scriptHead+"v=$(python3 -c 'print(1)')\nARGS=(--a)\n"+snip+
			"\nvllm serve m \"${ARGS[@]}\" > /workspace/server.log 2>&1 &\n"+scriptTail, nil)
		if l.Server() == nil || l.Exit != 0 {
			t.Errorf("%s: %s exit %d (%s): the branch not taken ran", name, l.Status, l.Exit, l.Reason)
		}
	}
}

// TestHostileEnvFile: a huge --env-file (many lines, given many times)
// costs a bounded time, and its variables are unknown.
func TestHostileEnvFile(t *testing.T) {
	files := testfs.Files{"benchmarks/benchmark_lib.sh": lib, "benchmarks/e.env": strings.Repeat("A=1\n", 1<<18),
		"benchmarks/run.sh": scriptHead + "docker run --rm " + strings.Repeat("--env-file benchmarks/e.env ", 64) +
			"img bash -c 'vllm serve m > /workspace/server.log 2>&1 &'\n" + scriptTail}
	env := map[string]string{"PATH": "/bin", "MODEL": "m", "TP": "8", "CONC": "4", "PORT": "8888"}
	start := time.Now()
	l := Run(context.Background(), files, "benchmarks/run.sh", nil, env, Options{Timeout: 2 * time.Second})
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	if srv := l.Server(); srv == nil || len(srv.HiddenEnv) == 0 {
		t.Errorf("%s (%s): a file past the bound is not read, its variables unknown", l.Status, l.Reason)
	}
}

// TestHostileForgedHiddenEnv: only the interpreter's own complaint about
// a marker of the sandbox's form notes a hidden export; a printed one with
// control characters does not.
func TestHostileForgedHiddenEnv(t *testing.T) {
	l := runScriptT(t, scriptHead+`
printf 'declare: invalid name "<unknown:x>\n::error::forged\x1b[2J"' >&2
vllm serve m > /workspace/server.log 2>&1 &
`+scriptTail, nil)
	if srv := l.Server(); srv == nil || len(srv.HiddenEnv) > 0 {
		t.Errorf("forged: %+v", srv)
	}
}

// TestHostileBranchDeadlock: the branch builtin called by the script
// itself, its output not captured, does not block the run (it wrote to
// the run's own output holding the lock that writer takes).
func TestHostileBranchDeadlock(t *testing.T) {
	done := make(chan *Launch, 1)
	go func() {
		done <- runScriptT(t, scriptHead+branchCommand+" enter here '<unknown:x>'\n"+branchCommand+" exit here 'export:FOO:'\n"+
			"vllm serve m > /workspace/server.log 2>&1 &\n"+scriptTail, nil)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the run is blocked")
	}
}
