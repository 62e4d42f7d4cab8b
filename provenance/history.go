package provenance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/perflog/perflog/changelog"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/gitscan"
)

// Sentinel errors; test them with errors.Is.
var (
	ErrUnknownKey = errors.New("unknown config key")
	ErrNotOnChain = errors.New("not a first-parent ancestor")
)

// Parts says which parts of a history to build or load: the changelog's
// entries, the recipes' versions, or both.
type Parts uint8

const (
	PartChangelog Parts = 1 << iota
	PartRecipes
	PartsAll = PartChangelog | PartRecipes
)

// Has reports whether p holds every part of q.
func (p Parts) Has(q Parts) bool { return p&q == q }

// Options configures Build.
type Options struct {
	// Head is the newest commit of the history. Required.
	Head plumbing.Hash
	// Settings locate the changelog and the master configs (nil: defaults).
	Settings *config.Settings
	// Parts selects what to build.
	Parts Parts
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
	// creation. When a key is not at Head, every file is followed, as
	// without Keys: only every recipe's history says whether the key
	// existed before and what became of it.
	Keys []string
	// Base is a History of an older head (restored from an index, say):
	// the walk stops at the first commit of Base's chain and only the
	// commits above it are read; the result is Base's history up to that
	// commit extended with them. When the walk meets no commit of Base
	// (unrelated history), Base is not used.
	Base *History
	// FirstBlockID is the least number a new block gets. A store of
	// blocks by number passes one past the numbers it holds: after a
	// rewritten history, Base knows only the blocks of its chain, and a
	// block of the dropped commits must not lend its number to another.
	FirstBlockID int
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
	if o.Parts == 0 {
		return errors.New("provenance: nothing to build (no Parts)")
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
// changelog and recipe configs, from its root (or where a key-restricted
// build stopped) to Head.
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
	cl            *slot // nil when the changelog was not built
	Lineages      []*Lineage

	// recipes: one slot per master config file position (amd, nvidia)
	cfg  []*slot
	Keys map[string]*KeyHistory
	// key-restricted builds: the master config files at Head
	headFiles []cfgFile
	// the tracked files' contents at Head, as read by Build (keepHead)
	headData map[plumbing.Hash][]byte
	// renames holds, per seq, the renames decided there (new key → old
	// key); a restored History reuses them instead of comparing recipes
	renames map[int]map[string]string
	memo    *config.Memo // shared by the recipe diffs

	ignore map[int]bool // seqs of ignored commits

	mu   sync.Mutex
	meta map[plumbing.Hash]*CommitInfo
	load func(plumbing.Hash) (*CommitInfo, error)
	// walked is the metadata Build's walk decoded, which load turns into
	// a CommitInfo when a commit is first asked for
	walked map[plumbing.Hash]*gitscan.CommitMeta
	// readBlob reads a file version (to locate lines at a revision).
	readBlob func(plumbing.Hash) ([]byte, error)

	prOnce sync.Once
	prSeq  map[int]int // PR → seq of the commit that landed it
	// introducedOnce indexes the introduced events by their commit's PR,
	// in lineage order (see introducedBy)
	introducedOnce sync.Once
	introducedPR   map[int][]Event
	// byKeysOnce indexes the lineages by the config-keys of their first
	// event, as a multiset, in lineage order (see lineagesFirstNaming)
	byKeysOnce sync.Once
	byKeys     map[string][]*Lineage

	placedMemo map[plumbing.Hash][]placed // see placedOf
	// headLines holds the first line of each block of the changelog at
	// Head, when Build cut that version whole (see linesOf)
	headLines     []int
	headLinesBlob plumbing.Hash
	state         *recipeState // see stateAt
	stateSeq      int
	// clHead is the changelog's replay after its last version, as
	// buildLineages left it (see EntriesAt)
	clHead struct {
		list []*block
		at   *version
		ok   bool
	}
	// lastTouched holds, per recipe key, the last seq whose master config
	// versions touched one of its blocks (see KeyPlacesSince)
	lastTouched map[string]int
	// unloadedAbove memoizes recipeFailsAbove, per fork (under mu)
	unloadedAbove map[int]bool

	entryIdxOnce sync.Once
	entryAt      map[int][]Event // seq → entry events (introduced, edited, re-added)
	entrySeqList []int

	settings *config.Settings
}

// cfgFile is a master config file at a commit.
type cfgFile struct {
	Path string
	Blob plumbing.Hash
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

func newHistory(ctx context.Context, r *gitscan.Repo, o Options) *History {
	s := o.Settings
	h := &History{Head: o.Head, seq: map[plumbing.Hash]int{}, Keys: map[string]*KeyHistory{},
		ChangelogPath: s.ChangelogPath(), meta: map[plumbing.Hash]*CommitInfo{}, settings: s,
		renames: map[int]map[string]string{}, memo: config.NewMemo()}
	h.load = func(c plumbing.Hash) (*CommitInfo, error) { // h.mu is held
		if m := h.walked[c]; m != nil {
			return infoOf(ctx, c, m, o.PRs), nil
		}
		return commitInfo(ctx, r, c, o.PRs)
	}
	h.readBlob = func(b plumbing.Hash) ([]byte, error) {
		h.mu.Lock() // the walk reader; Build is over when this is used
		defer h.mu.Unlock()
		if data, ok := h.headData[b]; ok {
			return data, nil
		}
		return r.ReadBlob(b)
	}
	return h
}

// keepHead keeps the content of a tracked file at Head, read by Build:
// line lookups at Head (audit lines, recipe places, blame) would read
// and inflate it again. A transient buffer (valid only until its reader
// returns) is copied.
func (h *History) keepHead(blob plumbing.Hash, data []byte, transient bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.headData == nil {
		h.headData = map[plumbing.Hash][]byte{}
	}
	if _, ok := h.headData[blob]; !ok {
		if transient {
			data = bytes.Clone(data)
		}
		h.headData[blob] = data
	}
}

// headBlob returns a file content kept by keepHead.
func (h *History) headBlob(blob plumbing.Hash) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	data, ok := h.headData[blob]
	return data, ok
}

// SetIgnoreRevs replaces the ignored revisions (events do not depend on
// them; introductions and blame do).
func (h *History) SetIgnoreRevs(revs []plumbing.Hash) {
	h.ignore = map[int]bool{}
	for _, c := range revs {
		if sq, ok := h.seq[c]; ok {
			h.ignore[sq] = true
		}
	}
}

// setChain records the first-parent chain (given newest first) and the
// ignored commits on it.
func (h *History) setChain(newestFirst []plumbing.Hash, ignore []plumbing.Hash) {
	n := len(newestFirst)
	h.Chain = make([]plumbing.Hash, n)
	if len(h.seq) == 0 {
		h.seq = make(map[plumbing.Hash]int, n)
	}
	for i, c := range newestFirst {
		h.Chain[n-1-i] = c
		h.seq[c] = n - 1 - i
	}
	h.SetIgnoreRevs(ignore)
}

// request asks the reader for a version of a slot: the file at path has
// blob from walk index idx (newest first) back to the next request.
type request struct {
	slot int
	path string
	blob plumbing.Hash
	idx  int
}

// slotState is what the walk last saw of a slot.
type slotState struct {
	path string
	blob plumbing.Hash
	seen bool
}

// Build reads the history of the changelog and/or the master configs from
// the repository, in three stages (builder): one first-parent walk notes
// each tracked file's versions; each version is read once and cut into
// blocks; then the chain, the versions oldest first and the events are
// put together.
func Build(ctx context.Context, r *gitscan.Repo, o Options) (*History, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	h := newHistory(ctx, r, o)
	if len(o.Keys) > 0 && o.Parts == PartRecipes {
		err := h.buildKeys(ctx, r, o)
		if !errors.Is(err, errKeyNotAtHead) {
			return h, err
		}
		o.Keys = nil // a key not at Head: every recipe's history
		h = newHistory(ctx, r, o)
	}
	b := newBuilder(h, r, o)
	walkErr := make(chan error, 1)
	go func() {
		defer close(b.reqs)
		walkErr <- b.walk(ctx)
	}()
	err := b.read(ctx)
	for range b.reqs { // unblock the walk when reading stopped early
	}
	if werr := <-walkErr; err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	if err := b.finish(); err != nil {
		return nil, err
	}
	return h, nil
}

// builder holds what the stages of Build share.
type builder struct {
	h       *History
	r       *gitscan.Repo
	o       Options
	layouts [][]string
	paths   []string // the changelog, then every layout's master files
	nfiles  int      // the master files of the largest layout
	sp      *splitter

	// the walk's, written by its goroutine until reqs is closed
	reqs  chan request
	chain []plumbing.Hash       // newest first
	metas []*gitscan.CommitMeta // chain's, when the walk decodes them
	fork  int                   // the seq in Base where the walk stopped (-1: none)

	// the reading's: per slot (the changelog, then each master file)
	readings []*reading
	lastCuts []lastCut // each file's version read last
}

func newBuilder(h *History, r *gitscan.Repo, o Options) *builder {
	b := &builder{h: h, r: r, o: o, layouts: h.settings.MasterCandidates(), paths: []string{h.ChangelogPath},
		sp: newSplitter(), reqs: make(chan request, 1<<12), fork: -1}
	for _, l := range b.layouts {
		b.paths = append(b.paths, l...)
		b.nfiles = max(b.nfiles, len(l))
	}
	if o.Base != nil {
		b.sp.seed(o.Base)
	}
	b.sp.nextID = max(b.sp.nextID, o.FirstBlockID)
	b.readings = make([]*reading, 1+b.nfiles)
	b.readings[0] = newReading(listFile)
	for i := 1; i <= b.nfiles; i++ {
		b.readings[i] = newReading(mapFile)
	}
	b.lastCuts = make([]lastCut, len(b.readings))
	for i := range b.lastCuts {
		b.lastCuts[i].lent = true // read through ScanStreams
	}
	return b
}

func (b *builder) progress(stage string, done, total int) {
	if b.o.Progress != nil {
		b.o.Progress(Progress{Stage: stage, Done: done, Total: total})
	}
}

// walk is stage 1: one first-parent walk, newest first, notes the blob of
// every tracked path per commit. Every change of a file is handed at once
// to the reading (reqs), which reads and cuts that version on another
// goroutine (a version is stored in the pack as a delta of the next newer
// one, so newest first is also the cheap order to read them in).
func (b *builder) walk(ctx context.Context) error {
	state := make([]slotState, 1+b.nfiles)
	var tracked map[int]bool // with Options.Keys: the master files followed
	note := func(sl int, path string, blob plumbing.Hash) {
		st := &state[sl]
		if !st.seen || st.path != path || st.blob != blob {
			*st = slotState{path, blob, true}
			b.reqs <- request{sl, path, blob, len(b.chain) - 1}
		}
	}
	// a whole history (an audit, an index) needs most commits'
	// metadata: it is decoded from the objects the walk reads anyway
	walk := gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: b.o.Head, Meta: len(b.o.Keys) == 0,
		Progress: func(n int) { b.progress("walk", n, 0) }}, Paths: b.paths}
	return b.r.Track(ctx, walk, func(st gitscan.Step) error {
		if b.o.Base != nil {
			if sq, ok := b.o.Base.seq[st.Hash]; ok {
				b.fork = sq
				return gitscan.ErrStop
			}
		}
		b.chain = append(b.chain, st.Hash)
		b.metas = append(b.metas, st.Meta)
		if b.o.Parts.Has(PartChangelog) {
			p := b.h.ChangelogPath
			if st.Blobs[0].IsZero() {
				p = ""
			}
			note(0, p, st.Blobs[0])
		}
		if !b.o.Parts.Has(PartRecipes) {
			return nil
		}
		files := selectLayout(b.layouts, st.Blobs[1:])
		if len(b.o.Keys) > 0 && tracked == nil {
			var err error
			tracked, err = b.h.keyFiles(b.r, newSplitter(), files, b.o.Keys)
			if errors.Is(err, errKeyNotAtHead) {
				// every file is followed: only every recipe's history
				// says whether the key existed before
				for i := 0; i < b.nfiles; i++ {
					tracked[i] = true
				}
			} else if err != nil {
				return err
			}
		}
		for i := 0; i < b.nfiles; i++ {
			if tracked != nil && !tracked[i] {
				continue
			}
			var f cfgFile
			if i < len(files) && !files[i].Blob.IsZero() {
				f = files[i]
			}
			note(1+i, f.Path, f.Blob)
		}
		return nil
	})
}

