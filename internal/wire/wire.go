// Package wire is the compact binary encoding of perflog's stored answers:
// unsigned and signed varints, length-prefixed strings and a few composite
// helpers, written by a Writer and read back by a Reader.
//
// It exists because decoding is what a warm answer spends its time on:
// encoding/gob builds its decoders by reflection in every process and
// allocates each string on its own, and on a virtual machine where every
// fresh page costs a fault, the bytes a decode touches are its cost. A
// Reader copies its input once into one string and returns strings that
// share it (or, with Adopt, takes over the caller's bytes), so a decoded
// answer is a few allocations.
//
// Errors are sticky: once the input is found short or malformed, every
// read returns a zero value and Err reports the first problem. Lengths are
// checked against the bytes left, so damaged input cannot make a Reader
// allocate more than its input.
//
// Dependencies: the standard library only.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt encoding")

// Writer appends encoded values to B.
type Writer struct{ B []byte }

// Uvarint appends u.
func (w *Writer) Uvarint(u uint64) { w.B = binary.AppendUvarint(w.B, u) }

// Int appends i (zig-zag encoded).
func (w *Writer) Int(i int) { w.B = binary.AppendVarint(w.B, int64(i)) }

// Bool appends b as one byte.
func (w *Writer) Bool(b bool) {
	if b {
		w.B = append(w.B, 1)
	} else {
		w.B = append(w.B, 0)
	}
}

// String appends s with its length.
func (w *Writer) String(s string) {
	w.Uvarint(uint64(len(s)))
	w.B = append(w.B, s...)
}

// Bytes appends b with its length.
func (w *Writer) Bytes(b []byte) {
	w.Uvarint(uint64(len(b)))
	w.B = append(w.B, b...)
}

// Len appends the length of a list that may be nil: 0 for nil, else n+1,
// so that nil and empty read back as they were.
func (w *Writer) Len(n int, isNil bool) {
	if isNil {
		w.Uvarint(0)
		return
	}
	w.Uvarint(uint64(n) + 1)
}

// Strings appends ss (nil and empty kept apart).
func (w *Writer) Strings(ss []string) {
	w.Len(len(ss), ss == nil)
	for _, s := range ss {
		w.String(s)
	}
}

// Ints appends is (nil and empty kept apart).
func (w *Writer) Ints(is []int) {
	w.Len(len(is), is == nil)
	for _, i := range is {
		w.Int(i)
	}
}

// OptInt appends an optional int.
func (w *Writer) OptInt(p *int) {
	w.Bool(p != nil)
	if p != nil {
		w.Int(*p)
	}
}

// Time appends t as time.Time.MarshalBinary does (what gob stores: the
// instant and the zone offset), or fails for a time whose offset is not a
// whole minute.
func (w *Writer) Time(t time.Time) error {
	b, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	w.Bytes(b)
	return nil
}

// Reader reads values written by a Writer.
type Reader struct {
	s   string // the input, copied once; strings read share it
	off int
	err error
}

// NewReader reads data, which it copies: the caller may reuse data.
func NewReader(data []byte) *Reader { return &Reader{s: string(data)} }

// Adopt reads data without copying it: the strings read share its bytes,
// so the caller hands data over and must never change it. For bytes a
// process holds once (a value just read from a database), it saves the
// copy and the fresh pages the copy would fault in.
func Adopt(data []byte) *Reader { return &Reader{s: unsafe.String(unsafe.SliceData(data), len(data))} }

// Err is the first decoding error, nil if none.
func (r *Reader) Err() error { return r.err }

// Done reports an error unless every byte was read without one.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.s) {
		r.fail("%d bytes left over", len(r.s)-r.off)
	}
	return r.err
}

// Fail records a decoding error found by the caller (a value that reads
// well but makes no sense), unless one is recorded already.
func (r *Reader) Fail(format string, a ...any) { r.fail(format, a...) }

func (r *Reader) fail(format string, a ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w at byte %d: %s", ErrCorrupt, r.off, fmt.Sprintf(format, a...))
	}
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	var u uint64
	for shift, i := uint(0), r.off; ; shift += 7 {
		if i >= len(r.s) || shift > 63 {
			r.fail("bad varint")
			return 0
		}
		c := r.s[i]
		i++
		if shift == 63 && c > 1 {
			r.fail("varint overflows")
			return 0
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			r.off = i
			return u
		}
	}
}

// Int reads a signed varint.
func (r *Reader) Int() int {
	u := r.Uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return int(x)
}

// Bool reads a byte written by Writer.Bool.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if r.off >= len(r.s) || r.s[r.off] > 1 {
		r.fail("bad bool")
		return false
	}
	r.off++
	return r.s[r.off-1] == 1
}

// count reads a length and checks that at least min bytes per item are
// left for that many items.
func (r *Reader) count(n uint64, min int) int {
	if r.err != nil {
		return 0
	}
	if left := uint64(len(r.s) - r.off); n > left || min > 0 && n*uint64(min) > left {
		r.fail("length %d with %d bytes left", n, left)
		return 0
	}
	return int(n)
}

// String reads a string; it shares the Reader's copy of the input.
func (r *Reader) String() string {
	n := r.count(r.Uvarint(), 1)
	if r.err != nil {
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

// Bytes reads bytes written by Writer.Bytes (a new slice).
func (r *Reader) Bytes() []byte { return []byte(r.String()) }

// Len reads a length written by Writer.Len, for items of at least min
// bytes each; isNil is set for a nil list.
func (r *Reader) Len(min int) (n int, isNil bool) {
	u := r.Uvarint()
	if u == 0 || r.err != nil {
		return 0, r.err == nil
	}
	return r.count(u-1, min), false
}

// List reads a list written as Writer.Len and then each item, which item
// reads; min is the fewest bytes an item takes (it bounds what a damaged
// length makes List allocate). A nil list reads as nil.
func List[T any](r *Reader, min int, item func() T) []T {
	n, isNil := r.Len(min)
	if isNil || r.err != nil {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = item()
	}
	return out
}

// Strings reads a list written by Writer.Strings.
func (r *Reader) Strings() []string { return List(r, 1, r.String) }

// Ints reads a list written by Writer.Ints.
func (r *Reader) Ints() []int { return List(r, 1, r.Int) }

// Fixed reads a string written by Writer.String into dst, which it must
// fill exactly (an object id, a digest).
func (r *Reader) Fixed(dst []byte) {
	s := r.String()
	if r.err == nil && len(s) != len(dst) {
		r.fail("%d bytes for a %d-byte value", len(s), len(dst))
		return
	}
	copy(dst, s)
}

// OptInt reads an int written by Writer.OptInt.
func (r *Reader) OptInt() *int {
	if !r.Bool() {
		return nil
	}
	i := r.Int()
	return &i
}

// Time reads a time written by Writer.Time.
func (r *Reader) Time() time.Time {
	var t time.Time
	s := r.String()
	if r.err == nil {
		if err := t.UnmarshalBinary([]byte(s)); err != nil {
			r.fail("time: %v", err)
		} else if again, _ := t.MarshalBinary(); string(again) != s {
			// time.UnmarshalBinary takes nanoseconds past a second, which
			// no Writer writes: a time that would not read back the same
			r.fail("time: not as a Writer writes one")
		}
	}
	return t
}
