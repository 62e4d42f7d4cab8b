package main

import (
	"runtime"
	"testing"
	"time"
)

// TestWatchHeap: the callback runs after a collection that leaves more
// than bigHeap live, and not before.
func TestWatchHeap(t *testing.T) {
	old := bigHeap
	defer func() { bigHeap = old }()
	runtime.GC()
	bigHeap = liveHeap() + 16<<20
	called := make(chan struct{}, 1)
	watchHeap(func() { called <- struct{}{} })
	for range 3 {
		runtime.GC()
	}
	select {
	case <-called:
		t.Fatal("called while the live heap was small")
	case <-time.After(50 * time.Millisecond):
	}
	keep := make([][]byte, 0, 64)
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-called:
			runtime.KeepAlive(keep)
			return
		case <-deadline:
			t.Fatalf("not called with %d MB live (threshold %d MB)", liveHeap()>>20, bigHeap>>20)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
