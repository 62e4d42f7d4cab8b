package pack

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

const corpus = "../../../testdata/corpus/inferencex.git"

// corpusEntries opens the corpus's pack and returns it with go-git's
// decoding of its index, and go-git's storage of the repository.
func corpusEntries(t *testing.T) (*Set, []*idxfile.Entry, *filesystem.Storage) {
	t.Helper()
	s := OpenSet(filepath.Join(corpus, "objects"))
	t.Cleanup(s.Close)
	packs := s.get()
	if len(packs) != 1 {
		t.Fatalf("corpus packs read: %d, want 1", len(packs))
	}
	if _, ok := packs[0].idx.(*idxView); !ok && runtime.GOOS == "linux" {
		t.Fatalf("the pack index is read as %T, want it mapped", packs[0].idx)
	}
	f, err := os.Open(strings.TrimSuffix(packs[0].f.Name(), ".pack") + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mi := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(f).Decode(mi); err != nil {
		t.Fatal(err)
	}
	it, err := mi.Entries()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var es []*idxfile.Entry
	for {
		e, err := it.Next()
		if err != nil {
			break
		}
		es = append(es, e)
	}
	st := filesystem.NewStorage(osfs.New(corpus), cache.NewObjectLRUDefault())
	t.Cleanup(func() { st.Close() })
	return s, es, st
}

// goGitRead reads an object through go-git's storage.
func goGitRead(t *testing.T, st *filesystem.Storage, h plumbing.Hash) (plumbing.ObjectType, []byte) {
	t.Helper()
	o, err := st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		t.Fatalf("go-git %s: %v", h, err)
	}
	rd, err := o.Reader()
	if err != nil {
		t.Fatalf("go-git %s: %v", h, err)
	}
	defer rd.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(rd); err != nil {
		t.Fatalf("go-git %s: %v", h, err)
	}
	return o.Type(), b.Bytes()
}

// TestReaderMatchesGoGit reads the objects of the corpus pack with the
// Reader and with go-git's object storage: same offsets, same type, same
// bytes (deltas of every depth and kind of object the pack holds). go-git
// is the slow side: a plain run compares every fourth object, the long
// run (PERFLOG_LONG_TESTS) all.
func TestReaderMatchesGoGit(t *testing.T) {
	s, es, st := corpusEntries(t)
	view, _ := s.get()[0].idx.(*idxView)
	r := NewReader(s, 1<<20)
	long := os.Getenv("PERFLOG_LONG_TESTS") != ""
	n, deltas := 0, 0
	for i, e := range es {
		h := e.Hash
		if off, err := s.get()[0].idx.FindOffset(h); err != nil || off != int64(e.Offset) {
			t.Fatalf("%s: index lookup = %d, %v; go-git's index says %d", h, off, err, e.Offset)
		}
		if !long && i%4 != 0 {
			continue
		}
		gt, gb := goGitRead(t, st, h)
		pt, pb, err := r.Read(h)
		if err != nil {
			t.Fatalf("pack reader %s: %v", h, err)
		}
		if pt != gt || !bytes.Equal(pb, gb) {
			t.Fatalf("%s: pack reader %s %d bytes, go-git %s %d bytes", h, pt, len(pb), gt, len(gb))
		}
		if ID(pt, pb) != h {
			t.Fatalf("%s: content hashes to %s", h, ID(pt, pb))
		}
		if size, err := r.Size(h); err != nil || size != int64(len(gb)) {
			t.Fatalf("%s: Size = %d, %v; go-git read %d bytes", h, size, err, len(gb))
		}
		n++
		if e, err := r.entry(s.get()[0], int64(e.Offset)); err == nil && (e.t == plumbing.OFSDeltaObject || e.t == plumbing.REFDeltaObject) {
			deltas++
		}
	}
	if want := map[bool]int{true: 8000, false: 2000}[long]; n < want || deltas < want/8 {
		t.Fatalf("compared %d objects (%d deltas); want %d of the corpus pack", n, deltas, want)
	}
	for _, h := range []string{"0000000000000000000000000000000000000000", "ffffffffffffffffffffffffffffffffffffffff", "1234567890123456789012345678901234567890"} {
		if view != nil {
			if off, err := view.FindOffset(plumbing.NewHash(h)); err == nil {
				t.Errorf("FindOffset(%s) = %d, want not found", h, off)
			}
		}
		if _, _, err := r.Read(plumbing.NewHash(h)); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%s) = %v, want ErrNotFound", h, err)
		}
		if _, err := r.Size(plumbing.NewHash(h)); !errors.Is(err, ErrNotFound) {
			t.Errorf("Size(%s) = %v, want ErrNotFound", h, err)
		}
	}
}

