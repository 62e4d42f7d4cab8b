package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/lint"
	"github.com/perflog/perflog/recipe/revfs"
)

// LintOptions are the parsed flags of `perflog lint`.
type LintOptions struct {
	Factory *Factory
	Repo    string
	Rev     string // "" = the work tree
	Config  string
	Format  string
	Paths   []string
}

// lintRules are the rules lint reports, in the order its help lists them.
var lintRules = []string{lint.RuleArrayClobber, lint.RuleContinuation, lint.RuleKVBackend, lint.RuleRouter, lint.RuleEnginePatch, lint.RuleParse}

// lintRulesHelp lists lint's rules from verify's rule table: one rule, one
// summary and one severity, whichever command reports it.
func lintRulesHelp() string {
	var b strings.Builder
	for _, id := range lintRules {
		i := slices.IndexFunc(changelog.Rules, func(r changelog.RuleInfo) bool { return r.ID == id })
		if i < 0 {
			continue // TestLintHelpNamesEveryRule fails
		}
		r := changelog.Rules[i]
		line := fmt.Sprintf("  %-31s", id)
		for _, w := range strings.Fields(r.Summary + " (" + string(r.Severity) + ")") {
			if len(line)+1+len(w) > 80 && strings.TrimSpace(line) != id {
				b.WriteString(line + "\n")
				line = strings.Repeat(" ", 33) + w
				continue
			}
			if !strings.HasSuffix(line, " ") {
				line += " "
			}
			line += w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

func newLintCmd(f *Factory, runF func(context.Context, *LintOptions) error) *cobra.Command {
	opts := &LintOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "lint [path...]",
		Short: "Lint benchmark scripts (bash parsed with mvdan.cc/sh)",
		Long: `Lint checks benchmark scripts for the bugs that silently change what is
benchmarked (each at the severity verify reports it; .perflog.yaml's rules: sets
them for both):

` + lintRulesHelp() + `
Paths are scripts or directories (every .sh below them); without paths every
script under benchmarks/ and runners/ is linted. The files are read from the work
tree, or from --rev. Each script is checked against the recipe points that run it
(the key -> script resolution of perflog config scripts).

Exit status 1 when a finding is an error.`,
		Example: `  $ perflog lint
  $ perflog lint benchmarks/single_node/agentic/dsv4_fp4_b300_sglang_mtp.sh
  $ perflog lint --rev origin/main --format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if !contains(lintFormats, opts.Format) {
				return flagErrorf("invalid --format %q (want text, json, github, markdown or sarif)", opts.Format)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return lintRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Rev, "rev", "", "lint the scripts of this `revision` (default: the work tree)")
	configFlag(fl, &opts.Config)
	fl.StringVar(&opts.Format, "format", "text", "output `format`: text, json, github (workflow annotations), markdown or sarif (code scanning)")
	return cmd
}

// lintResult is the JSON document of perflog lint --format json (a
// public contract: add fields, never rename).
type lintResult struct {
	Rev      string              `json:"rev"`
	Scripts  int                 `json:"scripts"`
	Unparsed int                 `json:"unparsed"`
	Findings []changelog.Finding `json:"findings"`
	OK       bool                `json:"ok"`
	Summary  summary             `json:"summary"`
	// SchemaVersion: see jsonSchemaVersion.
	SchemaVersion int `json:"schema_version"`
}

// lintFormats are lint's --format values, those of verify.
var lintFormats = verifyFormats

func lintRun(ctx context.Context, opts *LintOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	var files fs.FS
	revName := "work tree"
	if opts.Rev != "" {
		h, err := ws.repo.Resolve(opts.Rev)
		if err != nil {
			return fmt.Errorf("--rev: %w", err)
		}
		files, revName = ws.repo.Tree(h), h.String()
	} else {
		root := ws.repo.Worktree()
		if root == "" {
			return fmt.Errorf("the repository has no work tree; pass --rev REV")
		}
		files = revfs.Dir(root)
		// paths given relative to the working directory
		if wd, err := opts.Factory.Getwd(); err == nil {
			for i, p := range opts.Paths {
				abs := p
				if !filepath.IsAbs(abs) {
					abs = filepath.Join(wd, p)
				}
				if rel, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(rel, "..") {
					opts.Paths[i] = filepath.ToSlash(rel)
				}
			}
		}
	}
	for _, p := range opts.Paths {
		if p == "" || strings.HasPrefix(p, "../") || filepath.IsAbs(p) {
			return flagErrorf("path %q is outside the repository", p)
		}
	}
	rep, err := changelog.Lint(recipe.NewRev(revName, files, ws.settings), opts.Paths)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(opts.Paths) > 0 && len(rep.Scripts) == 0 {
		return fmt.Errorf("no script found at %s", strings.Join(opts.Paths, ", "))
	}
	fs := rep.Findings
	ok := !changelog.HasErrors(fs)
	out := opts.Factory.IO.Out
	switch opts.Format {
	case "json":
		res := lintResult{SchemaVersion: jsonSchemaVersion, Rev: revName, Scripts: len(rep.Scripts), Unparsed: rep.Unparsed, Findings: fs, OK: ok, Summary: countFindings(fs)}
		if res.Findings == nil {
			res.Findings = []changelog.Finding{}
		}
		enc := jsonEncoder(out)
		if err := enc.Encode(res); err != nil {
			return err
		}
	case "github":
		writeGitHub(out, fs)
	case "sarif":
		if err := writeSARIF(out, fs); err != nil {
			return err
		}
	case "markdown":
		verdict := "✅ passed"
		if !ok {
			verdict = "❌ failed"
		}
		s := countFindings(fs)
		fmt.Fprintf(out, "### perflog lint: %s\n\n%d script%s at `%s` · %d error%s, %d warning%s, %d info\n\n", verdict,
			len(rep.Scripts), plural(len(rep.Scripts)), revName, s.Errors, plural(s.Errors), s.Warnings, plural(s.Warnings), s.Infos)
		linkRev := ""
		if opts.Rev != "" {
			linkRev = revName
		}
		if err := writeMarkdownFindings(out, fs, linkRev, ws.settings.Repository()); err != nil {
			return err
		}
	default:
		for _, f := range standing(fs) {
			printf(out, "%s:%d: %s %s: %s\n", f.File, f.Line, string(f.Severity), f.Rule, f.Message)
			if f.Source != "" {
				fmt.Fprintf(out, "  %5d | %s\n", f.Line, printable(f.Source))
			}
		}
		s := countFindings(fs)
		do := "do"
		if rep.Unparsed == 1 {
			do = "does"
		}
		fmt.Fprintf(opts.Factory.IO.ErrOut, "%d script%s (%d %s not parse): %d error%s, %d warning%s, %d info\n",
			len(rep.Scripts), plural(len(rep.Scripts)), rep.Unparsed, do,
			s.Errors, plural(s.Errors), s.Warnings, plural(s.Warnings), s.Infos)
	}
	if !ok {
		return errFindings
	}
	return nil
}
