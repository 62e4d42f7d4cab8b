package main

import (
	"runtime"
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

	// the user's setting wins
	t.Setenv("GOMAXPROCS", "3")
	runtime.GOMAXPROCS(3)
	oneCore()
	allCores()
	if n := runtime.GOMAXPROCS(0); n != 3 {
		t.Fatalf("with GOMAXPROCS=3 set: %d", n)
	}
}
