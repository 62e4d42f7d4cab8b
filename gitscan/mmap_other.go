//go:build !unix

package gitscan

import "os"

func mapFile(*os.File, int64) []byte { return nil }

func unmapFile([]byte) {}
