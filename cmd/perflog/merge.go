package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/safefile"
)

// MergeOptions are the parsed flags of `perflog changelog merge`.
type MergeOptions struct {
	Factory *Factory
	Repo    string
	Config  string
	// Base, Ours, Theirs are git's %O %A %B (the driver); Path is %P.
	Base, Ours, Theirs, Path string
	Resolve                  bool
	PR                       int
	Upstream                 string // auto, ours, theirs
	Mainline                 string
}

func newMergeCmd(f *Factory, runF func(context.Context, *MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "merge <base> <ours> <theirs> [<path>] | --resolve",
		Short: "Merge perf-changelog.yaml: git's merge driver, or resolve a conflicted one",
		Long: `Merge combines two sides of perf-changelog.yaml, which only ever grows at its
end: the result is the upstream side's file byte for byte, then the other side's
new entries in their order, one empty line between entries and one newline at
the end. An entry both sides added is kept once; a pr-link correction one side
made to an entry the other left alone is applied. Anything else (a history edit
on the other side, a deleted entry, YAML that does not parse) is a conflict left
for a person: exit status 1, the file untouched, and the reason on stderr.

As git's merge driver it takes the files git names (%O %A %B %P) and writes the
result to <ours>. Declare it once per repository (perflog init writes the
.gitattributes line; a file in the repository cannot set the driver):

  echo 'perf-changelog.yaml merge=perflog' >> .gitattributes
  git config merge.perflog.driver "perflog changelog merge %O %A %B %P"

With --resolve it reads the three stages of a conflicted perf-changelog.yaml from
git's index (a merge that stopped) and writes the result to the work tree, as the
incumbent's prepare_perf_changelog_merge.py resolve-conflict does; with --pr the
PR's contribution is held to the incumbent's contract and its new entries get the
PR's canonical link.

The upstream side is the one whose new entries are already on --mainline
(origin/main, else main); when that cannot be told, it is theirs (git merge
main, on a PR branch). --upstream says it outright.`,
		Example: `  $ git config merge.perflog.driver "perflog changelog merge %O %A %B %P"
  $ git merge origin/main || perflog changelog merge --resolve --pr 2707`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Resolve && len(args) > 0:
				return flagErrorf("--resolve reads git's index: it takes no files")
			case !opts.Resolve && (len(args) < 3 || len(args) > 4):
				return flagErrorf("want <base> <ours> <theirs> [<path>] (git's %%O %%A %%B %%P), or --resolve")
			case !contains([]string{"auto", "ours", "theirs"}, opts.Upstream):
				return flagErrorf("invalid --upstream %q (want auto, ours or theirs)", opts.Upstream)
			case opts.PR < 0:
				return flagErrorf("invalid --pr %d", opts.PR)
			}
			if !opts.Resolve {
				opts.Base, opts.Ours, opts.Theirs = args[0], args[1], args[2]
				if len(args) == 4 {
					opts.Path = args[3]
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mergeRun(opts)
		},
	}
	repoFlag(cmd.Flags(), &opts.Repo)
	configFlag(cmd.Flags(), &opts.Config)
	cmd.Flags().BoolVar(&opts.Resolve, "resolve", false, "resolve a conflicted changelog from git's index stages")
	cmd.Flags().IntVar(&opts.PR, "pr", 0, "the pull request the contributing side is: its `number` (the incumbent's contract and canonical links)")
	cmd.Flags().StringVar(&opts.Upstream, "upstream", "auto", "the side kept byte for byte: auto, ours or theirs")
	cmd.Flags().StringVar(&opts.Mainline, "mainline", "", "the branch whose entries tell the upstream side (default origin/main, else main)")
	return cmd
}