// TestSetBudget: a reader's cache can be raised for a bulk read and
// lowered again, which evicts down to the new budget at once (the two
// newest objects stay).
func TestSetBudget(t *testing.T) {
	s, es, _ := corpusEntries(t)
	r := NewReader(s, 1<<10)
	if prev := r.SetBudget(64 << 20); prev != 1<<10 {
		t.Fatalf("SetBudget returned %d, want the budget it replaced", prev)
	}
	for _, e := range es[:2000] {
		if _, _, err := r.Read(e.Hash); err != nil {
			t.Fatal(err)
		}
	}
	if r.Cached() <= 1<<20 {
		t.Fatalf("a 64 MiB cache holds %d bytes after reading 2000 objects", r.Cached())
	}
	r.SetBudget(1 << 10)
	if r.cache.used > 1<<10 && r.cache.ll.Len() > keepNewest {
		t.Fatalf("after lowering the budget the cache still holds %d bytes in %d objects", r.cache.used, r.cache.ll.Len())
	}
}

// TestDamagedPackIsCorrupt: a pack with a byte flipped in a commit's
// compressed data reads as ErrCorrupt naming the commit, never as other
// content and never as a panic.
func TestDamagedPackIsCorrupt(t *testing.T) {
	s, es, _ := corpusEntries(t)
	r := NewReader(s, 1<<20)
	type at struct {
		h    plumbing.Hash
		off  int64
		data []byte
	}
	// the commits stored whole (not as deltas)
	var commits []at
	for _, e := range es {
		if pe, err := r.entry(s.get()[0], int64(e.Offset)); err != nil || pe.t != plumbing.CommitObject {
			continue
		}
		_, data, err := r.Read(e.Hash)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, at{e.Hash, int64(e.Offset), bytes.Clone(data)})
	}
	if len(commits) < 1000 {
		t.Fatalf("%d commits in the corpus pack", len(commits))
	}
	packName := filepath.Base(s.get()[0].f.Name())
	orig, err := os.ReadFile(filepath.Join(corpus, "objects", "pack", packName))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(corpus)); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, "objects", "pack", packName)
	os.Chmod(damaged, 0o644)
	rng := rand.New(rand.NewPCG(1, 2))
	corrupt := 0
	for round := 0; round < 60; round++ {
		c := commits[rng.IntN(len(commits))]
		data := bytes.Clone(orig)
		// past the entry's header (type and size), inside its zlib data
		flip := c.off + 4 + int64(rng.IntN(60))
		data[flip] ^= byte(1 + rng.IntN(255))
		if err := os.WriteFile(damaged, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds := OpenSet(filepath.Join(dir, "objects"))
		_, got, err := NewReader(ds, 1<<20).Read(c.h)
		switch {
		case err != nil:
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.h.String()) {
				t.Errorf("round %d: %v, want ErrCorrupt naming %s", round, err, c.h)
			}
			corrupt++
		case !bytes.Equal(got, c.data):
			t.Errorf("round %d: byte %d flipped, commit %s read as other content:\n%q", round, flip, c.h, got)
		}
		ds.Close()
	}
	if corrupt == 0 {
		t.Fatal("no flip was detected: the test tests nothing")
	}
	t.Logf("%d of 60 flips reported as corruption (the rest hit bytes the decoder ignores)", corrupt)
}

