// Package load reads a change from a git repository for the changelog's
// checks: the base a change is judged against, this run's PR number, and
// base..head (or the work tree on top of head) as the two revisions
// changelog.Verify and the draft read. It is the one place between the
// changelog's rules and git: changelog itself reads files through
// revisions it is handed.
//
// Dependencies: changelog, config, gitscan, recipe, recipe/revfs,
// github.com/go-git/go-git/v5 (object ids).
package load

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/revfs"
)

// Input is what changelog.Verify judges of base..head: each side read
// once, through the revisions of the change.
func Input(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string) (*changelog.Input, error) {
	ch, err := Change(r, s, base, head, baseName, headName)
	if err != nil {
		return nil, err
	}
	return newInput(s, ch, base)
}

// newInput is changelog.NewInput with the base commit named as git
// reads it.
func newInput(s *config.Settings, ch *recipe.Change, base plumbing.Hash) (*changelog.Input, error) {
	in, err := changelog.NewInput(s, ch)
	if err == nil && !base.IsZero() {
		in.BaseCommit = changelog.ShortHash(base)
	}
	return in, err
}

// WorktreeInput is Input with the work tree as head: its changelog, its
// master configs and its uncommitted changes on top of head (what
// `changelog new` drafts from, before it is committed). For a bare
// repository it is Input of base..head.
func WorktreeInput(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName string) (*changelog.Input, error) {
	ch, err := WorktreeChange(r, s, base, head, baseName)
	if err != nil {
		return nil, err
	}
	return newInput(s, ch, base)
}

// Change is base..head of a repository for the diff-aware rules: both
// revisions read through recipe.Rev, and the files that differ. A zero
// base is the empty tree.
func Change(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string) (*recipe.Change, error) {
	return changeOf(r, s, base, head, baseName, headName, r.Tree(head), nil)
}

// WorktreeChange is base..head plus the work tree's uncommitted changes
// on top of head (WorktreePaths), read from the work tree; for a bare
// repository it is base..head. What the change reads at base must be
// there: a partial clone (--filter=blob:none) lacks the blobs, and a
// change read from missing files would describe every recipe as added.
func WorktreeChange(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName string) (*recipe.Change, error) {
	if err := checkBase(r, s, base, baseName); err != nil {
		return nil, err
	}
	if r.Worktree() == "" {
		return Change(r, s, base, head, baseName, changelog.ShortHash(head))
	}
	wt, err := r.WorktreeChanges(head, WorktreePaths(s))
	if err != nil {
		return nil, err
	}
	return changeOf(r, s, base, head, baseName, "work tree", revfs.Dir(r.Worktree()), wt)
}

// changeOf is the change from base to headFiles: the files that differ
// between base and head, and extra (the work tree's).
func changeOf(r *gitscan.Repo, s *config.Settings, base, head plumbing.Hash, baseName, headName string, headFiles fs.FS, extra []string) (*recipe.Change, error) {
	fcs, err := r.ChangedFiles(base, head)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(fcs)+len(extra))
	for _, fc := range fcs {
		paths = append(paths, fc.Path)
	}
	paths = append(paths, extra...)
	var bf fs.FS = emptyTree{}
	if !base.IsZero() {
		bf = r.Tree(base)
	}
	return recipe.NewChange(recipe.NewRev(baseName, bf, s), recipe.NewRev(headName, headFiles, s), paths), nil
}

