package provenance

import (
	"context"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// Introducers is changelog.Input.Introduced for a change whose base is
// base: which PR introduced each of base's entries, read from the
// changelog's history up to base (on the first call only: a change that
// corrects no pr-link never pays for it). An entry is answered only when
// its audit names the PR whose commit introduced it and that PR is the
// right link: not for an entry relanded, backfilled or re-triggered
// (which link an earlier PR on purpose) or introduced by a commit that
// names no PR; a history that cannot be read answers nothing.
func Introducers(ctx context.Context, r *gitscan.Repo, s *config.Settings, base plumbing.Hash) func(baseIndex int) (pr int, commit string, ok bool) {
	type intro struct {
		pr     int
		commit string
	}
	read := sync.OnceValue(func() map[int]intro {
		h, err := Build(ctx, r, Options{Head: base, Settings: s, Parts: PartChangelog})
		if err != nil {
			return nil
		}
		rep, err := h.Audit(AuditOptions{})
		if err != nil {
			return nil
		}
		out := map[int]intro{}
		for _, e := range rep.Entries {
			switch e.Verdict {
			case VerdictOK, VerdictCorrected, VerdictEdited, VerdictMismatch, VerdictPlaceholder:
				if e.Introduced != nil && e.Introduced.PR != nil {
					out[e.Index] = intro{*e.Introduced.PR, e.Introduced.Commit}
				}
			}
		}
		return out
	})
	return func(i int) (int, string, bool) {
		in, ok := read()[i]
		return in.pr, in.commit, ok
	}
}
