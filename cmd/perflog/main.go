// Command perflog checks and explains the perf-changelog of benchmark-recipe
// repositories such as SemiAnalysisAI/InferenceX, from git history, offline.
//
// This package is the command tree: it parses flags, builds options, calls
// the domain packages (changelog, config, gitscan) and renders their
// results. It is the only place cobra and tablewriter are wired.
package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	// first of all: the process initialises its packages on one core, without allocation sampling
	_ "github.com/perflog/perflog/internal/startup"
)

func main() {
	oneCore()
	tuneGC()
	os.Exit(Main())
}

// Garbage-collector settings for a command-line process, used unless the
// user sets GOGC or GOMEMLIMIT. Most perflog runs answer from the index in
// a few milliseconds and allocate a few megabytes: with Go's default
// (collect at 4 MB, then at twice the live heap) they spend more time in
// the collector, and faulting in the fresh pages it hands out, than in
// their work. Collecting at five times the live heap, within a soft limit,
// lets them finish without a collection. The limit is low enough that a
// run whose live heap stays just under bigHeap does not grow to five times
// it (with 256 MiB, a one-commit update of an index ten times the corpus
// peaked at 309 MB resident).
//
// A long run whose live heap passes bigHeap (a cold index build of a large
// history) goes back to Go's GOGC of 100, within a soft limit that follows
// the live heap: half as much again, and at least bigLimit. A fixed limit
// would make the collector run back to back once the live heap neared it
// (a build of a history ten times the corpus took 51 s instead of 18 s);
// without one, that build peaked at 320 MB resident instead of 270 MB.
const (
	gcPercent     = 400
	gcMemoryLimit = 128 << 20
	bigLimit      = 200 << 20
)

var bigHeap uint64 = 48 << 20

func tuneGC() {
	_, percentSet := os.LookupEnv("GOGC")
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	if percentSet && limitSet {
		return
	}
	if !percentSet {
		debug.SetGCPercent(gcPercent)
	}
	if !limitSet {
		debug.SetMemoryLimit(gcMemoryLimit)
	}
	big := false
	watchHeap(func(live uint64) bool {
		if !big {
			if live <= bigHeap {
				return true
			}
			big = true
			if !percentSet {
				debug.SetGCPercent(100)
			}
		}
		if limitSet {
			return false
		}
		debug.SetMemoryLimit(bigLimitFor(live))
		return true
	})
}

// A cold index build allocates about 210 MB on the corpus, most of it
// short-lived (the versions read, the recipes parsed and diffed), and
// holds 40-50 MB. It does not collect until its heap reaches bulkHeap
// (unless the user sets GOGC or GOMEMLIMIT): one collection instead of
// two on the corpus, and none of the write barriers and sweeping that
// come with them in between. The collection the limit then starts hands
// over to tuneGC's watch, which goes to GOGC 100 within a limit that
// follows the live heap once that is big (a history ten times the
// corpus). The heap's huge pages cover that much (preferHugePagesFor):
// beyond them each fresh 4 KiB page would be a fault. Measured: index
// --rebuild 320 → 304 ms (medians of 30 interleaved runs), peak RSS 150
// → 184 MB; 224 MB gave 308 ms and 241 MB; at 10x 260 MB either way.
const bulkHeap = 160 << 20

// bulkGC prepares the collector of a cold index build (see bulkHeap).
func bulkGC() {
	_, percentSet := os.LookupEnv("GOGC")
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	if percentSet || limitSet {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(bulkHeap)
}

// bigLimitFor is the soft memory limit of a run with live bytes live on
// its heap, once big.
func bigLimitFor(live uint64) int64 {
	return max(bigLimit, int64(min(live+live/2, math.MaxInt64/2)))
}

// gcSentinel is collected by every garbage collection; its finalizer
// checks the live heap and arms the next one. (Large enough not to be
// allocated in a tiny block, whose finalizer may never run.)
type gcSentinel struct{ _ [32]byte }

// watchHeap calls f with the live heap after every collection, until f
// returns false.
func watchHeap(f func(live uint64) bool) {
	s := new(gcSentinel)
	runtime.SetFinalizer(s, func(*gcSentinel) {
		if f(liveHeap()) {
			watchHeap(f)
		}
	})
}

func liveHeap() uint64 {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64()
}
