package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
)

// TestActionScript runs the composite action's step (action/run.sh) as
// the action runs it: it builds perflog from this checkout, annotates,
// writes the SARIF file and the exit-code output; a runtime error writes
// no report.
func TestActionScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	root, _ := filepath.Abs("../..")
	repo := filepath.Join(root, "testdata", "corpus", "inferencex.git")
	runnerTemp := t.TempDir() // one job's: perflog is built once
	if !testcorpus.Long() {
		// a plain run stands this test binary in for the build (as
		// testscript does, it runs Main when called perflog); the long
		// run, as CI does, lets the action build perflog with go build
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(runnerTemp, "perflog-bin"), 0o755)
		if err := os.Symlink(self, filepath.Join(runnerTemp, "perflog-bin", "perflog")); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args string) (int, string, string, string) {
		dir := t.TempDir()
		out := filepath.Join(dir, "output")
		cmd := exec.Command("bash", filepath.Join(root, "action", "run.sh"))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PERFLOG_SRC="+root, "RUNNER_TEMP="+runnerTemp, "INPUT_ARGS="+args,
			"INPUT_SARIF="+filepath.Join(dir, "perflog.sarif"), "INPUT_COMMENT=false", "GITHUB_OUTPUT="+out,
			"GITHUB_REF=", "GITHUB_EVENT_PATH=", "GITHUB_BASE_REF=", "GITHUB_TOKEN=", "GH_TOKEN=")
		var stdout strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stdout
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		sarif, _ := os.ReadFile(filepath.Join(dir, "perflog.sarif"))
		outputs, _ := os.ReadFile(out)
		return code, stdout.String(), string(sarif), string(outputs)
	}
	code, log, sarif, outputs := run("--repo " + repo + " --base main~1 --head main")
	if code != 0 || !strings.Contains(sarif, `"version": "2.1.0"`) || outputs != "exit-code=0\n" {
		t.Fatalf("exit %d, outputs %q, sarif %d bytes, log:\n%s", code, outputs, len(sarif), log)
	}
	// error findings: annotations, the report, exit 1
	code, log, sarif, outputs = run("--repo " + repo + " --base a969ccc715~1 --head a969ccc715")
	if code != 1 || !strings.Contains(log, "::error file=perf-changelog.yaml") || !strings.Contains(sarif, `"ruleId": "claim/contradicted"`) || outputs != "exit-code=1\n" {
		t.Fatalf("exit %d, outputs %q, log:\n%s", code, outputs, log)
	}
	// a runtime error: exit 2 and no report to upload
	code, log, sarif, _ = run("--repo " + repo + " --base no-such-rev")
	if code != 2 || sarif != "" || !strings.Contains(log, "unknown revision") {
		t.Fatalf("exit %d, sarif %q, log:\n%s", code, sarif, log)
	}
}
