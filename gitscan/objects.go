package gitscan

import (
	"bufio"
	"bytes"
	"container/list"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"compress/zlib"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// objects reads commits, trees and blobs. It reads pack files directly,
// with its own index view and delta patcher (applyDelta,
// gitformat-pack(5)), keeping decoded objects in a small LRU keyed by pack
// offset: go-git's object storage re-inflates and copies every object
// through its generic cache, several times slower on a walk or a file's
// versions (BenchmarkFirstParent, docs/dev/performance.md).
//
// Every object is inflated to the end of its zlib stream, so that the
// stream's Adler-32 checksum is verified; a mismatch, or a stream that
// ends before or after the object's size, is ErrCorrupt naming the
// object, never content. Commits and trees read from a pack are also
// hashed and checked against their ids; blobs are not, which would make a
// cold audit (hundreds of MB of changelog versions) half again as slow.
//
// Anything the pack reader does not hold (loose objects, objects in
// alternates, REF-delta bases outside the packs, in-memory repositories)
// comes from go-git's object storage, so the result never depends on the
// fast path. An objects value is not safe for concurrent use.
type objects struct {
	packSet  *packSet // the packs of the objects directory; nil when in memory
	fallback storer.EncodedObjectStorer
	// fbMu serialises go-git's storage, which is not safe for concurrent
	// use, between the objects values of one Repo
	fbMu *sync.Mutex

	cache *lru
	zr    io.ReadCloser
	br    *bufio.Reader
	mem   bytes.Reader
	hdr   [32]byte
	// delta holds inflated delta instructions (consumed at once); free
	// holds evicted object buffers nobody outside the cache references,
	// reused for new objects: reading 810 versions of a 400 KB file would
	// otherwise fault in 128 MB of fresh memory.
	delta []byte
	free  [][]byte
	// lent is the object last handed to a ScanStreams caller, which may
	// keep it until it gets the stream's next one: its buffer is not
	// reused meanwhile, even once evicted
	lent []byte
}

type pack struct {
	idx  packIndex
	idxb []byte // the mapped index file, or nil
	f    *os.File
	data []byte // the mapped pack file, or nil (then f is read)
	end  int64  // offset of the trailing checksum
}

// Cache budgets bound the bytes of decoded objects kept for delta bases:
// a walk's reader keeps commits and trees, a blob scan's reader the last
// versions read. Reading one file's versions newest first, an object's
// base is almost always the one read just before it (git deltifies older
// versions against newer ones): a key's blame on the corpus decodes as
// many deltas with a 1 MB cache as with 8 MB. Small budgets keep the heap,
// and the fresh pages a short process faults in, small; evicted buffers
// are reused. The two newest objects are kept whatever their size (see
// keepNewest).
//
// A blob reader serves one file's versions (ScanBlobs; ScanStreams keeps
// one reader per file): read through one cache, several files' bases
// evict each other (a history three times the corpus's inflated 14 times
// as many objects).
//
// A stream's reader (ScanStreams) starts with blobCacheBudget, and the
// readers of one scan may grow by blobCacheRoom between them when they
// find themselves decoding again what they evicted (see lru).
const (
	walkCacheBudget = 1 << 20
	blobCacheBudget = 2 << 20
	blobCacheRoom   = 32 << 20
)

// The budgets of ScanStreams's readers (variables for the tests, which
// starve them).
var streamBudget, streamRoom = blobCacheBudget, blobCacheRoom

func newObjects(ps *packSet, fallback storer.EncodedObjectStorer, mu *sync.Mutex, budget int) *objects {
	o := &objects{packSet: ps, fallback: fallback, fbMu: mu}
	o.cache = newLRU(budget, o.recycle)
	return o
}

// maxFree bounds the recycled buffers kept.
const maxFree = 8

// recycle keeps an evicted buffer for reuse: the largest ones, since a
// buffer serves any object up to its capacity.
func (o *objects) recycle(b []byte) {
	if cap(b) < 4<<10 {
		return // small objects are cheap to allocate
	}
	if cap(o.lent) > 0 && &b[:1][0] == &o.lent[:1][0] {
		return // still in the caller's hands (see lent)
	}
	// the buffers held stay within half the budget, or within one buffer
	// when a single object is larger than that
	limit := max(o.cache.budget/2, cap(b))
	held := 0
	small := -1
	for i, f := range o.free {
		held += cap(f)
		if small < 0 || cap(f) < cap(o.free[small]) {
			small = i
		}
	}
	if len(o.free) < maxFree && held+cap(b) <= limit {
		o.free = append(o.free, b[:0])
		return
	}
	if small >= 0 && cap(b) > cap(o.free[small]) && held-cap(o.free[small])+cap(b) <= limit {
		o.free[small] = b[:0]
	}
}

// buffer returns a buffer of length n, reusing a recycled one that fits.
func (o *objects) buffer(n int64) []byte {
	best := -1
	for i, b := range o.free {
		if int64(cap(b)) >= n && (best < 0 || cap(b) < cap(o.free[best])) {
			best = i
		}
	}
	if best < 0 {
		// a power-of-two capacity lets the buffer serve the versions of
		// a file, whose sizes drift, once recycled
		c := n
		if n >= 4<<10 {
			for c = 4 << 10; c < n; c <<= 1 {
			}
		}
		return make([]byte, n, c)
	}
	b := o.free[best][:n]
	o.free[best] = o.free[len(o.free)-1]
	o.free = o.free[:len(o.free)-1]
	return b
}

// packSet is the packs of one objects directory, opened and mapped once
// and shared by a Repo's readers: a pack is read-only, and every mapping
// of it counts in the process's resident memory (twenty readers each
// mapping a 15 MB pack showed as 300 MB).
type packSet struct {
	dir   string
	once  sync.Once
	packs []*pack
}

// get opens every pack's index on first use; failures leave the fast path
// off for that pack (the fallback still reads it).
func (s *packSet) get() []*pack {
	s.once.Do(func() {
		idxs, _ := filepath.Glob(filepath.Join(s.dir, "pack", "pack-*.idx"))
		sort.Strings(idxs)
		for _, p := range idxs {
			if pk, err := openPack(p); err == nil {
				s.packs = append(s.packs, pk)
			}
		}
	})
	return s.packs
}

// close unmaps and closes the packs; the set must not be used after.
func (s *packSet) close() {
	s.once.Do(func() {}) // a set never opened stays closed
	for _, p := range s.packs {
		unmapFile(p.data)
		unmapFile(p.idxb)
		p.f.Close()
	}
	s.packs = nil
}

// packs returns the shared packs (none in memory).
func (o *objects) packs() []*pack {
	if o.packSet == nil {
		return nil
	}
	return o.packSet.get()
}

func openPack(idxPath string) (*pack, error) {
	f, err := os.Open(idxPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx, idxb, err := openIndex(f)
	if err != nil {
		return nil, err
	}
	pf, err := os.Open(strings.TrimSuffix(idxPath, ".idx") + ".pack")
	if err != nil {
		unmapFile(idxb)
		return nil, err
	}
	fi, err := pf.Stat()
	if err != nil || fi.Size() < 32 {
		pf.Close()
		unmapFile(idxb)
		return nil, fmt.Errorf("%s: short pack", pf.Name())
	}
	return &pack{idx: idx, idxb: idxb, f: pf, end: fi.Size() - 20, data: mapFile(pf, fi.Size())}, nil
}

// read returns an object's type and content. The content may be shared
// with the cache: callers must not modify it, and may keep it.
func (o *objects) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.readObject(h, true)
}

// readTransient is read for a caller that drops the content before its
// next call into o: the buffer may later be reused for another object.
func (o *objects) readTransient(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return o.readObject(h, false)
}

func (o *objects) readObject(h plumbing.Hash, keep bool) (plumbing.ObjectType, []byte, error) {
	for i, p := range o.packs() {
		off, err := p.idx.FindOffset(h)
		if err != nil {
			continue
		}
		key := cacheKey{i, off}
		verified := o.cache.verified(key)
		t, b, err := o.at(i, off, 0)
		if err == nil && !verified && t != plumbing.BlobObject {
			if id := objectID(t, b); id != h {
				o.cache.drop(key)
				err = fmt.Errorf("%w: its content hashes to %s", ErrCorrupt, id)
			} else {
				o.cache.setVerified(key)
			}
		}
		if err == nil {
			if keep {
				o.cache.pin(key)
			}
			return t, b, nil
		}
		if errors.Is(err, ErrCorrupt) {
			return plumbing.InvalidObject, nil, fmt.Errorf("object %s in %s: %w", h, filepath.Base(p.f.Name()), err)
		}
		break // an unusual pack entry: let go-git judge it
	}
	return o.readFallback(h)
}

func (o *objects) readFallback(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	o.fbMu.Lock()
	defer o.fbMu.Unlock()
	obj, err := o.fallback.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	defer rd.Close()
	// (a damaged header may claim any size: it is a hint, not an allocation)
	buf := bytes.NewBuffer(make([]byte, 0, min(max(obj.Size(), 0), 1<<20)))
	if _, err := buf.ReadFrom(rd); err != nil {
		return plumbing.InvalidObject, nil, err
	}
	// go-git's packfile reader trusts what it decodes: an object read
	// through it is checked against its id (these reads are rare: loose
	// objects, alternates, entries the pack reader leaves to it)
	if id := objectID(obj.Type(), buf.Bytes()); id != h {
		return plumbing.InvalidObject, nil, fmt.Errorf("object %s: %w: its content hashes to %s", h, ErrCorrupt, id)
	}
	return obj.Type(), buf.Bytes(), nil
}

var errDeltaDepth = errors.New("delta chain too deep")

// objectID is the id git gives an object of type t and content data.
func objectID(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	var hdr [32]byte
	h.Write(strconv.AppendInt(append(append(hdr[:0], t.Bytes()...), ' '), int64(len(data)), 10))
	h.Write([]byte{0})
	h.Write(data)
	var id plumbing.Hash
	h.Sum(id[:0])
	return id
}

// ErrCorrupt marks repository corruption: an object whose compressed data
// fails its checksum or does not decode to the object's size, or whose
// content does not hash to its id. It is a runtime error, never a verdict.
var ErrCorrupt = errors.New("the repository is corrupt")

type cacheKey struct {
	pack int
	off  int64
}

type cached struct {
	t    plumbing.ObjectType
	data []byte
	// verified: the content hashed to the id it was asked for (a delta
	// base is cached by offset, unverified, until it is asked for by id)
	verified bool
}

// entry is the header of a pack entry: its type, its inflated size, where
// its zlib data starts (k bytes after its offset) and, for a delta, its
// base.
type entry struct {
	t        plumbing.ObjectType
	size     int64
	k        int64
	baseOff  int64         // OFS_DELTA
	baseHash plumbing.Hash // REF_DELTA
}

// entry reads the header of the pack entry at off.
func (o *objects) entry(p *pack, off int64) (entry, error) {
	var e entry
	var hdr []byte
	if p.data != nil {
		if off < 0 || off >= p.end {
			return e, fmt.Errorf("offset %d beyond the pack", off)
		}
		hdr = p.data[off:min(off+int64(len(o.hdr)), p.end)]
	} else {
		n, err := p.f.ReadAt(o.hdr[:], off)
		if n == 0 {
			return e, err
		}
		hdr = o.hdr[:n]
	}
	// type and inflated size as a varint
	k := 0
	b := hdr[k]
	k++
	e.t = plumbing.ObjectType((b >> 4) & 7)
	e.size = int64(b & 15)
	for shift := uint(4); b&0x80 != 0; shift += 7 {
		if k >= len(hdr) || shift > 56 {
			return e, fmt.Errorf("bad object header at %d", off)
		}
		b = hdr[k]
		k++
		e.size |= int64(b&0x7f) << shift
	}
	switch e.t {
	case plumbing.OFSDeltaObject:
		if k >= len(hdr) {
			return e, fmt.Errorf("bad delta header at %d", off)
		}
		b = hdr[k]
		k++
		rel := int64(b & 0x7f)
		for b&0x80 != 0 {
			if k >= len(hdr) {
				return e, fmt.Errorf("bad delta offset at %d", off)
			}
			b = hdr[k]
			k++
			rel = ((rel + 1) << 7) | int64(b&0x7f)
		}
		e.baseOff = off - rel
		if e.baseOff <= 0 || e.baseOff >= off {
			return e, fmt.Errorf("bad delta base at %d", off)
		}
	case plumbing.REFDeltaObject:
		if k+20 > len(hdr) {
			return e, fmt.Errorf("bad delta header at %d", off)
		}
		copy(e.baseHash[:], hdr[k:k+20])
		k += 20
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return e, fmt.Errorf("unknown object type %d at %d", e.t, off)
	}
	if e.size < 0 || e.size > 1<<31 {
		return e, fmt.Errorf("object too large at %d", off)
	}
	e.k = int64(k)
	// deflate expands at most 1032 to 1: a size beyond what the rest of
	// the pack can hold is damage, not a buffer to allocate
	if rest := p.end - off - e.k; e.size > 1032*max(rest, 0)+64 {
		return e, fmt.Errorf("%w: the object at %d claims %d bytes, more than the %d bytes after it can inflate to", ErrCorrupt, off, e.size, rest)
	}
	return e, nil
}

// at decodes the object at off in pack i, resolving deltas.
func (o *objects) at(i int, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > 64 {
		return plumbing.InvalidObject, nil, errDeltaDepth
	}
	key := cacheKey{i, off}
	if c, ok := o.cache.get(key); ok {
		return c.t, c.data, nil
	}
	o.cache.missed(key)
	p := o.packs()[i]
	e, err := o.entry(p, off)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if e.t != plumbing.OFSDeltaObject && e.t != plumbing.REFDeltaObject {
		data := o.buffer(e.size)
		if err := o.inflate(p, off+e.k, data); err != nil {
			return plumbing.InvalidObject, nil, err
		}
		o.cache.put(key, cached{t: e.t, data: data})
		return e.t, data, nil
	}
	// resolve the base first: the delta scratch buffer is shared
	var bt plumbing.ObjectType
	var base []byte
	if e.t == plumbing.OFSDeltaObject {
		bt, base, err = o.at(i, e.baseOff, depth+1)
	} else {
		bt, base, err = o.read(e.baseHash)
	}
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	delta, err := o.inflateDelta(p, off, e)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	data, err := o.patch(base, delta)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("delta at %d: %w", off, err)
	}
	o.cache.put(key, cached{t: bt, data: data})
	return bt, data, nil
}

