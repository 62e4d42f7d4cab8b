package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog/load"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
)

func newConfigCmd(f *Factory) *cobra.Command {
	cmd := groupCmd(&cobra.Command{
		Use:   "config <command>",
		Short: "Inspect the recipe configs",
	})
	cmd.AddCommand(newScriptsCmd(f, nil), newLaunchCmd(f, nil))
	return cmd
}

// ScriptsOptions are the parsed flags of `perflog config scripts`.
type ScriptsOptions struct {
	Factory *Factory
	Repo    string
	Rev     string
	Config  string
	Format  string
	Keys    []string
}

func newScriptsCmd(f *Factory, runF func(context.Context, *ScriptsOptions) error) *cobra.Command {
	opts := &ScriptsOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "scripts [config-key...]",
		Short: "Show which benchmark script runs each recipe",
		Long: `Scripts resolves recipe keys (all, or the given keys and globs) to the
benchmark scripts that run them at --rev: per runner family, scenario and
spec-decoding setting of the recipe, the script the launcher
runners/launch_<family>.sh would run (the first existing of its path
templates), or for a multi-node recipe its driver script or srt-slurm recipe.
The rules are the InferenceX launchers'; .perflog.yaml (scripts:) can replace
them. The summary on stderr gives the share of single-node keys resolved.`,
		Example: `  $ perflog config scripts
  $ perflog config scripts 'dsv4-*' --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			if !contains(listFormats, opts.Format) {
				return flagErrorf("invalid --format %q (want table, tsv, json or csv)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return scriptsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Rev, "rev", "HEAD", "the `revision` to resolve at")
	configFlag(fl, &opts.Config)
	fl.StringVar(&opts.Format, "format", "", "output `format`: table, tsv, json or csv (default: table on a terminal, else tsv)")
	return cmd
}

func scriptsRun(ctx context.Context, opts *ScriptsOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	rev, err := ws.repo.Resolve(opts.Rev)
	if err != nil {
		return fmt.Errorf("--rev: %w", err)
	}
	m, err := load.Master(ws.repo, ws.settings, rev)
	if err != nil {
		return err
	}
	res, err := recipe.NewResolver(ws.repo.Tree(rev), ws.settings)
	if err != nil {
		return err
	}
	keys := m.Keys
	if len(opts.Keys) > 0 {
		var errs []string
		if keys, errs = resolveKeyArgs(m, opts.Keys); len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
	}
	var all []config.Resolution
	sn, snHit := 0, 0
	var misses []string
	for _, k := range keys {
		rs := res.Resolve(m.Recipes[k])
		all = append(all, rs...)
		if len(rs) > 0 && !rs[0].Multinode {
			sn++
			hit := true
			for _, r := range rs {
				if r.Script == "" {
					hit = false
				}
			}
			if hit {
				snHit++
			} else {
				misses = append(misses, k)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if opts.Format == "json" {
		type row struct {
			Key       string   `json:"key"`
			Family    string   `json:"family"`
			Scenario  string   `json:"scenario"`
			Spec      string   `json:"spec"`
			Multinode bool     `json:"multinode"`
			Script    string   `json:"script"`
			Recipe    string   `json:"recipe,omitempty"`
			Tried     []string `json:"tried"`
			Note      string   `json:"note,omitempty"`
		}
		rows := []row{}
		for _, r := range all {
			rows = append(rows, row{r.Key, r.Family, r.Scenario, r.Spec, r.Multinode, r.Script, r.Recipe, r.Tried, r.Note})
		}
		return writeJSON(opts.Factory.IO.Out, map[string]any{"rev": rev.String(), "resolutions": rows,
			"single_node": map[string]any{"keys": sn, "resolved": snHit, "misses": nonNil(misses)}})
	}
	var rows [][]string
	for _, r := range all {
		target := r.Script
		if r.Recipe != "" {
			target = strings.TrimSpace(target + " " + r.Recipe)
		}
		if target == "" {
			target = "- (" + r.Note + ")"
		}
		kind := "single"
		if r.Multinode {
			kind = "multi"
		}
		rows = append(rows, []string{r.Key, kind, r.Family, r.Scenario, r.Spec, target})
	}
	if err := printTable(opts.Factory, opts.Format, []string{"KEY", "NODES", "FAMILY", "SCENARIO", "SPEC", "SCRIPT"}, rows); err != nil {
		return err
	}
	pct := 100.0
	if sn > 0 {
		pct = 100 * float64(snHit) / float64(sn)
	}
	fmt.Fprintf(opts.Factory.IO.ErrOut, "single-node keys resolved: %d/%d (%.1f%%)", snHit, sn, pct)
	if len(misses) > 0 {
		fmt.Fprintf(opts.Factory.IO.ErrOut, "; not resolved: %s", strings.Join(misses, ", "))
	}
	fmt.Fprintln(opts.Factory.IO.ErrOut)
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// resolveKeyArgs expands key and glob arguments against the master keys.
func resolveKeyArgs(m *config.Master, args []string) ([]string, []string) {
	keys, kerrs := m.Resolve(args)
	var errs []string
	for _, e := range kerrs {
		msg := e.Error()
		if len(e.Closest) > 0 {
			msg += " Did you mean " + strings.Join(e.Closest, ", ") + "?"
		}
		errs = append(errs, msg)
	}
	return keys, errs
}
