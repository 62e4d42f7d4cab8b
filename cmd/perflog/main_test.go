package main

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perflog/perflog/internal/iostreams"
)

// TestWatchHeap: the callback sees the live heap after every collection
// (here it waits for more than bigHeap live) and stops being called once
// it returns false.
func TestWatchHeap(t *testing.T) {
	old := bigHeap
	defer func() { bigHeap = old }()
	runtime.GC()
	bigHeap = liveHeap() + 16<<20
	called := make(chan struct{}, 1)
	watchHeap(func(live uint64) bool {
		if live > bigHeap {
			called <- struct{}{}
			return false
		}
		return true
	})
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

// TestBigLimit: once the heap is big, the soft limit stays half the live
// heap above it (the collector never runs against a limit it cannot
// meet), and never below bigLimit.
func TestBigLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{{0, bigLimit}, {100 << 20, bigLimit}, {200 << 20, 300 << 20}, {1 << 30, 3 << 29}} {
		if got := bigLimitFor(c.live); got != c.want {
			t.Errorf("bigLimitFor(%d MB) = %d MB, want %d MB", c.live>>20, got>>20, c.want>>20)
		}
		if got := bigLimitFor(c.live); uint64(got) <= c.live {
			t.Errorf("bigLimitFor(%d MB) = %d MB: not above the live heap", c.live>>20, got>>20)
		}
	}
}

// TestNamesTable: query fills a check table when its statement names it
// as a word, in any case, and not for a longer name that contains it.
func TestNamesTable(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT * FROM claims":                       true,
		"select count(*) from CLAIMS c":              true,
		"SELECT * FROM entries JOIN claims ON 1":     true,
		"SELECT (SELECT count(*) FROM claims)":       true,
		"SELECT 1 AS myclaims":                       false,
		"SELECT * FROM claims_checked":               false,
		"SELECT * FROM entries WHERE x = 'claims_x'": false,
		"SELECT * FROM entries":                      false,
		"SELECT * FROM myclaims, claims2, claims":    true,
		"SELECT 'İİİ' FROM claims":                   true,
		"SELECT 'İİİİİİ' AS claimsİ":                 false,
		"SELECT 'ǅ' FROM CLAIMS":                     true,
	} {
		if got := namesTable(sql, "claims"); got != want {
			t.Errorf("namesTable(%q) = %v, want %v", sql, got, want)
		}
	}
}

// TestVersion: perflog --version names the build and the Go version.
func TestVersion(t *testing.T) {
	io, _, out, _ := iostreams.Test()
	root := newRootCmd(newFactory(io))
	root.SetArgs([]string{"--version"})
	root.SetOut(out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "perflog ") || !strings.Contains(got, ", go1.") {
		t.Fatalf("--version printed %q", got)
	}
}
