package provenance

import (
	"context"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// CheckAuditClaims checks the description claims of every audited entry
// against the commit that introduced it (its first parent..it): the
// claim checker of verify, run over history. The entries' text is read
// from the changelog at the audited revision (raw). Claims of entries
// whose introducing commit is unknown, and of backfilled and relanded
// entries (their text describes an earlier change), are not checked.
func CheckAuditClaims(ctx context.Context, r *gitscan.Repo, s *config.Settings, rep *AuditReport, raw []byte) error {
	f, _, err := changelog.Parse(rep.Path, raw)
	if err != nil || f == nil {
		return fmt.Errorf("%s at %s: %v", rep.Path, short(rep.Rev), err)
	}
	byCommit := map[string][]int{}
	var order []string
	for i, e := range rep.Entries {
		if e.Introduced == nil || e.Index < 1 || e.Index > len(f.Entries) {
			continue
		}
		if e.Verdict == VerdictBackfilled || e.Verdict == VerdictRelanded {
			continue // written for an earlier change than the commit that added it
		}
		c := e.Introduced.Commit
		if _, ok := byCommit[c]; !ok {
			order = append(order, c)
		}
		byCommit[c] = append(byCommit[c], i)
	}
	// newest first: packs store older versions as deltas of newer ones
	sort.SliceStable(order, func(i, j int) bool {
		return rep.Entries[byCommit[order[i]][0]].Introduced.Date.After(rep.Entries[byCommit[order[j]][0]].Introduced.Date)
	})
	for _, c := range order {
		if err := ctx.Err(); err != nil {
			return err
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
		ch, err := changelog.ChangeAt(r, s, parent, h, short(parent), short(h))
		if err != nil {
			return err
		}
		var entries []changelog.ClaimEntry
		for _, i := range byCommit[c] {
			e := f.Entries[rep.Entries[i].Index-1]
			entries = append(entries, changelog.ClaimEntry{Index: e.Index, Value: e.Value})
		}
		results := changelog.CheckClaims(ch, entries)
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
