package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/perflog/perflog/internal/iostreams"
	"github.com/perflog/perflog/recipe/dryrun"
)

var update = flag.Bool("update", false, "update testscript golden sections (cmp) in testdata/script")

func TestMain(m *testing.M) {
	dryrun.ServeIfWorker() // this binary standing in for perflog's dry-run workers
	// this binary standing in for perflog (TestActionScript builds none)
	if filepath.Base(os.Args[0]) == "perflog" {
		os.Exit(Main())
	}
	code := m.Run()
	if testSandbox != nil {
		testSandbox.Close()
	}
	os.Exit(code)
}

// testSandbox runs the dry runs of the scripts' and the other tests'
// commands: confined workers of this binary, as perflog's, but one set
// for the package rather than one a command (the hostile payloads have
// their own).
var (
	testSandbox     *dryrun.Sandbox
	testSandboxOnce sync.Once
)

func sharedSandbox() *dryrun.Sandbox {
	testSandboxOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			panic(err)
		}
		testSandbox = dryrun.Confined(false, exe, dryrun.WorkerArg)
	})
	return testSandbox
}

// TestScripts runs the end-to-end scripts in testdata/script: each builds
// a real git history with the commands below (implemented with go-git, so
// no git binary is needed) and runs perflog against it.
//
// Script commands:
//
//	perflog ARGS...              run perflog (in this process: see cmdPerflog)
//	git-init                     init a repository in $WORK with branch main
//	git-commit MSG               stage everything and commit (dates advance one hour per commit)
//	git-branch NAME [REV]        create a branch at REV (default HEAD)
//	git-checkout REV             switch the work tree to a branch (or detach at a rev)
//	git-remote-branch NAME REV   create refs/remotes/NAME at REV (e.g. origin/main)
//
// Commits are deterministic (fixed author and dates), so goldens may hold
// commit ids; a script keeps its goldens under want/ with a .gitignore
// listing want/, so that `-update` rewriting them does not change the
// commits they describe.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			// keep CI variables of the machine running the tests out
			for _, k := range []string{"GITHUB_REF", "GITHUB_EVENT_PATH", "GITHUB_BASE_REF", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"} {
				e.Setenv(k, "")
			}
			e.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"perflog":           cmdPerflog,
			"git-init":          cmdGitInit,
			"git-commit":        cmdGitCommit,
			"git-branch":        cmdGitBranch,
			"git-checkout":      cmdGitCheckout,
			"git-remote-branch": cmdGitRemoteBranch,
			"git-shallow":       cmdGitShallow,
			"git-drop-blob":     cmdGitDropBlob,
			"git-drop-commit":   cmdGitDropCommit,
		},
	})
}

// cmdPerflog runs perflog as the script's process would, in this one: the
// script's environment, working directory (relative paths resolve there:
// Factory.abs) and standard output and error; it fails the script on an
// exit status other than the one `!` asks for. A process per command was
// most of the package's test time; TestActionScript and CI's run of the
// README's command still run the binary.
func cmdPerflog(ts *testscript.TestScript, neg bool, args []string) {
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: ts.Stdout(), ErrOut: ts.Stderr()}
	io.SetColorFromEnv(ts.Getenv)
	f := newFactory(io)
	f.Getenv = ts.Getenv
	f.LookupEnv = func(k string) (string, bool) { v := ts.Getenv(k); return v, v != "" }
	f.Getwd = func() (string, error) { return ts.MkAbs("."), nil }
	f.DryRun.Sandbox = sharedSandbox()
	code := run(context.Background(), f, args)
	switch {
	case neg && code == 0:
		ts.Fatalf("perflog succeeded unexpectedly")
	case !neg && code != 0:
		ts.Fatalf("perflog: exit status %d", code)
	}
}

func scriptRepo(ts *testscript.TestScript) *git.Repository {
	r, err := git.PlainOpen(ts.MkAbs("."))
	ts.Check(err)
	return r
}

func scriptWorktree(ts *testscript.TestScript) (*git.Repository, *git.Worktree) {
	r := scriptRepo(ts)
	w, err := r.Worktree()
	ts.Check(err)
	return r, w
}

// cmdGitDropBlob removes the object of a file at HEAD, as a partial clone
// (--filter=blob:none) lacks it.
func cmdGitDropBlob(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: git-drop-blob PATH")
	}
	r := scriptRepo(ts)
	ref, err := r.Head()
	ts.Check(err)
	c, err := r.CommitObject(ref.Hash())
	ts.Check(err)
	f, err := c.File(args[0])
	ts.Check(err)
	h := f.Hash.String()
	ts.Check(os.Remove(ts.MkAbs(filepath.Join(".git", "objects", h[:2], h[2:]))))
}