// TestIdxViewLargeOffsets reads an index whose pack is over 2 GiB: the
// offsets past 2^31 live in the 64-bit table.
func TestIdxViewLargeOffsets(t *testing.T) {
	w := new(idxfile.Writer)
	want := map[plumbing.Hash]int64{}
	for i, off := range []int64{12, 1 << 20, 1<<31 + 5, 1 << 33, 3<<32 + 77, 1<<31 - 1} {
		h := plumbing.ComputeHash(plumbing.BlobObject, []byte{byte(i)})
		w.Add(h, uint64(off), uint32(i))
		want[h] = off
	}
	w.OnFooter(plumbing.ZeroHash)
	mi, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := idxfile.NewEncoder(&buf).Encode(mi); err != nil {
		t.Fatal(err)
	}
	v := newIdxView(buf.Bytes())
	if v == nil {
		t.Fatal("a version-2 index was not accepted")
	}
	for h, off := range want {
		if got, err := v.FindOffset(h); err != nil || got != off {
			t.Errorf("FindOffset(%s) = %d, %v; want %d", h, got, err, off)
		}
	}
	for _, bad := range [][]byte{nil, buf.Bytes()[:100], append([]byte("PACK"), buf.Bytes()[4:]...)} {
		if newIdxView(bad) != nil {
			t.Errorf("a malformed index (%d bytes) was accepted", len(bad))
		}
	}
}

// TestObjectCacheBudget: the two newest objects stay whatever their size;
// older ones go once the budget is spent and their buffers are reused.
func TestObjectCacheBudget(t *testing.T) {
	var evicted [][]byte
	c := newLRU(100, func(b []byte) { evicted = append(evicted, b) })
	for i := range 3 {
		c.put(cacheKey{0, int64(i)}, cached{data: make([]byte, 1000)})
	}
	for i, want := range []bool{false, true, true} {
		if _, ok := c.get(cacheKey{0, int64(i)}); ok != want {
			t.Errorf("object %d cached = %v, want %v", i, ok, want)
		}
	}
	if len(evicted) != 1 {
		t.Fatalf("evicted %d objects, want 1", len(evicted))
	}
	c.budget = 1 << 20
	c.put(cacheKey{0, 3}, cached{data: make([]byte, 1000)})
	if _, ok := c.get(cacheKey{0, 1}); !ok {
		t.Error("a raised budget still evicts")
	}

	r := NewReader(nil, 1<<10)
	big := make([]byte, 0, 64<<10) // larger than half the budget
	r.recycle(big)
	if b := r.buffer(40 << 10); cap(b) != cap(big) {
		t.Errorf("an object larger than the budget did not reuse the recycled buffer (cap %d)", cap(b))
	}
}

// TestObjectCacheGrows: a cache with room doubles its budget when an
// object it evicted is asked for again, as far as the room shared with
// other caches allows; a miss of an object never cached, or a cache
// without room, changes nothing.
func TestObjectCacheGrows(t *testing.T) {
	room := 250
	c, d := newLRU(100, nil), newLRU(100, nil)
	c.room, d.room = &room, &room
	fixed := newLRU(100, nil)
	for _, l := range []*lru{c, d, fixed} {
		for i := range 4 {
			l.put(cacheKey{0, int64(i)}, cached{data: make([]byte, 60)})
		}
	}
	c.missed(cacheKey{0, 99}) // never cached
	fixed.missed(cacheKey{0, 0})
	if c.budget != 100 || fixed.budget != 100 {
		t.Fatalf("budgets grew without a reason: %d, %d", c.budget, fixed.budget)
	}
	c.missed(cacheKey{0, 0}) // evicted: 100 -> 200
	if c.budget != 200 || room != 150 {
		t.Fatalf("after a miss of an evicted object: budget %d, room %d", c.budget, room)
	}
	c.missed(cacheKey{0, 0}) // forgotten once counted
	if c.budget != 200 {
		t.Fatalf("one eviction counted twice: budget %d", c.budget)
	}
	d.missed(cacheKey{0, 1}) // the other cache takes its share: 100 -> 200
	c.missed(cacheKey{0, 1}) // 50 left: 200 -> 250
	if d.budget != 200 || c.budget != 250 || room != 0 {
		t.Fatalf("shared room: budgets %d and %d, room %d", c.budget, d.budget, room)
	}
	d.missed(cacheKey{0, 0}) // evicted, but no room is left
	if d.budget != 200 {
		t.Fatalf("grew past the room: %d", d.budget)
	}
	plenty := 1 << 30
	c.room = &plenty
	for i := range 4 * maxGhosts { // the evicted keys remembered stay bounded
		c.put(cacheKey{1, int64(i)}, cached{data: make([]byte, 1<<20)})
	}
	if len(c.ghosts) > maxGhosts {
		t.Fatalf("%d evicted keys remembered", len(c.ghosts))
	}
}

