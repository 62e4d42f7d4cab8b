package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/spf13/cobra"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/changelog/draft"
	"github.com/perflog/perflog/changelog/load"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/provenance/index"
	"github.com/perflog/perflog/recipe"
)

// VerifyOptions are the parsed flags of `perflog changelog verify`.
type VerifyOptions struct {
	Factory *Factory
	Repo    string // --repo; "" = the repository containing the working directory
	Base    string // --base; "" = merge-base with origin/$GITHUB_BASE_REF, origin/main or main
	Head    string // --head
	PR      int    // --pr; 0 = from the CI environment, else a non-PR run
	PRSet   bool
	Format  string // text | json | github
	Profile changelog.Profile
	Config  string // --config: settings file path
	Claims  string // --claims: contradicted, all or off
	Comment bool   // --comment: post the findings on the PR
	Offline bool   // --offline: never ask GitHub
	// Worktree judges the work tree (uncommitted changes included) as head.
	Worktree bool
}

var verifyFormats = []string{"text", "json", "github", "markdown", "sarif"}

func newVerifyCmd(f *Factory, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{Factory: f}
	var profile string
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Check this change to perf-changelog.yaml (the CI gate)",
		Long: `Verify judges the change base..head to perf-changelog.yaml.

Profiles:
  gate    what the incumbent InferenceX CI enforces today (validate_perf_changelog.py):
          final newline, no deleted non-blank line in git's diff, the added lines
          parse as complete valid entries, no append-only/regular mix, every
          config-key resolves against the master configs at head
  strict  the documented byte contract (parse_changelog, compare_entries,
          validate_raw_change): history byte-identical, one empty line between
          entries, pr-link-only corrections, canonical links, XXX only on PRs
  full    (default) strict made practical plus perflog's rules: compared against
          the merge-base, entries matched by content so an insertion is one
          append-only/not-at-end finding, pr-link must be this PR, unknown
          config-keys get the closest existing key; and the diff-aware rules:
          coverage (every changed recipe, by config or by the script that runs
          it, is listed by a new entry), claims (the new entries' bullets
          checked against the change: images, env vars, flags, concurrency,
          tp/ep/dp-attn, seq-lens, spec decoding, KV cache, append-only) and
          the recipe-script lint of the scripts the change touched

The base defaults to the merge-base of head with origin/$GITHUB_BASE_REF, else
origin/main, else main. The PR number comes from --pr, else GITHUB_REF
(refs/pull/N/merge), else pull_request.number in $GITHUB_EVENT_PATH; without
them the run is a non-PR run (as on main); outside CI a token (GITHUB_TOKEN)
lets perflog ask GitHub for the PR of head, as changelog new does.

Head is a commit: --worktree judges the work tree instead, with its
uncommitted changes (what changelog new drafted and appended, before it is
committed). Outside CI, a run on a commit whose work tree has uncommitted
changes to the changelog, the configs or the scripts says so.`,
		Example: `  $ perflog changelog verify
  $ perflog changelog verify --base origin/main --pr 2707 --format json
  $ perflog changelog verify --profile gate --base HEAD~1
  $ perflog changelog new --pr 2710 && perflog changelog verify --worktree --pr 2710`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := changelog.ParseProfile(profile)
			if err != nil {
				return &flagError{err: err}
			}
			opts.Profile = p
			if !contains(verifyFormats, opts.Format) {
				return flagErrorf("invalid --format %q (want text, json, github, markdown or sarif)", opts.Format)
			}
			if !contains([]string{"contradicted", "all", "off"}, opts.Claims) {
				return flagErrorf("invalid --claims %q (want contradicted, all or off)", opts.Claims)
			}
			if opts.Worktree && cmd.Flags().Changed("head") {
				return flagErrorf("--worktree and --head exclude each other (the work tree is on top of HEAD)")
			}
			opts.PRSet = cmd.Flags().Changed("pr")
			if opts.PRSet && opts.PR <= 0 {
				return flagErrorf("invalid --pr %d (want a pull request number)", opts.PR)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	repoFlag(fl, &opts.Repo)
	fl.StringVar(&opts.Base, "base", "", "base `rev` (default: merge-base with origin/$GITHUB_BASE_REF, origin/main or main)")
	fl.StringVar(&opts.Head, "head", "HEAD", "head `rev`")
	fl.IntVar(&opts.PR, "pr", 0, "this pull request's `number` (default: from GITHUB_REF or GITHUB_EVENT_PATH)")
	fl.StringVar(&opts.Format, "format", "text", "output `format`: text, json, github (workflow annotations), markdown (a PR comment) or sarif (code scanning)")
	fl.BoolVar(&opts.Comment, "comment", false, "post the findings as a comment on the PR (updates perflog's earlier comment; needs GITHUB_TOKEN)")
	fl.BoolVar(&opts.Offline, "offline", false, "never ask GitHub")
	fl.BoolVar(&opts.Worktree, "worktree", false, "judge the work tree, uncommitted changes included, as head")
	fl.StringVar(&profile, "profile", "full", "rule `profile`: gate, strict or full")
	configFlag(fl, &opts.Config)
	fl.StringVar(&opts.Claims, "claims", "contradicted", "description claims to report: `contradicted`, all (with unverified and confirmed ones) or off")
	return cmd
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// verifyResult is the JSON document of --format json. Field names are a
// public contract: add, never rename.
type verifyResult struct {
	Findings []changelog.Finding `json:"findings"`
	// Claims are every checked claim with its verdict (--claims all).
	Claims []claims.Result `json:"claims,omitempty"`
	// Recipes are the recipes the change changed (full profile).
	Recipes []recipeChangeJSON `json:"recipes,omitempty"`
	// SuggestedEntries are drafted entries for the changed recipes no new
	// entry lists (what `perflog changelog new` would append).
	SuggestedEntries []changelog.DraftEntry `json:"suggested_entries,omitempty"`
	Profile          string                 `json:"profile"`
	Base             string                 `json:"base"`
	Head             string                 `json:"head"`
	PR               *int                   `json:"pr"`
	OK               bool                   `json:"ok"`
	Summary          summary                `json:"summary"`
	// SchemaVersion is jsonSchemaVersion (every JSON document has it).
	SchemaVersion int `json:"schema_version"`
}

// jsonSchemaVersion is the version of perflog's JSON documents: it grows
// when a field changes meaning (fields are added, never renamed).
const jsonSchemaVersion = 1

type summary struct {
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Suppressed counts the findings perflog:ignore comments set aside
	// (not counted above).
	Suppressed int `json:"suppressed"`
}

func countFindings(fs []changelog.Finding) summary {
	var s summary
	for _, f := range fs {
		switch {
		case f.Suppressed != "":
			s.Suppressed++
		case f.Severity == changelog.Error:
			s.Errors++
		case f.Severity == changelog.Warning:
			s.Warnings++
		default:
			s.Infos++
		}
	}
	return s
}

// standing are the findings no perflog:ignore comment set aside, for the
// formats a person reads (JSON and SARIF keep every finding).
func standing(fs []changelog.Finding) []changelog.Finding {
	var out []changelog.Finding
	for _, f := range fs {
		if f.Suppressed == "" {
			out = append(out, f)
		}
	}
	return out
}

func verifyRun(ctx context.Context, opts *VerifyOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, opts.Config)
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	head, err := ws.repo.Resolve(opts.Head)
	if err != nil {
		return fmt.Errorf("--head: %w", err)
	}
	inCI := opts.Factory.Getenv("CI") != "" || opts.Factory.Getenv("GITHUB_ACTIONS") != ""
	if !inCI && !opts.Worktree && opts.Base == "" &&
		opts.Head == "HEAD" && load.HeadOnBase(ws.repo, head, opts.Factory.Getenv) {
		if err := nothingCommitted(ws, head, opts); err != nil {
			return err
		}
	}
	base, baseName, err := load.ResolveBase(ws.repo, head, load.BaseOptions{Rev: opts.Base, MergeBase: opts.Profile == changelog.ProfileFull,
		OnBranch: opts.Worktree, Getenv: opts.Factory.Getenv})
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var edit *changelog.SettingsEdit
	if !ws.chosen {
		// the change does not judge itself: the base's settings do
		if ws.settings, edit, err = load.JudgedSettings(ws.repo, base, head, ws.settings, ws.settingsPath); err != nil {
			return err
		}
	}
	pro := load.PROptions{Flag: opts.PR, FlagSet: opts.PRSet, Getenv: opts.Factory.Getenv, Subject: opts.Profile == changelog.ProfileFull}
	if !inCI && !opts.Offline {
		// a contributor's run: the PR of this branch, when GitHub knows it
		pro.Lookup = func() (int, bool) { return lookupPR(ctx, opts.Factory, ws, head) }
	}
	pr, prSource, err := load.ResolvePR(ws.repo, base, head, pro)
	if err != nil {
		return err
	}
	var in *changelog.Input
	if opts.Worktree {
		if ws.repo.Worktree() == "" {
			return flagErrorf("--worktree: the repository has no work tree")
		}
		in, err = load.WorktreeInput(ws.repo, ws.settings, base, head, baseName)
	} else {
		in, err = load.Input(ws.repo, ws.settings, base, head, baseName, opts.Head)
		if err == nil && !inCI && ws.repo.Worktree() != "" && opts.Head == "HEAD" {
			// what a contributor sees is not what is judged: say so
			if dirty, _ := ws.repo.WorktreeChanges(head, load.WorktreePaths(ws.settings)); len(dirty) > 0 {
				fmt.Fprintf(opts.Factory.IO.ErrOut, "perflog: note: judging the commit HEAD %s; the work tree has uncommitted changes (%s): commit them, or pass --worktree to judge them as they are\n",
					shortHash(head), firstOf(dirty, 3))
			}
		}
	}
	if err != nil {
		return err
	}
	in.PR = pr
	in.SettingsEdit = edit
	in.Introduced = provenance.Introducers(ctx, ws.repo, ws.settings, base)
	in.Claims = changelog.ClaimsMode(opts.Claims)
	in.Ctx = ctx
	in.DryRun = opts.Factory.dryRun()
	rep := changelog.Verify(in, opts.Profile)
	draft.Suggest(in, rep)
	if err := ctx.Err(); err != nil {
		return err // an incomplete report is no verdict
	}

	res := verifyResult{SchemaVersion: jsonSchemaVersion, Findings: rep.Findings, Profile: string(rep.Profile),
		Base: base.String(), Head: head.String(), OK: rep.OK(), Summary: countFindings(rep.Findings), SuggestedEntries: rep.Suggested}
	if res.Findings == nil {
		res.Findings = []changelog.Finding{}
	}
	if pr != 0 {
		res.PR = &pr
	}
	if opts.Claims == "all" {
		res.Claims = rep.Claims
	}
	for _, rc := range rep.Recipes {
		res.Recipes = append(res.Recipes, recipeChangeJSON{Key: rc.Key, Kind: rc.Kind, OldKey: rc.OldKey, File: rc.File, Line: rc.Line, Files: rc.Files, Fields: len(diffChanges(rc))})
	}
	hdr := verifyHeader{base: base, baseName: baseName, head: head, headName: opts.Head, pr: pr, prSource: prSource}
	if opts.Worktree {
		hdr.headName = "work tree on HEAD" // the commit it is on follows
	}
	out := opts.Factory.IO.Out
	switch opts.Format {
	case "json":
		enc := jsonEncoder(out)
		if err := enc.Encode(res); err != nil {
			return err
		}
	case "github":
		writeGitHub(out, rep.Findings)
	case "markdown":
		if err := writeMarkdown(out, rep, hdr, ws.settings.Repository()); err != nil {
			return err
		}
	case "sarif":
		if err := writeSARIF(out, rep.Findings); err != nil {
			return err
		}
	default:
		writeText(out, rep, in, hdr, opts.Factory.IO.ColorEnabled())
	}
	if opts.Comment {
		postComment(ctx, opts, ws, rep, hdr)
	}
	if opts.Format != "sarif" && opts.Format != "json" {
		writeStepSummary(opts.Factory, rep, hdr, ws.settings.Repository())
	}
	if !rep.OK() {
		return errFindings
	}
	return nil
}

// writeStepSummary appends the markdown report to the job summary of a
// GitHub Actions run (the file GITHUB_STEP_SUMMARY names) for a run read
// by people (text, github, markdown; not sarif or json, whose runs repeat
// one beside it): the runner shows it on the run's page. A step's summary
// holds one report per pair of revisions (the action runs verify once per
// format). A summary that cannot be written is a warning, never the
// verdict.
func writeStepSummary(f *Factory, rep *changelog.Report, hdr verifyHeader, repo string) {
	path := f.Getenv("GITHUB_STEP_SUMMARY")
	if path == "" || f.Getenv("GITHUB_ACTIONS") != "true" {
		return
	}
	mark := fmt.Sprintf("<!-- perflog changelog verify %s %s -->\n", hdr.base, hdr.head)
	if old, err := os.ReadFile(path); err == nil && bytes.Contains(old, []byte(mark)) {
		return
	}
	b := bytes.NewBufferString(mark)
	if err := writeMarkdown(b, rep, hdr, repo); err != nil {
		return
	}
	file, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = file.Write(b.Bytes())
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(f.IO.ErrOut, "perflog: warning: the job summary (GITHUB_STEP_SUMMARY) was not written: %v\n", err)
	}
}

