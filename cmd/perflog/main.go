// Command perflog checks and explains the perf-changelog of benchmark-recipe
// repositories such as SemiAnalysisAI/InferenceX, from git history, offline.
//
// This package is the command tree: it parses flags, builds options, calls
// the domain packages (changelog, config, gitscan) and renders their
// results. It is the only place cobra and tablewriter are wired.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// a short process that parses megabytes of YAML: fewer collections, for memory it soon gives back
		debug.SetGCPercent(gcPercent)
	}
	os.Exit(Main())
}

// gcPercent is the collector's target when GOGC is not set.
const gcPercent = 400
