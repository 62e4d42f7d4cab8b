package gitscan

import (
	"context"
	"testing"
)

// The walk benchmarks read the shipped corpus (1970 first-parent commits,
// a quarter of them stored as deltas) without a commit-graph, as a fresh
// CI clone is read.

// BenchmarkFirstParent walks the whole chain: commits' trees and parents
// (blame, log), or with their metadata too (audit, index builds).
func BenchmarkFirstParent(b *testing.B) {
	for _, meta := range []bool{false, true} {
		name := "headers"
		if meta {
			name = "meta"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, head := openCorpus(b, &OpenOptions{NoDetect: true, NoCommitGraph: true})
				n := 0
				err := r.FirstParent(context.Background(), WalkOptions{From: head, Meta: meta}, func(Node) error {
					n++
					return nil
				})
				if err != nil || n != 1970 {
					b.Fatalf("%d commits, %v", n, err)
				}
			}
		})
	}
}
