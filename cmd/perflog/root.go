package main

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "perflog <command>",
		Short: "Check and explain a benchmark repository's perf-changelog from git history",
		Long: `perflog checks and explains the perf-changelog.yaml of benchmark-recipe
repositories such as SemiAnalysisAI/InferenceX, from git history, offline.

Exit status (every command):
  0    success, no error findings
  1    the check reported error findings
  2    usage error or runtime error (not a repository, unknown revision, unreadable file)
  130  interrupted`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       version(),
	}
	root.SetVersionTemplate("perflog {{.Version}}\n")
	var color string
	root.PersistentFlags().StringVar(&color, "color", "auto", "`when` to colour the output: auto (on a terminal, unless NO_COLOR or TERM=dumb; CLICOLOR_FORCE forces it), always or never")
	root.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	root.PersistentFlags().StringVarP(&f.output, "output", "o", "", "write the output to `file` instead of standard output, atomically and only when the run completes (exit 0 or 1)")
	root.PersistentFlags().BoolVar(&f.noPager, "no-pager", false, "never page the output (default on a terminal: $PERFLOG_PAGER, else $PAGER, else less -FRX)")
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if !f.IO.SetColor(color) {
			return flagErrorf("invalid --color %q (want auto, always or never)", color)
		}
		if f.output == "" && !f.noPager && paged[c.CommandPath()] {
			f.startPager()
		}
		if f.output != "" {
			// rendered for a file: no terminal tables, colour or pager
			f.IO.Out = &f.outputBuf
			f.IO.SetStdoutTTY(false)
		}
		return nil
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &flagError{err: plainFlagError(err), hint: "Run '" + c.CommandPath() + " --help' for usage."}
	})
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print perflog's version, the commit it was built from, and the Go version",
		Args:  argsFor(),
		RunE: func(c *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.IO.Out, "perflog %s\n", version())
			return err
		},
	})
	root.AddCommand(newChangelogCmd(f), newProvenanceCmd(f), newIndexCmd(f, nil), newQueryCmd(f, nil), newConfigCmd(f), newLintCmd(f, nil), newInitCmd(f, nil), newReportCmd(f, nil))
	registerCompletions(f, root)
	return root
}

func newChangelogCmd(f *Factory) *cobra.Command {
	cmd := groupCmd(&cobra.Command{
		Use:   "changelog <command>",
		Short: "Verify and explain perf-changelog.yaml",
	})
	cmd.AddCommand(newVerifyCmd(f, nil), newAuditCmd(f, nil), newNewCmd(f, nil), newRulesCmd(f), newMergeCmd(f, nil), newFixCmd(f, nil))
	return cmd
}

// badValue is pflag's message for a value its type does not parse.
var badValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (?:strconv\.Parse\w+: parsing ".*": )?(.*)$`)

// plainFlagError says what pflag says of a bad flag value in a user's
// terms ("invalid --pr "abc": want a whole number"), without Go's.
func plainFlagError(err error) error {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	why := m[3]
	switch why {
	case "invalid syntax":
		why = "want a whole number"
	case "value out of range":
		why = "the number is out of range"
	}
	return fmt.Errorf("invalid %s %q: %s", m[2], m[1], why)
}

// argsFor checks a command's arguments: exactly the names given (none for
// a command that takes none), as a usage error naming what is missing or
// extra and the command's help.
func argsFor(names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		hint := "Run '" + c.CommandPath() + " --help' for usage."
		switch {
		case len(args) > len(names) && len(names) == 0:
			if c.Flags().Lookup("head") != nil {
				return &flagError{err: fmt.Errorf("%s takes no arguments, got %q: name revisions with --base and --head", c.CommandPath(), args[0]), hint: hint}
			}
			return &flagError{err: fmt.Errorf("%s takes no arguments, got %q", c.CommandPath(), args[0]), hint: hint}
		case len(args) > len(names):
			return &flagError{err: fmt.Errorf("%s takes %s, got %d arguments", c.CommandPath(), strings.Join(names, " "), len(args)), hint: hint}
		case len(args) < len(names):
			return &flagError{err: fmt.Errorf("%s needs %s", c.CommandPath(), strings.Join(names[len(args):], " and ")), hint: hint}
		}
		return nil
	}
}

// groupCmd makes cmd, a command of subcommands, refuse anything else: an
// unknown subcommand at any depth is a usage error (exit 2) with the
// closest names, never the group's help and exit 0 (a typo in a CI step
// would pass). Without arguments it prints its help.
func groupCmd(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	// its own flags are only --help: the rest of the line is a mistyped
	// subcommand's, which names the mistake better than "unknown flag"
	cmd.DisableFlagParsing = true
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			return c.Help()
		}
		if strings.HasPrefix(args[0], "-") {
			return &flagError{err: fmt.Errorf("unknown flag %s for %q: name one of its commands first", args[0], c.CommandPath()),
				hint: "Run '" + c.CommandPath() + " --help' for its commands."}
		}
		hint := ""
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = "Did you mean this?\n\t" + strings.Join(s, "\n\t") + "\n\n"
		}
		hint += "Run '" + c.CommandPath() + " --help' for its commands."
		return &flagError{err: fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), hint: hint}
	}
	return cmd
}

// releaseVersion is the release a binary was built for, set by the
// release build (.goreleaser.yaml: -X main.releaseVersion=v{{.Version}});
// "" in any other build.
var releaseVersion string

// version describes the binary: its release, else from its build
// information the module version (a tagged release) or the commit it was
// built from, its date, and whether the tree had changes; then the Go
// version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if releaseVersion != "" {
		v = releaseVersion
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" && (v == "" || v == "(devel)") {
		v = rev[:min(12, len(rev))]
		if t := settings["vcs.time"]; t != "" {
			v += " " + strings.TrimSuffix(t, "Z")[:min(10, len(t))]
		}
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
	}
	if v == "" {
		v = "(devel)"
	}
	return v + ", " + bi.GoVersion
}

// paged are the commands whose output can run long: on a terminal they
// go through a pager, as git's and gh's do.
var paged = map[string]bool{
	"perflog changelog audit": true, "perflog changelog rules": true, "perflog provenance blame": true,
	"perflog provenance log": true, "perflog provenance diff": true, "perflog query": true,
	"perflog config scripts": true, "perflog lint": true,
}
