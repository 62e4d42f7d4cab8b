//go:build linux

package main

import (
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// A run that reads history from git (a build without the index, an index
// update) or both sides of a change (verify, new) allocates tens of
// megabytes, and on Linux much of its time can go to page faults: its
// heap grows from nothing, and each fresh 4 KiB page costs a fault (about
// 10 µs on the virtual machine this was built on). Go does not ask for
// transparent huge pages for its heap, and where the system gives them
// only on request (transparent_hugepage=madvise, the common default) such
// a run faults its heap in page by page: `changelog verify --profile full`
// on the corpus took ~11000 faults. So before that work the run has the
// runtime map the next part of its heap (one large allocation, never
// touched), asks for huge pages there (MADV_HUGEPAGE), and frees it: the
// heap then grows into that range two megabytes per fault. Measured here
// (hyperfine, cold processes): verify --profile full 257 → 147 ms, strict
// 177 → 111 ms, changelog new 178 → 136 ms, changelog audit without the
// index 364 → 247 ms, a cold index build 1.04 → 0.82 s, a one-commit
// index update 198 → 170 ms (32 MB advised gave the same but for the
// build, 1.02 s). Only the touched pages count in resident memory: the
// index build of a history ten times the corpus peaked at 266 MB either
// way. A history restored from the index counts as such work (it decodes
// megabytes: provenance log 49 → 33 ms, diff 72 → 47 ms). A light run (an
// answer read from the index: a warm audit, a blame at head, a query) does
// not do it: a huge page costs more to fault in than the few small pages
// such a run touches (--help took 49 → 76 ms with it).
//
// Nothing changes where huge pages are never given (or always given),
// under strict overcommit or a limit on the address space, or with
// GODEBUG=disablethp=1 or PERFLOG_NOTHP=1.

// thpHeap is how much of the heap is asked for huge pages (a cold index
// build asks for more: see bulkHeap).
const thpHeap = 128 << 20

var (
	hugeOnce sync.Once
	hugeHeap bool // what the first preferHugePagesFor found
)

// preferHugePages prepares the heap of a run about to do such work (see
// above); only the first call does anything.
func preferHugePages() { preferHugePagesFor(thpHeap) }

// preferHugePagesFor is preferHugePages for a run whose heap may grow to
// n bytes before it collects (see bulkGC); it reports whether the heap
// gets huge pages.
func preferHugePagesFor(n int) bool {
	hugeOnce.Do(func() { hugeHeap = adviseHeapFor(n) })
	return hugeHeap
}

// adviseHeapFor advises the next n bytes of the heap for huge pages, and
// reports whether the heap gets them: advised, or given to every mapping
// (transparent_hugepage=always).
func adviseHeapFor(n int) bool {
	if os.Getenv("PERFLOG_NOTHP") != "" || strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return false
	}
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return false
	}
	if !bytes.Contains(mode, []byte("[madvise]")) {
		return bytes.Contains(mode, []byte("[always]"))
	}
	// under strict overcommit, or a limit on the address space, the
	// mapping could be refused, which is fatal to a Go program
	if o, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err != nil || bytes.HasPrefix(bytes.TrimSpace(o), []byte("2")) {
		return false
	}
	var as syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &as); err != nil || as.Cur != ^uint64(0) {
		return false
	}
	// one collection, the one that frees the allocation (its range is then
	// free heap, advised): the allocation alone would start another, and
	// each of the first few collections faults in pages of the runtime's
	// own span lists
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	adviseHuge(n)
	debug.SetMemoryLimit(limit)
	if _, set := os.LookupEnv("GOGC"); !set && percent == gcPercent {
		// a run still on the light runs' setting (see tuneGC) lets its
		// heap grow into the advised range before collecting again
		percent = gcAdvised
	}
	debug.SetGCPercent(percent)
	runtime.GC()
	return true
}

// gcAdvised is the GOGC of a run once its heap is advised: with the
// collector's minimum heap of 4 MB times GOGC/100, the first collection
// comes at 64 MB instead of 16, within the soft memory limit. A one-commit
// index update (15-20 MB) then does not collect at all: each collection
// faults in fresh blocks of the runtime's span sets (200 of the update's
// 2000 page faults; 63 → 62 ms median, 66 → 63 ms at the 75th percentile
// over 50 runs each). A run whose live heap grows past bigHeap goes to
// GOGC 100 as before.
const gcAdvised = 1600

// hugePage is the size of a transparent huge page on amd64 and arm64
// (4 KiB base pages).
const hugePage = 2 << 20

// adviseHuge allocates n bytes, untouched (fresh from the OS, so never
// zeroed by the runtime), and advises the huge pages inside them.
//
// The allocation rarely begins on a huge page: the part of it below the
// first one (up to 2 MB) shares its huge page with the objects allocated
// before, whose small pages are already there, so the kernel would keep
// faulting that part in page by page. It is the lowest free memory the
// heap has once the allocation is freed, so the run's first large
// allocations land there (an index update's 0.9 MB snapshot, 230 faults).
// That huge page is collapsed at once instead (collapseHuge): an index
// update took 1720 page faults on average, 1470 with it, and 2-3 ms less
// (interleaved runs, 40 each: mean 58.2 → 54.6 ms, then 55.8 → 53.7 ms).
func adviseHuge(n int) {
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	first := (p + hugePage - 1) &^ (hugePage - 1) // the first whole huge page
	beg := int(first - p)                         // offsets in b of it and
	end := int((p+uintptr(n))&^(hugePage-1) - p)  // past the last whole one
	if beg < end {
		// an error (a kernel without THP) leaves the pages as they are
		_ = syscall.Madvise(b[beg:end], syscall.MADV_HUGEPAGE)
	}
	if beg > 0 {
		_ = collapseHuge(first - hugePage) // the one b begins in
	}
	runtime.KeepAlive(b)
}

// madvCollapse is Linux's MADV_COLLAPSE (since 6.1; not in package
// syscall).
const madvCollapse = 25

// collapseHuge backs the huge page at addr (aligned) with one huge page
// now, copying the small pages it has: the rest of it is then never
// faulted in. Kernels before 6.1, or without huge pages, refuse (EINVAL),
// which leaves the pages as they are. addr is passed as a number: the
// page holds objects of the heap and free memory, which must not be seen
// by the collector as one slice.
func collapseHuge(addr uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, addr, hugePage, madvCollapse); e != 0 {
		return e
	}
	return nil
}
