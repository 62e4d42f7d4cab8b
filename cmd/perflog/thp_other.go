//go:build !linux

package main

// preferHugePages is Linux-only (see thp_linux.go).
func preferHugePages() {}

// preferHugePagesFor is Linux-only (see thp_linux.go).
func preferHugePagesFor(int) {}
