//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// hugeAdvised sums the sizes of this process's mappings advised for huge
// pages (VmFlags "hg" in /proc/self/smaps).
func hugeAdvised(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	total, size := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "Size:"):
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			size = kb << 10
		case strings.HasPrefix(l, "VmFlags:") && strings.Contains(l+" ", " hg "):
			total += size
		}
	}
	return total
}

func TestAdviseHeap(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("transparent huge pages are not given on request here: %q", mode)
	}
	t.Setenv("PERFLOG_NOTHP", "1")
	before := hugeAdvised(t)
	adviseHeap()
	if got := hugeAdvised(t); got != before {
		t.Fatalf("PERFLOG_NOTHP=1: %d bytes advised, want %d", got, before)
	}
	t.Setenv("PERFLOG_NOTHP", "")
	adviseHeap()
	if got := hugeAdvised(t) - before; got < thpHeap-2<<20 {
		t.Fatalf("%d more bytes of the heap advised for huge pages, want at least %d", got, thpHeap-2<<20)
	}
	// and the allocation is free again, for the heap to grow into
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc >= thpHeap {
		t.Fatalf("%d bytes allocated after advising: the %d-byte allocation is still held", ms.HeapAlloc, thpHeap)
	}
}
