package provenance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// Sentinel errors; test them with errors.Is.
var (
	ErrUnknownKey = errors.New("unknown config key")
	ErrNotOnChain = errors.New("not a first-parent ancestor")
)

// Options configures Build.
type Options struct {
	// Head is the newest commit of the history. Required.
	Head plumbing.Hash
	// Settings locate the changelog and the master configs (nil: defaults).
	Settings *config.Settings
	// Changelog and Recipes select what to build.
	Changelog, Recipes bool
	// IgnoreRevs are mechanical commits to look through (see the package
	// documentation).
	IgnoreRevs []plumbing.Hash
	// Progress, when set, is called as the build advances.
	Progress func(Progress)
	// PRs, when set, names the pull request of commits whose subject has
	// none (for example from the GitHub API); it is asked only about
	// commits that carry an event.
	PRs PRResolver
	// Keys restricts the recipe history to the master config files holding
	// these keys at Head (renames across files are then not followed).
	// With Recipes and without Changelog the walk also stops once every
	// key (and the keys it was renamed from) has been traced to its
	// creation.
	Keys []string
}

// PRResolver finds the pull request of a commit whose subject has no
// "(#N)". ok is false when it does not know.
type PRResolver interface {
	PR(ctx context.Context, commit plumbing.Hash) (n int, ok bool)
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o.Head.IsZero() {
		return errors.New("provenance: Head is required")
	}
	if !o.Changelog && !o.Recipes {
		return errors.New("provenance: nothing to build (set Changelog or Recipes)")
	}
	return nil
}

// Progress reports a build stage: Done of Total units (Total 0 when
// unknown).
type Progress struct {
	Stage       string // "walk", "read"
	Done, Total int
}

// CommitInfo is what history output says about a commit.
type CommitInfo struct {
	Hash    plumbing.Hash
	Author  string
	Email   string
	Date    time.Time
	Subject string
	// PR is the pull request number, 0 when unknown; PRSource says where
	// it came from ("subject", or the resolver's name).
	PR       int
	PRSource string
}

// Note is something the history could not take at face value, such as a
// version of a file that does not load.
type Note struct {
	Seq     int
	Commit  plumbing.Hash
	Path    string
	Message string
}

// History is the structured first-parent history of a repository's
// changelog and recipe configs, from its root (or Options.Until) to Head.
type History struct {
	Head plumbing.Hash
	// Chain is the first-parent chain, oldest first; an event's Seq
	// indexes it.
	Chain []plumbing.Hash
	seq   map[plumbing.Hash]int
	// Notes lists versions that could not be loaded (carried forward).
	Notes []Note

	// changelog
	ChangelogPath string
	clVersions    []clVersion // oldest first
	Lineages      []*Lineage

	// recipes
	cfgVersions []cfgVersion // oldest first
	Keys        map[string]*KeyHistory
	headKeys    []string // all recipe keys at Head (Options.Keys builds)

	ignore map[int]bool // seqs of ignored commits

	prOnce sync.Once
	prSeq  map[int]int // PR → seq of the commit that landed it

	entryIdxOnce sync.Once
	entryAt      map[int][]Event // seq → entry events (introduced, edited, re-added)
	entrySeqList []int

	mu   sync.Mutex
	meta map[plumbing.Hash]*CommitInfo
	load func(plumbing.Hash) (*CommitInfo, error)

	settings *config.Settings
}

// clVersion is a version of the changelog: from commit Seq on, the file
// had blob Blob (zero: absent) and these entries.
type clVersion struct {
	Seq     int
	Blob    plumbing.Hash
	Invalid bool // did not load: the previous valid version stands
	items   []placed
	raw     string // the text of an invalid version
}

// cfgVersion is a version of the master configs.
type cfgVersion struct {
	Seq     int
	Files   []cfgFile
	Invalid bool
	recipes map[string]placedIn
	order   []string // keys in load order
}

type cfgFile struct {
	Path string
	Blob plumbing.Hash
}

type placedIn struct {
	placed
	file string
}

// SeqOf returns the position of a commit in the chain.
func (h *History) SeqOf(c plumbing.Hash) (int, bool) {
	s, ok := h.seq[c]
	return s, ok
}

// Ignored reports whether the commit at seq is an ignored revision.
func (h *History) Ignored(seq int) bool { return h.ignore[seq] }

// Commit returns a commit's metadata.
func (h *History) Commit(c plumbing.Hash) (*CommitInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ci, ok := h.meta[c]; ok {
		return ci, nil
	}
	ci, err := h.load(c)
	if err != nil {
		return nil, err
	}
	h.meta[c] = ci
	return ci, nil
}

// CommitAt is Commit of the commit at seq.
func (h *History) CommitAt(seq int) (*CommitInfo, error) { return h.Commit(h.Chain[seq]) }

