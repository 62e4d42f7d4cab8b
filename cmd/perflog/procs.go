package main

import (
	"os"
	"runtime"
)

// How many cores a run uses. Most perflog runs are short and sequential:
// an answer read from the index, a check of one change, a history of a
// few thousand commits read from git. Go gives such a process every core,
// and then its background goroutines (the collector's idle workers, the
// sweeper, database/sql's opener, a pipeline's other end) wake other
// threads, each wake-up a futex call and an inter-processor interrupt.
// Where those are dear (the 2-vCPU virtual machine perflog was measured
// on, like most CI runners) that costs more than it gains. Measured there
// on the corpus (hyperfine, cold processes, this binary against one that
// keeps both cores): a one-commit index update 180 → 116 ms, blame
// without the index 142 → 117 ms, verify 147 → 135 ms, audit without the
// index 233 → 228 ms. Runs answered from the index do not change: what
// they spend before main (package initialisation, which GOMAXPROCS=1 in
// the environment would also shorten, by 8-10 ms) is out of main's reach.
//
// So a run uses one core, and takes every core (Go's default) only for
// work large enough to pay for its pipelines: a cold index build, where
// the recipe rows are computed while the rest is written (0.73 → 0.65 s on
// the corpus, 13.6 → 11.2 s on a history ten times its size). An audit
// without the index of that ten-times history is the cost of the rule:
// 5.4 s on every core, 6.4 s on one (measured before its reads got their
// growing caches); with the index it reads its answer.
//
// Nothing changes when the user sets GOMAXPROCS.

func procsSet() bool { return os.Getenv("GOMAXPROCS") != "" }

// oneCore makes the run use one core (see above); main calls it first.
func oneCore() {
	if !procsSet() {
		runtime.GOMAXPROCS(1)
	}
}

// allCores gives the run back Go's default number of cores, for bulk work.
func allCores() {
	if !procsSet() {
		runtime.SetDefaultGOMAXPROCS()
	}
}
