package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perflog/perflog/provenance"
)

// The changelog's query tables and its stored audit are derived from the
// whole history (an entry's position, line and verdict can change with
// any commit), but a commit changes few of their rows. An update computes
// every row, and writes only those whose digest differs from the one
// stored with them: the digests of the entries rows are kept in the
// answers table ("entries-digest"), and the audit is stored in chunks of
// auditChunk entries, each with its digest in the chunk list ("audit").

// writeEntries brings the entries and entry_keys tables to h, given the
// audit at head; everything is rewritten when full is set.
func writeEntries(ctx context.Context, tx *sql.Tx, h *provenance.History, rep *provenance.AuditReport, full bool) error {
	atHead := map[int]provenance.AuditEntry{}
	for i, e := range h.EntriesAt(len(h.Chain) - 1) {
		if e.Lin != nil {
			atHead[e.Lin.ID] = rep.Entries[i]
		}
	}
	var old []uint64
	if !full {
		data, err := getAnswer(ctx, tx, "entries-digest")
		if err != nil {
			return err
		}
		if old, full = decodeDigests(data); full {
			// no digests stored: rewrite everything
			old = nil
		}
	}
	if full {
		for _, q := range []string{`DELETE FROM entries`, `DELETE FROM entry_keys`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
	}
	digests := make([]uint64, len(h.Lineages))
	var rows [][]any // the rows to write
	var stale []any  // ids whose stored rows they replace
	var write []*provenance.Lineage
	maxID := 0
	// lineages are numbered in history order, so the i-th lineage is the
	// one whose digest is stored i-th, unless the history was rewritten
	// below it: then its digest differs
	var dg digester
	for i, l := range h.Lineages {
		// the digest is of what makes the row, which is made (JSON and
		// all) only when it is written
		digests[i] = dg.sum(entryRow(l, atHead)...)
		maxID = max(maxID, l.ID)
		if i < len(old) {
			if old[i] == digests[i] {
				continue
			}
			stale = append(stale, l.ID)
		}
		row, err := entryRowJSON(l, atHead)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		write = append(write, l)
	}
	if !full {
		// a rewritten history can have fewer lineages
		for _, q := range []string{`DELETE FROM entries WHERE id > ?`, `DELETE FROM entry_keys WHERE entry > ?`} {
			if _, err := tx.ExecContext(ctx, q, maxID); err != nil {
				return err
			}
		}
		if err := deleteIDs(ctx, tx, stale); err != nil {
			return err
		}
	}
	insEntry := newInserter(ctx, tx, "entries", "id", "alive", "position", "line", "config_keys", "description", "pr_link", "pr_link_pr",
		"introduced_sha", "introduced_pr", "introduced_date", "verdict", "reason", "fingerprint")
	insKey := newInserter(ctx, tx, "entry_keys", "entry", "config_key")
	for i, row := range rows {
		if err := insEntry.add(row...); err != nil {
			return err
		}
		l := write[i]
		for _, k := range l.Events[len(l.Events)-1].Keys {
			if err := insKey.add(l.ID, k); err != nil {
				return err
			}
		}
	}
	for _, in := range []*inserter{insEntry, insKey} {
		if err := in.flush(); err != nil {
			return err
		}
	}
	return putAnswer(ctx, tx, "entries-digest", encodeDigests(digests))
}

// entryRowJSON is the entries row of lineage l as the table holds it:
// its lists written as JSON.
func entryRowJSON(l *provenance.Lineage, atHead map[int]provenance.AuditEntry) ([]any, error) {
	row := entryRow(l, atHead)
	for _, i := range []int{entryKeysCol, entryDescCol} {
		b, err := json.Marshal(row[i])
		if err != nil {
			return nil, err
		}
		row[i] = string(b)
	}
	return row, nil
}

// The columns of an entries row that hold lists.
const entryKeysCol, entryDescCol = 4, 5

// entryRow is the entries row of lineage l with its lists as they are
// (what the row's digest is made of).
func entryRow(l *provenance.Lineage, atHead map[int]provenance.AuditEntry) []any {
	last := l.Events[len(l.Events)-1]
	var keys, desc any = last.Keys, last.Description
	var pos, line, linkPR, introSHA, introPR, introDate, verdict, reason any
	ae, alive := atHead[l.ID]
	if alive {
		pos, line, verdict, reason = ae.Index, ae.Line, string(ae.Verdict), ae.Reason
		if ae.PRLinkPR != nil {
			linkPR = *ae.PRLinkPR
		}
		if ae.Introduced != nil {
			introSHA, introDate = ae.Introduced.Commit, ae.Introduced.Date.Format(time.RFC3339)
			if ae.Introduced.PR != nil {
				introPR = *ae.Introduced.PR
			}
		}
	}
	return []any{l.ID, alive, pos, line, keys, desc, last.PRLink, linkPR, introSHA, introPR, introDate, verdict, reason,
		last.Identity}
}

// deleteIDs deletes the entries and entry_keys rows of ids.
func deleteIDs(ctx context.Context, tx *sql.Tx, ids []any) error {
	for lo := 0; lo < len(ids); lo += batchVars {
		part := ids[lo:min(lo+batchVars, len(ids))]
		in := placeholders(len(part))
		for _, q := range []string{`DELETE FROM entries WHERE id IN ` + in, `DELETE FROM entry_keys WHERE entry IN ` + in} {
			if _, err := tx.ExecContext(ctx, q, part...); err != nil {
				return err
			}
		}
	}
	return nil
}

// placeholders is "(?,?,…)" with n parameters.
func placeholders(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// auditChunk is how many entries one stored chunk of the audit holds.
const auditChunk = 128

// writeAudit stores rep, writing only the chunks that changed.
func writeAudit(ctx context.Context, tx *sql.Tx, rep *provenance.AuditReport) error {
	old := &auditHead{}
	if data, err := getAnswer(ctx, tx, "audit"); err != nil {
		return err
	} else if data != nil {
		if h, err := decodeAuditHead(data); err == nil {
			old = h
		}
	}
	head := auditHead{Report: *rep, Entries: len(rep.Entries)}
	head.Report.Entries = nil
	var buf []byte // each chunk's encoding, reused: the driver copies what it binds
	for i, lo := 0, 0; lo < len(rep.Entries); i, lo = i+1, lo+auditChunk {
		data, err := encodeAuditEntries(buf, rep.Entries[lo:min(lo+auditChunk, len(rep.Entries))])
		if err != nil {
			return err
		}
		buf = data
		d := digestOf(data)
		head.Chunks = append(head.Chunks, d)
		if i < len(old.Chunks) && old.Chunks[i] == d {
			continue
		}
		if err := putAnswer(ctx, tx, chunkName(i), data); err != nil {
			return err
		}
	}
	for i := len(head.Chunks); i < len(old.Chunks); i++ {
		if _, err := tx.ExecContext(ctx, `DELETE FROM answers WHERE name = ?`, chunkName(i)); err != nil {
			return err
		}
	}
	return putAnswer(ctx, tx, "audit", head.encode())
}

func chunkName(i int) string { return fmt.Sprintf("audit/%d", i) }

// readAudit reads the stored audit (nil when there is none, or a part of
// it is missing or does not match its digest).
func readAudit(ctx context.Context, db queryer) (*provenance.AuditReport, error) {
	data, err := getAnswer(ctx, db, "audit")
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, nil
	}
	head, err := decodeAuditHead(data)
	if err != nil {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT name, data FROM answers WHERE name GLOB 'audit/*'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	parts := make([][]provenance.AuditEntry, len(head.Chunks))
	seen := make([]bool, len(head.Chunks))
	for rows.Next() {
		var name string
		var data sql.RawBytes // the driver's own copy, adopted (see driverBlobs)
		if err := rows.Scan(&name, &data); err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(strings.TrimPrefix(name, "audit/"))
		if err != nil || i < 0 || i >= len(parts) || seen[i] {
			return nil, nil
		}
		seen[i] = true
		if digestOf([]byte(data)) != head.Chunks[i] {
			return nil, nil
		}
		if parts[i], err = decodeAuditEntries(data); err != nil {
			return nil, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if slices.Contains(seen, false) {
		return nil, nil
	}
	rep := head.Report
	rep.Entries = slices.Concat(parts...)
	if len(rep.Entries) != head.Entries {
		return nil, nil
	}
	return &rep, nil
}

func getAnswer(ctx context.Context, tx queryer, name string) ([]byte, error) {
	return queryOne[[]byte](ctx, tx, `SELECT data FROM answers WHERE name = ?`, name)
}

func putAnswer(ctx context.Context, tx queryer, name string, data []byte) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO answers(name, data) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET data=excluded.data`, name, data)
	return err
}

// digestOf digests row values (nil, bool, int, string or []byte).
func digestOf(vals ...any) uint64 {
	var d digester
	return d.sum(vals...)
}

// digester digests rows (CRC-64 of an encoding of their values), reusing
// its buffer from one row to the next.
type digester struct {
	buf []byte
}

// crcTable is the table of the stored digests' CRC-64 (ECMA-182).
var crcTable = crc64.MakeTable(crc64.ECMA)

func (d *digester) sum(vals ...any) uint64 {
	var crc uint64
	buf := d.buf[:0]
	for _, v := range vals {
		switch v := v.(type) {
		case nil:
			buf = append(buf, 0)
		case bool:
			buf = append(buf, 1)
			if v {
				buf = append(buf, 1)
			} else {
				buf = append(buf, 0)
			}
		case int:
			buf = binary.AppendVarint(append(buf, 2), int64(v))
		case string:
			buf = append(binary.AppendUvarint(append(buf, 3), uint64(len(v))), v...)
		case []string: // nil apart from empty, as JSON writes them
			tag := byte(5)
			if v == nil {
				tag = 6
			}
			buf = binary.AppendUvarint(append(buf, tag), uint64(len(v)))
			for _, x := range v {
				buf = append(binary.AppendUvarint(buf, uint64(len(x))), x...)
			}
		case []byte: // hashed where it is, not copied
			crc = crc64.Update(crc, crcTable, binary.AppendUvarint(append(buf, 4), uint64(len(v))))
			crc = crc64.Update(crc, crcTable, v)
			buf = buf[:0]
		default:
			panic(fmt.Sprintf("digestOf: %T", v))
		}
	}
	d.buf = buf
	return crc64.Update(crc, crcTable, buf)
}

func encodeDigests(ds []uint64) []byte {
	b := make([]byte, 0, 8*len(ds))
	for _, d := range ds {
		b = binary.LittleEndian.AppendUint64(b, d)
	}
	return b
}

// decodeDigests decodes stored digests; bad is set when there are none or
// they are damaged.
func decodeDigests(b []byte) (ds []uint64, bad bool) {
	if b == nil || len(b)%8 != 0 {
		return nil, true
	}
	for b := b; len(b) > 0; b = b[8:] {
		ds = append(ds, binary.LittleEndian.Uint64(b))
	}
	return ds, false
}
