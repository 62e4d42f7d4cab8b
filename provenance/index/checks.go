package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
	"github.com/perflog/perflog/recipe/lint"
)

// The claims and findings tables hold checks, not history: every entry's
// description claims checked against the commit that introduced it (what
// `changelog audit --claims all` reports), and the recipe-script lint of
// the indexed head (what `lint --rev` reports). Checking the claims of a
// whole history takes seconds (each introducing commit's change is read),
// so Sync leaves them out and Check fills them on demand, incrementally:
// an entry's claims are checked once for the commit that introduced its
// content (claims_checked remembers which), and checked again only when
// that commit changes (an edit, a re-land, a rewritten history). The meta
// rows claims-head and findings-head name the head the tables were last
// brought up to date with; the lint runs again when the head moves.

// CheckOptions selects what Check fills.
type CheckOptions struct {
	Claims   bool // the claims table
	Findings bool // the findings table
	// Settings are the ones the index was built with (master configs,
	// script resolution, rule severities).
	Settings *config.Settings
	// Progress is told of each introducing commit whose claims are read.
	Progress func(provenance.Progress)
	// DryRun is how the claims' recipes are dry-run.
	DryRun dryrun.Options
}

// CheckStats says what a Check did.
type CheckStats struct {
	Entries int  // entries whose claims were checked
	Claims  int  // claims stored for them
	Linted  bool // the scripts at head were linted
}

// Check brings the claims and findings tables up to date with the indexed
// head. A concurrent update that moves the head meanwhile wins: what was
// checked for the old head is then not stored.
func (ix *Index) Check(ctx context.Context, r *gitscan.Repo, o CheckOptions) (*CheckStats, error) {
	head, err := getMeta(ctx, ix.db, "head")
	if err != nil {
		return nil, staleErr(err)
	}
	if head == "" {
		return nil, fmt.Errorf("%w: nothing indexed yet", ErrNoIndex)
	}
	if o.Settings == nil {
		o.Settings = &config.Settings{}
	}
	st := &CheckStats{}
	rev := plumbing.NewHash(head)
	if o.Claims {
		if err := ix.checkClaims(ctx, r, rev, o, st); err != nil {
			return nil, fmt.Errorf("claims: %w", err)
		}
	}
	if o.Findings {
		if err := ix.lint(ctx, r, rev, o, st); err != nil {
			return nil, fmt.Errorf("findings: %w", err)
		}
	}
	return st, nil
}

// Checked reports whether the tables o selects are up to date with the
// indexed head: a Check would then read nothing (a caller prepares for the
// heavier work otherwise).
func (ix *Index) Checked(ctx context.Context, o CheckOptions) bool {
	head, err := getMeta(ctx, ix.db, "head")
	if err != nil || head == "" {
		return false
	}
	for _, t := range []struct {
		want       bool
		meta, head string
	}{{o.Claims, "claims-head", claimsAt(head)}, {o.Findings, "findings-head", head}} {
		if !t.want {
			continue
		}
		if at, err := getMeta(ctx, ix.db, t.meta); err != nil || at != t.head {
			return false
		}
	}
	return true
}

// checkKey is what an entry's stored claims were checked for: the commit
// that introduced its content, or "-" when its claims are not checked.
func checkKey(e *provenance.AuditEntry) string {
	if !provenance.ClaimsCheckable(e) {
		return "-"
	}
	return claimsAt(e.Introduced.Commit)
}

// claimsAt is what a stored check was made for: a commit, with the
// claims engine's version (checks of another version are redone).
func claimsAt(commit string) string { return commit + "@" + claims.Version }

