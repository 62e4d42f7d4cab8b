// Package startup prepares the process it is linked into before the
// packages that do work in their initialisation run: its init sets
// GOMAXPROCS to 1 and turns off the sampling of allocations.
//
// Go initialises packages in import-path order among those whose imports
// are initialised (the Go spec, "Package initialization"). This package
// imports only runtime, so it is initialised among the very first, before
// the standard library's and the dependencies' heavier inits; main imports
// it for that side effect, and decides afterwards how many cores a run
// keeps (cmd/perflog's procs.go, which also restores a user's GOMAXPROCS:
// the runtime read it before this init ran, and this package cannot read
// the environment without importing packages that would delay it).
//
// Why, on a machine where a page fault or a thread's wake-up is dear (the
// small virtual machine perflog was measured on, where a fresh page costs
// about 10 µs):
//
//   - With more than one P, a process wakes idle threads while its
//     packages initialise (the collector's goroutines, an init preempted
//     after 10 ms), and shrinking to one P later, in main, flushes the
//     other P's allocation caches into the runtime's central lists, which
//     faults in a page for each list. perflog --help faulted 1000 pages
//     with the shrink in main, 840 with it here.
//   - The allocation sampler (runtime.MemProfileRate) records a stack for
//     about every 512 KiB allocated, into a table it allocates on first
//     use; a process that never writes a heap profile pays for both.
//     perflog's developers get the profile with PERFLOG_MEMPROFILE, which
//     sets the rate again.
//
// Dependencies: runtime only (which is the point).
package startup

import "runtime"

func init() {
	runtime.GOMAXPROCS(1)
	runtime.MemProfileRate = 0
}
