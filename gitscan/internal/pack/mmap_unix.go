//go:build unix

package pack

import (
	"os"
	"syscall"
)

// mapFile maps a pack file read-only; nil when it cannot be mapped.
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

func unmapFile(b []byte) {
	if b != nil {
		syscall.Munmap(b)
	}
}
