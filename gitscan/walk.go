package gitscan

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Node is one commit of a first-parent walk, read cheaply: through the
// commit-graph when the repository has one (no object decoding), else from
// the commit object. Full metadata is available from Repo.Commit.
type Node struct {
	Hash    plumbing.Hash
	Tree    plumbing.Hash
	Parents []plumbing.Hash
	// Meta is the commit's author, date and subject when the walk was
	// asked for them (WalkOptions.Meta), else nil.
	Meta *CommitMeta
}

// CommitMeta is what a history needs to know of a commit besides its
// place: its author, author date and subject, as Repo.Commit reads them.
type CommitMeta struct {
	Author, Email string
	When          time.Time
	Subject       string
}

// WalkOptions configures FirstParent.
type WalkOptions struct {
	// From is the commit the walk starts at (newest). Required.
	From plumbing.Hash
	// Until stops the walk before this commit (exclusive), as in
	// `git log --first-parent Until..From`. Zero walks to the root.
	Until plumbing.Hash
	// Progress, when set, is called every 256 commits with the count so far.
	Progress func(done int)
	// Meta decodes each commit's CommitMeta into Node.Meta, from the
	// object a walk without a commit-graph reads anyway: a caller that
	// needs most commits' metadata then does not read each commit again
	// (with a commit-graph the objects are read for it).
	Meta bool
}

// Validate checks the options.
func (o *WalkOptions) Validate() error {
	if o.From.IsZero() {
		return errors.New("walk: From is required")
	}
	return nil
}

// FirstParent visits From and its first-parent ancestors, newest first,
// calling fn for each. fn may return ErrStop to end the walk early. The walk
// stops with ctx.Err() when ctx is cancelled.
func (r *Repo) FirstParent(ctx context.Context, o WalkOptions, fn func(Node) error) error {
	if err := o.Validate(); err != nil {
		return err
	}
	h := o.From
	for i := 0; ; i++ {
		if i&63 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if o.Progress != nil && i > 0 && i&255 == 0 {
			o.Progress(i)
		}
		if h == o.Until {
			return nil
		}
		n, err := r.node(h, o.Meta)
		if err != nil {
			if i > 0 && errors.Is(err, plumbing.ErrObjectNotFound) && r.Shallow() {
				return nil // shallow boundary
			}
			return err
		}
		if err := fn(n); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
		if len(n.Parents) == 0 {
			return nil
		}
		h = n.Parents[0]
	}
}

var (
	// "Title (#123)" squash merges; the last "(#N)" wins (reverts and
	// relands quote the original subject: `Revert "X (#1837)" (#1857)`).
	squashPR = regexp.MustCompile(`\(#(\d+)\)`)
	// "Merge pull request #123 from owner/branch"
	mergePR = regexp.MustCompile(`^Merge pull request #(\d+) from `)
)

// PRFromSubject returns the pull request number a commit subject names:
// the last "(#N)" of a squash-merge subject (tags such as "[skip-sweep]" may
// follow it), or N in "Merge pull request #N from ...". Bare "#N" references
// ("Ref #1154", "ROCm/aiter#2916") are not PR numbers and are ignored.
func PRFromSubject(subject string) (int, bool) {
	if m := mergePR.FindStringSubmatch(subject); m != nil {
		n, err := strconv.Atoi(m[1])
		return n, err == nil
	}
	all := squashPR.FindAllStringSubmatch(subject, -1)
	if len(all) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(all[len(all)-1][1])
	return n, err == nil
}
