package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
)

// TestActionScript runs the composite action's step (action/run.sh) as
// the action runs it: it builds perflog from this checkout, annotates,
// writes the SARIF file and the exit-code output; a runtime error writes
// no report, and its exit code as the output too.
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
	code, log, sarif, outputs = run("--repo " + repo + " --base no-such-rev")
	if code != 2 || sarif != "" || !strings.Contains(log, "unknown revision") || outputs != "exit-code=2\n" {
		t.Fatalf("exit %d, sarif %q, outputs %q, log:\n%s", code, sarif, outputs, log)
	}
}

// fakeRelease serves a GitHub release of repository o/r at tag: its
// files, by name (nil: 404), at /o/r/releases/download/TAG/NAME.
func fakeRelease(t *testing.T, tag string, files map[string][]byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutPrefix(r.URL.Path, "/o/r/releases/download/"+tag+"/")
		if data, found := files[name]; ok && found {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// tarGz is a .tar.gz archive of one executable file.
func tarGz(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(data)
	tw.Close()
	zw.Close()
	return b.Bytes()
}

// runRelease runs the action's release step (action/release.sh) for a ref
// against base; it returns its exit status, what it said, and the binary
// it handed on ("" to build from source).
func runRelease(t *testing.T, ref, base string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "output")
	root, _ := filepath.Abs("../..")
	cmd := exec.Command("bash", filepath.Join(root, "action", "release.sh"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ACTION_REF="+ref, "ACTION_REPOSITORY=o/r", "RUNNER_TEMP="+dir,
		"GITHUB_OUTPUT="+out, "PERFLOG_RELEASE_BASE="+base)
	log, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	outputs, _ := os.ReadFile(out)
	bin, _ := strings.CutPrefix(strings.TrimSpace(string(outputs)), "bin=")
	return code, string(log), bin
}

// platform is this machine's os and arch as release archives name them.
func platform(t *testing.T) string {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("no release archive for %s", runtime.GOOS)
	}
	return runtime.GOOS + "_" + runtime.GOARCH
}

// TestActionRelease: used at a release tag, the action runs that
// release's binary for the runner once its checksum matches
// checksums.txt; a mismatch is an error and nothing runs; at a branch, or
// when the release has no archive for the runner, it builds from source.
func TestActionRelease(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	// (a stand-in that says how it was called: run.sh's use of the real
	// binary is TestActionScript's)
	exe := []byte("#!/bin/sh\necho \"release binary: $*\"\n")
	archive := "perflog_1.2.3_" + platform(t) + ".tar.gz"
	tgz := tarGz(t, "perflog", exe)
	sum := sha256.Sum256(tgz)
	good := []byte(hex.EncodeToString(sum[:]) + "  " + archive + "\n" + strings.Repeat("0", 64) + "  perflog_1.2.3_plan9_386.tar.gz\n")

	// the release's binary, verified, runs the check
	code, log, bin := runRelease(t, "v1.2.3", fakeRelease(t, "v1.2.3", map[string][]byte{archive: tgz, "checksums.txt": good}))
	if code != 0 || bin == "" {
		t.Fatalf("release tag: exit %d, bin %q:\n%s", code, bin, log)
	}
	root, _ := filepath.Abs("../..")
	cmd := exec.Command("bash", filepath.Join(root, "action", "run.sh"))
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PERFLOG_BIN="+bin, "PERFLOG_SRC=/nonexistent", "INPUT_ARGS=--base main~1",
		"INPUT_SARIF=", "INPUT_COMMENT=false", "GITHUB_OUTPUT=")
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != "release binary: changelog verify --format github --base main~1\n" {
		t.Fatalf("run.sh with the release binary: %v\n%s", err, out)
	}

	// a checksum that does not match: an error, no binary handed on
	bad := bytes.Replace(good, []byte(hex.EncodeToString(sum[:])), []byte(strings.Repeat("f", 64)), 1)
	code, log, bin = runRelease(t, "v1.2.3", fakeRelease(t, "v1.2.3", map[string][]byte{archive: tgz, "checksums.txt": bad}))
	if code != 2 || bin != "" || !strings.Contains(log, "::error title=perflog::"+archive+" of o/r v1.2.3 does not match its checksum") {
		t.Errorf("bad checksum: exit %d, bin %q:\n%s", code, bin, log)
	}
	// an archive checksums.txt does not list is not run either
	code, _, bin = runRelease(t, "v1.2.3", fakeRelease(t, "v1.2.3", map[string][]byte{archive: tgz, "checksums.txt": []byte("\n")}))
	if code != 2 || bin != "" {
		t.Errorf("unlisted archive: exit %d, bin %q", code, bin)
	}
	// no archive for this runner in the release: built from source
	code, log, bin = runRelease(t, "v1.2.3", fakeRelease(t, "v1.2.3", map[string][]byte{"checksums.txt": good}))
	if code != 0 || bin != "" || !strings.Contains(log, "building perflog from source") {
		t.Errorf("no archive: exit %d, bin %q:\n%s", code, bin, log)
	}
	// a branch or a commit: no release, built from source, nothing fetched
	for _, ref := range []string{"main", "", "0123456789abcdef0123456789abcdef01234567", "v1"} {
		code, log, bin = runRelease(t, ref, "http://127.0.0.1:9/unreachable")
		if code != 0 || bin != "" || log != "" {
			t.Errorf("ref %q: exit %d, bin %q:\n%s", ref, code, bin, log)
		}
	}
}

// TestInitWorkflowPinsTheRelease: a released perflog's init writes a
// workflow that uses the action at that release (its prebuilt binary);
// any other build uses main, with a comment on pinning a release.
func TestInitWorkflowPinsTheRelease(t *testing.T) {
	for v, want := range map[string]string{"v1.4.2": "v1.4.2", "(devel)": "main", "": "main",
		"v0.0.0-20261206163000-abcdefabcdef": "main", "v1.4.2-0.20261206163000-abcdefabcdef": "main"} {
		wf := initWorkflow(actionRef(v))
		if !strings.Contains(wf, "      - uses: perflog/perflog@"+want+"\n") || strings.Contains(wf, "pin a release tag") != (want == "main") {
			t.Errorf("version %q:\n%s", v, wf)
		}
	}
}
