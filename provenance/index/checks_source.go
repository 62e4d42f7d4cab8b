package index

import (
	"context"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe/lint"
)

// Claims sets the claims of rep's entries (rep is an audit at Rev), each
// checked against the commit that introduced it: from the index's claims
// table when the index is at Rev with the settings' ignore-revs (filling
// it first: later runs check only new or changed entries), from git
// otherwise. The answer is the same either way; only the lines of the
// bullets come from the changelog version the entries are of.
func (s *Source) Claims(ctx context.Context, rep *provenance.AuditReport) error {
	if len(rep.Entries) == 0 {
		return nil // no changelog (or no entry matches the key): no claims
	}
	raw, err := provenance.AuditText(s.Repo, rep)
	if err != nil {
		return err
	}
	if ok, err := s.storedClaims(ctx, rep, raw); err != nil || ok {
		return err
	}
	update, done := s.progress("checking claims")
	defer done()
	return provenance.CheckAuditClaimsOf(ctx, s.Repo, s.o.Settings, rep, raw, s.o.DryRun, nil, update)
}

// storedClaims sets the claims of rep's entries from the claims table,
// filling it first if needed; ok is false when the index does not answer
// for Rev (the claims are then checked from git).
func (s *Source) storedClaims(ctx context.Context, rep *provenance.AuditReport, raw []byte) (bool, error) {
	if !s.Current(ctx) {
		return false, ctx.Err()
	}
	f, err := changelog.Parse(rep.Path, raw)
	if err != nil || f == nil {
		return false, nil // the checker reports it
	}
	update, done := s.progress("checking claims")
	_, err = s.ix.Check(ctx, s.Repo, CheckOptions{Claims: true, Settings: s.o.Settings, Progress: update, DryRun: s.o.DryRun})
	done()
	if err != nil {
		return false, err
	}
	stored, err := s.ix.StoredClaims(ctx)
	if err != nil {
		return false, err
	}
	for i := range rep.Entries {
		e := &rep.Entries[i]
		if e.Index < 1 || e.Index > len(f.Entries) {
			continue
		}
		cs := stored[e.Index]
		for j := range cs {
			cs[j].Line = f.Entries[e.Index-1].ClaimLine(cs[j].Bullet)
		}
		e.Claims = cs
	}
	return true, nil
}

// Findings is the lint of the scripts at Rev (what lint --rev reports):
// from the index's findings table when the index is at Rev (filling it
// first), linted from git otherwise.
func (s *Source) Findings(ctx context.Context) ([]lint.Finding, error) {
	if !s.Current(ctx) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return lintAt(s.Repo, s.Rev, s.o.Settings)
	}
	if _, err := s.ix.Check(ctx, s.Repo, CheckOptions{Findings: true, Settings: s.o.Settings, DryRun: s.o.DryRun}); err != nil {
		return nil, err
	}
	return s.ix.StoredFindings(ctx)
}