func shortHash(h plumbing.Hash) string { return changelog.ShortHash(h) }

// workspace is an opened repository with its perflog settings.
type workspace struct {
	repo     *gitscan.Repo
	settings *config.Settings
	// settingsPath is the file settings were read from ("" for none),
	// chosen is whether --config named it
	settingsPath string
	chosen       bool
	shallow      []plumbing.Hash // the shallow-clone boundary, read once
}

// indexOptions are the index options of the workspace's history with
// these ignore-revs.
func (ws *workspace) indexOptions(revs []plumbing.Hash) index.Options {
	return index.Options{Settings: ws.settings, IgnoreRevs: revs, Shallow: ws.shallow}
}

// warnShallow says, once per process, that a history read from a shallow
// clone stops at its boundary: what existed there is attributed to the
// boundary commit, not to the PR that introduced it.
func warnShallow(f *Factory, ws *workspace) {
	b := ws.shallow
	if len(b) == 0 {
		return
	}
	f.shallowOnce.Do(func() {
		fmt.Fprintf(f.IO.ErrOut, "perflog: warning: shallow clone: history stops at %s, and what existed there is "+
			"attributed to it, not to the PR that introduced it; git fetch --unshallow gives the whole history "+
			"(in GitHub Actions: actions/checkout with fetch-depth: 0)\n", shortHash(b[0]))
	})
}