// read is stage 2: it reads each version once, cuts it into blocks and
// turns the version read before it (newer) into a delta; new changelog
// entries are parsed on the other cores meanwhile.
func (b *builder) read(ctx context.Context) error {
	parse := make(chan *block, 1024)
	var parsers sync.WaitGroup
	for w := 1; w < runtime.GOMAXPROCS(0); w++ {
		parsers.Add(1)
		go func() {
			defer parsers.Done()
			for bl := range parse {
				bl.info()
			}
		}()
	}
	defer func() {
		close(parse)
		parsers.Wait()
	}()
	b.sp.onNew = func(bl *block) {
		if bl.kind == listFile {
			select {
			case parse <- bl:
			default: // parsers busy: loadAll takes it
			}
		}
	}
	var cur request
	done := 0
	return b.r.ScanStreams(ctx, func() (plumbing.Hash, int, bool) {
		for q := range b.reqs {
			if q.blob.IsZero() {
				b.take(q, nil) // the file is absent: no read
				continue
			}
			if b.reuse(q) {
				continue
			}
			cur = q
			return q.blob, q.slot, true
		}
		return plumbing.ZeroHash, 0, false
	}, func(_ plumbing.Hash, _ int, data []byte) error {
		b.take(cur, data)
		done++
		if done&31 == 0 {
			b.progress("read", done, 0)
		}
		return nil
	})
}