// inflateDelta inflates the instructions of the delta entry e at off into
// the shared scratch buffer, valid until the next call.
func (o *objects) inflateDelta(p *pack, off int64, e entry) ([]byte, error) {
	if int64(cap(o.delta)) < e.size {
		o.delta = make([]byte, e.size)
	}
	delta := o.delta[:e.size]
	return delta, o.inflate(p, off+e.k, delta)
}

// inflate fills out with the zlib data starting at off.
func (o *objects) inflate(p *pack, off int64, out []byte) error {
	var src io.Reader
	if off >= p.end {
		return fmt.Errorf("inflate at %d: beyond the pack", off)
	}
	if p.data != nil {
		o.mem.Reset(p.data[off:p.end]) // a ByteReader: flate reads it directly
		src = &o.mem
	} else {
		sr := io.NewSectionReader(p.f, off, p.end-off)
		if o.br == nil {
			o.br = bufio.NewReaderSize(sr, 16<<10)
		} else {
			o.br.Reset(sr)
		}
		src = o.br
	}
	var err error
	if o.zr == nil {
		o.zr, err = zlib.NewReader(src)
	} else {
		err = o.zr.(zlib.Resetter).Reset(src, nil)
	}
	if err != nil {
		return fmt.Errorf("%w: zlib header at %d: %w", ErrCorrupt, off, err)
	}
	if _, err := io.ReadFull(o.zr, out); err != nil {
		return fmt.Errorf("%w: inflate at %d: %w", ErrCorrupt, off, err)
	}
	// the stream must end here: reading on verifies its checksum
	var one [1]byte
	for range 4 {
		n, err := o.zr.Read(one[:])
		switch {
		case n > 0:
			return fmt.Errorf("%w: inflate at %d: more data than the object's %d bytes", ErrCorrupt, off, len(out))
		case err == io.EOF:
			return nil
		case err != nil:
			return fmt.Errorf("%w: inflate at %d: %w", ErrCorrupt, off, err)
		}
	}
	return fmt.Errorf("%w: inflate at %d: the stream does not end", ErrCorrupt, off)
}