func openWorkspace(f *Factory, dir, settingsPath string) (*workspace, error) {
	given := dir
	dir, settingsPath = f.abs(dir), f.abs(settingsPath)
	if dir == "" {
		wd, err := f.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	r, err := f.OpenRepo(dir)
	if err != nil {
		if errors.Is(err, gitscan.ErrNotRepository) {
			if given == "" {
				given = dir
			}
			return nil, fmt.Errorf("%s is not inside a git repository (use --repo DIR)", given)
		}
		return nil, err
	}
	ws := &workspace{repo: r, shallow: r.ShallowCommits(), chosen: settingsPath != ""}
	if settingsPath == "" && r.Worktree() != "" {
		p := filepath.Join(r.Worktree(), config.SettingsFile)
		if _, err := os.Stat(p); err == nil {
			settingsPath = p
		}
	}
	if settingsPath != "" {
		ws.settingsPath = settingsPath
		if ws.settings, err = config.ReadSettings(settingsPath); err == nil {
			if err = changelog.CheckRuleOverrides(ws.settings); err != nil {
				err = fmt.Errorf("%s: %w", settingsPath, err)
			}
		}
		if err != nil {
			r.Close()
			return nil, err
		}
	}
	return ws, nil
}

// recipeChangeJSON is one changed recipe in verify's JSON.
type recipeChangeJSON struct {
	Key    string   `json:"key"`
	Kind   string   `json:"kind"`
	OldKey string   `json:"old_key,omitempty"`
	File   string   `json:"file,omitempty"`
	Line   int      `json:"line,omitempty"`
	Files  []string `json:"scripts,omitempty"`
	Fields int      `json:"fields_changed"`
}

func diffChanges(rc recipe.RecipeChange) []config.Change {
	if rc.Diff == nil {
		return nil
	}
	return rc.Diff.Changes
}

// postComment posts (or updates) the markdown report on the PR. Failing
// to post never changes the verdict: it is one warning.
func postComment(ctx context.Context, opts *VerifyOptions, ws *workspace, rep *changelog.Report, hdr verifyHeader) {
	errOut := opts.Factory.IO.ErrOut
	if hdr.pr == 0 {
		fmt.Fprintln(errOut, "perflog: warning: --comment needs a PR number (--pr or the CI environment); not posted")
		return
	}
	g := newGitHub(opts.Factory, ws, opts.Offline)
	if g == nil {
		fmt.Fprintln(errOut, "perflog: warning: --comment needs GITHUB_TOKEN (or GH_TOKEN) and no --offline; not posted")
		return
	}
	var b strings.Builder
	if err := writeMarkdown(&b, rep, hdr, ws.settings.Repository()); err != nil {
		fmt.Fprintf(errOut, "perflog: warning: %v\n", err)
		return
	}
	u, err := g.upsertComment(ctx, hdr.pr, b.String())
	if err != nil {
		g.fail(err)
		return
	}
	fmt.Fprintf(errOut, "perflog: posted the findings on PR #%d: %s\n", hdr.pr, u)
}

// nothingCommitted refuses a contributor's run that would judge someone
// else's commit: HEAD is the base branch's last commit (nothing committed
// beyond it) while the work tree holds uncommitted changes, while --pr
// names another PR than that commit's, or on a branch of its own (a
// branch other than main or GITHUB_BASE_REF: the contributor's, with
// nothing in it yet).
func nothingCommitted(ws *workspace, head plumbing.Hash, opts *VerifyOptions) error {
	c, err := ws.repo.Commit(head)
	if err != nil {
		return nil
	}
	theirs, hasPR := c.PR()
	dirty, _ := ws.repo.WorktreeChanges(head, load.WorktreePaths(ws.settings))
	other := opts.PRSet && hasPR && theirs != opts.PR
	branch := ws.repo.Branch()
	ownBranch := branch != "" && branch != "main" && branch != opts.Factory.Getenv("GITHUB_BASE_REF")
	if len(dirty) == 0 && !other && !ownBranch {
		return nil
	}
	what := "the base branch's last commit " + shortHash(head)
	if hasPR {
		what += fmt.Sprintf(" (#%d)", theirs)
	}
	why := "nothing is committed beyond it"
	if ownBranch {
		why = "nothing is committed on " + branch + " beyond it"
	}
	if len(dirty) > 0 {
		why += "; the work tree has uncommitted changes (" + firstOf(dirty, 3) + ")"
	}
	return &flagError{err: fmt.Errorf("no commits to judge: HEAD is %s and %s", what, why),
		hint: "Commit your change, or pass --worktree to judge the work tree as it is."}
}
