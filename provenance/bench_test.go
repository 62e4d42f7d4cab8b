package provenance

import (
	"context"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/internal/testcorpus"
)

// The history benchmarks run in-process on the shipped corpus (1970
// commits, 810 versions of the changelog; no commit-graph is used, as in
// a fresh CI clone). bench/history.sh times cold processes next to git
// blame.

func benchRepo(b *testing.B) (*gitscan.Repo, plumbing.Hash) {
	return testcorpus.Open(b, &gitscan.OpenOptions{NoDetect: true, NoCommitGraph: true})
}

// BenchmarkAudit: the whole changelog history and the audit of its 772
// entries.
func BenchmarkAudit(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r, head := benchRepo(b)
		h, err := Build(context.Background(), r, Options{Head: head, Parts: PartChangelog})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Audit(AuditOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlameOldKey: one of the oldest amd recipes (the walk reaches
// 2025), as `perflog provenance blame` builds it.
func BenchmarkBlameOldKey(b *testing.B) {
	benchBlame(b, "dsr1-fp4-mi355x-sglang")
}

// BenchmarkBlameRecentKey: a recent nvidia recipe (the walk stops early).
func BenchmarkBlameRecentKey(b *testing.B) {
	benchBlame(b, "dsv4-fp4-b200-vllm-agentic-mtp")
}

func benchBlame(b *testing.B, key string) {
	for i := 0; i < b.N; i++ {
		r, head := benchRepo(b)
		h, err := Build(context.Background(), r, Options{Head: head, Parts: PartRecipes, Keys: []string{key}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := h.Blame(key, head); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullHistory: changelog and every recipe's events (what an
// index build needs).
func BenchmarkFullHistory(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r, head := benchRepo(b)
		h, err := Build(context.Background(), r, Options{Head: head, Parts: PartsAll})
		if err != nil {
			b.Fatal(err)
		}
		h.Materialize()
	}
}