func mergeRun(opts *MergeOptions) error {
	f := opts.Factory
	ws, err := openWorkspace(f, opts.Repo, opts.Config)
	if err != nil && opts.Resolve {
		return err
	}
	var none *config.Settings
	repository, path := none.Repository(), none.ChangelogPath()
	if ws != nil {
		defer ws.repo.Close()
		repository, path = ws.settings.Repository(), ws.settings.ChangelogPath()
	}
	if opts.Path != "" {
		path = filepath.ToSlash(opts.Path)
	}
	var base, ours, theirs []byte
	var out string // where the result goes
	if opts.Resolve {
		st, err := ws.repo.Stages(path)
		if err != nil {
			if errors.Is(err, gitscan.ErrNotConflicted) {
				return fmt.Errorf("%w: --resolve is for a merge that stopped on it", err)
			}
			return err
		}
		base, ours, theirs = st[1], st[2], st[3]
		if ours == nil || theirs == nil {
			return fmt.Errorf("%s: a side deleted the file; resolve it by hand", path)
		}
		out = filepath.Join(ws.repo.Worktree(), filepath.FromSlash(path))
	} else {
		read := func(p string) ([]byte, error) {
			data, err := os.ReadFile(f.abs(p))
			if err != nil {
				return nil, err
			}
			return data, changelog.CheckSize(p, len(data))
		}
		if base, err = read(opts.Base); err != nil {
			return err
		}
		if ours, err = read(opts.Ours); err != nil {
			return err
		}
		if theirs, err = read(opts.Theirs); err != nil {
			return err
		}
		out = f.abs(opts.Ours)
	}
	oursUp, why := false, "by default"
	switch opts.Upstream {
	case "ours":
		oursUp, why = true, "as --upstream says"
	case "theirs":
		why = "as --upstream says"
	default:
		if up, told := changelog.Upstream(base, ours, theirs, mainline(ws, opts.Mainline, path)); told {
			oursUp, why = up, "its new entries are on the mainline"
		}
	}
	up, other := "theirs", "ours"
	if oursUp {
		up, other = other, up
	}
	upstream, contrib := theirs, ours
	if oursUp {
		upstream, contrib = ours, theirs
	}
	res, err := changelog.Merge(base, upstream, contrib, changelog.MergeOptions{Repository: repository, PR: opts.PR})
	var conflict *changelog.MergeConflict
	if errors.As(err, &conflict) {
		printf(f.IO.ErrOut, "perflog: %s\n", err.Error()) // entry names are the repository's: made inert
		printf(f.IO.ErrOut, "perflog: %s is left as it was for a person to resolve (the upstream side was %s, %s)\n", path, up, why)
		return errFindings
	}
	if err != nil {
		return err
	}
	if err := writeMerged(out, res.Bytes); err != nil {
		return err
	}
	w := f.IO.ErrOut
	printf(w, "merged %s: kept %s byte for byte (the upstream side, %s)", path, up, why)
	if n := len(res.Appended); n > 0 {
		fmt.Fprintf(w, "; appended %s of %s (%s %s there)", count(n, "new entry", "new entries"), other, map[bool]string{true: "entry", false: "entries"}[n == 1], positions(res.Appended))
	}
	if n := len(res.Kept); n > 0 {
		fmt.Fprintf(w, "; %s already upstream", count(n, "entry", "entries"))
	}
	if n := len(res.Corrected); n > 0 {
		fmt.Fprintf(w, "; %s pr-link corrected (%s)", count(n, "entry's", "entries'"), positions(res.Corrected))
	}
	if n := len(res.Relinked); n > 0 {
		fmt.Fprintf(w, "; %s linked to #%d", count(n, "entry", "entries"), opts.PR)
	}
	fmt.Fprintln(w)
	if n := len(res.UpstreamDropped); n > 0 {
		printf(w, "note: %s deleted or rewrote %s of the common ancestor (%s): kept as it has %s, the mainline's history\n", up, count(n, "entry", "entries"), positions(res.UpstreamDropped), map[bool]string{true: "it", false: "them"}[n == 1])
	}
	if opts.Resolve {
		printf(w, "next: git add %s\n", path)
	}
	return nil
}

// mainline is the changelog on the branch that tells the upstream side
// (nil when there is none to read).
func mainline(ws *workspace, branch, path string) []byte {
	if ws == nil {
		return nil
	}
	names := []string{branch}
	if branch == "" {
		names = []string{"origin/main", "main"}
	}
	for _, n := range names {
		h, err := ws.repo.Resolve(n)
		if err != nil {
			continue
		}
		if data, err := ws.repo.ReadFile(h, path); err == nil {
			return data
		}
	}
	return nil
}

// writeMerged replaces a file's content atomically (safefile.Write: its
// mode kept, a failure leaves it as it was).
func writeMerged(path string, data []byte) error {
	_, err := safefile.Write(filepath.Dir(path), filepath.Base(path), data)
	return err
}

// count says n things: "1 entry", "2 entries".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func positions(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
