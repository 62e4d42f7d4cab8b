package main

import (
	"os"
	"runtime"
	"strconv"
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
// index 233 → 228 ms. Runs answered from the index did not change: what
// they spend is mostly before main, in package initialisation (see
// internal/startup below).
//
// So a run uses one core, and takes every core (Go's default) only for
// work large enough to pay for its pipelines: a cold index build, where
// the recipe rows are computed while the rest is written (0.73 → 0.65 s on
// the corpus, 13.6 → 11.2 s on a history ten times its size). An audit
// without the index of that ten-times history is the cost of the rule:
// 5.4 s on every core, 6.4 s on one (measured before its reads got their
// growing caches); with the index it reads its answer.
//
// The process starts on one core: package internal/startup sets it in
// its init, before the inits of the standard library and the
// dependencies, which then run without waking other threads, and main
// then keeps it (or restores the user's setting). Setting it in main
// instead cost perflog --help 1000 page faults instead of 840, and an
// answer from the index (changelog audit) 1530 instead of 1400 (perf
// stat, 20 runs each); at about 10 µs a fault here, 1.5-2 ms a run.
//
// Nothing changes when the user sets GOMAXPROCS.

func procsSet() bool { return os.Getenv("GOMAXPROCS") != "" }

// oneCore makes the run use one core (see above), or restores the user's
// GOMAXPROCS, which internal/startup overrode; main calls it first.
func oneCore() {
	v := os.Getenv("GOMAXPROCS")
	if v == "" {
		runtime.GOMAXPROCS(1)
		return
	}
	// as the runtime reads it: a positive number, else the default
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		runtime.GOMAXPROCS(n)
	} else {
		runtime.SetDefaultGOMAXPROCS()
	}
}

// allCores gives the run back Go's default number of cores, for bulk work.
func allCores() {
	if !procsSet() {
		runtime.SetDefaultGOMAXPROCS()
	}
}
