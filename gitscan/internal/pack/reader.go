package pack

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// Reader decodes objects from a Set's packs, keeping decoded objects in a
// cache bounded by bytes (keyed by pack offset, so that delta bases are
// found whichever object asked for them). A Reader is not safe for
// concurrent use; the Readers of one Set may run concurrently.
type Reader struct {
	set   *Set
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
	// lent is the object last lent to a caller (Lend), which may keep it
	// until it reads its next one: its buffer is not reused meanwhile,
	// even once evicted
	lent []byte
	// packed is the extent of the entry at off whose data inflate last
	// read in full, from a mapped pack (its header and zlib stream): what
	// the index's CRC-32 covers
	packed struct{ off, end int64 }
}

// Set is the packs the reader reads.
func (r *Reader) Set() *Set { return r.set }

// NewReader returns a reader of s whose cache keeps up to budget bytes of
// decoded objects (and always the two newest ones).
func NewReader(s *Set, budget int) *Reader {
	r := &Reader{set: s}
	r.cache = newLRU(budget, r.recycle)
	return r
}

// Grow lets r's cache double its budget whenever an object it evicted is
// asked for again, as long as room (shared by the readers of one scan)
// allows.
func (r *Reader) Grow(room *int) { r.cache.room = room }

// SetBudget sets the cache's budget, evicting down to it at once, and
// returns the previous one.
func (r *Reader) SetBudget(budget int) (previous int) {
	previous, r.cache.budget = r.cache.budget, max(budget, 0)
	r.cache.trim()
	return previous
}

// Cached returns the bytes of decoded objects the cache holds.
func (r *Reader) Cached() int { return r.cache.used }

// Read returns an object's type and content. The content may be shared
// with the cache: callers must not modify it, and may keep it.
func (r *Reader) Read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return r.read(h, true)
}

// ReadTransient is Read for a caller that drops the content before its
// next call into r: the buffer may later be reused for another object.
func (r *Reader) ReadTransient(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return r.read(h, false)
}

// Lend marks data, read by ReadTransient, as kept by the caller until its
// next read: its buffer is not reused before then.
func (r *Reader) Lend(data []byte) { r.lent = data }

func (r *Reader) read(h plumbing.Hash, keep bool) (plumbing.ObjectType, []byte, error) {
	if i, off, ok := r.locate(h); ok {
		p := r.set.get()[i]
		key := cacheKey{i, off}
		verified := r.cache.verified(key)
		r.packed.off, r.packed.end = -1, -1
		t, b, err := r.at(i, off, 0)
		if err == nil && !verified {
			// an object is checked once: a commit or tree by its id, a
			// blob (most of what is read, and the largest) by the index's
			// CRC-32 of its packed entry when its extent is known (a
			// damaged index may point at another object, intact itself),
			// else by its id
			if t == plumbing.BlobObject && r.packed.off == off {
				if want, cerr := p.idx.FindCRC32(h); cerr == nil {
					if got := crc32.ChecksumIEEE(p.data[r.packed.off:r.packed.end]); got != want {
						err = fmt.Errorf("%w: its packed entry's CRC-32 is %08x, the index says %08x", ErrCorrupt, got, want)
					}
				} else {
					err = fmt.Errorf("%w: the index has no CRC-32 for it", ErrCorrupt)
				}
			} else if id := ID(t, b); id != h {
				err = fmt.Errorf("%w: its content hashes to %s", ErrCorrupt, id)
			}
			if err != nil {
				r.cache.drop(key)
			} else {
				r.cache.setVerified(key)
			}
		}
		if err == nil {
			if keep {
				r.cache.pin(key)
			}
			return t, b, nil
		}
		if errors.Is(err, ErrCorrupt) {
			return plumbing.InvalidObject, nil, fmt.Errorf("object %s in %s: %w", h, filepath.Base(p.f.Name()), err)
		}
		// an unusual entry, or a base outside the packs: go-git's
	}
	return plumbing.InvalidObject, nil, ErrNotFound
}

