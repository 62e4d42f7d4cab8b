package gitscan

import (
	"context"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
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

// BenchmarkCommitHeaders reads every commit's tree and parents from the
// first bytes of its object, against reading the whole object.
func BenchmarkCommitHeaders(b *testing.B) {
	r, head := openCorpus(b, &OpenOptions{NoDetect: true, NoCommitGraph: true})
	var hashes []plumbing.Hash
	if err := r.FirstParent(context.Background(), WalkOptions{From: head}, func(nd Node) error {
		hashes = append(hashes, nd.Hash)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	b.Run("short", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			o := newObjects(r.packs, r.blobs.fallback, &r.fbMu, walkCacheBudget) // nothing kept
			for _, h := range hashes {
				if _, _, ok := o.commitHeader(h, false); !ok {
					if _, _, err := o.read(h); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hashes)), "ns/commit")
	})
	b.Run("whole", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			o := newObjects(r.packs, r.blobs.fallback, &r.fbMu, walkCacheBudget) // nothing cached
			for _, h := range hashes {
				if _, _, err := o.read(h); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(hashes)), "ns/commit")
	})
}
