package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// TestHostileMeasure measures a perflog binary on the hostile corpus, on
// a clone of the real history (bench/hostile.sh sets it up): each payload
// is applied to a recipe of the clone and committed, then `config
// launch` and `changelog verify` run as processes, with secrets in their
// environment. It prints a table (time, peak memory, what leaked, what
// was created); it asserts nothing, so that an older binary can be
// measured beside the current one.
//
//	PERFLOG_HOSTILE_BIN=/path/to/perflog PERFLOG_HOSTILE_REPO=/path/to/clone \
//	  go test ./cmd/perflog -run TestHostileMeasure -v
func TestHostileMeasure(t *testing.T) {
	bin, repo := os.Getenv("PERFLOG_HOSTILE_BIN"), os.Getenv("PERFLOG_HOSTILE_REPO")
	if bin == "" || repo == "" {
		t.Skip("PERFLOG_HOSTILE_BIN and PERFLOG_HOSTILE_REPO are not set (bench/hostile.sh sets them)")
	}
	const key, script = "dsr1-fp8-mi355x-sglang", "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"
	limit := 120 * time.Second
	r, err := git.PlainOpen(repo)
	if err != nil {
		t.Fatal(err)
	}
	main, err := r.ResolveRevision("main")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := r.Worktree()
	payloads, _ := filepath.Glob("../../testdata/hostile/*.txtar")
	fmt.Printf("| payload | command | time | peak RSS | secret in output | files created | outcome |\n|---|---|---|---|---|---|---|\n")
	for _, p := range payloads {
		name := strings.TrimSuffix(filepath.Base(p), ".txtar")
		if name == "base" {
			continue
		}
		if err := w.Reset(&git.ResetOptions{Commit: *main, Mode: git.HardReset}); err != nil {
			t.Fatal(err)
		}
		w.Clean(&git.CleanOptions{Dir: true})
		watch := t.TempDir()
		h := &hostileRepo{dir: repo, watch: watch, key: key}
		applyPayload(t, h, p, script)
		before := strings.Split(listing(watch), "\n")
		head := "main"
		if !h.worktree {
			c := commitAll(t, r, "Hostile payload (#77)", 3)
			if g := h.meta["gitlink"]; len(g) > 0 {
				c = gitlink(t, r, c, strings.ReplaceAll(g[0], "@script", script))
			}
			head = c.String()
		}
		runs := [][]string{{"config", "launch", key, "--point", "1"}}
		verify := []string{"changelog", "verify", "--pr", "77", "--base", main.String()}
		if h.worktree {
			runs = nil
			verify = append(verify, "--worktree")
		} else {
			verify = append(verify, "--head", head)
		}
		runs = append(runs, verify)
		for _, args := range runs {
			// at most 8 GiB of address space: an older binary's memory
			// bombs would otherwise take the machine (and this test) down
			cmd := exec.Command("prlimit", append([]string{"--as=8589934592", "--", bin}, args...)...)
			cmd.Dir = repo
			cmd.Env = []string{"PATH=" + watch + "/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + watch, "TMPDIR=" + watch,
				"GITHUB_TOKEN=" + hostileSecret, "AWS_SECRET_ACCESS_KEY=" + hostileSecret2, "NO_COLOR=1"}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			cmd.Start()
			timer := time.AfterFunc(limit, func() { cmd.Process.Signal(syscall.SIGTERM); time.Sleep(5 * time.Second); cmd.Process.Kill() })
			cmd.Wait()
			timer.Stop()
			took := time.Since(start)
			rss := int64(0)
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = ru.Maxrss << 10
			}
			when := fmt.Sprintf("%.2f s", took.Seconds())
			if took >= limit {
				when = fmt.Sprintf("> %d s (killed)", int(limit.Seconds()))
			}
			leak := "no"
			if strings.Contains(out.String(), hostileSecret) || strings.Contains(out.String(), hostileSecret2) {
				leak = "**yes**"
			}
			var made []string
			for _, f := range strings.Split(listing(watch), "\n") {
				if !slices.Contains(before, f) {
					made = append(made, "$HOME"+f)
				}
			}
			for _, f := range []string{"/tmp/sh-interp-pwned", "/tmp/perflog-pwned", filepath.Join(repo, "sh-interp-pwned"), filepath.Join(repo, "pwned")} {
				if _, err := os.Lstat(f); err == nil {
					made = append(made, f)
					os.Remove(f)
				}
			}
			created := "none"
			switch {
			case len(made) > 3:
				created = fmt.Sprintf("**%d** (%s, ...)", len(made), strings.Join(made[:2], ", "))
			case len(made) > 0:
				created = "**" + strings.Join(made, ", ") + "**"
			}
			// what a run made is cleaned for the next
			for _, f := range made {
				if strings.HasPrefix(f, "$HOME") {
					os.RemoveAll(filepath.Join(watch, strings.TrimPrefix(f, "$HOME")))
				}
			}
			fmt.Printf("| %s | %s | %s | %d MB | %s | %s | %s |\n", name, args[0]+" "+args[1], when, rss>>20, leak, created, outcome(out.String(), cmd.ProcessState))
		}
	}
	w.Reset(&git.ResetOptions{Commit: *main, Mode: git.HardReset})
	r.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), *main))
	_ = context.Background
}

// outcome is a command's last meaningful line, or how it ended.
func outcome(out string, ps *os.ProcessState) string {
	if ps != nil && !ps.Exited() {
		return "ended by " + ps.String()
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "status ") || strings.HasPrefix(l, "ok:") || strings.HasPrefix(l, "FAIL:") || strings.Contains(l, "fatal error") {
			return strings.ReplaceAll(ellipsize(l, 90), "|", "/")
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "status ") {
			return strings.ReplaceAll(ellipsize(strings.TrimSpace(l), 90), "|", "/")
		}
	}
	return fmt.Sprintf("exit %d", ps.ExitCode())
}
