package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/changelog/draft"
	"github.com/perflog/perflog/changelog/load"
)

// NewOptions are the parsed flags of `perflog changelog new`.
type NewOptions struct {
	Factory *Factory
	Repo    string
	Base    string
	PR      int
	PRSet   bool
	DryRun  bool
	Edit    bool
	Format  string // yaml | json
	Config  string
	Offline bool
}

func newNewCmd(f *Factory, runF func(context.Context, *NewOptions) error) *cobra.Command {
	opts := &NewOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Draft this change's changelog entry from the diff and append it",
		Long: `New drafts the changelog entry of this change and appends it to
perf-changelog.yaml.

The change is base..HEAD plus what the work tree changed on top of HEAD. Each
changed recipe (its config, or a script or srt-slurm recipe file that runs it)
is described from the structural diff in the repository's style: image
"from A to B", variables set, changed and removed, engine flags added and
removed, search-space rows added, removed or with new concurrencies, new and
renamed recipes. Recipes whose changes read the same share one entry;
append-only: true is set only when the diff proves that search-space points
were only added. pr-link is this PR (--pr, the CI environment, GitHub, or
the "(#N)" of a one-commit range's subject), else the XXX placeholder the
gate accepts on pull requests.

Every byte before the append is kept, one empty line separates entries and
the file ends with one newline; the write is atomic. Running it again
replaces this change's own entry instead of adding another; historical
entries are never touched. --dry-run prints the entry and writes nothing. On a
terminal the entry is shown with the claims it makes; --edit opens $EDITOR on
it first.`,
		Example: `  $ perflog changelog new --pr 2710
  $ perflog changelog new --dry-run --format json`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !contains([]string{"yaml", "json"}, opts.Format) {
				return flagErrorf("invalid --format %q (want yaml or json)", opts.Format)
			}
			opts.PRSet = cmd.Flags().Changed("pr")
			if opts.PRSet && opts.PR <= 0 {
				return flagErrorf("invalid --pr %d (want a pull request number)", opts.PR)
			}
			if opts.Edit && opts.DryRun {
				return flagErrorf("--edit and --dry-run exclude each other")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return newRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Base, "base", "", "base `rev` (default: merge-base with origin/$GITHUB_BASE_REF, origin/main or main)")
	fl.IntVar(&opts.PR, "pr", 0, "this pull request's `number` (default: from the CI environment or GitHub)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "print the drafted entry; change nothing")
	fl.BoolVar(&opts.Edit, "edit", false, "open $EDITOR on the drafted entry before appending it (needs a terminal)")
	fl.StringVar(&opts.Format, "format", "yaml", "output `format` of the drafted entries: yaml or json")
	configFlag(fl, &opts.Config)
	fl.BoolVar(&opts.Offline, "offline", false, "never ask GitHub (for the PR number)")
	return cmd
}

// newResult is the JSON document of changelog new --format json (a
// public contract: add fields, never rename).
type newResult struct {
	File     string                 `json:"file"`
	Base     string                 `json:"base"`
	Head     string                 `json:"head"`
	PR       *int                   `json:"pr"`
	Entries  []changelog.DraftEntry `json:"entries"`
	Claims   []claims.Result        `json:"claims"`
	Written  bool                   `json:"written"`
	Replaced []int                  `json:"replaced"`
	// SchemaVersion: see jsonSchemaVersion.
	SchemaVersion int `json:"schema_version"`
}

func newRun(ctx context.Context, opts *NewOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	b, err := resolveBranch(ctx, opts.Factory, ws, opts.Base, opts.PR, opts.PRSet, opts.Offline)
	if err != nil {
		return err
	}
	head, base, baseName, pr, prSource := b.head, b.base, b.baseName, b.pr, b.prSource
	ch, err := load.WorktreeChange(ws.repo, ws.settings, base, head, baseName)
	if err != nil {
		return err
	}
	link := changelog.EntryLink(ws.settings.Repository(), pr)
	entries, err := draft.Entries(ch, draft.Options{PRLink: link, Ctx: ctx, DryRun: opts.Factory.dryRun(), Changelog: ws.settings.ChangelogPath()})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	errOut := opts.Factory.IO.ErrOut
	path := ws.settings.ChangelogPath()
	res := newResult{SchemaVersion: jsonSchemaVersion, File: path, Base: base.String(), Head: head.String(), Entries: []changelog.DraftEntry{},
		Claims: []claims.Result{}, Replaced: []int{}}
	if pr > 0 {
		res.PR = &pr
	}
	if len(entries) == 0 {
		if opts.Format == "json" {
			// a script reads a document either way: no entries
			if err := jsonEncoder(opts.Factory.IO.Out).Encode(res); err != nil {
				return err
			}
		}
		fmt.Fprintf(errOut, "no recipe changed in %s..HEAD or in the work tree: nothing to draft\n", baseName)
		// e.g. benchmarks/benchmark_lib.sh, which every script sources
		// and which runs no recipe of its own (the repository adds no
		// entry for a change to it alone), or a reformatted config
		changed := slices.DeleteFunc(slices.Clone(ch.Changed), func(p string) bool { return p == ws.settings.ChangelogPath() })
		if len(changed) > 0 {
			printf(errOut, "changed, changing no recipe: %s\n", firstOf(changed, 5))
		}
		return nil
	}
	if opts.Edit {
		if !opts.Factory.IO.IsStdinTTY() || !opts.Factory.IO.IsStdoutTTY() {
			return flagErrorf("--edit needs a terminal")
		}
		if entries, err = editEntries(opts.Factory, entries); err != nil {
			return err
		}
	}
	res.Entries = entries
	res.Claims = draft.Check(ch, entries)
	if !opts.DryRun {
		if ws.repo.Worktree() == "" {
			return fmt.Errorf("the repository has no work tree to write %s to; use --dry-run", path)
		}
		ar, err := draft.AppendToWorktree(ws.repo.Worktree(), ch, entries, link)
		if err != nil {
			return err
		}
		if ar.NoBaseFile {
			fmt.Fprintf(errOut, "perflog: warning: %s has no %s\n", baseName, path)
		}
		if ar.NoBase != "" {
			fmt.Fprintf(errOut, "perflog: warning: %s (%s): no entry of %s can be told this change's own, so none is replaced\n", ar.NoBase, baseName, path)
		}
		if len(ar.Kept) > 0 {
			fmt.Fprintf(errOut, "perflog: warning: entr%s %v of %s look like this change's own but are not at its end: kept as they are\n", pluralY(len(ar.Kept)), ar.Kept, path)
		}
		res.Written, res.Replaced = ar.Written, append(res.Replaced, ar.Replaced...)
	}
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		enc := jsonEncoder(out)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if opts.DryRun || res.Written {
		for i, e := range entries {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprint(out, changelog.RenderEntry(e))
		}
		if opts.Factory.IO.IsStdoutTTY() {
			printDraftClaims(opts.Factory, res.Claims)
		}
	}
	fmt.Fprintln(errOut, newSummary(len(entries), opts.DryRun, res.Written, res.Replaced, path, pr, prSource))
	return nil
}

// newSummary is new's last line: what it did with the n drafted entries,
// and where the PR number came from.
func newSummary(n int, dryRun, written bool, replaced []int, path string, pr int, prSource string) string {
	src := " (no PR number: the XXX placeholder; pass --pr N)"
	if prSource != "" {
		src = fmt.Sprintf(" (PR #%d from %s)", pr, prSource)
	}
	entries := fmt.Sprintf("%d entr%s", n, pluralY(n))
	switch {
	case dryRun:
		return entries + " drafted (dry run, nothing written)" + src
	case !written:
		what := "this change's entry"
		if n > 1 {
			what = fmt.Sprintf("this change's %d entries", n)
		}
		return fmt.Sprintf("%s already holds %s as drafted: nothing written%s", path, what, src)
	case len(replaced) > 0:
		return fmt.Sprintf("%s drafted: replaced this change's entr%s %v in %s%s", entries, pluralY(len(replaced)), replaced, path, src)
	}
	return entries + " appended to " + path + src
}

func pluralY(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

func printDraftClaims(f *Factory, cs []claims.Result) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintln(f.IO.Out, "\nclaims these bullets make, checked against the change:")
	for _, c := range cs {
		printf(f.IO.Out, "  %-12s %-13s %s — %s\n", string(c.Verdict), string(c.Kind), c.Text, c.Reason)
	}
}

// editEntries opens $VISUAL or $EDITOR on the drafted entries and reads
// them back.
func editEntries(f *Factory, entries []changelog.DraftEntry) ([]changelog.DraftEntry, error) {
	editor := f.Getenv("VISUAL")
	if editor == "" {
		editor = f.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	tmp, err := os.CreateTemp("", "perflog-entry-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	var b strings.Builder
	b.WriteString("# The entry perflog drafted; edit it, save and quit. An empty file cancels.\n")
	for i, e := range entries {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(changelog.RenderEntry(e))
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		return nil, err
	}
	tmp.Close()
	fields := strings.Fields(editor)
	cmd := exec.Command(fields[0], append(fields[1:], tmp.Name())...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f.IO.In, f.IO.Out, f.IO.ErrOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("editor %s: %w", editor, err)
	}
	data, err := os.ReadFile(tmp.Name())
	if err != nil {
		return nil, err
	}
	return changelog.ParseDraft(data)
}

// firstOf lists the first n paths, and how many more there are.
func firstOf(paths []string, n int) string {
	shown, more := paths[:min(len(paths), n)], ""
	if rest := len(paths) - len(shown); rest > 0 {
		more = fmt.Sprintf(" and %d more", rest)
	}
	return strings.Join(shown, ", ") + more
}

// branch is a contributor's branch as new and fix read it: HEAD, the base
// it is judged against (the merge-base with the base branch), and its PR.
type branch struct {
	head, base plumbing.Hash
	baseName   string
	pr         int
	prSource   string
}

// resolveBranch resolves HEAD, the base (--base, else the merge-base
// with origin/$GITHUB_BASE_REF, origin/main or main) and the PR (--pr,
// the CI environment, GitHub unless offline, the head commit's subject).
func resolveBranch(ctx context.Context, f *Factory, ws *workspace, baseRev string, prFlag int, prSet, offline bool) (*branch, error) {
	head, err := ws.repo.Resolve("HEAD")
	if err != nil {
		return nil, fmt.Errorf("HEAD: %w", err)
	}
	b := &branch{head: head}
	if b.base, b.baseName, err = load.ResolveBase(ws.repo, head, load.BaseOptions{Rev: baseRev, MergeBase: true, OnBranch: true, Getenv: f.Getenv}); err != nil {
		return nil, err
	}
	pro := load.PROptions{Flag: prFlag, FlagSet: prSet, Getenv: f.Getenv, Subject: true}
	if !offline {
		pro.Lookup = func() (int, bool) { return lookupPR(ctx, f, ws, head) }
	}
	if b.pr, b.prSource, err = load.ResolvePR(ws.repo, b.base, head, pro); err != nil {
		return nil, err
	}
	return b, nil
}