func (ix *Index) checkClaims(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, o CheckOptions, st *CheckStats) error {
	if at, err := getMeta(ctx, ix.db, "claims-head"); err != nil {
		return err
	} else if at == claimsAt(rev.String()) {
		return nil // checked at this head
	}
	rep, err := readAudit(ctx, ix.db)
	if err != nil || rep == nil {
		// no stored audit (a damaged chunk): the audit of the stored
		// history, with the ignore-revs its tables were computed with
		ig, err := getMeta(ctx, ix.db, "ignore")
		if err != nil {
			return err
		}
		var revs []plumbing.Hash
		for _, s := range strings.Split(ig, ",") {
			if s != "" {
				revs = append(revs, plumbing.NewHash(s))
			}
		}
		h, _, err := ix.History(ctx, r, rev, provenance.PartChangelog, Options{Settings: o.Settings, IgnoreRevs: revs})
		if err != nil {
			return err
		}
		if rep, err = h.Audit(provenance.AuditOptions{}); err != nil {
			return err
		}
	}
	// each alive entry's id by its position at head, and what its stored
	// claims were checked for
	ids := map[int]int64{}
	checked := map[int64]string{}
	if err := eachRow(ctx, ix.db, `SELECT e.id, e.position, coalesce(k.key, '') FROM entries e
		LEFT JOIN claims_checked k ON k.entry = e.id WHERE e.alive`, func(rows *sql.Rows) error {
		var id int64
		var pos int
		var key string
		if err := rows.Scan(&id, &pos, &key); err != nil {
			return err
		}
		ids[pos], checked[id] = id, key
		return nil
	}); err != nil {
		return err
	}
	todo := map[int]bool{} // positions
	for i := range rep.Entries {
		e := &rep.Entries[i]
		id, ok := ids[e.Index]
		if !ok {
			return fmt.Errorf("%w: entry %d of the stored audit is not in the entries table", errStale, e.Index)
		}
		if checked[id] != checkKey(e) {
			todo[e.Index] = true
		}
	}
	if len(todo) > 0 {
		raw, err := provenance.AuditText(r, rep)
		if err != nil {
			return err
		}
		err = provenance.CheckAuditClaimsOf(ctx, r, o.Settings, rep, raw, o.DryRun, func(e *provenance.AuditEntry) bool { return todo[e.Index] }, o.Progress)
		if err != nil {
			return err
		}
	}
	return ix.writeIfAt(ctx, rev, func(tx *sql.Tx) error {
		st.Entries, st.Claims = 0, 0
		for _, q := range []string{
			`DELETE FROM claims WHERE entry NOT IN (SELECT id FROM entries WHERE alive)`,
			`DELETE FROM claims_checked WHERE entry NOT IN (SELECT id FROM entries WHERE alive)`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		ins := newInserter(ctx, tx, "claims", "entry", "bullet", "kind", "text", "name", "negated", "value", "from_value",
			"verdict", "reason", "sha", "evidence", "data")
		for i := range rep.Entries {
			e := &rep.Entries[i]
			if !todo[e.Index] {
				continue
			}
			id := ids[e.Index]
			if _, err := tx.ExecContext(ctx, `DELETE FROM claims WHERE entry = ?`, id); err != nil {
				return err
			}
			for _, c := range e.Claims {
				ev, err := json.Marshal(c.Evidence)
				if err != nil {
					return err
				}
				if c.Evidence == nil {
					ev = []byte("[]")
				}
				data, err := claimData(c)
				if err != nil {
					return err
				}
				if err := ins.add(id, c.Bullet, c.Kind, c.Text, nullable(c.Name), c.Negated, nullable(c.Value), nullable(c.From),
					c.Verdict, nullable(c.Reason), e.Introduced.Commit, string(ev), data); err != nil {
					return err
				}
				st.Claims++
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO claims_checked(entry, key) VALUES(?, ?)
				ON CONFLICT(entry) DO UPDATE SET key = excluded.key`, id, checkKey(e)); err != nil {
				return err
			}
			st.Entries++
		}
		if err := ins.flush(); err != nil {
			return err
		}
		return setMeta(ctx, tx, "claims-head", claimsAt(rev.String()))
	})
}

// storedClaim is a claims.Result as the claims table's data column holds
// it: without the fields that depend on where its entry stands in the
// file at head (entry, line), since the claim is stored once for its
// entry's introducing commit while the entry may move. (A conversion
// from claims.Result: the compiler keeps the two alike.)
type storedClaim struct {
	claims.Claim
	Entry    int               `json:"-"`
	Line     int               `json:"-"`
	Keys     []string          `json:"config_keys"`
	Verdict  string            `json:"verdict"`
	Reason   string            `json:"reason"`
	Evidence []claims.Evidence `json:"evidence,omitempty"`
}

// claimData is a claim's JSON in the data column (storedClaim).
func claimData(c claims.Result) (string, error) {
	b, err := json.Marshal(storedClaim(c))
	return string(b), err
}

// StoredClaims returns the checked claims of the entries at the indexed
// head by their position (1-based), in the order the checker gave them,
// with Entry set and Line left 0 (the line depends on the file: see
// changelog.Entry.ClaimLine). Call Check first: entries it did not check have
// none.
func (ix *Index) StoredClaims(ctx context.Context) (map[int][]claims.Result, error) {
	out := map[int][]claims.Result{}
	err := eachRow(ctx, ix.db, `SELECT e.position, c.data FROM claims c JOIN entries e ON e.id = c.entry
		WHERE e.alive ORDER BY c.rowid`, func(rows *sql.Rows) error {
		var pos int
		var data string
		if err := rows.Scan(&pos, &data); err != nil {
			return err
		}
		var c claims.Result
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return fmt.Errorf("%w: a stored claim: %w", errStale, err)
		}
		c.Entry = pos
		out[pos] = append(out[pos], c)
		return nil
	})
	return out, err
}

// lint fills the findings table with the lint of the scripts at rev,
// unless it holds them already.
func (ix *Index) lint(ctx context.Context, r *gitscan.Repo, rev plumbing.Hash, o CheckOptions, st *CheckStats) error {
	if at, err := getMeta(ctx, ix.db, "findings-head"); err != nil {
		return err
	} else if at == rev.String() {
		return nil
	}
	fs, err := lintAt(r, rev, o.Settings)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return ix.writeIfAt(ctx, rev, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM findings`); err != nil {
			return err
		}
		ins := newInserter(ctx, tx, "findings", "rule", "severity", "file", "line", "config_key", "message", "source")
		for _, f := range fs {
			if err := ins.add(f.Rule, f.Severity, f.File, f.Line, nullable(f.Key), f.Message, nullable(f.Source)); err != nil {
				return err
			}
		}
		if err := ins.flush(); err != nil {
			return err
		}
		st.Linted = true
		return setMeta(ctx, tx, "findings-head", rev.String())
	})
}

// lintAt is the lint of the scripts at rev, severities as the settings
// configure them (what lint --rev reports, and the findings table holds).
func lintAt(r *gitscan.Repo, rev plumbing.Hash, settings *config.Settings) ([]lint.Finding, error) {
	t := r.Tree(rev)
	rep, err := recipe.LintRev(recipe.NewRev(rev.String(), t, settings), nil)
	if err != nil {
		return nil, err
	}
	return recipe.Configured(rep.Findings, settings), nil
}

// StoredFindings reads the findings table, in the order it was filled.
func (ix *Index) StoredFindings(ctx context.Context) ([]lint.Finding, error) {
	var out []lint.Finding
	err := eachRow(ctx, ix.db, `SELECT rule, severity, file, line, coalesce(config_key, ''), message, coalesce(source, '')
		FROM findings ORDER BY rowid`, func(rows *sql.Rows) error {
		var f lint.Finding
		if err := rows.Scan(&f.Rule, &f.Severity, &f.File, &f.Line, &f.Key, &f.Message, &f.Source); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// writeIfAt runs write in a write transaction if the index is still at
// rev (and commits it), else leaves the index alone.
func (ix *Index) writeIfAt(ctx context.Context, rev plumbing.Hash, write func(*sql.Tx) error) error {
	return whileBusy(ctx, func() error {
		tx, err := ix.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if head, err := getMeta(ctx, tx, "head"); err != nil || head != rev.String() {
			return err
		}
		if err := write(tx); err != nil {
			return err
		}
		return tx.Commit()
	})
}

// eachRow runs q and calls f on each row.
func eachRow(ctx context.Context, db queryer, q string, f func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