// take records a version read (data nil: the file is absent).
func (b *builder) take(q request, data []byte) {
	if q.idx == 0 && data != nil {
		b.h.keepHead(q.blob, data, true)
	}
	v := version{Seq: q.idx, Path: q.path, Blob: q.blob}
	var list []*block
	if !q.blob.IsZero() {
		var err error
		whole := b.lastCuts[q.slot].data == nil // cut whole: its spans' lines are the version's
		check := changelog.CheckSize
		if b.readings[q.slot].s.kind != listFile { // a master config
			check = changelog.CheckConfigSize
		}
		if err = check(q.path, len(data)); err != nil {
			v.Err = err.Error() // the previous version stands for it
		} else if list, err = b.sp.blocksAfter(&b.lastCuts[q.slot], data, b.readings[q.slot].s.kind); err != nil {
			v.Err = err.Error()
		} else if q.idx == 0 && q.slot == 0 && whole && len(b.lastCuts[0].spans) == len(list) {
			lines := make([]int, len(list))
			for i, sp := range b.lastCuts[0].spans {
				lines[i] = sp.line
			}
			b.h.mu.Lock()
			b.h.headLines, b.h.headLinesBlob = lines, q.blob
			b.h.mu.Unlock()
		}
	}
	b.readings[q.slot].add(v, list)
}

