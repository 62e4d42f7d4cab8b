// Command perflog checks and explains the perf-changelog of benchmark-recipe
// repositories such as SemiAnalysisAI/InferenceX, from git history, offline.
//
// This package is the command tree: it parses flags, builds options, calls
// the domain packages (changelog, config, gitscan) and renders their
// results. It is the only place cobra and tablewriter are wired.
package main

import "os"

// The collector runs at Go's default GOGC (why: docs/dev/performance.md).
func main() {
	os.Exit(Main())
}