// Size returns the inflated size of the object h without inflating it:
// an entry's header holds it, a delta's instructions start with it (of
// which only those bytes are inflated). It returns ErrNotFound for an
// object no pack holds.
func (r *Reader) Size(h plumbing.Hash) (int64, error) {
	i, off, ok := r.locate(h)
	if !ok {
		return 0, ErrNotFound
	}
	p := r.set.get()[i]
	e, err := r.entry(p, off)
	if err != nil {
		return 0, err
	}
	if e.t != plumbing.OFSDeltaObject && e.t != plumbing.REFDeltaObject {
		return e.size, nil
	}
	// the base's size and the result's, two varints of at most 10 bytes
	var head [20]byte
	n, err := r.inflatePrefix(p, off+e.k, head[:min(int64(len(head)), e.size)])
	if err != nil {
		return 0, err
	}
	_, rest, ok := leb128(head[:n])
	size, _, ok2 := leb128(rest)
	if !ok || !ok2 || size > 1<<31 {
		return 0, fmt.Errorf("%w: the delta at %d starts with no sizes", ErrCorrupt, off)
	}
	return int64(size), nil
}

// locate finds the pack holding h and h's offset in it.
func (r *Reader) locate(h plumbing.Hash) (i int, off int64, ok bool) {
	for i, p := range r.set.get() {
		if off, err := p.idx.FindOffset(h); err == nil {
			return i, off, true
		}
	}
	return 0, 0, false
}

// recycle keeps an evicted buffer for reuse: the largest ones, since a
// buffer serves any object up to its capacity.
func (r *Reader) recycle(b []byte) {
	if cap(b) < 4<<10 {
		return // small objects are cheap to allocate
	}
	if cap(r.lent) > 0 && &b[:1][0] == &r.lent[:1][0] {
		return // still in the caller's hands (see lent)
	}
	// the buffers held stay within half the budget, or within one buffer
	// when a single object is larger than that
	limit := max(r.cache.budget/2, cap(b))
	held := 0
	small := -1
	for i, f := range r.free {
		held += cap(f)
		if small < 0 || cap(f) < cap(r.free[small]) {
			small = i
		}
	}
	if len(r.free) < maxFree && held+cap(b) <= limit {
		r.free = append(r.free, b[:0])
		return
	}
	if small >= 0 && cap(b) > cap(r.free[small]) && held-cap(r.free[small])+cap(b) <= limit {
		r.free[small] = b[:0]
	}
}

// maxFree bounds the recycled buffers kept.
const maxFree = 8