// reuse takes a file version that is the one at Base's head without
// reading it: its blocks are Base's (one new commit changes one or two of
// the files).
func (b *builder) reuse(q request) bool {
	var old *slot
	switch {
	case b.o.Base == nil:
	case q.slot == 0:
		old = b.o.Base.cl
	case q.slot-1 < len(b.o.Base.cfg):
		old = b.o.Base.cfg[q.slot-1]
	}
	if old == nil || len(old.vers) == 0 {
		return false
	}
	last := old.vers[len(old.vers)-1]
	if last.Err != "" || last.Blob != q.blob || last.Path != q.path {
		return false
	}
	list, _ := old.listAt(last.Seq)
	b.readings[q.slot].add(version{Seq: q.idx, Path: q.path, Blob: q.blob}, list)
	return true
}

// finish is stage 3: the chain, the versions oldest first, then the
// events.
func (b *builder) finish() error {
	h := b.h
	h.mu.Lock()
	for i, m := range b.metas {
		if m != nil {
			if h.walked == nil {
				h.walked = make(map[plumbing.Hash]*gitscan.CommitMeta, len(b.metas))
			}
			h.walked[b.chain[i]] = m
		}
	}
	h.mu.Unlock()
	b.sp.loadAll(runtime.GOMAXPROCS(0), listFile) // recipes load on demand

	var base *History
	if b.fork >= 0 {
		base = b.o.Base
		h.adopt(base, b.fork)
	}
	h.setChain(append(b.chain, reversed(h.Chain)...), b.o.IgnoreRevs)
	if b.o.Parts.Has(PartChangelog) {
		var old *slot
		if base != nil {
			old = base.cl
		}
		h.cl = b.finishSlot(0, old)
		if err := h.buildLineages(); err != nil {
			return err
		}
	}
	if b.o.Parts.Has(PartRecipes) {
		for i := 1; i <= b.nfiles; i++ {
			var old *slot
			if base != nil && i-1 < len(base.cfg) {
				old = base.cfg[i-1]
			}
			h.cfg = append(h.cfg, b.finishSlot(i, old))
		}
		if base != nil && b.fork == len(base.Chain)-1 && base.lastTouched != nil && len(base.cfg) == b.nfiles {
			h.resumeRecipes(base, b.fork) // base's recipe history, and the versions above it
		} else {
			h.buildRecipes()
		}
	}
	return nil
}

