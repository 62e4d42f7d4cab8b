package gitscan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestMergeBaseAgreesWithGit: on random histories of merges, criss-cross
// merges, several roots, equal and skewed commit dates, MergeBase answers
// what `git merge-base` prints, or no merge base where git finds none.
func TestMergeBaseAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Parallel()
	for seed := range uint64(2) {
		dir := t.TempDir()
		git := func(env []string, args ...string) (string, error) {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b",
				"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
			cmd.Env = append(cmd.Env, env...)
			out, err := cmd.Output()
			return strings.TrimSpace(string(out)), err
		}
		if _, err := git(nil, "init", "-q", "--bare"); err != nil {
			t.Fatal(err)
		}
		tree, err := git(nil, "mktree")
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		// three branches that merge each other now and then (criss-cross
		// merges: several best common ancestors), and a new root now and then
		var commits []string
		tips := make([]string, 3)
		for i := range 40 {
			k := rng.IntN(len(tips))
			args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", i)}
			if tips[k] != "" && rng.IntN(15) != 0 {
				args = append(args, "-p", tips[k])
			}
			if o := tips[rng.IntN(len(tips))]; o != "" && o != tips[k] && rng.IntN(3) == 0 {
				args = append(args, "-p", o)
			}
			// dates mostly rising, some equal, some before their parents'
			date := fmt.Sprintf("%d +0000", 1_700_000_000+i*10-rng.IntN(3)*rng.IntN(150))
			h, err := git([]string{"GIT_COMMITTER_DATE=" + date, "GIT_AUTHOR_DATE=" + date}, args...)
			if err != nil {
				t.Fatal(err)
			}
			tips[k] = h
			commits = append(commits, h)
		}
		r, err := Open(dir, &OpenOptions{NoDetect: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 60 {
			a, b := commits[rng.IntN(len(commits))], commits[rng.IntN(len(commits))]
			want, gitErr := git(nil, "merge-base", a, b)
			got, err := r.MergeBase(plumbing.NewHash(a), plumbing.NewHash(b))
			switch {
			case gitErr != nil && !errors.Is(err, ErrNoMergeBase):
				t.Errorf("seed %d: MergeBase(%.7s, %.7s) = %.7s, %v; git finds none", seed, a, b, got, err)
			case gitErr == nil && (err != nil || got.String() != want):
				t.Errorf("seed %d: MergeBase(%.7s, %.7s) = %.7s, %v; git: %.7s", seed, a, b, got, err, want)
			}
		}
		r.Close()
	}
}