var errDelta = errors.New("invalid delta")

// patch applies a git delta (see gitformat-pack(5), "Deltified
// representation") to base, into a recycled buffer when one fits.
func (o *objects) patch(base, delta []byte) ([]byte, error) {
	srcSize, delta, ok := leb128(delta)
	if !ok || srcSize != uint64(len(base)) {
		return nil, errDelta
	}
	dstSize, delta, ok := leb128(delta)
	if !ok || dstSize > 1<<31 {
		return nil, errDelta
	}
	dst, err := applyDelta(o.buffer(int64(dstSize))[:0], base, delta, dstSize, dstSize, false)
	if err != nil {
		return nil, err
	}
	if uint64(len(dst)) != dstSize {
		return nil, errDelta
	}
	return dst, nil
}

// applyDelta appends to dst what the instructions ops (a delta without its
// two sizes) make of base, a result of dstSize bytes, stopping once dst
// holds want bytes (want <= dstSize). When short, base is only the first
// bytes of the delta's base: a copy reaching past them ends the result
// there instead of being an error.
func applyDelta(dst, base, ops []byte, dstSize, want uint64, short bool) ([]byte, error) {
	for len(ops) > 0 {
		if uint64(len(dst)) >= want && want < dstSize {
			break // enough (a whole result reads every instruction)
		}
		op := ops[0]
		ops = ops[1:]
		switch {
		case op&0x80 != 0: // copy from base
			var off, n uint64
			for i := uint(0); i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(ops) == 0 {
						return nil, errDelta
					}
					off |= uint64(ops[0]) << (8 * i)
					ops = ops[1:]
				}
			}
			for i := uint(0); i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(ops) == 0 {
						return nil, errDelta
					}
					n |= uint64(ops[0]) << (8 * i)
					ops = ops[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if uint64(len(dst))+n > dstSize {
				return nil, errDelta
			}
			n = min(n, want-uint64(len(dst)))
			if off+n > uint64(len(base)) {
				if !short {
					return nil, errDelta
				}
				if off < uint64(len(base)) {
					dst = append(dst, base[off:]...)
				}
				return dst, nil
			}
			dst = append(dst, base[off:off+n]...)
		case op != 0: // insert op bytes from the delta
			n := uint64(op)
			if n > uint64(len(ops)) || uint64(len(dst))+n > dstSize {
				return nil, errDelta
			}
			dst = append(dst, ops[:min(n, want-uint64(len(dst)))]...)
			ops = ops[n:]
		default:
			return nil, errDelta
		}
	}
	return dst, nil
}

