package provenance

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/changelog/load"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/recipe"
	"github.com/perflog/perflog/recipe/dryrun"
)

// CheckAuditClaims checks the description claims of every audited entry
// against the commit that introduced it (its first parent..it): the
// claim checker of verify, run over history, flag and variable claims
// judged by what that commit's points launch (changelog.ClaimEffects)
// where the commit may have changed it. The entries' text is read
// from raw, the changelog version the audit lists (AuditText). Claims of entries
// whose introducing commit is unknown, and of backfilled and relanded
// entries (their text describes an earlier change), are not checked.
func CheckAuditClaims(ctx context.Context, r *gitscan.Repo, s *config.Settings, rep *AuditReport, raw []byte, dry dryrun.Options) error {
	return CheckAuditClaimsOf(ctx, r, s, rep, raw, dry, nil, nil)
}

// AuditText reads the changelog text an audit's entries are of (see
// AuditReport.Version): the claims of its entries are read from it.
func AuditText(r *gitscan.Repo, rep *AuditReport) ([]byte, error) {
	if !rep.Version.IsZero() {
		return r.ReadBlob(rep.Version)
	}
	return r.ReadFile(rep.Rev, rep.Path)
}

// claimsReadCache is the object cache CheckAuditClaims reads with (see
// gitscan.Repo.SetReadCache): on the InferenceX history the whole check
// takes 3 s with 16 MiB, against 10 s with the default (4 MiB: 6.8 s; 32
// MiB: no faster).
const claimsReadCache = 16 << 20

// ClaimsCheckable reports whether CheckAuditClaims checks the claims of an
// audited entry: it has an introducing commit, and its text was written
// for that commit (it is neither backfilled nor relanded).
func ClaimsCheckable(e *AuditEntry) bool {
	return e.Introduced != nil && e.Verdict != VerdictBackfilled && e.Verdict != VerdictRelanded
}

// CheckAuditClaimsOf is CheckAuditClaims for the entries want selects (nil:
// every entry); progress, when set, is told of each introducing commit
// checked (Stage "claims").
func CheckAuditClaimsOf(ctx context.Context, r *gitscan.Repo, s *config.Settings, rep *AuditReport, raw []byte, dry dryrun.Options,
	want func(*AuditEntry) bool, progress func(Progress)) error {
	f, err := changelog.Parse(rep.Path, raw)
	if err != nil || f == nil {
		return fmt.Errorf("%s at %s: %v", rep.Path, short(rep.Rev), err)
	}
	byCommit := map[string][]int{}
	var order []string
	for i := range rep.Entries {
		e := &rep.Entries[i]
		if !ClaimsCheckable(e) || e.Index < 1 || e.Index > len(f.Entries) || (want != nil && !want(e)) {
			continue
		}
		c := e.Introduced.Commit
		if _, ok := byCommit[c]; !ok {
			order = append(order, c)
		}
		byCommit[c] = append(byCommit[c], i)
	}
	// both sides of each commit are read: the master configs' versions of
	// neighbouring commits are each other's delta bases
	defer r.SetReadCache(r.SetReadCache(claimsReadCache))
	// newest first: packs store older versions as deltas of newer ones
	sort.SliceStable(order, func(i, j int) bool {
		return rep.Entries[byCommit[order[i]][0]].Introduced.Date.After(rep.Entries[byCommit[order[j]][0]].Introduced.Date)
	})
	sweep := recipe.NewSweepCache() // what neighbouring commits share is read once
	for n, c := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress(Progress{Stage: "claims", Done: n, Total: len(order)})
		}
		h := plumbing.NewHash(c)
		node, err := r.Commit(h)
		if err != nil {
			return err
		}
		var parent plumbing.Hash
		if len(node.Parents) > 0 {
			parent = node.Parents[0]
		}
		var entries []claims.Entry
		for _, i := range byCommit[c] {
			e := f.Entries[rep.Entries[i].Index-1]
			entries = append(entries, e.ClaimInput())
		}
		var results []claims.Result
		if !parent.IsZero() && slices.Contains(r.ShallowCommits(), h) {
			// a shallow clone's boundary: the change is not there to read
			results = claims.Unchecked(entries, "the commit that introduced the entry is the shallow clone's boundary, its parent not fetched (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)")
		} else {
			ch, err := load.Change(r, s, parent, h, short(parent), short(h))
			if err != nil {
				return err
			}
			ch.Head.UseSweepCache(sweep)
			ch.Base.UseSweepCache(sweep)
			effects, err := changelog.ClaimEffects(ctx, ch, entries, dry)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				effects = nil // judged by the files, as verify does when the dry run fails
			}
			results = claims.CheckLaunched(ctx, ch, entries, effects)
		}
		for _, res := range results {
			for _, i := range byCommit[c] {
				if rep.Entries[i].Index == res.Entry {
					rep.Entries[i].Claims = append(rep.Entries[i].Claims, res)
				}
			}
		}
	}
	return nil
}
