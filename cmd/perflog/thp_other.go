//go:build !linux

package main

// preferHugePages is Linux-only (see thp_linux.go).
func preferHugePages() {}

// preferHugePagesFor is Linux-only (see thp_linux.go): elsewhere the heap
// is taken to have small pages.
func preferHugePagesFor(int) bool { return false }