// TestID: ID is git's object id, as go-git computes it.
func TestID(t *testing.T) {
	for _, c := range []struct {
		t    plumbing.ObjectType
		data string
	}{{plumbing.BlobObject, ""}, {plumbing.BlobObject, "hello\n"}, {plumbing.CommitObject, "tree x\n\nsubject\n"}, {plumbing.TreeObject, "100644 a\x00" + strings.Repeat("\x01", 20)}} {
		if got, want := ID(c.t, []byte(c.data)), plumbing.ComputeHash(c.t, []byte(c.data)); got != want {
			t.Errorf("%v %q: %s, want %s", c.t, c.data, got, want)
		}
	}
}

// TestDeltaCycle: a delta whose base is itself (by id) or a chain deeper
// than the reader follows is an error, never a hang or a stack overflow.
func TestDeltaCycle(t *testing.T) {
	dir := t.TempDir()
	self := plumbing.NewHash("1111111111111111111111111111111111111111")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte{3, 3, 0x90, 3}) // 3 bytes from 3: copy the base's 3 bytes
	zw.Close()
	pk := append([]byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01"), 0x70|4)
	pk = append(append(pk, self[:]...), z.Bytes()...)
	pk = append(pk, make([]byte, 20)...) // the trailing checksum
	w := new(idxfile.Writer)
	w.Add(self, 12, 0)
	w.OnFooter(plumbing.ZeroHash)
	mi, err := w.Index()
	if err != nil {
		t.Fatal(err)
	}
	var idx bytes.Buffer
	if _, err := idxfile.NewEncoder(&idx).Encode(mi); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "pack"), 0o755)
	os.WriteFile(filepath.Join(dir, "pack", "pack-x.pack"), pk, 0o644)
	os.WriteFile(filepath.Join(dir, "pack", "pack-x.idx"), idx.Bytes(), 0o644)
	s := OpenSet(dir)
	defer s.Close()
	if len(s.get()) != 1 {
		t.Fatal("the crafted pack did not open")
	}
	if typ, data, err := NewReader(s, 1<<10).Read(self); err == nil {
		t.Fatalf("a delta of itself read as %s %q", typ, data)
	}
}

// TestDamagedIndexAllocatesLittle: an index that says it is version 2
// but is not a well-formed one is ErrCorrupt at once. go-git's decoder,
// which perflog used for such an index, allocates what the fanout claims
// (gigabytes) before it finds the file short: FuzzIndex's workers hung
// on it.
func TestDamagedIndexAllocatesLittle(t *testing.T) {
	gitDir, want, _ := smallPackRepo(t)
	idxs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	orig, err := os.ReadFile(idxs[0])
	if err != nil || len(idxs) != 1 {
		t.Fatal(idxs, err)
	}
	bad := bytes.Clone(orig)
	for k := 10; k < 256; k++ { // a fanout that rises to 2^28 objects at bucket 10: more than the file holds
		binary.BigEndian.PutUint32(bad[8+k*4:], 1<<28)
	}
	if err := os.WriteFile(idxs[0], bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := OpenSet(filepath.Join(gitDir, "objects"))
	defer s.Close()
	r := NewReader(s, 1<<10)
	for h := range want {
		if _, _, err := r.Read(h); err == nil {
			t.Fatalf("%s read from a damaged index", h)
		}
	}
	if err := s.Damaged(); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Damaged: %v, want ErrCorrupt", err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("opening a damaged index allocated %d MB", n>>20)
	}
}
