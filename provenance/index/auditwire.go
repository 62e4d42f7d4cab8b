package index

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// The stored audit is written with package wire rather than gob: a warm
// `changelog audit` is mostly the decoding of it (docs/dev/performance.md
// compares the two). The encodings below list every field
// of the types they store; TestAuditWireFields fails when a field is
// added and not encoded.

// auditWireVersion begins every encoded chunk and head.
const auditWireVersion = 3

// encodeAuditEntries encodes audit entries into buf, reused (the chunks
// of an audit are encoded one after another into one buffer; nil for a
// new one).
func encodeAuditEntries(buf []byte, es []provenance.AuditEntry) ([]byte, error) {
	w := &wire.Writer{B: buf[:0]}
	w.Uvarint(auditWireVersion)
	w.Len(len(es), es == nil)
	for i := range es {
		if err := putAuditEntry(w, &es[i]); err != nil {
			return nil, err
		}
	}
	return w.B, nil
}

func putAuditEntry(w *wire.Writer, e *provenance.AuditEntry) error {
	w.Int(e.Index)
	w.Int(e.Line)
	w.Strings(e.ConfigKeys)
	w.String(e.PRLink)
	w.OptInt(e.PRLinkPR)
	w.Bool(e.Introduced != nil)
	if e.Introduced != nil {
		if err := putCommitRef(w, e.Introduced); err != nil {
			return err
		}
	}
	w.Len(len(e.Events), e.Events == nil)
	for i := range e.Events {
		ev := &e.Events[i]
		w.String(string(ev.Type))
		if err := putCommitRef(w, &ev.CommitRef); err != nil {
			return err
		}
		w.String(ev.From)
		w.String(ev.To)
		w.String(ev.Note)
	}
	w.String(string(e.Verdict))
	w.String(e.Reason)
	// claims are checked on demand and kept in their own table (claims)
	if e.Claims != nil {
		return errors.New("a stored audit holds no claims")
	}
	return nil
}

func putCommitRef(w *wire.Writer, c *provenance.CommitRef) error {
	w.String(c.Commit)
	w.OptInt(c.PR)
	if err := w.Time(c.Date); err != nil {
		return err
	}
	w.String(c.Subject)
	w.Bool(c.Ignored)
	return nil
}

// decodeAuditEntries decodes what encodeAuditEntries wrote. It adopts
// data (wire.Adopt): the entries' strings share it.
func decodeAuditEntries(data []byte) ([]provenance.AuditEntry, error) {
	r := wire.Adopt(data)
	if v := r.Uvarint(); r.Err() == nil && v != auditWireVersion {
		return nil, fmt.Errorf("%w: audit encoding %d", wire.ErrCorrupt, v)
	}
	es := wire.List(r, 8, func() provenance.AuditEntry { return getAuditEntry(r) }) // an entry takes at least 8 bytes
	if err := r.Done(); err != nil {
		return nil, err
	}
	return es, nil
}

func getAuditEntry(r *wire.Reader) provenance.AuditEntry {
	e := provenance.AuditEntry{Index: r.Int(), Line: r.Int(), ConfigKeys: r.Strings(), PRLink: r.String(), PRLinkPR: r.OptInt()}
	if r.Bool() {
		c := getCommitRef(r)
		e.Introduced = &c
	}
	e.Events = wire.List(r, 9, func() provenance.AuditEvent { // an event takes at least 9 bytes
		return provenance.AuditEvent{Type: provenance.EventKind(r.String()), CommitRef: getCommitRef(r),
			From: r.String(), To: r.String(), Note: r.String()}
	})
	e.Verdict = provenance.Verdict(r.String())
	e.Reason = r.String()
	return e
}

func getCommitRef(r *wire.Reader) provenance.CommitRef {
	return provenance.CommitRef{Commit: r.String(), PR: r.OptInt(), Date: r.Time(), Subject: r.String(), Ignored: r.Bool()}
}

// auditHead is the stored audit without its entries, and the digests of
// the chunks that hold them ("audit/<i>").
type auditHead struct {
	Report  provenance.AuditReport // Entries empty
	Entries int
	Chunks  []uint64 // digest of each chunk
}

func (h *auditHead) encode() []byte {
	w := &wire.Writer{}
	w.Uvarint(auditWireVersion)
	rep := &h.Report
	w.String(string(rep.Rev[:]))
	w.String(rep.Path)
	w.String(string(rep.Version[:]))
	verdicts := make([]string, 0, len(rep.Summary))
	for v := range rep.Summary {
		verdicts = append(verdicts, string(v))
	}
	slices.Sort(verdicts)
	w.Len(len(verdicts), rep.Summary == nil)
	for _, v := range verdicts {
		w.String(v)
		w.Int(rep.Summary[provenance.Verdict(v)])
	}
	putNotes(w, rep.Notes)
	w.Int(h.Entries)
	w.Len(len(h.Chunks), h.Chunks == nil)
	for _, c := range h.Chunks {
		w.Uvarint(c)
	}
	return w.B
}

func decodeAuditHead(data []byte) (*auditHead, error) {
	r := wire.NewReader(data)
	if v := r.Uvarint(); r.Err() == nil && v != auditWireVersion {
		return nil, fmt.Errorf("%w: audit encoding %d", wire.ErrCorrupt, v)
	}
	h := &auditHead{}
	rep := &h.Report
	rep.Rev = hashOf(r)
	rep.Path = r.String()
	rep.Version = hashOf(r)
	if n, isNil := r.Len(2); !isNil && r.Err() == nil {
		rep.Summary = make(map[provenance.Verdict]int, n)
		for range n {
			v := provenance.Verdict(r.String())
			rep.Summary[v] = r.Int()
		}
	}
	rep.Notes = getNotes(r)
	h.Entries = r.Int()
	h.Chunks = wire.List(r, 1, r.Uvarint)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return h, nil
}

// putNotes and getNotes encode the notes of an audit or a blame.
func putNotes(w *wire.Writer, notes []provenance.Note) {
	w.Len(len(notes), notes == nil)
	for _, n := range notes {
		w.Int(n.Seq)
		w.String(string(n.Commit[:]))
		w.String(n.Path)
		w.String(n.Message)
	}
}

func getNotes(r *wire.Reader) []provenance.Note {
	return wire.List(r, 4, func() provenance.Note {
		return provenance.Note{Seq: r.Int(), Commit: hashOf(r), Path: r.String(), Message: r.String()}
	})
}

// hashOf reads a git object id written as a 20-byte string.
func hashOf(r *wire.Reader) plumbing.Hash {
	var h plumbing.Hash
	s := r.String()
	if r.Err() == nil && len(s) != len(h) {
		r.Fail("a %d-byte object id", len(s))
	}
	copy(h[:], s)
	return h
}
