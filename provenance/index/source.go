package index

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
	"github.com/perflog/perflog/provenance"
	"github.com/perflog/perflog/recipe/dryrun"
)

// SourceOptions say where a history command's answers come from.
type SourceOptions struct {
	Settings *config.Settings
	// Rev is the revision whose state is explained; RevName names it in
	// errors ("--rev" when empty).
	Rev, RevName string
	// IgnoreRevs are extra revisions to look through (--ignore-rev); they
	// are added to the settings' own.
	IgnoreRevs []string
	// NoIndex reads history from git even when an index exists.
	NoIndex bool
	// IndexPath is the index file ("": the repository's, see Path).
	IndexPath string
	PRs       provenance.PRResolver
	// Progress, when set, starts a progress report of a build or an index
	// update under a label; the returned function ends it.
	Progress func(label string) (update func(provenance.Progress), done func())
	// Warn, when set, is told why an index present is not used.
	Warn func(msg string)
	// DryRun is how recipes are dry-run (launch fields, claims).
	DryRun dryrun.Options
}

// A Source answers history questions at one revision: from the answers
// stored in the index when it is current, from the index's stored history
// when it is behind (bringing it up to date), and from git otherwise. The
// repository is opened, the revision resolved and the ignore-revs read
// once for all of them. The answer is the same whichever way it is got.
type Source struct {
	Repo *gitscan.Repo
	// Rev is the resolved revision.
	Rev plumbing.Hash
	// SettingsRevs are the settings' ignore-revs; IgnoreRevs adds those of
	// SourceOptions.IgnoreRevs.
	SettingsRevs, IgnoreRevs []plumbing.Hash

	o  SourceOptions
	ix *Index // nil without an index (or with --no-index)
	// noIndex: the repository has no index to read (not --no-index), and
	// hinted: the hint to build one was given
	noIndex, hinted bool
}

