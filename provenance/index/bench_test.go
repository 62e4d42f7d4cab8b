package index

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The index benchmarks run in-process on the shipped corpus; bench/index.sh
// times cold processes and the scale curve on synthetic histories.

func BenchmarkColdIndexBuild(b *testing.B) {
	r, head := openCorpus(b)
	phases := map[string]time.Duration{}
	for i := 0; i < b.N; i++ {
		ix, err := Open(filepath.Join(b.TempDir(), FileName), true)
		if err != nil {
			b.Fatal(err)
		}
		_, st, err := ix.Sync(context.Background(), r, head, Options{})
		if err != nil {
			b.Fatal(err)
		}
		addPhases(phases, st)
		ix.Close()
	}
	reportPhases(b, phases)
}

func addPhases(to map[string]time.Duration, st *Stats) {
	for _, p := range st.Phases {
		to[p.Name] += p.Duration
	}
}

// reportPhases reports where the time of the syncs went, per op.
func reportPhases(b *testing.B, phases map[string]time.Duration) {
	for name, d := range phases {
		b.ReportMetric(float64(d.Microseconds())/float64(b.N)/1000, name+"-ms/op")
	}
}

// indexAt prepares an index file synced to rev.
func indexAt(b testing.TB, rev string) string {
	r, _ := openCorpus(b)
	h, err := r.Resolve(rev)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), FileName)
	ix, err := Open(path, true)
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := ix.Sync(context.Background(), r, h, Options{}); err != nil {
		b.Fatal(err)
	}
	ix.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	ix.Close()
	return path
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	out.Close()
}

// BenchmarkIndexOneCommit: an index one commit behind the head is brought
// up to date.
func BenchmarkIndexOneCommit(b *testing.B) {
	r, head := openCorpus(b)
	prepared := indexAt(b, "main~1")
	data, err := os.ReadFile(prepared)
	if err != nil {
		b.Fatal(err)
	}
	// the same file each time, rewritten in place and synced: an index is
	// updated where it lives (a file created anew, or pages left dirty,
	// would make the update's fsync pay for the preparation)
	path := filepath.Join(b.TempDir(), FileName)
	var closeT time.Duration
	phases := map[string]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := writeSynced(path, data); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ix, err := Open(path, false)
		if err != nil {
			b.Fatal(err)
		}
		_, st, err := ix.Sync(context.Background(), r, head, Options{})
		if err != nil || st.New != 1 {
			b.Fatalf("%+v %v", st, err)
		}
		addPhases(phases, st)
		T2 := time.Now()
		ix.Close()
		closeT += time.Since(T2)
	}
	// where the time goes
	b.ReportMetric(float64(closeT.Microseconds())/float64(b.N)/1000, "close-ms/op")
	reportPhases(b, phases)
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func benchWarm(b *testing.B, f func(ix *Index) error) {
	prepared := indexAt(b, "main")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix, err := Open(prepared, false)
		if err != nil {
			b.Fatal(err)
		}
		if err := f(ix); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

func BenchmarkWarmAudit(b *testing.B) {
	_, head := openCorpus(b)
	benchWarm(b, func(ix *Index) error {
		_, err := ix.CachedAudit(context.Background(), head, Options{})
		return err
	})
}

func BenchmarkWarmBlame(b *testing.B) {
	_, head := openCorpus(b)
	benchWarm(b, func(ix *Index) error {
		_, err := ix.CachedBlame(context.Background(), head, "dsr1-fp4-mi355x-sglang", Options{})
		return err
	})
}

func BenchmarkWarmQuery(b *testing.B) {
	benchWarm(b, func(ix *Index) error {
		_, err := ix.Query(context.Background(), `SELECT c.pr, f.key, f.new FROM field_changes f JOIN commits c USING (seq)
			WHERE f.path = 'image' AND f.key GLOB '*-mi355x-*' ORDER BY f.seq`)
		return err
	})
}
