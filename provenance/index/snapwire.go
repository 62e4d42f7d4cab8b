package index

import (
	"fmt"

	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// A snapshot part is stored with package wire, not gob, for the reason the
// audit is (see auditwire.go): every update, and every log, diff or audit
// at an older revision, decodes the whole stored snapshot, which gob made
// a large share of a cold `provenance log`. Every field
// of the snapshot types is listed; TestSnapWireFields fails when one is
// added and not encoded.

// snapWireVersion begins every encoded snapshot part.
const snapWireVersion = 2

func encodeSnapshot(s *provenance.Snapshot) ([]byte, error) {
	w := &wire.Writer{B: make([]byte, 0, 64<<10)}
	w.Uvarint(snapWireVersion)
	w.String(string(s.Head[:]))
	w.Bool(s.Changelog)
	w.Bool(s.Recipes)
	w.Int(s.From)
	w.Len(len(s.Commits), s.Commits == nil)
	for _, c := range s.Commits {
		w.String(string(c.Hash[:]))
		w.String(c.Author)
		w.String(c.Email)
		if err := w.Time(c.Date); err != nil {
			return nil, fmt.Errorf("commit %s: %w", c.Hash, err)
		}
		w.String(c.Subject)
		w.Int(c.PR)
		w.String(c.PRSource)
	}
	w.Len(len(s.Blocks), s.Blocks == nil)
	for _, b := range s.Blocks {
		w.Int(b.ID)
		w.Bool(b.Recipe)
		w.String(b.Key)
		w.String(string(b.Hash[:]))
		w.String(b.Text)
		w.String(b.Identity)
		w.String(b.PRLink)
		w.Strings(b.ConfigKeys)
		w.Strings(b.Description)
		w.String(b.Err)
	}
	w.Len(len(s.Slots), s.Slots == nil)
	for _, sl := range s.Slots {
		w.Bool(sl.Recipe)
		w.Len(len(sl.Versions), sl.Versions == nil)
		for _, v := range sl.Versions {
			w.Int(v.Seq)
			w.String(v.Path)
			w.String(string(v.Blob[:]))
			w.String(v.Err)
			w.Int(v.P)
			w.Int(v.S)
			w.Ints(v.Mid)
			w.String(v.Note)
			w.Ints(v.Written)
		}
	}
	w.Len(len(s.Renames), s.Renames == nil)
	for _, r := range s.Renames {
		w.Int(r.Seq)
		w.String(r.From)
		w.String(r.To)
	}
	w.Len(len(s.Raw), s.Raw == nil)
	for _, r := range s.Raw {
		w.String(r.Key)
		w.String(string(r.Kind))
		w.Int(r.Seq)
		w.String(r.From)
		w.String(r.To)
		w.String(r.File)
		w.Int(r.Old)
		w.Int(r.B)
	}
	w.Len(len(s.Touched), s.Touched == nil)
	for _, t := range s.Touched {
		w.String(t.Key)
		w.Int(t.Seq)
	}
	return w.B, nil
}

// decodeSnapshot decodes what encodeSnapshot wrote. It adopts data
// (wire.Adopt): the snapshot's strings share it.
func decodeSnapshot(data []byte) (*provenance.Snapshot, error) {
	r := wire.Adopt(data)
	if v := r.Uvarint(); r.Err() == nil && v != snapWireVersion {
		return nil, fmt.Errorf("%w: snapshot encoding %d", wire.ErrCorrupt, v)
	}
	s := &provenance.Snapshot{}
	r.Fixed(s.Head[:])
	s.Changelog, s.Recipes, s.From = r.Bool(), r.Bool(), r.Int()
	// the minimum bytes of each item bound what damaged lengths allocate
	s.Commits = wire.List(r, 8, func() (c provenance.SnapCommit) {
		r.Fixed(c.Hash[:])
		c.Author, c.Email, c.Date, c.Subject, c.PR, c.PRSource = r.String(), r.String(), r.Time(), r.String(), r.Int(), r.String()
		return c
	})
	s.Blocks = wire.List(r, 10, func() (b provenance.SnapBlock) {
		b.ID, b.Recipe, b.Key = r.Int(), r.Bool(), r.String()
		r.Fixed(b.Hash[:])
		b.Text, b.Identity, b.PRLink, b.ConfigKeys, b.Description, b.Err = r.String(), r.String(), r.String(), r.Strings(), r.Strings(), r.String()
		return b
	})
	s.Slots = wire.List(r, 2, func() provenance.SnapSlot {
		return provenance.SnapSlot{Recipe: r.Bool(), Versions: wire.List(r, 9, func() (v provenance.SnapVersion) {
			v.Seq, v.Path = r.Int(), r.String()
			r.Fixed(v.Blob[:])
			v.Err, v.P, v.S, v.Mid, v.Note, v.Written = r.String(), r.Int(), r.Int(), r.Ints(), r.String(), r.Ints()
			return v
		})}
	})
	s.Renames = wire.List(r, 3, func() provenance.SnapRename {
		return provenance.SnapRename{Seq: r.Int(), From: r.String(), To: r.String()}
	})
	s.Raw = wire.List(r, 8, func() provenance.SnapRaw {
		return provenance.SnapRaw{Key: r.String(), Kind: provenance.EventKind(r.String()), Seq: r.Int(), From: r.String(), To: r.String(),
			File: r.String(), Old: r.Int(), B: r.Int()}
	})
	s.Touched = wire.List(r, 2, func() provenance.SnapTouched {
		return provenance.SnapTouched{Key: r.String(), Seq: r.Int()}
	})
	if err := r.Done(); err != nil {
		return nil, err
	}
	return s, nil
}
