package main

import "github.com/spf13/pflag"

// The flags many commands share, defined once.

// repoFlag adds --repo, the repository to work on.
func repoFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "repo", "", "repository `dir` (default: the one containing the working directory)")
}

// configFlag adds --config, the settings file.
func configFlag(fl *pflag.FlagSet, p *string) {
	fl.StringVar(p, "config", "", "settings `file` (default: .perflog.yaml at the repository root)")
}
