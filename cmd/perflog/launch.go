package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/revfs"
)

// LaunchOptions are the parsed flags of `perflog config launch`.
type LaunchOptions struct {
	Factory *Factory
	Repo    string
	Rev     string
	Config  string
	Format  string
	Point   int
	Keys    []string
	// Worktree dry-runs the work tree's files, uncommitted changes
	// included, instead of --rev's.
	Worktree bool
}

func newLaunchCmd(f *Factory, runF func(context.Context, *LaunchOptions) error) *cobra.Command {
	opts := &LaunchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "launch <config-key>...",
		Short: "Dry-run a recipe's launch: the server command line each point starts",
		Long: `Launch dry-runs each search-space point of the recipes (keys or globs) at
--rev: the runner's launcher runs with the environment the benchmark workflow
gives the point (MODEL, TP, EP_SIZE, DP_ATTENTION, CONC, ISL, OSL,
SPEC_DECODING, KV_OFFLOADING, ...), then the benchmark script and what it
sources, in a sandbox: files are read from the revision, writes go to memory,
no command is executed. The inference server, router and benchmark client are
recorded with their arguments, the environment they start with and the
file:line that starts them; every other command succeeds without running.

Without --point, one line per point; with --point N, the whole launch of that
point: the server's command line, the variables the launch path set, the
client, and what could not be evaluated. --format json gives every point in
full. --worktree dry-runs the work tree as it is, uncommitted changes included
(what verify --worktree judges).

Multi-node recipes: a recipe whose driver script is in the repository is
dry-run with the multi-node workflow's environment (an agentic row batched and
named as the revision's sweep generator does), through the
Slurm job it submits (the job starts at once; each srun task is a node, the
last first) into each node's container; its servers are named by role
(prefill, decode). What only the cluster knows (the job id, node addresses) and
what a program the sandbox does not run prints (python3 -c reading a YAML
file) are unknown. A recipe an srt-slurm recipe file describes is read from
that file; the rest are listed as not dry-run, with why.`,
		Example: `  $ perflog config launch dsr1-fp8-mi355x-sglang
  $ perflog config launch dsr1-fp8-mi355x-sglang --point 3
  $ perflog config launch 'dsv4-*' --rev HEAD~5 --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return flagErrorf("launch needs a config key (or a glob)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			for _, k := range args {
				if err := checkKeyArg(k); err != nil {
					return err
				}
			}
			if !contains([]string{"", "text", "json"}, opts.Format) {
				return flagErrorf("invalid --format %q (want text or json)", opts.Format)
			}
			if opts.Point < 0 || opts.Point == 0 && cmd.Flags().Changed("point") {
				return flagErrorf("invalid --point %d (points are numbered from 1)", opts.Point)
			}
			if opts.Worktree && cmd.Flags().Changed("rev") {
				return flagErrorf("--worktree and --rev exclude each other")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return launchRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Rev, "rev", "HEAD", "the `revision` to dry-run")
	fl.BoolVar(&opts.Worktree, "worktree", false, "dry-run the work tree, uncommitted changes included")
	configFlag(fl, &opts.Config)
	fl.IntVar(&opts.Point, "point", 0, "only point `N` (as numbered in the listing), shown in full")
	fl.StringVar(&opts.Format, "format", "", "output `format`: text or json (default text)")
	return cmd
}

// launchResult is the JSON document of --format json. Field names are a
// public contract: add, never rename.
type launchResult struct {
	Rev string `json:"rev"`
	// Worktree says the points were read from the work tree (Rev is
	// HEAD, under it).
	Worktree      bool                 `json:"worktree,omitempty"`
	Points        []recipe.PointLaunch `json:"points"`
	SchemaVersion int                  `json:"schema_version"`
}

func launchRun(ctx context.Context, opts *LaunchOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	h, err := ws.repo.Resolve(opts.Rev)
	if err != nil {
		return fmt.Errorf("--rev: %w", err)
	}
	rev := recipe.NewRev(opts.Rev, ws.repo.Tree(h), ws.settings)
	if opts.Worktree {
		if ws.repo.Worktree() == "" {
			return flagErrorf("--worktree: the repository has no work tree")
		}
		rev = recipe.NewRev("work tree", revfs.Dir(ws.repo.Worktree()), ws.settings)
	}
	m, err := rev.Master()
	if err != nil {
		return err
	}
	keys, errs := resolveKeyArgs(m, opts.Keys)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	pls, err := rev.DryRunKeys(ctx, keys, opts.Point, opts.Factory.dryRun())
	if err != nil {
		return err
	}
	if opts.Point > 0 && len(pls) == 0 {
		return flagErrorf("no point %d: %s has fewer points (see perflog config launch %s)", opts.Point, strings.Join(keys, ", "), strings.Join(opts.Keys, " "))
	}
	out := opts.Factory.IO.Out
	if opts.Format == "json" {
		if pls == nil {
			pls = []recipe.PointLaunch{}
		}
		return writeJSON(out, launchResult{Rev: h.String(), Worktree: opts.Worktree, Points: pls, SchemaVersion: jsonSchemaVersion})
	}
	if opts.Point > 0 {
		for i := range pls {
			writeLaunch(out, &pls[i])
		}
		return nil
	}
	counts := map[string]int{}
	key := ""
	for _, pl := range pls {
		if pl.Point.Key != key {
			key = pl.Point.Key
			printf(out, "%s (%s:%d)\n", key, pl.Point.File, pl.Point.KeyLine)
		}
		status, what := "not-run", pl.Point.Note
		if l := pl.Launch; l != nil {
			status = l.Status
			switch srv := l.Server(); {
			case srv != nil:
				what = fmt.Sprintf("%s  %d options  %s", srv.Program(), len(srv.Flags), srv.At)
			default:
				what = strings.TrimSpace(l.EndedAt + " " + l.Reason)
			}
		}
		counts[status]++
		printf(out, "  %-34s %-9s %s\n", pl.Point.Label(), status, what)
	}
	var parts []string
	for _, s := range []string{dryrun.StatusLaunched, dryrun.StatusDescribed, dryrun.StatusFailed, dryrun.StatusNoServer, dryrun.StatusUnknown, "not-run"} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	where := "at " + shortHash(h)
	if opts.Worktree {
		where = "in the work tree (HEAD " + shortHash(h) + ")"
	}
	fmt.Fprintf(opts.Factory.IO.ErrOut, "%d points %s: %s; --point N shows one in full\n", len(pls), where, strings.Join(parts, ", "))
	return nil
}

// writeLaunch writes one point's launch in full.
func writeLaunch(w io.Writer, pl *recipe.PointLaunch) {
	p := pl.Point
	printf(w, "%s point %s\n", p.Key, p.Label())
	printf(w, "  config   %s:%d (%s row)\n", p.File, p.Line, p.Scenario)
	if img := p.Env["IMAGE"]; img != "" {
		printf(w, "  image    %s\n", img)
	}
	runs := p.Launcher
	if p.Script != "" {
		runs += " → " + p.Script
	}
	if p.Recipe != "" {
		runs += " → srt-slurm recipe " + p.Recipe
	}
	if p.Runner != "" {
		runs += " on " + p.Runner
	}
	printf(w, "  runs     %s\n", runs)
	if p.EnvFrom != "" {
		printf(w, "  env from %s\n", p.EnvFrom)
	}
	l := pl.Launch
	if l == nil {
		printf(w, "  status   not dry-run: %s\n", p.Note)
		return
	}
	printf(w, "  status   %s", l.Status)
	if l.Exit != 0 {
		printf(w, " (exit %d)", l.Exit)
	}
	if l.EndedAt != "" || l.Reason != "" {
		printf(w, ": %s", strings.TrimSpace(l.EndedAt+" "+l.Reason))
	}
	fmt.Fprintln(w)
	for i := range l.Servers {
		writeCommand(w, withRole("server", &l.Servers[i]), &l.Servers[i], p.Env)
	}
	for i := range l.Routers {
		writeCommand(w, withRole("router", &l.Routers[i]), &l.Routers[i], p.Env)
	}
	for i := range l.Clients {
		writeCommand(w, "client", &l.Clients[i], nil)
	}
	for _, u := range l.Unknowns {
		printf(w, "  unknown  %s\n", strings.TrimSpace(u.At+" "+u.What))
	}
	if len(l.Stubbed) > 0 {
		printf(w, "  stubbed  %s\n", strings.Join(l.Stubbed, ", "))
	}
}

// withRole names a described multi-node command by its worker role.
func withRole(what string, c *dryrun.Command) string {
	if c.Role == "" {
		return what
	}
	return what + " (" + c.Role + ")"
}

// writeCommand writes a launch: where, the command line one option per
// line, and (with base) the variables the launch path set.
func writeCommand(w io.Writer, role string, c *dryrun.Command, base map[string]string) {
	printf(w, "  %-8s %s\n", role, c.At)
	if c.Role != "" {
		role = "server"
	}
	line := "           "
	if len(c.Wrapper) > 0 {
		line += shellQuote(c.Wrapper) + " "
	}
	printf(w, "%s%s\n", line, c.Program())
	n := len(strings.Fields(c.Program()))
	cur := ""
	flush := func() {
		if cur != "" {
			printf(w, "             %s\n", cur)
			cur = ""
		}
	}
	for i, a := range c.Argv {
		if i < n {
			continue
		}
		q := shellQuote([]string{a})
		if strings.HasPrefix(a, "-") || cur == "" {
			flush()
			cur = q
		} else {
			cur += " " + q
		}
	}
	flush()
	for _, s := range c.Stray {
		printf(w, "           stray argument %d: %q\n", s.Index, s.Value)
	}
	if base != nil {
		for _, k := range c.EnvChanges(base) {
			if at := c.EnvAt[k]; at != "" {
				printf(w, "  env      %s=%s   at %s\n", k, c.Env[k], at)
			} else {
				printf(w, "  env      %s=%s\n", k, c.Env[k])
			}
		}
	}
	if len(c.HiddenEnv) > 0 {
		printf(w, "  env      (more, not known: it exported %s, pairs a program printed)\n", strings.Join(c.HiddenEnv, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Files)) {
		content := c.Files[name]
		if c.Role != "" {
			printf(w, "  file     %s\n", name) // a described recipe's settings or worker config
		} else {
			printf(w, "  file     %s (written by the launch path)\n", name)
		}
		for _, l := range strings.Split(strings.TrimRight(content, "\n"), "\n") {
			printf(w, "             %s\n", l)
		}
	}
}

// shellQuote renders words as a shell would need them (a control
// character as bash's $'\n'); a word the shell cannot hold (a NUL byte)
// is shown escaped.
func shellQuote(words []string) string {
	out := make([]string, len(words))
	for i, s := range words {
		if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[](){};&|<>#~") && printable(s) == s {
			out[i] = s
			continue
		}
		q, err := syntax.Quote(s, syntax.LangBash)
		if err != nil {
			q = strconv.Quote(s)
		}
		out[i] = q
	}
	return strings.Join(out, " ")
}
