package provenance

import (
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// A tracked file's history is a list of versions, oldest first. A version
// holds from commit Seq on (the commit that gave the file this content)
// until the next version. Its blocks are stored as a delta against the
// version before it, so the history of a file costs the size of its
// changes, not versions × entries (the 10× scale synthetic history has
// 8000 versions of an 8000-entry changelog).
type version struct {
	Seq  int
	Path string        // the file's path at this version ("" when absent)
	Blob plumbing.Hash // zero when the file is absent
	// Err says why the file could not be cut into blocks or loaded whole;
	// such a version carries nothing (the previous one stands).
	Err string
	// P and S count the blocks kept from the start and the end of the
	// previous version's list; Mid are the blocks between them.
	P, S int32
	Mid  []*block
	// note is why a changelog version does not load ("" when it does),
	// once noted
	note  string
	noted bool
	// written holds, for the entries that are new in this version right
	// after versions that do not load, the seq of the one they were
	// written in (-1: none; see writtenIn), by block id, once decided
	written map[int]int
	// raw is the text of a changelog version that does not load, to find
	// entries written there (see writtenIn), while it is needed.
	raw     string
	rawRead bool
}

// slot is one tracked file: the changelog, or the i-th master config file
// of whichever layout a commit uses.
type slot struct {
	kind fileKind
	vers []version
}

// deltaOf describes newer as a delta against older: the longest common
// prefix and suffix of identical blocks, and the blocks between.
func deltaOf(older, newer []*block) (p, s int32, mid []*block) {
	i := 0
	for i < len(older) && i < len(newer) && older[i] == newer[i] {
		i++
	}
	j := 0
	for j < len(older)-i && j < len(newer)-i && older[len(older)-1-j] == newer[len(newer)-1-j] {
		j++
	}
	mid = append([]*block(nil), newer[i:len(newer)-j]...)
	return int32(i), int32(j), mid
}

// apply returns the list of a version given the list of the one before.
func (v *version) apply(prev []*block) []*block {
	if v.Err != "" {
		return prev
	}
	out := make([]*block, 0, int(v.P)+len(v.Mid)+int(v.S))
	out = append(out, prev[:v.P]...)
	out = append(out, v.Mid...)
	return append(out, prev[len(prev)-int(v.S):]...)
}

// applyInPlace is apply reusing prev's array (a middle edit moves the
// suffix instead of copying the whole list): for a caller that owns prev
// and keeps no other reference to it. Replaying a changelog's versions
// this way is linear in the edits, not in versions × entries.
func (v *version) applyInPlace(prev []*block) []*block {
	if v.Err != "" {
		return prev
	}
	return slices.Replace(prev, int(v.P), len(prev)-int(v.S), v.Mid...)
}

// listAt rebuilds the blocks of a slot at seq (the newest version at or
// before it), with the version it comes from.
func (s *slot) listAt(seq int) ([]*block, *version) {
	var cur []*block
	var at *version
	for i := range s.vers {
		v := &s.vers[i]
		if v.Seq > seq {
			break
		}
		cur, at = v.applyInPlace(cur), v
	}
	return cur, at
}

// reading computes a slot's versions newest first: each list read turns
// the newer version waiting for it into a delta.
type reading struct {
	s       *slot
	newer   []*block // the list of the pending version
	pending int      // index in s.vers of the newest version without its delta, or -1
}

func newReading(k fileKind) *reading { return &reading{s: &slot{kind: k}, pending: -1} }

// add records the next older version; its Seq holds, until finish, the
// walk index (newest first) of its newest commit.
func (rd *reading) add(v version, list []*block) {
	if v.Err != "" { // carries nothing: the pending version waits for an older one
		rd.s.vers = append(rd.s.vers, v)
		return
	}
	if rd.pending >= 0 {
		pv := &rd.s.vers[rd.pending]
		pv.P, pv.S, pv.Mid = deltaOf(list, rd.newer)
	}
	rd.s.vers = append(rd.s.vers, v)
	rd.pending, rd.newer = len(rd.s.vers)-1, list
}

// finish makes the oldest valid version a delta against base (the list
// before the commits walked; nil from the root), orders the versions
// oldest first and turns walk indexes into the seq where each version
// begins (its oldest commit): the n commits walked follow `offset` older
// ones.
func (rd *reading) finish(n, offset int, base []*block) *slot {
	vs := rd.s.vers
	if rd.pending >= 0 {
		pv := &vs[rd.pending]
		pv.P, pv.S, pv.Mid = deltaOf(base, rd.newer)
	}
	// vs[k] spans walk indexes vs[k].Seq .. vs[k+1].Seq-1
	for k := range vs {
		oldest := n - 1
		if k+1 < len(vs) {
			oldest = vs[k+1].Seq - 1
		}
		vs[k].Seq = offset + n - 1 - oldest
	}
	for i, j := 0, len(vs)-1; i < j; i, j = i+1, j-1 {
		vs[i], vs[j] = vs[j], vs[i]
	}
	rd.newer = nil
	return rd.s
}
