package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/safefile"
	"github.com/perflog/perflog/recipe/revfs"
)

// InitOptions are the parsed flags of `perflog init`.
type InitOptions struct {
	Factory *Factory
	Repo    string
	Force   bool
}

func newInitCmd(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented .perflog.yaml and a GitHub workflow for this repository",
		Long: `Init writes .perflog.yaml, with the settings perflog found for this
repository (the changelog, the master configs, the GitHub repository from the
origin remote) and every other setting commented out at its default, and
.github/workflows/perflog.yml, the workflow that runs the gate on pull
requests. An existing file is kept (and said so) unless --force is given, so
init can run again to add what is missing. It declares
perflog the merge driver of the changelog in .gitattributes and prints the git
config command that defines the driver (see perflog changelog merge).`,
		Args: argsFor(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return initRun(opts)
		},
	}
	repoFlag(cmd.Flags(), &opts.Repo)
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace existing files")
	return cmd
}

func initRun(opts *InitOptions) error {
	ws, err := openWorkspace(opts.Factory, opts.Repo, "")
	if err != nil {
		return err
	}
	defer ws.repo.Close()
	root := ws.repo.Worktree()
	if root == "" {
		return fmt.Errorf("the repository has no work tree to write the settings to")
	}
	files := map[string]string{
		config.SettingsFile:             initSettings(ws, revfs.Dir(root)),
		".github/workflows/perflog.yml": initWorkflow(actionRef(moduleVersion())),
	}
	for _, name := range []string{config.SettingsFile, ".github/workflows/perflog.yml"} {
		full := filepath.Join(root, filepath.FromSlash(name))
		if _, err := os.Stat(full); err == nil && !opts.Force {
			fmt.Fprintf(opts.Factory.IO.ErrOut, "kept %s (it exists; --force replaces it)\n", name)
			continue
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if _, err := safefile.Write(root, name, []byte(files[name])); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		fmt.Fprintf(opts.Factory.IO.ErrOut, "wrote %s\n", name)
	}
	return initMergeDriver(opts.Factory, root, ws.settings.ChangelogPath())
}

// initMergeDriver declares perflog the merge driver of the changelog in
// .gitattributes (once), and says the command that defines the driver:
// git takes a driver's command from its config only, never from a file
// a repository carries.
func initMergeDriver(f *Factory, root, changelogPath string) error {
	line := changelogPath + " merge=perflog"
	const name = ".gitattributes"
	old, err := os.ReadFile(filepath.Join(root, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	has := false
	for _, l := range strings.Split(string(old), "\n") {
		has = has || strings.TrimSpace(l) == line
	}
	if !has {
		data := old
		if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
			data = append(data, '\n')
		}
		data = append(data, line+"\n"...)
		if _, err := safefile.Write(root, name, data); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		fmt.Fprintf(f.IO.ErrOut, "wrote %s (%s)\n", name, line)
	}
	fmt.Fprintf(f.IO.ErrOut, "to merge %s without conflicts, run once in each clone:\n  git config merge.perflog.driver \"perflog changelog merge %%O %%A %%B %%P\"\n", changelogPath)
	return nil
}

// initSettings is a .perflog.yaml for the repository: what was found set,
// the rest commented at its default.
func initSettings(ws *workspace, wt fs.FS) string {
	s := ws.settings
	var b strings.Builder
	b.WriteString("# perflog settings (perflog init). Every setting is optional; a commented\n# one shows its default. Paths are relative to the repository root.\n\n")
	b.WriteString("changelog:\n")
	fmt.Fprintf(&b, "  file: %s\n", s.ChangelogPath())
	masters := config.DefaultMasterFiles
	for _, layout := range s.MasterCandidates() {
		if len(layout) > 0 && revfs.Exists(wt, layout[0]) {
			masters = layout
			break
		}
	}
	if s == nil || len(s.Changelog.MasterConfigs) == 0 {
		// the default layouts are followed through history (configs/
		// moved from .github/configs/ in #1992); naming one would cut
		// the history off at the move
		fmt.Fprintf(&b, "  # master-configs: [%s]   # found; unset, both layouts are followed through history\n", strings.Join(masters, ", "))
	} else {
		fmt.Fprintf(&b, "  master-configs: [%s]\n", strings.Join(masters, ", "))
	}
	repo := s.Repository()
	if m := githubRemote.FindStringSubmatch(ws.repo.RemoteURL("origin")); m != nil {
		repo = m[1] + "/" + m[2]
	}
	fmt.Fprintf(&b, "\ngithub:\n  repository: %s   # canonical pr-links point here\n", repo)
	b.WriteString(`
# rules:                        # the full profile's severities: error | warning | info | off
#   append-only/not-at-end: warning
#   recipe/*: warning           # a whole family (perflog changelog rules lists them)

# ignore-revs: []               # commits history attribution looks through (reformats)
# ignore-revs-file: .git-blame-ignore-revs

# scripts:                      # which script runs a recipe (perflog config scripts shows it)
#   runners: configs/runners.yaml
`)
	return b.String()
}

// actionRef is the ref of perflog's action the written workflow uses: the
// release this binary is (the action then runs that release's prebuilt
// binary), else main (built from source).
func actionRef(version string) string {
	if releaseTag.MatchString(version) {
		return version
	}
	return "main"
}

// releaseTag matches a release's tag, not a pseudo-version or a branch.
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// moduleVersion is the release the binary was built for, else the
// version of perflog's module in its build information ("(devel)" when
// built from a checkout that is not a tagged release).
func moduleVersion() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}

func initWorkflow(ref string) string {
	pin := "      - uses: perflog/perflog@" + ref + "\n"
	if ref == "main" {
		pin = "      # pin a release tag (perflog/perflog@vX.Y.Z) to run its prebuilt, checksum-verified\n" +
			"      # binary; at main the action builds perflog from source with Go\n" + pin
	}
	return initWorkflowHead + pin
}

const initWorkflowHead = `# perflog: the changelog gate (perflog init). See the perflog README.
name: perflog
on:
  pull_request:
    paths: [perf-changelog.yaml, configs/**, .github/configs/**, benchmarks/**, runners/**]
permissions:
  contents: read
  security-events: write        # the SARIF upload
jobs:
  verify:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0        # perflog needs the base branch's history
`
