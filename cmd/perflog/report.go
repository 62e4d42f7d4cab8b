package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/report"
)

// ReportOptions are the parsed flags of `perflog report`.
type ReportOptions struct {
	Factory *Factory
	HistoryFlags
	Key      string
	Out      string
	Launches bool
}

func newReportCmd(f *Factory, runF func(context.Context, *ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Write a static HTML report of the changelog's health and each recipe's history",
		Long: `Report writes a self-contained static site (inline CSS, SVG, no script,
nothing fetched when viewed) into --out:

  index.html          the changelog's health at --rev: entries by audit verdict,
                      the entries whose pr-link needs a look, contradicted claims,
                      the commits that changed recipes without an entry, the lint
                      of the scripts, and every recipe
  recipes/KEY.html    one recipe: a timeline with a lane per field or launch
                      group and the changelog's marks, then its history table

Links point at the PRs, commits and lines on GitHub. Answers come from the
index when it has them (perflog index), from git otherwise. A recipe's launch
changes (server flags, env vars, image) are shown when the index holds its
launch history (perflog index --launches); --launches dry-runs the missing ones.

--out must be a new or empty directory, or a report written before (whose
pages are replaced).`,
		Example: `  $ perflog report --out site && xdg-open site/index.html
  $ perflog report --key 'dsr1-*' --launches --out dsr1-report`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Out == "" {
				return flagErrorf("--out must name a directory")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.addFlags(fl, "") // no --format: it writes a site
	fl.StringVar(&opts.Key, "key", "", "only recipes (and entries) whose key matches this `glob` ('*' wildcards)")
	fl.StringVar(&opts.Out, "out", "perflog-report", "the `directory` to write the site into")
	fl.BoolVar(&opts.Launches, "launches", false, "dry-run the launch history of recipes the index holds none for (slow the first time; stored in the index)")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	hs, err := openHistory(opts.Factory, &opts.HistoryFlags)
	if err != nil {
		return err
	}
	defer hs.close()
	site, err := report.Build(ctx, hs.src, hs.ws.settings, report.Options{Key: opts.Key, Launches: opts.Launches,
		Progress: func(label string) (func(provenance.Progress), func()) {
			p := progress(opts.Factory, label)
			return p.update, p.done
		}})
	if err != nil {
		return err
	}
	out := opts.Factory.abs(opts.Out)
	st, err := report.Write(site, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.Factory.IO.ErrOut, "wrote %d pages (%s, the largest %s) to %s\n", st.Pages, humanBytes(st.Bytes), humanBytes(st.Largest),
		filepath.Join(opts.Factory.rel(out), "index.html"))
	if site.LaunchesMissing > 0 {
		fmt.Fprintf(opts.Factory.IO.ErrOut, "%d of %d recipe pages show config changes only: run perflog index --launches, or report --launches\n",
			site.LaunchesMissing, len(site.Recipes))
	}
	return nil
}
