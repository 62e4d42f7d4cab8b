package provenance

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/perflog/perflog/internal/testcorpus"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

// checkAfter cuts versions in order both ways, whole (blocks) and after
// the previous one (blocksAfter), and wants the same blocks.
func checkAfter(t *testing.T, kind fileKind, versions [][]byte) {
	t.Helper()
	sp := newSplitter()
	var last lastCut
	for i, data := range versions {
		want, werr := sp.blocks(data, kind)
		got, gerr := sp.blocksAfter(&last, data, kind)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("version %d: error %v, cut whole %v", i, gerr, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("version %d: %d blocks, cut whole %d\n%s", i, len(got), len(want), data)
		}
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("version %d block %d: %q, cut whole %q\n--- previous:\n%s--- version:\n%s", i, j, got[j].text, want[j].text, versions[max(i-1, 0)], data)
			}
		}
	}
}

// TestBlocksAfterEdits: random edits of small files (items added, removed,
// changed; comments, blank lines and indented lines anywhere; lines that
// do not cut, and pieces without a newline that join the next line) give
// the blocks a whole cut gives.
func TestBlocksAfterEdits(t *testing.T) {
	lines := map[fileKind][]string{
		listFile: {"- config-keys:\n", "    - a\n", "  description:\n", "  - \"x\"\n", "# note\n", "\n", "  pr-link: u\n", "-\n", "- b\n", "  # in\n", "{flow}\n", "   \n", "zz"},
		mapFile:  {"k1:\n", "  image: a\n", "  tp: 2\n", "# c\n", "\n", "k2: {a: 1}\n", "  - x\n", "k1:\n", "- bad\n", "    deep: 1\n", "zz"},
	}
	for kind, pool := range lines {
		rnd := rand.New(rand.NewSource(int64(kind) + 1))
		for run := 0; run < 300; run++ {
			var cur []string
			for range 3 + rnd.Intn(12) {
				cur = append(cur, pool[rnd.Intn(len(pool))])
			}
			var versions [][]byte
			for range 12 {
				versions = append(versions, []byte(strings.Join(cur, "")))
				next := append([]string(nil), cur...)
				for range 1 + rnd.Intn(3) {
					at := rnd.Intn(len(next) + 1)
					switch rnd.Intn(3) {
					case 0: // insert
						next = append(next[:at], append([]string{pool[rnd.Intn(len(pool))]}, next[at:]...)...)
					case 1: // delete
						if at < len(next) {
							next = append(next[:at], next[at+1:]...)
						}
					default: // change
						if at < len(next) {
							next[at] = pool[rnd.Intn(len(pool))]
						}
					}
				}
				if rnd.Intn(5) == 0 && len(next) > 0 { // no newline at the end
					next[len(next)-1] = strings.TrimSuffix(next[len(next)-1], "\n")
				}
				cur = next
			}
			t.Run(fmt.Sprintf("%d-%d", kind, run), func(t *testing.T) { checkAfter(t, kind, versions) })
		}
	}
}

// TestBlocksAfterCorpus: the changelog's and the amd config's versions of
// the shipped history, read newest first as a build reads them.
func TestBlocksAfterCorpus(t *testing.T) {
	r, head := openCorpus(t)
	paths := []string{"perf-changelog.yaml", "configs/amd-master.yaml"}
	var blobs [2][]plumbing.Hash
	last := make([]plumbing.Hash, 2)
	err := r.Track(context.Background(), gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: head}, Paths: paths},
		func(s gitscan.Step) error {
			for i, b := range s.Blobs {
				if b != last[i] && !b.IsZero() {
					blobs[i] = append(blobs[i], b)
					last[i] = b
				}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i, kind := range []fileKind{listFile, mapFile} {
		if !testcorpus.Long() && len(blobs[i]) > 150 {
			blobs[i] = blobs[i][:150]
		}
		var versions [][]byte
		for _, b := range blobs[i] {
			data, err := r.ReadBlob(b)
			if err != nil {
				t.Fatal(err)
			}
			versions = append(versions, data)
		}
		if len(versions) < 50 {
			t.Fatalf("%s: %d versions", paths[i], len(versions))
		}
		checkAfter(t, kind, versions)
	}
}
