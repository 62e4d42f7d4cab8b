package index

import (
	"fmt"

	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// The stored blame of each recipe at head (blame_cache) is written with
// package wire too (see auditwire.go), which lists every field of the
// types it stores; TestBlameWireFields fails when one is added.

// blameWireVersion begins every encoded blame.
const blameWireVersion = 2

func encodeBlame(b *provenance.BlameReport) ([]byte, error) {
	w := &wire.Writer{}
	w.Uvarint(blameWireVersion)
	w.String(b.Key)
	w.String(b.File)
	w.String(b.Rev)
	w.Len(len(b.Fields), b.Fields == nil)
	for i := range b.Fields {
		if err := putBlameField(w, &b.Fields[i]); err != nil {
			return nil, err
		}
	}
	w.Len(len(b.Renames), b.Renames == nil)
	for i := range b.Renames {
		r := &b.Renames[i]
		w.String(r.From)
		w.String(r.To)
		if err := putCommitRef(w, &r.CommitRef); err != nil {
			return nil, err
		}
	}
	putNotes(w, b.Notes)
	return w.B, nil
}

// decodeBlame decodes what encodeBlame wrote. It adopts data (wire.Adopt):
// the report's strings share it.
func decodeBlame(data []byte) (*provenance.BlameReport, error) {
	r := wire.Adopt(data)
	if v := r.Uvarint(); r.Err() == nil && v != blameWireVersion {
		return nil, fmt.Errorf("%w: blame encoding %d", wire.ErrCorrupt, v)
	}
	b := &provenance.BlameReport{Key: r.String(), File: r.String(), Rev: r.String()}
	b.Fields = getBlameFields(r)
	b.Renames = wire.List(r, 7, func() provenance.Rename {
		return provenance.Rename{From: r.String(), To: r.String(), CommitRef: getCommitRef(r)}
	})
	b.Notes = getNotes(r)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return b, nil
}

func putBlameField(w *wire.Writer, f *provenance.BlameField) error {
	w.String(f.Path)
	w.String(f.Value)
	w.Int(f.Line)
	if err := putCommitRef(w, &f.CommitRef); err != nil {
		return err
	}
	w.String(string(f.Event))
	w.String(f.Key)
	w.Len(len(f.NotKnown), f.NotKnown == nil)
	for i := range f.NotKnown {
		if err := putLaunchGap(w, &f.NotKnown[i]); err != nil {
			return err
		}
	}
	w.Bool(f.SetIn != nil)
	if f.SetIn != nil {
		return putLaunchGap(w, f.SetIn)
	}
	return nil
}

func putLaunchGap(w *wire.Writer, g *provenance.LaunchGap) error {
	if err := putCommitRef(w, &g.From); err != nil {
		return err
	}
	if err := putCommitRef(w, &g.To); err != nil {
		return err
	}
	w.String(g.Reason)
	return nil
}

func getLaunchGap(r *wire.Reader) provenance.LaunchGap {
	return provenance.LaunchGap{From: getCommitRef(r), To: getCommitRef(r), Reason: r.String()}
}

func getBlameFields(r *wire.Reader) []provenance.BlameField {
	return wire.List(r, 9, func() provenance.BlameField { // a field takes at least 9 bytes
		f := provenance.BlameField{Path: r.String(), Value: r.String(), Line: r.Int(), CommitRef: getCommitRef(r),
			Event: provenance.EventKind(r.String()), Key: r.String()}
		f.NotKnown = wire.List(r, 5, func() provenance.LaunchGap { return getLaunchGap(r) })
		if r.Bool() {
			g := getLaunchGap(r)
			f.SetIn = &g
		}
		return f
	})
}
