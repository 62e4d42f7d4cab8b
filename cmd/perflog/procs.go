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
// on the corpus (hyperfine, cold processes, GOMAXPROCS=2 → 1): --help
// 54 → 46 ms, warm audit 68 → 59 ms, warm blame 59 → 49 ms, a one-commit
// index update 182 → 130 ms, blame without the index 152 → 107 ms, audit
// without it 240 → 208 ms, verify 176 → 146 ms, changelog new 153 →
// 134 ms; the claims of the whole history 3.07 → 3.03 s.
//
// So a run uses one core, and takes every core (Go's default) only for
// work large enough to pay for its pipelines: a cold index build, where
// the recipe rows are computed while the rest is written (0.73 → 0.65 s on
// the corpus, 13.6 → 11.2 s on a history ten times its size). An audit
// without the index of that ten-times history is the cost of the rule:
// 5.4 s on every core, 6.4 s on one; with the index it reads its answer.
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