func leb128(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, uint(0); i < len(b) && shift < 64; i, shift = i+1, shift+7 {
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, b, false
}

// lru is a least-recently-used cache of decoded objects bounded by bytes.
// Evicted buffers that were never handed out for keeping go to onEvict.
//
// A cache given room to grow (room, shared by the caches of one scan)
// doubles its budget, as far as the room allows, whenever an object it
// evicted is asked for again: the versions of a
// file are deltas against versions up to git's delta window (ten by
// default) newer, so a budget that holds fewer versions than that
// decodes the same bases over and over (on a history ten times the
// corpus, whose changelog versions are 4 MB, 26,000 decodes for 8,100
// versions with a fixed 2 MB budget).
type lru struct {
	budget, used int
	room         *int       // the bytes it may still grow by, shared (nil: fixed)
	ghosts       []cacheKey // keys evicted lately, oldest first
	ll           *list.List
	m            map[cacheKey]*list.Element
	onEvict      func([]byte)
}

// maxGhosts bounds the evicted keys a growing cache remembers.
const maxGhosts = 64

type lruItem struct {
	key    cacheKey
	val    cached
	pinned bool // handed to a caller that may keep it
}

func newLRU(budget int, onEvict func([]byte)) *lru {
	return &lru{budget: budget, ll: list.New(), m: map[cacheKey]*list.Element{}, onEvict: onEvict}
}

// verified says whether k's entry was checked against its id.
func (c *lru) verified(k cacheKey) bool {
	e, ok := c.m[k]
	return ok && e.Value.(*lruItem).val.verified
}

// setVerified records that k's entry matched its id.
func (c *lru) setVerified(k cacheKey) {
	if e, ok := c.m[k]; ok {
		e.Value.(*lruItem).val.verified = true
	}
}

// drop forgets k's entry (content that failed its check).
func (c *lru) drop(k cacheKey) {
	if e, ok := c.m[k]; ok {
		c.ll.Remove(e)
		delete(c.m, k)
		c.used -= cap(e.Value.(*lruItem).val.data)
	}
}

func (c *lru) get(k cacheKey) (cached, bool) {
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruItem).val, true
	}
	return cached{}, false
}