// buffer returns a buffer of length n, reusing a recycled one that fits.
func (r *Reader) buffer(n int64) []byte {
	best := -1
	for i, b := range r.free {
		if int64(cap(b)) >= n && (best < 0 || cap(b) < cap(r.free[best])) {
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
	b := r.free[best][:n]
	r.free[best] = r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	return b
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
func (r *Reader) entry(p *file, off int64) (entry, error) {
	var e entry
	var hdr []byte
	if p.data != nil {
		if off < 0 || off >= p.end {
			return e, fmt.Errorf("offset %d beyond the pack", off)
		}
		hdr = p.data[off:min(off+int64(len(r.hdr)), p.end)]
	} else {
		n, err := p.f.ReadAt(r.hdr[:], off)
		if n == 0 {
			return e, err
		}
		hdr = r.hdr[:n]
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

var errDeltaDepth = errors.New("delta chain too deep")

// at decodes the object at off in pack i, resolving deltas.
func (r *Reader) at(i int, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > 64 {
		return plumbing.InvalidObject, nil, errDeltaDepth
	}
	key := cacheKey{i, off}
	if c, ok := r.cache.get(key); ok {
		return c.t, c.data, nil
	}
	r.cache.missed(key)
	p := r.set.get()[i]
	e, err := r.entry(p, off)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	if e.t != plumbing.OFSDeltaObject && e.t != plumbing.REFDeltaObject {
		data := r.buffer(e.size)
		if err := r.inflate(p, off+e.k, data); err != nil {
			return plumbing.InvalidObject, nil, err
		}
		r.inflated(p, off)
		r.cache.put(key, cached{t: e.t, data: data})
		return e.t, data, nil
	}
	// resolve the base first: the delta scratch buffer is shared
	var bt plumbing.ObjectType
	var base []byte
	if e.t == plumbing.OFSDeltaObject {
		bt, base, err = r.at(i, e.baseOff, depth+1)
	} else if j, boff, ok := r.locate(e.baseHash); ok {
		bt, base, err = r.at(j, boff, depth+1)
	} else {
		err = ErrNotFound // a thin pack's base: go-git's
	}
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	delta, err := r.inflateDelta(p, off, e)
	if err != nil {
		return plumbing.InvalidObject, nil, err
	}
	r.inflated(p, off)
	data, err := r.patch(base, delta)
	if err != nil {
		return plumbing.InvalidObject, nil, fmt.Errorf("delta at %d: %w", off, err)
	}
	r.cache.put(key, cached{t: bt, data: data})
	return bt, data, nil
}

// inflated notes the extent of the entry at off whose data was just
// inflated from a mapped pack (the mapped reader is a ByteReader: zlib
// read no byte past the stream's end).
func (r *Reader) inflated(p *file, off int64) {
	if p.data != nil {
		r.packed.off, r.packed.end = off, p.end-int64(r.mem.Len())
	}
}

// inflateDelta inflates the instructions of the delta entry e at off into
// the shared scratch buffer, valid until the next call.
func (r *Reader) inflateDelta(p *file, off int64, e entry) ([]byte, error) {
	if int64(cap(r.delta)) < e.size {
		r.delta = make([]byte, e.size)
	}
	delta := r.delta[:e.size]
	return delta, r.inflate(p, off+e.k, delta)
}

// inflate fills out with the zlib data starting at off; the stream must
// end exactly there, its checksum verified.
func (r *Reader) inflate(p *file, off int64, out []byte) error {
	var src io.Reader
	if off >= p.end {
		return fmt.Errorf("inflate at %d: beyond the pack", off)
	}
	if p.data != nil {
		r.mem.Reset(p.data[off:p.end]) // a ByteReader: flate reads it directly
		src = &r.mem
	} else {
		sr := io.NewSectionReader(p.f, off, p.end-off)
		if r.br == nil {
			r.br = bufio.NewReaderSize(sr, 16<<10)
		} else {
			r.br.Reset(sr)
		}
		src = r.br
	}
	var err error
	if r.zr == nil {
		r.zr, err = zlib.NewReader(src)
	} else {
		err = r.zr.(zlib.Resetter).Reset(src, nil)
	}
	if err != nil {
		return fmt.Errorf("%w: zlib header at %d: %w", ErrCorrupt, off, err)
	}
	if _, err := io.ReadFull(r.zr, out); err != nil {
		return fmt.Errorf("%w: inflate at %d: %w", ErrCorrupt, off, err)
	}
	// the stream must end here: reading on verifies its checksum
	var one [1]byte
	for range 4 {
		n, err := r.zr.Read(one[:])
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

// inflatePrefix inflates the first len(out) bytes of the zlib data at
// off (fewer when the stream is shorter), unchecked beyond them.
func (r *Reader) inflatePrefix(p *file, off int64, out []byte) (int, error) {
	if off >= p.end {
		return 0, fmt.Errorf("inflate at %d: beyond the pack", off)
	}
	var src io.Reader
	if p.data != nil {
		src = bytes.NewReader(p.data[off:p.end])
	} else {
		src = io.NewSectionReader(p.f, off, p.end-off)
	}
	zr, err := zlib.NewReader(src)
	if err != nil {
		return 0, fmt.Errorf("%w: zlib header at %d: %w", ErrCorrupt, off, err)
	}
	defer zr.Close()
	n, err := io.ReadFull(zr, out)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return n, fmt.Errorf("%w: inflate at %d: %w", ErrCorrupt, off, err)
	}
	return n, nil
}

// patch applies a delta to base, into a recycled buffer when one fits.
func (r *Reader) patch(base, delta []byte) ([]byte, error) {
	return applyDelta(base, delta, r.buffer)
}
