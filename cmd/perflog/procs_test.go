package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestCores(t *testing.T) {
	saved := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(saved)
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)

	t.Setenv("GOMAXPROCS", "")
	oneCore()
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("oneCore: GOMAXPROCS %d, want 1", n)
	}
	allCores()
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("allCores: GOMAXPROCS %d, want the default %d", n, def)
	}

	// the user's setting wins, though internal/startup set 1 before main
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(1)
	oneCore()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("oneCore with GOMAXPROCS=3 set: %d", n)
	}
	allCores()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("allCores with GOMAXPROCS=3 set: %d", n)
	}
	// a setting the runtime ignores gives its default
	for _, v := range []string{"0", "-2", "many"} {
		t.Setenv("GOMAXPROCS", v)
		runtime.GOMAXPROCS(1)
		oneCore()
		if n := runtime.GOMAXPROCS(0); n != def {
			t.Fatalf("oneCore with GOMAXPROCS=%q: %d, want the default %d", v, n, def)
		}
	}
}

// TestStartup: the package internal/startup leaves a process on one core
// and without allocation sampling, before main; the test binary links it
// too, through this package (TestMain gives the tests their cores back).
func TestStartup(t *testing.T) {
	if startupProcs != 1 || startupRate != 0 {
		t.Fatalf("after the inits: GOMAXPROCS %d, MemProfileRate %d; want 1 and 0", startupProcs, startupRate)
	}
}

// A cold build does not collect until its heap reaches bulkHeap, unless
// the user set the collector: then it is left as set.
func TestBulkGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	defer func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}()
	for _, c := range []struct {
		gogc, memlimit string
		percent        int
		limit          int64
	}{
		{"", "", -1, bulkHeap},
		{"50", "", 100, math.MaxInt64},
		{"", "1GiB", 100, math.MaxInt64},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		for k, v := range map[string]string{"GOGC": c.gogc, "GOMEMLIMIT": c.memlimit} {
			if v == "" {
				t.Setenv(k, "") // restored after the test
				os.Unsetenv(k)
			} else {
				t.Setenv(k, v)
			}
		}
		bulkGC()
		if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != c.percent || l != c.limit {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: GC percent %d, limit %d; want %d and %d", c.gogc, c.memlimit, p, l, c.percent, c.limit)
		}
	}
}
