package main

import (
	"strings"

	"github.com/perflog/perflog/changelog/load"
	"github.com/spf13/cobra"
)

// Shell completion (cobra's dynamic completion; `perflog completion bash`
// prints the script): the enum flags complete their values, revision
// flags the repository's branches and tags, config-key arguments the
// recipes at HEAD.

// enumFlag makes flag name of cmd complete to values.
func enumFlag(cmd *cobra.Command, name string, values ...string) {
	cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
}

// revFlags make the revision flags of cmd complete to refs and HEAD.
func revFlags(f *Factory, cmd *cobra.Command, names ...string) {
	for _, n := range names {
		cmd.RegisterFlagCompletionFunc(n, func(c *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			return completeRevs(f, c), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// repoOf opens the repository a completion is asked in (--repo if given).
func repoOf(f *Factory, c *cobra.Command) *workspace {
	dir := ""
	if fl := c.Flags().Lookup("repo"); fl != nil {
		dir = fl.Value.String()
	}
	cfg := ""
	if fl := c.Flags().Lookup("config"); fl != nil {
		cfg = fl.Value.String()
	}
	ws, err := openWorkspace(f, dir, cfg)
	if err != nil {
		return nil
	}
	return ws
}

func completeRevs(f *Factory, c *cobra.Command) []string {
	ws := repoOf(f, c)
	if ws == nil {
		return nil
	}
	defer ws.repo.Close()
	names, _ := ws.repo.RefNames()
	return append([]string{"HEAD"}, names...)
}

// completeKeys completes config-key arguments (the first n) to the
// recipes of the master configs at HEAD.
func completeKeys(f *Factory, n int) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if n >= 0 && len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return keysAtHead(f, c, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

func keysAtHead(f *Factory, c *cobra.Command, prefix string) []string {
	ws := repoOf(f, c)
	if ws == nil {
		return nil
	}
	defer ws.repo.Close()
	head, err := ws.repo.Resolve("HEAD")
	if err != nil {
		return nil
	}
	m, err := load.Master(ws.repo, ws.settings, head)
	if err != nil || m == nil {
		return nil
	}
	var out []string
	for _, k := range m.Keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// listFormats are the --format values of the listing commands ("": the
// default, a table on a terminal, else TSV).
var listFormats = []string{"", "table", "tsv", "json", "csv"}

// formats are the --format values of each command.
var formats = map[string][]string{
	"perflog changelog verify": verifyFormats,
	"perflog changelog new":    {"yaml", "json"},
	"perflog changelog audit":  listFormats[1:],
	"perflog changelog rules":  listFormats[1:],
	"perflog provenance blame": listFormats[1:],
	"perflog provenance log":   {"text", "json"},
	"perflog provenance diff":  {"text", "json"},
	"perflog lint":             lintFormats,
	"perflog config scripts":   listFormats[1:],
	"perflog config launch":    {"text", "json"},
	"perflog index":            {"text", "json"},
	"perflog query":            {"table", "tsv", "json", "csv"},
}

// registerCompletions wires the completions of every command under root.
func registerCompletions(f *Factory, root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if v, ok := formats[c.CommandPath()]; ok {
			enumFlag(c, "format", v...)
		}
		if c.Flags().Lookup("profile") != nil {
			enumFlag(c, "profile", "gate", "strict", "full")
		}
		if fl := c.Flags().Lookup("claims"); fl != nil {
			if c.Name() == "verify" {
				enumFlag(c, "claims", "contradicted", "all", "off")
			} else {
				enumFlag(c, "claims", "contradicted", "all")
			}
		}
		for _, n := range []string{"base", "head", "rev", "ignore-rev"} {
			if c.Flags().Lookup(n) != nil {
				revFlags(f, c, n)
			}
		}
		if c.Flags().Lookup("key") != nil {
			c.RegisterFlagCompletionFunc("key", completeKeys(f, -1))
		}
		switch c.CommandPath() {
		case "perflog provenance blame", "perflog provenance log":
			c.ValidArgsFunction = completeKeys(f, 1)
		case "perflog config scripts", "perflog config launch":
			c.ValidArgsFunction = completeKeys(f, -1)
		case "perflog provenance diff":
			c.ValidArgsFunction = func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
				switch len(args) {
				case 0:
					return keysAtHead(f, c, prefix), cobra.ShellCompDirectiveNoFileComp
				case 1, 2:
					return completeRevs(f, c), cobra.ShellCompDirectiveNoFileComp
				}
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
