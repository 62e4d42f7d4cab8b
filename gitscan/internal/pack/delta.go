package pack

import "errors"

var errDelta = errors.New("invalid delta")

// applyDelta returns what a git delta (gitformat-pack(5), "Deltified
// representation") makes of base, in a buffer of the result's size got
// from alloc.
func applyDelta(base, delta []byte, alloc func(n int64) []byte) ([]byte, error) {
	srcSize, ops, ok := leb128(delta)
	if !ok || srcSize != uint64(len(base)) {
		return nil, errDelta
	}
	dstSize, ops, ok := leb128(ops)
	if !ok || dstSize > 1<<31 {
		return nil, errDelta
	}
	dst := alloc(int64(dstSize))[:0]
	for len(ops) > 0 {
		op := ops[0]
		ops = ops[1:]
		switch {
		case op&0x80 != 0: // copy from base
			var off, n uint64
			for i := range uint(4) {
				if op&(1<<i) != 0 {
					if len(ops) == 0 {
						return nil, errDelta
					}
					off |= uint64(ops[0]) << (8 * i)
					ops = ops[1:]
				}
			}
			for i := range uint(3) {
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
			if uint64(len(dst))+n > dstSize || off+n > uint64(len(base)) {
				return nil, errDelta
			}
			dst = append(dst, base[off:off+n]...)
		case op != 0: // insert op bytes from the delta
			n := uint64(op)
			if n > uint64(len(ops)) || uint64(len(dst))+n > dstSize {
				return nil, errDelta
			}
			dst = append(dst, ops[:n]...)
			ops = ops[n:]
		default:
			return nil, errDelta
		}
	}
	if uint64(len(dst)) != dstSize {
		return nil, errDelta
	}
	return dst, nil
}

// leb128 reads a delta's size: little-endian groups of seven bits.
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