func (c *lru) pin(k cacheKey) {
	if e, ok := c.m[k]; ok {
		e.Value.(*lruItem).pinned = true
	}
}

// missed notes that k was not cached: an object evicted lately makes a
// growing cache double its budget.
func (c *lru) missed(k cacheKey) {
	if c.room == nil || *c.room <= 0 {
		return
	}
	if i := slices.Index(c.ghosts, k); i >= 0 {
		c.ghosts = slices.Delete(c.ghosts, i, i+1)
		more := min(c.budget, *c.room)
		c.budget += more
		*c.room -= more
	}
}

func (c *lru) trim() {
	for c.used > c.budget && c.ll.Len() > keepNewest {
		e := c.ll.Back()
		it := e.Value.(*lruItem)
		c.ll.Remove(e)
		delete(c.m, it.key)
		if c.room != nil && *c.room > 0 {
			if len(c.ghosts) == maxGhosts {
				c.ghosts = slices.Delete(c.ghosts, 0, 1)
			}
			c.ghosts = append(c.ghosts, it.key)
		}
		c.used -= cap(it.val.data)
		if !it.pinned && c.onEvict != nil {
			c.onEvict(it.val.data)
		}
	}
}

// keepNewest objects stay cached whatever the budget: a file larger than
// the budget (a 10x changelog is 4 MB) is still the base of the version
// read after it.
const keepNewest = 2