// checkBase reads the changelog and the master configs at base, and
// bounds them and the work tree's: a file that cannot be read there is an
// error that says why, not an added recipe.
func checkBase(r *gitscan.Repo, s *config.Settings, base plumbing.Hash, baseName string) error {
	var paths []string
	for _, layout := range s.MasterCandidates() {
		paths = append(paths, layout...)
	}
	paths = append(paths, s.ChangelogPath())
	for _, p := range paths {
		data, err := r.ReadFile(base, p)
		if err != nil && !errors.Is(err, gitscan.ErrNotFound) {
			return fmt.Errorf("reading %s at %s: %w (a partial or shallow clone? fetch the base's objects)", p, baseName, err)
		}
		check := changelog.CheckConfigSize
		if p == s.ChangelogPath() {
			check = changelog.CheckSize
		}
		if err := check(p+" at "+baseName, len(data)); err != nil {
			return err
		}
		if wt := r.Worktree(); wt != "" {
			if data, ok, _ := revfs.ReadFile(revfs.Dir(wt), p); ok {
				if err := check(p+" in the work tree", len(data)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// emptyTree is a tree without files (the base of a first commit).
type emptyTree struct{}

func (emptyTree) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// WorktreePaths are the work-tree paths whose uncommitted changes count:
// the changelog, the master configs' directories, benchmarks/ and runners/.
func WorktreePaths(s *config.Settings) []string {
	out := []string{s.ChangelogPath(), "benchmarks", "runners"}
	for _, layout := range s.MasterCandidates() {
		for _, p := range layout {
			out = append(out, path.Dir(p))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Master loads the master configs at a commit (see MasterFiles).
func Master(r *gitscan.Repo, s *config.Settings, commit plumbing.Hash) (*config.Master, error) {
	files, err := MasterFiles(r, s, commit)
	if err != nil {
		return nil, err
	}
	return config.LoadMaster(files)
}

// MasterFiles reads the master config files at a commit, trying each
// layout of the settings (configs/ first, then .github/configs/ where the
// InferenceX configs lived before #1992). A layout is used when any of its
// files exists; a missing file has nil Data (config.LoadMaster reports it).
func MasterFiles(r *gitscan.Repo, s *config.Settings, commit plumbing.Hash) ([]config.File, error) {
	files, err := recipe.MasterFiles(r.Tree(commit), s)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := changelog.CheckConfigSize(f.Path+" at "+changelog.ShortHash(commit), len(f.Data)); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// BaseOptions say how ResolveBase picks the base of a change.
type BaseOptions struct {
	// Rev is the base the user named (--base); "" picks one.
	Rev string
	// MergeBase judges the change from the merge-base of Rev and head
	// (the full profile, changelog new), rather than from Rev as given
	// (the gate compares two trees, as the incumbent CI does).
	MergeBase bool
	// OnBranch says what a head on the base branch itself is compared
	// with: itself, so that only the work tree's changes count (changelog
	// new), or else its last commit (verify).
	OnBranch bool
	// Getenv reads the CI environment (GITHUB_BASE_REF).
	Getenv func(string) string
}

// ResolveBase picks the base commit of a change ending at head and names
// it for messages. Without a Rev it is the merge-base with
// origin/$GITHUB_BASE_REF, origin/main or main, the first that exists. A
// base that cannot be found (a shallow clone, no base branch) is an error
// that says how to fetch it or to pass --base.
func ResolveBase(r *gitscan.Repo, head plumbing.Hash, o BaseOptions) (plumbing.Hash, string, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	hint := "fetch the base branch with full history (actions/checkout: fetch-depth: 0) or pass --base REV"
	if o.Rev != "" {
		b, err := r.Resolve(o.Rev)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("--base: %w", err)
		}
		if !o.MergeBase {
			return b, o.Rev, nil
		}
		mb, err := r.MergeBase(b, head)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("cannot find the merge-base of %s and %s: %w; %s", o.Rev, changelog.ShortHash(head), err, hint)
		}
		if mb != b {
			return mb, "merge-base(" + o.Rev + ")", nil
		}
		return b, o.Rev, nil
	}
	var cands []string
	if ref := getenv("GITHUB_BASE_REF"); ref != "" {
		cands = append(cands, "origin/"+ref)
	}
	for _, c := range []string{"origin/main", "main"} {
		if !slices.Contains(cands, c) {
			cands = append(cands, c)
		}
	}
	short := changelog.ShortHash
	for _, c := range cands {
		b, err := r.Resolve(c)
		if err != nil {
			continue
		}
		mb, err := r.MergeBase(b, head)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s has no merge-base with %s (%v); %s", c, short(head), err, hint)
		}
		if mb == head && o.OnBranch {
			return head, "HEAD", nil
		}
		if mb == head {
			// head is on the base branch itself: judge its last commit
			hc, err := r.Commit(head)
			if err != nil || len(hc.Parents) == 0 {
				if r.Shallow() {
					return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s is the boundary of this shallow clone, its parent was not fetched; %s", short(head), hint)
				}
				return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: %s is %s's root commit, with nothing before it to judge it against; verify a later commit, or uncommitted changes with --worktree --base HEAD", short(head), c)
			}
			if _, err := r.Commit(hc.Parents[0]); err != nil && r.Shallow() {
				return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: the parent of %s was not fetched (this is a shallow clone); %s", short(head), hint)
			}
			return hc.Parents[0], short(head) + "^", nil
		}
		return mb, "merge-base(" + c + ")", nil
	}
	shallow := ""
	if r.Shallow() {
		shallow = " (this is a shallow clone)"
	}
	return plumbing.ZeroHash, "", fmt.Errorf("cannot determine the base revision: none of %s exists%s; %s", strings.Join(cands, ", "), shallow, hint)
}

// HeadOnBase reports whether head is on the base branch ResolveBase would
// pick (origin/$GITHUB_BASE_REF, origin/main or main): nothing is
// committed beyond it.
func HeadOnBase(r *gitscan.Repo, head plumbing.Hash, getenv func(string) string) bool {
	cands := []string{"origin/main", "main"}
	if getenv != nil {
		if ref := getenv("GITHUB_BASE_REF"); ref != "" {
			cands = append([]string{"origin/" + ref}, cands...)
		}
	}
	for _, c := range cands {
		if b, err := r.Resolve(c); err == nil {
			mb, err := r.MergeBase(b, head)
			return err == nil && mb == head
		}
	}
	return false
}

// PROptions say where ResolvePR looks for this run's PR, in order: the
// flag, the CI environment, GitHub, the head commit's subject.
type PROptions struct {
	// Flag is --pr, when FlagSet.
	Flag    int
	FlagSet bool
	// Getenv reads the CI environment (GITHUB_REF, GITHUB_EVENT_PATH).
	Getenv func(string) string
	// Lookup asks GitHub for the PR of head (nil: not asked, as offline
	// or in CI, where the environment names it).
	Lookup func() (int, bool)
	// Subject reads "... (#2710)" from the subject of a one-commit range
	// (a squash merge on main).
	Subject bool
}

// ResolvePR is this run's PR number and where it was found ("--pr",
// "GITHUB_REF", "GitHub", ...); 0 and "" when nothing names one (a run
// on main). An unreadable GITHUB_EVENT_PATH is an error.
func ResolvePR(r *gitscan.Repo, base, head plumbing.Hash, o PROptions) (int, string, error) {
	if o.FlagSet {
		return o.Flag, "--pr", nil
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if n, src, err := changelog.PRFromEnv(getenv); err != nil || n != 0 {
		return n, src, err
	}
	if o.Lookup != nil {
		if n, ok := o.Lookup(); ok && n > 0 {
			return n, "GitHub", nil
		}
	}
	if o.Subject {
		if c, err := r.Commit(head); err == nil && len(c.Parents) > 0 && c.Parents[0] == base {
			if n, ok := c.PR(); ok {
				return n, "the head commit's subject", nil
			}
		}
	}
	return 0, "", nil
}

// JudgedSettings returns the settings verify judges base..head by. A
// change may not judge itself: when the change's settings file (the work
// tree's, which the run read as used from usedPath, "" for none; in a
// repository without a work tree, head's) differs from the one at base,
// the base's settings are returned (nil when it has none), with what the
// change's edit would relax; otherwise used, and no edit.
func JudgedSettings(r *gitscan.Repo, base, head plumbing.Hash, used *config.Settings, usedPath string) (*config.Settings, *changelog.SettingsEdit, error) {
	at := func(rev plumbing.Hash) ([]byte, bool, error) {
		data, err := r.ReadFile(rev, config.SettingsFile)
		if errors.Is(err, gitscan.ErrNotFound) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
	var usedData []byte
	usedThere := usedPath != ""
	switch {
	case usedThere:
		data, err := config.ReadRegular(usedPath, config.MaxSettingsSize)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", config.ErrSettings, err)
		}
		usedData = data
	case r.Worktree() == "":
		data, ok, err := at(head)
		if err != nil {
			return nil, nil, err
		}
		usedData, usedThere = data, ok
		if ok {
			if used, err = parseSettings(head, data); err != nil {
				return nil, nil, err
			}
		}
	}
	baseData, baseThere, err := at(base)
	if err != nil {
		return nil, nil, err
	}
	if usedThere == baseThere && bytes.Equal(usedData, baseData) {
		return used, nil, nil
	}
	var judged *config.Settings
	if baseThere {
		if judged, err = parseSettings(base, baseData); err != nil {
			return nil, nil, err
		}
	}
	return judged, &changelog.SettingsEdit{Path: config.SettingsFile, Added: !baseThere, Removed: !usedThere,
		Relaxed: changelog.RelaxedRules(judged, used)}, nil
}

// parseSettings parses the settings file at rev, its rule ids checked.
func parseSettings(rev plumbing.Hash, data []byte) (*config.Settings, error) {
	name := config.SettingsFile + " at " + rev.String()[:10]
	s, err := config.ParseSettings(name, data)
	if err == nil {
		if err = changelog.CheckRuleOverrides(s); err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, err
}
