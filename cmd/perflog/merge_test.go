package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a scratch repository driven by the real git binary, with
// this test binary on PATH as perflog (TestMain runs Main under that
// name), so that git itself runs the merge driver.
type gitRepo struct {
	t   *testing.T
	dir string
	bin string // holds perflog
	env []string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "perflog")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	g := &gitRepo{t: t, dir: t.TempDir(), bin: bin, env: []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
		"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com", "NO_COLOR=1"}}
	g.run("init", "-q", "-b", "main")
	return g
}

// exec runs git or perflog and returns its output; it fails the test on
// a non-zero exit unless one is expected.
func (g *gitRepo) exec(wantFail bool, name string, args ...string) string {
	g.t.Helper()
	prog := name
	if name == "perflog" { // exec.Command looks in this process's PATH
		prog = filepath.Join(g.bin, name)
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	out, err := cmd.CombinedOutput()
	if (err != nil) != wantFail {
		g.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (g *gitRepo) run(args ...string) string { return g.exec(false, "git", args...) }

func (g *gitRepo) write(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.dir, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gitRepo) read(name string) string {
	g.t.Helper()
	data, err := os.ReadFile(filepath.Join(g.dir, name))
	if err != nil {
		g.t.Fatal(err)
	}
	return string(data)
}

func entryText(key, link string) string {
	return "- config-keys:\n    - " + key + "\n  description:\n    - \"Update " + key + "\"\n  pr-link: " + link + "\n"
}

// twoBranches: main and pr each append an entry to a common changelog;
// pr is checked out.
func twoBranches(t *testing.T, prText string) *gitRepo {
	g := newGitRepo(t)
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	base := entryText("base-config", L+"1")
	g.write("perf-changelog.yaml", base)
	g.run("add", ".")
	g.run("commit", "-q", "-m", "base (#1)")
	g.run("checkout", "-q", "-b", "pr")
	g.write("perf-changelog.yaml", prText)
	g.run("commit", "-q", "-am", "pr (#42)")
	g.run("checkout", "-q", "main")
	g.write("perf-changelog.yaml", base+"\n"+entryText("main-config", L+"41"))
	g.run("commit", "-q", "-am", "main (#41)")
	g.run("checkout", "-q", "pr")
	return g
}

// TestMergeDriverWithGit: git itself, with perflog as the changelog's
// merge driver (perflog init's line and git config), merges main into a
// PR branch without a conflict: main's file byte for byte, the PR's entry
// after it. A history edit on the PR side is a conflict git reports,
// with the PR's file left as it was.
func TestMergeDriverWithGit(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	base := entryText("base-config", L+"1")
	g := twoBranches(t, base+"\n"+entryText("pr-config", "XXX"))
	g.exec(false, "perflog", "init")
	if !strings.Contains(g.read(".gitattributes"), "perf-changelog.yaml merge=perflog\n") {
		t.Fatalf(".gitattributes: %q", g.read(".gitattributes"))
	}
	g.run("config", "merge.perflog.driver", "perflog changelog merge %O %A %B %P")
	out := g.run("merge", "--no-edit", "main")
	want := base + "\n" + entryText("main-config", L+"41") + "\n" + entryText("pr-config", "XXX")
	if got := g.read("perf-changelog.yaml"); got != want {
		t.Fatalf("merged:\n%s\nwant\n%s\n(git said %s)", got, want, out)
	}
	if !strings.Contains(out, "kept theirs byte for byte (the upstream side, its new entries are on the mainline); appended 1 new entry of ours (entry 2 there)") {
		t.Errorf("the driver's note: %s", out)
	}

	g = twoBranches(t, strings.Replace(base, "Update base-config", "Rewritten", 1)+"\n"+entryText("pr-config", "XXX"))
	g.run("config", "merge.perflog.driver", "perflog changelog merge %O %A %B %P")
	g.write(".gitattributes", "perf-changelog.yaml merge=perflog\n")
	before := g.read("perf-changelog.yaml")
	out = g.exec(true, "git", "merge", "--no-edit", "main")
	if !strings.Contains(out, "deleted or rewrote entry 1 (base-config, line 1 of the common ancestor)") || !strings.Contains(out, "CONFLICT") {
		t.Errorf("git's output: %s", out)
	}
	if got := g.read("perf-changelog.yaml"); got != before {
		t.Errorf("a conflict changed the PR's file:\n%s", got)
	}
}

// TestMergeResolveWithGit: a merge that stopped on the changelog (no
// driver declared) is resolved from git's index stages, as the
// incumbent's resolve-conflict does: main byte for byte, then the PR's
// entry with its link set; outside a conflict, --resolve says so.
func TestMergeResolveWithGit(t *testing.T) {
	const L = "https://github.com/SemiAnalysisAI/InferenceX/pull/"
	base := entryText("base-config", L+"1")
	g := twoBranches(t, base+"\n"+entryText("pr-config", "XXX"))
	if out := g.exec(true, "perflog", "changelog", "merge", "--resolve"); !strings.Contains(out, "not in conflict") {
		t.Errorf("--resolve without a conflict: %s", out)
	}
	g.exec(true, "git", "merge", "--no-edit", "main")
	out := g.exec(false, "perflog", "changelog", "merge", "--resolve", "--pr", "42")
	want := base + "\n" + entryText("main-config", L+"41") + "\n" + entryText("pr-config", L+"42")
	if got := g.read("perf-changelog.yaml"); got != want {
		t.Fatalf("resolved:\n%s\nwant\n%s\n(perflog said %s)", got, want, out)
	}
	if !strings.Contains(out, "1 entry linked to #42") || !strings.Contains(out, "next: git add perf-changelog.yaml") {
		t.Errorf("perflog said: %s", out)
	}
	g.run("add", "perf-changelog.yaml")
	g.run("commit", "-q", "--no-edit")
}