func (c *lru) put(k cacheKey, v cached) {
	c.m[k] = c.ll.PushFront(&lruItem{key: k, val: v})
	c.used += cap(v.data)
	c.trim()
}

// rawCommit is the part of a commit object a walk needs.
type rawCommit struct {
	tree    plumbing.Hash
	parents []plumbing.Hash
}

var errBadCommit = errors.New("malformed commit object")

// parseCommitHeader reads the tree and parent lines of a commit object.
func parseCommitHeader(b []byte) (rawCommit, error) {
	c, _, err := parseCommitPrefix(b, true)
	return c, err
}

// parseCommitPrefix is parseCommitHeader over the first bytes of a commit
// object (all of it when whole): done tells whether they held every header
// it reads (the tree, the parents), that is, whether they reach the
// author header, the end of the headers or the end of the object. Without
// done, c is not to be used.
func parseCommitPrefix(b []byte, whole bool) (c rawCommit, done bool, err error) {
	seenTree := false
	for {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 && !whole {
			// an unfinished line: enough if it is the author's
			if !bytes.HasPrefix(b, []byte("author ")) {
				return c, false, nil
			}
			break
		}
		if nl <= 0 {
			break // the end of the headers (or of the object)
		}
		line := b[:nl]
		b = b[nl+1:]
		if bytes.HasPrefix(line, []byte("tree ")) {
			h, ok := parseHex(line[5:])
			if !ok {
				return c, true, errBadCommit
			}
			c.tree, seenTree = h, true
		} else if bytes.HasPrefix(line, []byte("parent ")) {
			h, ok := parseHex(line[7:])
			if !ok {
				return c, true, errBadCommit
			}
			c.parents = append(c.parents, h)
		} else if bytes.HasPrefix(line, []byte("author ")) {
			break // parents come before the author
		}
	}
	return c, true, checkTree(seenTree)
}

