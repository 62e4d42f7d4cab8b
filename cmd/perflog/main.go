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
	tuneGC()
	os.Exit(Main())
}

// Garbage-collector settings for a command-line process, used unless the
// user sets GOGC or GOMEMLIMIT. Most perflog runs answer from the index in
// a few milliseconds and allocate a few megabytes: with Go's default
// (collect at 4 MB, then at twice the live heap) they spend more time in
// the collector, and faulting in the fresh pages it hands out, than in
// their work. Collecting at five times the live heap lets them finish
// without a collection; the soft limit keeps the long runs (a cold index
// build of a large history) within a bounded footprint, the collector
// working harder only near it.
const (
	gcPercent     = 400
	gcMemoryLimit = 256 << 20
)

func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
}
