package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/internal/safefile"
)

// FixOptions are the parsed flags of `perflog changelog fix`.
type FixOptions struct {
	Factory *Factory
	Repo    string
	Config  string
	Base    string
	PR      int
	PRSet   bool
	Offline bool
	DryRun  bool
}

func newFixCmd(f *Factory, runF func(context.Context, *FixOptions) error) *cobra.Command {
	opts := &FixOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "fix",
		Short: "Repair the changelog's bytes in the work tree: entries at the end, history as it was",
		Long: `Fix repairs, in the work tree, what verify reports about perf-changelog.yaml and
a machine can repair without choosing what the file says:

  - this change's new entries moved to the end, in their order
    (append-only/not-at-end);
  - one empty line before each new entry and one newline at the end
    (format/separator, format/trailing-blank, format/final-newline);
  - the history's bytes restored from the base: a whitespace line, a deleted
    line, a reformatted entry (append-only/history-bytes, append-only/reformatted),
    keeping a pr-link correction;
  - a new entry's XXX placeholder link set to this PR's link, when the PR is
    known (--pr, the CI environment, or GitHub) (pr-link/placeholder).

It prints each repair. An entry of the base that is gone or whose content
changed is not repaired: fix exits 2 and leaves the file as it is.`,
		Example: `  $ perflog changelog fix
  $ perflog changelog fix --pr 2707 --dry-run`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.PRSet = cmd.Flags().Changed("pr")
			if opts.PRSet && opts.PR <= 0 {
				return flagErrorf("invalid --pr %d", opts.PR)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return fixRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	configFlag(fl, &opts.Config)
	fl.StringVar(&opts.Base, "base", "", "base `rev` (default: merge-base with origin/$GITHUB_BASE_REF, origin/main or main)")
	fl.IntVar(&opts.PR, "pr", 0, "this pull request's `number` (default: from GITHUB_REF or GITHUB_EVENT_PATH, or GitHub)")
	fl.BoolVar(&opts.Offline, "offline", false, "never ask GitHub")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the repairs without writing the file")
	return cmd
}

func fixRun(ctx context.Context, opts *FixOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	root := ws.repo.Worktree()
	if root == "" {
		return fmt.Errorf("the repository has no work tree to repair")
	}
	b, err := resolveBranch(ctx, opts.Factory, ws, opts.Base, opts.PR, opts.PRSet, opts.Offline)
	if err != nil {
		return err
	}
	base, baseName, pr := b.base, b.baseName, b.pr
	path := ws.settings.ChangelogPath()
	old, err := ws.repo.ReadFile(base, path)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", path, baseName, err)
	}
	cur, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return err
	}
	if err := changelog.CheckSize(path, len(cur)); err != nil {
		return err
	}
	res, err := changelog.Fix(old, cur, changelog.FixOptions{Repository: ws.settings.Repository(), PR: pr, Path: path, BaseRev: changelog.ShortHash(base)})
	var refusal *changelog.FixRefusal
	if errors.As(err, &refusal) {
		return fmt.Errorf("%w; %s is left as it is", err, path)
	}
	if err != nil {
		return err
	}
	w := opts.Factory.IO.ErrOut
	for _, n := range res.Notes {
		printf(w, "%s: note: %s\n", path, n)
	}
	if len(res.Repairs) == 0 {
		printf(w, "%s: nothing to repair (against %s)\n", path, baseName)
		return nil
	}
	for _, r := range res.Repairs {
		printf(w, "%s: %s\n", path, r) // entry names are the repository's: made inert
	}
	if opts.DryRun {
		printf(w, "(dry run: %s not written)\n", path)
		return nil
	}
	if _, err := safefile.Write(root, path, res.Bytes); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	printf(w, "wrote %s\n", path)
	return nil
}
