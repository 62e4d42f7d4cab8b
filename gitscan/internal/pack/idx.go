package pack

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
)

// index finds an object's offset in a pack, and the CRC-32 of its packed
// entry.
type index interface {
	FindOffset(h plumbing.Hash) (int64, error)
	FindCRC32(h plumbing.Hash) (uint32, error)
}

// idxView reads a version-2 pack index in place, from its mapped file:
// a binary search in the sorted names of the object's fanout bucket. A
// short-lived process never decodes the whole index (go-git's decoder
// copies every name and offset, ~3 MB for 80k objects, before the first
// lookup), and the only pages it touches are the ones it searches.
type idxView struct {
	data []byte
	n    int
	// byte offsets of the tables in data
	names, offs, offs64 int
}

var idxMagic = []byte{0xff, 't', 'O', 'c'}

// newIdxView checks an index's bytes; nil when they are not a
// well-formed version-2 index.
func newIdxView(b []byte) *idxView {
	const fanout = 8
	if len(b) < fanout+256*4+40 || !bytes.Equal(b[:4], idxMagic) || binary.BigEndian.Uint32(b[4:]) != 2 {
		return nil
	}
	n := int(binary.BigEndian.Uint32(b[fanout+255*4:]))
	v := &idxView{data: b, n: n, names: fanout + 256*4}
	v.offs = v.names + n*20 + n*4
	v.offs64 = v.offs + n*4
	if n < 0 || v.offs64 > len(b)-40 {
		return nil
	}
	return v
}

func (v *idxView) bucket(first byte) (lo, hi int) {
	const fanout = 8
	if first > 0 {
		lo = int(binary.BigEndian.Uint32(v.data[fanout+(int(first)-1)*4:]))
	}
	hi = int(binary.BigEndian.Uint32(v.data[fanout+int(first)*4:]))
	return min(lo, v.n), min(hi, v.n)
}

// FindOffset returns the pack offset of h, or plumbing.ErrObjectNotFound.
func (v *idxView) FindOffset(h plumbing.Hash) (int64, error) {
	i, ok := v.find(h)
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	return v.offset(i)
}

// FindCRC32 returns the CRC-32 of h's packed entry, or
// plumbing.ErrObjectNotFound.
func (v *idxView) FindCRC32(h plumbing.Hash) (uint32, error) {
	i, ok := v.find(h)
	if !ok {
		return 0, plumbing.ErrObjectNotFound
	}
	crcs := v.names + v.n*20
	return binary.BigEndian.Uint32(v.data[crcs+i*4:]), nil
}

// find is h's position in the index.
func (v *idxView) find(h plumbing.Hash) (int, bool) {
	lo, hi := v.bucket(h[0])
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(v.data[v.names+mid*20:v.names+mid*20+20], h[:]); {
		case c == 0:
			return mid, true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false
}

func (v *idxView) offset(i int) (int64, error) {
	o := binary.BigEndian.Uint32(v.data[v.offs+i*4:])
	if o&0x80000000 == 0 {
		return int64(o), nil
	}
	at := v.offs64 + int(o&0x7fffffff)*8
	if at+8 > len(v.data)-40 {
		return 0, plumbing.ErrObjectNotFound
	}
	return int64(binary.BigEndian.Uint64(v.data[at:])), nil
}

// openIndex maps a pack index (or reads it, when it cannot be mapped)
// and reads it in place; mapped is the mapping to release (nil when
// nothing is mapped). An index that is not a well-formed version-2 one is
// ErrCorrupt: git writes no other, and go-git's decoder, given a damaged
// one, allocates what its fanout claims (gigabytes for a fanout that
// does not rise: FuzzIndex's workers hung on it). An index is checked
// against its trailing SHA-1 once (cheap beside reading the pack): with
// the CRC-32 of each blob's packed entry (Reader.read), a damaged index
// never reads as another object's content.
func openIndex(f *os.File) (idx index, mapped []byte, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b := mapFile(f, fi.Size())
	mapped = b
	if b == nil {
		if b, err = io.ReadAll(f); err != nil {
			return nil, nil, err
		}
	}
	v := newIdxView(b)
	if v == nil {
		unmapFile(mapped)
		return nil, nil, fmt.Errorf("%w: %s is not a well-formed version-2 pack index", ErrCorrupt, filepath.Base(f.Name()))
	}
	if sum := sha1.Sum(b[:len(b)-20]); !bytes.Equal(sum[:], b[len(b)-20:]) {
		unmapFile(mapped)
		return nil, nil, fmt.Errorf("%w: %s does not match its checksum", ErrCorrupt, filepath.Base(f.Name()))
	}
	return v, mapped, nil
}