// OpenSource resolves o.Rev in r, reads the ignore-revs and opens the
// index of r when there is one to read. It does not own r.
func OpenSource(r *gitscan.Repo, o SourceOptions) (*Source, error) {
	name := o.RevName
	if name == "" {
		name = "--rev"
	}
	rev, err := r.Resolve(o.Rev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Source{Repo: r, Rev: rev, o: o}
	if s.SettingsRevs, err = provenance.IgnoreRevs(r, rev, o.Settings, nil); err != nil {
		return nil, err
	}
	if len(o.IgnoreRevs) == 0 {
		s.IgnoreRevs = s.SettingsRevs
	} else if s.IgnoreRevs, err = provenance.IgnoreRevs(r, rev, o.Settings, o.IgnoreRevs); err != nil {
		return nil, err
	}
	if !o.NoIndex {
		p := o.IndexPath
		if p == "" {
			p = Path(r)
		}
		ix, err := Open(p, false)
		switch {
		case err == nil:
			s.ix = ix
		case errors.Is(err, ErrNotWritable):
			s.warn(fmt.Sprintf("%v; reading history from git", err))
		case errors.Is(err, ErrNoIndex):
			s.noIndex = true
		}
	}
	return s, nil
}

// Close closes the index (not the repository).
func (s *Source) Close() {
	if s.ix != nil {
		s.ix.Close()
		s.ix = nil
	}
}

// Options are the index options of the source's settings.
func (s *Source) Options() Options {
	return Options{Settings: s.o.Settings, IgnoreRevs: s.SettingsRevs, Shallow: s.Repo.ShallowCommits()}
}

// Index is the index read, nil when there is none (or --no-index).
func (s *Source) Index() *Index { return s.ix }

// stored is the index when its stored answers answer the question: the
// index is there and no --ignore-rev changes the question.
func (s *Source) stored() *Index {
	if len(s.o.IgnoreRevs) > 0 {
		return nil
	}
	return s.ix
}

// Current reports whether the stored answers are those of Rev.
func (s *Source) Current(ctx context.Context) bool {
	ix := s.stored()
	return ix != nil && ix.Current(ctx, s.Rev, s.Options())
}

// Blame returns the blame of key at Rev.
func (s *Source) Blame(ctx context.Context, key string) (*provenance.BlameReport, error) {
	if ix := s.stored(); ix != nil {
		rep, err := ix.CachedBlame(ctx, s.Rev, key, s.Options())
		if !errors.Is(err, ErrNotCached) {
			return rep, err
		}
	}
	// a key not at the revision is read with every recipe's history,
	// which says whether it existed before (provenance.Options.Keys)
	h, err := s.History(ctx, provenance.PartRecipes, key)
	if err != nil {
		return nil, err
	}
	return h.Blame(key, s.Rev)
}

// Audit returns the audit of the changelog entries at Rev whose
// config-keys match the glob key ("" for all).
func (s *Source) Audit(ctx context.Context, key string) (*provenance.AuditReport, error) {
	if ix := s.stored(); ix != nil {
		rep, err := ix.CachedAudit(ctx, s.Rev, s.Options())
		if err == nil {
			return provenance.FilterAudit(rep, key), nil
		}
		if !errors.Is(err, ErrNotCached) {
			return nil, err
		}
	}
	h, err := s.History(ctx, provenance.PartChangelog)
	if err != nil {
		return nil, err
	}
	return h.Audit(provenance.AuditOptions{Rev: s.Rev, Key: key})
}

// History builds the history up to Rev: of the changelog, of the recipes
// or both; keys, when given, limit the recipes read from git to those.
// The index, when there is one, is brought up to Rev first; one that
// cannot be used is reported (Warn) and history is read from git.
func (s *Source) History(ctx context.Context, parts provenance.Parts, keys ...string) (*provenance.History, error) {
	if s.ix != nil {
		o := s.Options()
		o.PRs = s.o.PRs
		var done func()
		o.Progress, done = s.progress("updating the index")
		h, _, err := s.ix.History(ctx, s.Repo, s.Rev, parts, o)
		done()
		if err == nil {
			h.SetIgnoreRevs(s.IgnoreRevs)
			return h, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrNotWritable) {
			s.warn(fmt.Sprintf("%v; reading history from git", err))
		} else {
			s.warn(fmt.Sprintf("the index cannot be used (%v); reading history from git", err))
		}
	}
	update, done := s.progress("reading history")
	defer done()
	return provenance.Build(ctx, s.Repo, provenance.Options{Head: s.Rev, Settings: s.o.Settings,
		Parts: parts, Keys: keys, IgnoreRevs: s.IgnoreRevs, Progress: update, PRs: s.o.PRs})
}

// Launches returns what key's points launched over the history h (built
// to Rev with the key's recipe): History.Launches, resumed from the walk
// the index stored for the key, and stored again.
func (s *Source) Launches(ctx context.Context, h *provenance.History, key string) ([]provenance.LaunchVersion, error) {
	return s.resume(ctx, h, key, s.storedWalk(ctx, key))
}

// StoredLaunches is Launches for a key whose launch walk the index holds
// (brought up to Rev when it is behind: only the newer commits are
// dry-run); ok is false when it holds none, and nothing is dry-run.
func (s *Source) StoredLaunches(ctx context.Context, h *provenance.History, key string) (vs []provenance.LaunchVersion, ok bool, err error) {
	prev := s.storedWalk(ctx, key)
	if prev == nil {
		return nil, false, nil
	}
	vs, err = s.resume(ctx, h, key, prev)
	return vs, err == nil, err
}

// resume walks key's launches from prev (or from the start) to Rev and
// stores the walk. A walk through Rev is resumed at no cost: it only
// places the stored versions on h's chain.
func (s *Source) resume(ctx context.Context, h *provenance.History, key string, prev *provenance.LaunchState) ([]provenance.LaunchVersion, error) {
	st, keep, err := s.walk(ctx, h, key, prev)
	if err != nil {
		return nil, err
	}
	if !keep {
		s.store(ctx, st)
	}

	return st.Versions, nil
}

// storedWalk is the launch walk the index holds for key, nil when there
// is none of this perflog's version.
func (s *Source) storedWalk(ctx context.Context, key string) *provenance.LaunchState {
	if s.ix == nil {
		return nil
	}
	if st := s.ix.LaunchState(ctx, key); st != nil && st.Version == provenance.LaunchFactsVersion {
		return st
	}
	return nil
}

// walk brings prev (or nothing) to Rev. keep is set when prev went as far
// or further on this history than Rev: a walk to an older --rev does not
// replace it, and a current one is not written again.
func (s *Source) walk(ctx context.Context, h *provenance.History, key string, prev *provenance.LaunchState) (st *provenance.LaunchState, keep bool, err error) {
	update, done := s.progress("dry-running " + key + "'s launches")
	st, err = h.LaunchesFrom(ctx, key, s.Rev, provenance.LaunchOptions{Repo: s.Repo, Progress: update, DryRun: s.o.DryRun}, prev)
	done()
	switch {
	case err != nil || s.hinted:
	case s.noIndex:
		s.hinted = true
		s.warn("no index: this answer dry-ran the recipe's history, and the next one will again; `perflog index --launches` keeps what every recipe launches for the next answers")
	case s.ix != nil && prev == nil && len(s.o.IgnoreRevs) == 0:
		s.hinted = true
		s.warn("the index held no launch walk of " + key + ": this answer dry-ran its history, kept now for the next answers; `perflog index --launches` walks every recipe at once")
	}
	if err != nil || prev == nil {
		return st, false, err
	}
	if prev.Through == st.Through {
		st.Blame, st.Log = prev.Blame, prev.Log
	}
	p, ok := h.SeqOf(plumbing.NewHash(prev.Through))
	t, _ := h.SeqOf(plumbing.NewHash(st.Through))
	return st, ok && p >= t, nil
}

// store keeps a launch walk in the index, when there is one to write.
func (s *Source) store(ctx context.Context, st *provenance.LaunchState) {
	if s.ix != nil && len(s.o.IgnoreRevs) == 0 {
		_ = s.ix.StoreLaunchState(ctx, st) // a read-only index: the next run walks again
	}
}

// BlameLaunch is Blame with the launch fields of key (History.BlameLaunch)
// after its config fields. With an index, the launch fields' blame at Rev
// is stored with the key's launch walk.
func (s *Source) BlameLaunch(ctx context.Context, key string) (*provenance.BlameReport, error) {
	rep, err := s.Blame(ctx, key)
	if err != nil {
		return nil, err
	}
	prev := s.storedWalk(ctx, key)
	if prev != nil && prev.Through == s.Rev.String() && prev.Blame != nil {
		rep.Fields = append(rep.Fields, prev.Blame...)
		return rep, nil
	}
	h, err := s.History(ctx, provenance.PartRecipes, key)
	if err != nil {
		return nil, err
	}
	st, keep, err := s.walk(ctx, h, key, prev)
	if err != nil {
		return nil, err
	}
	fs, err := h.BlameLaunch(key, s.Rev, st.Versions)
	if err != nil {
		return nil, err
	}
	s.storeAnswer(ctx, st, prev, keep, prev != nil && prev.Blame != nil, func() {
		st.Blame = fs
		if st.Blame == nil {
			st.Blame = []provenance.BlameField{}
		}
	})
	rep.Fields = append(rep.Fields, fs...)
	return rep, nil
}

// Log is History.Log of key at Rev, with the changes of its launches
// when launches is set (History.Launches). With an index, the key's
// whole log (no Path, no After) is stored with its launch walk once asked
// for; later answers at the same revision read it and filter it by date
// (provenance.FilterLog).
func (s *Source) Log(ctx context.Context, key string, o provenance.LogOptions, launches bool) ([]provenance.LogItem, error) {
	o.Rev = s.Rev
	whole := launches && o.Path == "" && o.After.IsZero()
	var prev *provenance.LaunchState
	if launches {
		prev = s.storedWalk(ctx, key)
		if whole && prev != nil && prev.Through == s.Rev.String() && prev.Log != nil {
			return provenance.FilterLog(prev.Log, o), nil
		}
	}
	h, err := s.History(ctx, provenance.PartsAll, key)
	if err != nil {
		return nil, err
	}
	var st *provenance.LaunchState
	keep := true
	if seq, ok := h.SeqOf(s.Rev); launches && ok {
		if _, ok := h.RecipeAt(key, seq); ok { // (a key not at Rev has no launches: the log says what it can)
			if st, keep, err = s.walk(ctx, h, key, prev); err != nil {
				return nil, err
			}
			o.Launches = st.Versions
		}
	}
	if !whole || st == nil {
		if st != nil && !keep {
			s.store(ctx, st)
		}
		return h.Log(key, o)
	}
	all := o
	all.Since, all.Until, all.OldestFirst = time.Time{}, time.Time{}, false
	items, err := h.Log(key, all)
	if err != nil {
		return nil, err
	}
	s.storeAnswer(ctx, st, prev, keep, prev != nil && prev.Log != nil, func() {
		st.Log = items
		if st.Log == nil {
			st.Log = []provenance.LogItem{}
		}
	})
	return provenance.FilterLog(items, o), nil
}

// storeAnswer stores the walk st with an answer that set puts in it (its
// blame, its log): when st is a new walk (keep false), or when the stored
// walk prev is current and lacks that answer (had false). A stored walk
// that went further than st is kept.
func (s *Source) storeAnswer(ctx context.Context, st, prev *provenance.LaunchState, keep, had bool, set func()) {
	if keep && (had || st.Through != prev.Through) {
		return
	}
	set()
	s.store(ctx, st)
}

func (s *Source) progress(label string) (func(provenance.Progress), func()) {
	if s.o.Progress == nil {
		return nil, func() {}
	}
	return s.o.Progress(label)
}

func (s *Source) warn(msg string) {
	if s.o.Warn != nil {
		s.o.Warn(msg)
	}
}