// Build reads the history of the changelog and/or the master configs from
// the repository.
func Build(ctx context.Context, r *gitscan.Repo, o Options) (*History, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := o.Settings
	h := &History{Head: o.Head, seq: map[plumbing.Hash]int{}, Keys: map[string]*KeyHistory{},
		ChangelogPath: s.ChangelogPath(), meta: map[plumbing.Hash]*CommitInfo{}, settings: s}
	h.load = func(c plumbing.Hash) (*CommitInfo, error) { return commitInfo(ctx, r, c, o.PRs) }
	if len(o.Keys) > 0 && o.Recipes && !o.Changelog {
		return h, h.buildKeys(ctx, r, o)
	}

	// 1. one first-parent walk, newest first: the blob of every tracked
	// path per commit. Each blob not seen before is handed at once to
	// step 2, which reads and splits it on another goroutine (versions of
	// a file are deltas of the next newer one, so newest first is also
	// the cheap order to read them in).
	paths := []string{h.ChangelogPath}
	layouts := s.MasterCandidates()
	for _, l := range layouts {
		paths = append(paths, l...)
	}
	type step struct {
		hash  plumbing.Hash
		blobs []plumbing.Hash
	}
	type want struct {
		blob plumbing.Hash
		kind fileKind
	}
	var steps []step // newest first
	prog := func(stage string, done, total int) {
		if o.Progress != nil {
			o.Progress(Progress{Stage: stage, Done: done, Total: total})
		}
	}
	reads := make(chan want, 1<<16)
	walkErr := make(chan error, 1)
	sp := newSplitter()
	var tracked map[int]bool // with Options.Keys: the master files followed
	go func() {
		defer close(reads)
		seen := map[want]bool{}
		need := func(b plumbing.Hash, k fileKind) {
			if !b.IsZero() && !seen[want{b, k}] {
				seen[want{b, k}] = true
				reads <- want{b, k}
			}
		}
		walk := gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: o.Head,
			Progress: func(n int) { prog("walk", n, 0) }}, Paths: paths}
		walkErr <- r.Track(ctx, walk, func(st gitscan.Step) error {
			steps = append(steps, step{st.Hash, append([]plumbing.Hash(nil), st.Blobs...)})
			if o.Changelog {
				need(st.Blobs[0], listFile)
			}
			if o.Recipes {
				files := selectLayout(layouts, st.Blobs[1:])
				if len(o.Keys) > 0 && tracked == nil {
					var err error
					if tracked, h.headKeys, err = keyFiles(r, sp.clone(), files, o.Keys); err != nil {
						return err
					}
				}
				for i, f := range files {
					if tracked == nil || tracked[i] {
						need(f.Blob, mapFile)
					}
				}
			}
			return nil
		})
	}()

	// 2. read each distinct blob once and split it; new changelog entries
	// are parsed on the other cores meanwhile
	parse := make(chan *block, 1024)
	var parsers sync.WaitGroup
	for w := 1; w < runtime.GOMAXPROCS(0); w++ {
		parsers.Add(1)
		go func() {
			defer parsers.Done()
			for b := range parse {
				b.load()
			}
		}()
	}
	sp.onNew = func(b *block) {
		if b.kind == listFile {
			select {
			case parse <- b:
			default: // parsers busy: loadAll takes it
			}
		}
	}
	type result struct {
		items []placed
		err   error
	}
	res := map[want]result{}
	var kinds []fileKind // of the blob being read
	done := 0
	err := r.ScanBlobsFrom(ctx, func() (plumbing.Hash, bool) {
		w, ok := <-reads
		kinds = append(kinds[:0], w.kind)
		return w.blob, ok
	}, func(b plumbing.Hash, data []byte) error {
		for _, k := range kinds {
			items, err := sp.split(data, k)
			if errors.Is(err, errNoSplit) {
				items, err = wholeFile(data, k)
			}
			res[want{b, k}] = result{items, err}
		}
		done++
		if done&31 == 0 {
			prog("read", done, 0)
		}
		return nil
	})
	for range reads { // unblock the walk when reading stopped early
	}
	close(parse)
	parsers.Wait()
	if werr := <-walkErr; err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	sp.loadAll(runtime.GOMAXPROCS(0), listFile) // recipes load on demand

	// 3. the chain and the versions: where the tracked blobs change
	n := len(steps)
	h.Chain = make([]plumbing.Hash, n)
	for i, st := range steps {
		sq := n - 1 - i
		h.Chain[sq] = st.hash
		h.seq[st.hash] = sq
	}
	h.ignore = map[int]bool{}
	for _, c := range o.IgnoreRevs {
		if sq, ok := h.seq[c]; ok {
			h.ignore[sq] = true
		}
	}
	for i := n - 1; i >= 0; i-- { // oldest first
		st := steps[i]
		sq := n - 1 - i
		if o.Changelog {
			b := st.blobs[0]
			if len(h.clVersions) == 0 || h.clVersions[len(h.clVersions)-1].Blob != b {
				h.clVersions = append(h.clVersions, clVersion{Seq: sq, Blob: b})
			}
		}
		if o.Recipes {
			var files []cfgFile
			for i, f := range selectLayout(layouts, st.blobs[1:]) {
				if tracked == nil || tracked[i] {
					files = append(files, f)
				}
			}
			if len(h.cfgVersions) == 0 || !sameFiles(h.cfgVersions[len(h.cfgVersions)-1].Files, files) {
				h.cfgVersions = append(h.cfgVersions, cfgVersion{Seq: sq, Files: files})
			}
		}
	}

	// 4. versions → events
	if o.Changelog {
		for i := range h.clVersions {
			v := &h.clVersions[i]
			if v.Blob.IsZero() {
				continue
			}
			rr := res[want{v.Blob, listFile}]
			v.items = rr.items
			if msg := versionError(rr.err, rr.items); msg != "" {
				v.Invalid = true
				h.Notes = append(h.Notes, Note{Seq: v.Seq, Commit: h.Chain[v.Seq], Path: h.ChangelogPath, Message: msg})
				raw, err := r.ReadBlob(v.Blob)
				if err != nil {
					return nil, err
				}
				v.raw = string(raw)
			}
		}
		if err := h.buildLineages(); err != nil {
			return nil, err
		}
	}
	if o.Recipes {
		for i := range h.cfgVersions {
			v := &h.cfgVersions[i]
			v.recipes = map[string]placedIn{}
			for _, f := range v.Files {
				if f.Blob.IsZero() {
					continue
				}
				rr := res[want{f.Blob, mapFile}]
				// a recipe that does not load is judged per key (see
				// KeyHistory.Events); a file that does not split is judged here
				if msg := versionError(rr.err, nil); msg != "" {
					v.Invalid = true
					h.Notes = append(h.Notes, Note{Seq: v.Seq, Commit: h.Chain[v.Seq], Path: f.Path, Message: msg})
					continue
				}
				for _, it := range rr.items {
					if _, dup := v.recipes[it.b.key]; !dup {
						v.order = append(v.order, it.b.key)
					}
					v.recipes[it.b.key] = placedIn{it, f.Path}
				}
			}
		}
		h.buildRecipes()
	}
	return h, nil
}