func checkTree(seen bool) error {
	if !seen {
		return errBadCommit
	}
	return nil
}

// parseCommitMeta reads the author, author date and subject of a commit
// object as go-git's object.Commit.Decode (Repo.Commit) does: the author
// is the header that follows the tree header and the parent headers after
// it, when it is one (a later author header is ignored), its name, email and date decoded by
// object.Signature; the message follows the first empty line, and the
// subject is its first line, trimmed.
func parseCommitMeta(b []byte) CommitMeta {
	var m CommitMeta
	state := 0 // 0: the tree header, 1: parent headers, 2: past the author's place
	for len(b) > 0 {
		line := b
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			line, b = b[:nl], b[nl+1:]
		} else {
			b = nil
		}
		if len(line) == 0 { // the message follows
			subject, _, _ := bytes.Cut(b, []byte("\n"))
			m.Subject = string(bytes.TrimSpace(subject))
			break
		}
		key, data, _ := bytes.Cut(line, []byte(" "))
		switch {
		case state == 0:
			state = 1
		case state == 1 && string(key) == "parent":
		case state == 1:
			state = 2
			if string(key) == "author" {
				var sig object.Signature
				sig.Decode(data)
				m.Author, m.Email, m.When = sig.Name, sig.Email, sig.When
			}
		}
	}
	return m
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	for i := 0; i < 20; i++ {
		hi, ok1 := unhex(b[2*i])
		lo, ok2 := unhex(b[2*i+1])
		if !ok1 || !ok2 {
			return h, false
		}
		h[i] = hi<<4 | lo
	}
	return h, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// treeEntry is one entry of a raw tree object.
type treeEntry struct {
	mode uint32
	hash plumbing.Hash
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000 // regular (0o100644) and executable (0o100755)
	modeMask = 0o170000
)

var errBadTree = errors.New("malformed tree object")

// findTreeEntry scans a raw tree object for name.
func findTreeEntry(b []byte, name string) (treeEntry, bool, error) {
	var found treeEntry
	errFound := errors.New("found")
	err := eachTreeEntry(b, func(n string, e treeEntry) error {
		if n == name {
			found = e
			return errFound
		}
		return nil
	})
	switch err {
	case errFound:
		return found, true, nil
	case nil:
		return treeEntry{}, false, nil
	}
	return treeEntry{}, false, err
}

// eachTreeEntry calls fn for every entry of a raw tree object.
func eachTreeEntry(b []byte, fn func(name string, e treeEntry) error) error {
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp <= 0 {
			return errBadTree
		}
		nul := bytes.IndexByte(b[sp:], 0)
		if nul < 0 || sp+nul+21 > len(b) {
			return errBadTree
		}
		nul += sp
		var e treeEntry
		for _, c := range b[:sp] {
			if c < '0' || c > '7' {
				return errBadTree
			}
			e.mode = e.mode<<3 | uint32(c-'0')
		}
		copy(e.hash[:], b[nul+1:nul+21])
		if err := fn(string(b[sp+1:nul]), e); err != nil {
			return err
		}
		b = b[nul+21:]
	}
	return nil
}
