//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
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
	if adviseHeapFor(thpHeap) {
		t.Error("PERFLOG_NOTHP=1: the heap said to have huge pages")
	}
	if got := hugeAdvised(t); got != before {
		t.Fatalf("PERFLOG_NOTHP=1: %d bytes advised, want %d", got, before)
	}
	t.Setenv("PERFLOG_NOTHP", "")
	if !adviseHeapFor(thpHeap) {
		t.Error("the heap advised is said to have small pages")
	}
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

// anonHuge returns the AnonHugePages of the mapping of this process that
// holds addr, in bytes.
func anonHuge(t *testing.T, addr uintptr) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fs := strings.Fields(l); len(fs) > 0 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			lo, hi, _ := strings.Cut(fs[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && uint64(addr) >= a && uint64(addr) < b
			continue
		}
		if in && strings.HasPrefix(l, "AnonHugePages:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return kb << 10
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return 0
}

func TestCollapseHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("transparent huge pages are not given on request here: %q", mode)
	}
	// memory of its own, not advised: a page touched there is a small one
	m, err := syscall.Mmap(-1, 0, 2*hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(m)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	page := (p + hugePage - 1) &^ (hugePage - 1)
	off := page - p
	m[off], m[off+hugePage-1] = 7, 9
	if got := anonHuge(t, page); got != 0 {
		t.Skipf("the touched page is huge already (%d bytes)", got)
	}
	if err := collapseHuge(page); err != nil {
		t.Skipf("MADV_COLLAPSE refused (a kernel before 6.1?): %v", err)
	}
	if got := anonHuge(t, page); got != hugePage {
		t.Fatalf("AnonHugePages of the mapping after the collapse: %d bytes, want %d", got, hugePage)
	}
	if m[off] != 7 || m[off+hugePage-1] != 9 || m[off+1] != 0 {
		t.Fatal("the collapse changed the memory")
	}
}