// finishSlot puts together the versions of slot i, above those of old
// (Base's) up to the fork.
func (b *builder) finishSlot(i int, old *slot) *slot {
	var baseList []*block
	var kept []version
	if old != nil {
		baseList, _ = old.listAt(b.fork)
		for _, v := range old.vers {
			if v.Seq <= b.fork {
				kept = append(kept, v)
			}
		}
	}
	sl := b.readings[i].finish(len(b.chain), b.fork+1, baseList)
	// the walk notes every file at the first commit it reads: when the
	// file is as it was at fork, that is no new version (an update
	// would add one per file, and a note again for a changelog that
	// does not load, which a build from the root does not)
	if k := len(kept); k > 0 && len(sl.vers) > 0 {
		if x, y := &kept[k-1], &sl.vers[0]; x.Blob == y.Blob && x.Path == y.Path && x.Err == y.Err {
			sl.vers = sl.vers[1:]
		}
	}
	sl.vers = append(kept, sl.vers...)
	return sl
}

func reversed(s []plumbing.Hash) []plumbing.Hash {
	out := make([]plumbing.Hash, len(s))
	for i, c := range s {
		out[len(s)-1-i] = c
	}
	return out
}

// adopt takes over what base knows up to seq fork: its chain, commit
// metadata and rename decisions (the versions are taken in Build).
func (h *History) adopt(base *History, fork int) {
	h.Chain = append([]plumbing.Hash(nil), base.Chain[:fork+1]...)
	base.mu.Lock()
	if len(h.meta) == 0 {
		h.meta = make(map[plumbing.Hash]*CommitInfo, len(base.meta))
	}
	for c, ci := range base.meta {
		if sq, ok := base.seq[c]; ok && sq <= fork {
			h.meta[c] = ci
		}
	}
	base.mu.Unlock()
	for sq, r := range base.renames {
		if sq <= fork {
			h.renames[sq] = r
		}
	}
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

// commitInfo reads a commit's metadata; the PR comes from its subject,
// else from the resolver.
func commitInfo(ctx context.Context, r *gitscan.Repo, c plumbing.Hash, prs PRResolver) (*CommitInfo, error) {
	gc, err := r.Commit(c)
	if err != nil {
		return nil, err
	}
	// copies: the originals would keep the whole commit message alive
	return infoOf(ctx, c, &gitscan.CommitMeta{Author: strings.Clone(gc.Author), Email: strings.Clone(gc.Email), When: gc.When,
		Subject: strings.Clone(gc.Subject())}, prs), nil
}

// infoOf is the CommitInfo of commit c with metadata m: its PR is the one
// the subject names, else the one prs finds (asked only now, for a commit
// the history needs).
func infoOf(ctx context.Context, c plumbing.Hash, m *gitscan.CommitMeta, prs PRResolver) *CommitInfo {
	ci := &CommitInfo{Hash: c, Author: m.Author, Email: m.Email, Date: m.When, Subject: m.Subject}
	if n, ok := gitscan.PRFromSubject(m.Subject); ok {
		ci.PR, ci.PRSource = n, "subject"
	} else if prs != nil {
		if n, ok := prs.PR(ctx, c); ok {
			ci.PR, ci.PRSource = n, "github"
		}
	}
	return ci
}