// versionError explains why a version cannot be taken ("" when it can).
func versionError(err error, items []placed) string {
	if err != nil {
		return "does not load: " + err.Error()
	}
	for _, it := range items {
		if it.b.err != nil {
			return fmt.Sprintf("does not load: the item at line %d: %s", it.line, shiftLines(it.b.err.Error(), int(it.off)))
		}
	}
	return ""
}

// shiftLines rewrites "line N" in a block's parse error to file lines.
func shiftLines(msg string, off int) string {
	if off == 0 {
		return msg
	}
	var b strings.Builder
	for {
		i := strings.Index(msg, "line ")
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		b.WriteString(msg[:i+5])
		msg = msg[i+5:]
		j := 0
		n := 0
		for j < len(msg) && msg[j] >= '0' && msg[j] <= '9' {
			n = n*10 + int(msg[j]-'0')
			j++
		}
		if j == 0 {
			continue
		}
		fmt.Fprintf(&b, "%d", n+off)
		msg = msg[j:]
	}
}

// selectLayout picks the master config files of one commit: the first
// layout (configs/, then .github/configs/) with any file present, as the
// gate's MASTER_CONFIGS did at each point of history.
func selectLayout(layouts [][]string, blobs []plumbing.Hash) []cfgFile {
	k := 0
	for _, l := range layouts {
		any := false
		for i := range l {
			if !blobs[k+i].IsZero() {
				any = true
			}
		}
		if any {
			out := make([]cfgFile, len(l))
			for i, p := range l {
				out[i] = cfgFile{Path: p, Blob: blobs[k+i]}
			}
			return out
		}
		k += len(l)
	}
	return nil
}

func sameFiles(a, b []cfgFile) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// commitInfo reads a commit's metadata; the PR comes from its subject,
// else from the resolver.
func commitInfo(ctx context.Context, r *gitscan.Repo, c plumbing.Hash, prs PRResolver) (*CommitInfo, error) {
	gc, err := r.Commit(c)
	if err != nil {
		return nil, err
	}
	ci := &CommitInfo{Hash: c, Author: gc.Author, Email: gc.Email, Date: gc.When, Subject: gc.Subject()}
	if n, ok := gc.PR(); ok {
		ci.PR, ci.PRSource = n, "subject"
	} else if prs != nil {
		if n, ok := prs.PR(ctx, c); ok {
			ci.PR, ci.PRSource = n, "github"
		}
	}
	return ci, nil
}