// cmdGitDropCommit removes a commit's object, as a shallow clone lacks
// the commits past its boundary.
func cmdGitDropCommit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: git-drop-commit REV")
	}
	h, err := scriptRepo(ts).ResolveRevision(plumbing.Revision(args[0]))
	ts.Check(err)
	s := h.String()
	ts.Check(os.Remove(ts.MkAbs(filepath.Join(".git", "objects", s[:2], s[2:]))))
}

func cmdGitInit(ts *testscript.TestScript, neg bool, args []string) {
	_, err := git.PlainInitWithOptions(ts.MkAbs("."), &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	ts.Check(err)
}

// commitClock is the date of a script's first commit; each commit of a
// script is one hour after the previous one, so hashes are the same on
// every run (scripts run in parallel: the count lives in the script's env).
var commitClock = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func cmdGitCommit(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: git-commit MSG")
	}
	_, w := scriptWorktree(ts)
	ts.Check(w.AddWithOptions(&git.AddOptions{All: true}))
	// stage deletions too
	st, err := w.Status()
	ts.Check(err)
	for p, s := range st {
		if s.Worktree == git.Deleted {
			_, err := w.Remove(p)
			ts.Check(err)
		}
	}
	n, _ := strconv.Atoi(ts.Getenv("PERFLOG_TEST_COMMITS"))
	n++
	ts.Setenv("PERFLOG_TEST_COMMITS", strconv.Itoa(n))
	sig := &object.Signature{Name: "Dev", Email: "dev@example.com", When: commitClock.Add(time.Duration(n) * time.Hour)}
	_, err = w.Commit(args[0], &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	ts.Check(err)
}

func cmdGitBranch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: git-branch NAME [REV]")
	}
	r := scriptRepo(ts)
	rev := "HEAD"
	if len(args) == 2 {
		rev = args[1]
	}
	h, err := r.ResolveRevision(plumbing.Revision(rev))
	ts.Check(err)
	ts.Check(r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(args[0]), *h)))
}

func cmdGitRemoteBranch(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: git-remote-branch REMOTE/NAME REV")
	}
	r := scriptRepo(ts)
	h, err := r.ResolveRevision(plumbing.Revision(args[1]))
	ts.Check(err)
	remote, name, ok := strings.Cut(args[0], "/")
	if !ok {
		ts.Fatalf("want REMOTE/NAME, got %q", args[0])
	}
	if _, err := r.Remote(remote); err != nil {
		_, err := r.CreateRemote(&gitconfig.RemoteConfig{Name: remote, URLs: []string{"https://example.invalid/" + remote}})
		ts.Check(err)
	}
	ts.Check(r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewRemoteReferenceName(remote, name), *h)))
}

// cmdGitShallow records REVs as the boundary of a shallow clone
// (.git/shallow), as git fetch --depth does; without REVs, the clone is
// whole again (git fetch --unshallow). The parents stay in the repository.
func cmdGitShallow(ts *testscript.TestScript, neg bool, args []string) {
	r := scriptRepo(ts)
	var hs []plumbing.Hash
	for _, rev := range args {
		h, err := r.ResolveRevision(plumbing.Revision(rev))
		ts.Check(err)
		hs = append(hs, *h)
	}
	ts.Check(r.Storer.SetShallow(hs))
}

func cmdGitCheckout(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: git-checkout REV")
	}
	r, w := scriptWorktree(ts)
	branch := plumbing.NewBranchReferenceName(args[0])
	if _, err := r.Reference(branch, false); err == nil {
		ts.Check(w.Checkout(&git.CheckoutOptions{Branch: branch, Force: true}))
		return
	}
	h, err := r.ResolveRevision(plumbing.Revision(args[0]))
	ts.Check(err)
	ts.Check(w.Checkout(&git.CheckoutOptions{Hash: *h, Force: true}))
}

// TestScriptsAreNamed guards against an empty script directory (a test
// that cannot fail).
func TestScriptsAreNamed(t *testing.T) {
	m, _ := filepath.Glob("testdata/script/*.txtar")
	if len(m) < 10 {
		t.Fatalf("found %d scripts in testdata/script, want the end-to-end suite", len(m))
	}
}
