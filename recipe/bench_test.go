package recipe

import (
	"context"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"
	"github.com/perflog/perflog/recipe/dryrun"
)

// BenchmarkDryRunCorpusHead dry-runs every point of every recipe at the
// sample's head in one process (target: ≤ 5 s on a 2-core machine);
// points/s counts the points with a launch (dry-run, or a multi-node
// point described from its srt-slurm recipe).
//
//	go test ./recipe -run '^$' -bench DryRunCorpusHead -benchtime 3x
func BenchmarkDryRunCorpusHead(b *testing.B) {
	r, head := testcorpus.Open(b, nil)
	rev := NewRev("main", r.Tree(head), nil)
	keys, err := rev.Keys()
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	b.ResetTimer()
	for b.Loop() {
		pls, err := rev.DryRunKeys(context.Background(), keys, 0, dryrun.Options{})
		if err != nil {
			b.Fatal(err)
		}
		n = 0
		for _, pl := range pls {
			if pl.Launch != nil {
				n++
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
}
