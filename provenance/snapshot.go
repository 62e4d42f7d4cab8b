package provenance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
)

// Snapshot is the persistent form of a History: what Build reads from git
// (the chain with its commits, the distinct blocks, every tracked file's
// versions as deltas, the rename decisions). Everything else (lineages,
// events, verdicts) is recomputed from it by Restore, with the same code
// as a build from git, so answers from an index equal answers without one.
type Snapshot struct {
	Head               SnapHash
	Changelog, Recipes bool
	// From is the seq of the first commit: 0 for a whole snapshot, else
	// the snapshot is a part (see SnapshotAbove).
	From    int
	Commits []SnapCommit // the chain from From, oldest first (Seq = From + index)
	Blocks  []SnapBlock
	Slots   []SnapSlot // the changelog first (when built), then the master config files
	Renames []SnapRename
	// Raw and Touched are what the replay of the master config versions
	// found (see History.buildRecipes): every recipe key's changes, by seq
	// then key, and the last seq that touched each key, by key. They
	// follow from the versions; restoring them spares a history restored
	// from an index, and an update extending one, the replay of every
	// version (the tests hold them to a replay).
	Raw     []SnapRaw
	Touched []SnapTouched
}

// SnapRaw is a change of a recipe key as the replay saw it: Old and B are
// block IDs (-1: none), B the recipe after the change, Old the gone key's
// recipe of a rename.
type SnapRaw struct {
	Key      string
	Kind     EventKind
	Seq      int
	From, To string
	File     string
	Old, B   int
}

// SnapTouched is the last seq whose versions touched a recipe key.
type SnapTouched struct {
	Key string
	Seq int
}

// SnapCommit is a commit of the chain with its metadata.
type SnapCommit struct {
	Hash     SnapHash
	Author   string
	Email    string
	Date     time.Time
	Subject  string
	PR       int
	PRSource string
}

// SnapBlock is a distinct top-level item of a tracked file. Text may be
// left empty when restoring (RestoreOptions.Text fetches it on demand);
// Hash identifies it. A changelog block carries what lineages need, so
// restoring parses nothing.
type SnapBlock struct {
	ID          int
	Recipe      bool // a recipe of a master config (else a changelog entry)
	Key         string
	Hash        SnapDigest
	Text        string
	Identity    string
	PRLink      string
	ConfigKeys  []string
	Description []string
	Err         string // why a changelog entry does not load
}

// SnapSlot is one tracked file's versions, oldest first.
type SnapSlot struct {
	Recipe   bool
	Versions []SnapVersion
}

// SnapVersion is a version as a delta (see version).
type SnapVersion struct {
	Seq  int
	Path string
	Blob SnapHash
	Err  string
	P, S int
	Mid  []int // block IDs
	// Note is why a changelog version does not load ("" when it does).
	Note string
	// Written pairs block IDs with the seq of the unloadable version the
	// entry was written in (-1: none), for entries new in this version.
	Written []int
}

// SnapHash is a git object id in a snapshot, and SnapDigest a block's
// digest (the index stores them as byte strings; see its snapwire.go).
type (
	SnapHash   plumbing.Hash
	SnapDigest [16]byte
)

func (h SnapHash) String() string { return plumbing.Hash(h).String() }

// SnapRename is a rename decided at a commit; one with neither key says
// that keys came and went there and none was renamed.
type SnapRename struct {
	Seq      int
	From, To string
}

// Snapshot returns the persistent form of the history. It reads the
// metadata of every commit of the chain.
func (h *History) Snapshot() (*Snapshot, error) { return h.SnapshotAbove(-1, -1) }

// SnapshotAbove returns the part of the persistent form above seq fork:
// the commits, versions and renames above it, and the blocks with IDs
// above lastBlock those versions use. Appended to a snapshot of the
// history up to fork whose blocks end at lastBlock (MergeSnapshots), it
// makes the snapshot of the whole history: an index stores what a commit
// adds, not the history again.
func (h *History) SnapshotAbove(fork, lastBlock int) (*Snapshot, error) {
	s := &Snapshot{Head: SnapHash(h.Head), Changelog: h.cl != nil, Recipes: len(h.cfg) > 0, From: fork + 1}
	for sq := fork + 1; sq < len(h.Chain); sq++ {
		ci, err := h.CommitAt(sq)
		if err != nil {
			return nil, err
		}
		s.Commits = append(s.Commits, SnapCommit{Hash: SnapHash(ci.Hash), Author: ci.Author, Email: ci.Email, Date: ci.Date,
			Subject: ci.Subject, PR: ci.PR, PRSource: ci.PRSource})
	}
	seen := map[*block]bool{}
	addSlot := func(sl *slot) {
		ss := SnapSlot{Recipe: sl.kind == mapFile}
		for _, v := range sl.vers {
			if v.Seq <= fork {
				continue
			}
			sv := SnapVersion{Seq: v.Seq, Path: v.Path, Blob: SnapHash(v.Blob), Err: v.Err, P: int(v.P), S: int(v.S), Note: v.note}
			for _, id := range slices.Sorted(maps.Keys(v.written)) {
				sv.Written = append(sv.Written, id, v.written[id])
			}
			for _, b := range v.Mid {
				sv.Mid = append(sv.Mid, b.id)
				if b.id > lastBlock && !seen[b] {
					seen[b] = true
					s.Blocks = append(s.Blocks, snapBlock(b))
				}
			}
			ss.Versions = append(ss.Versions, sv)
		}
		s.Slots = append(s.Slots, ss)
	}
	if h.cl != nil {
		addSlot(h.cl)
	}
	for _, sl := range h.cfg {
		addSlot(sl)
	}
	sort.Slice(s.Blocks, func(i, j int) bool { return s.Blocks[i].ID < s.Blocks[j].ID })
	for sq, r := range h.renames {
		if sq <= fork {
			continue
		}
		if len(r) == 0 { // decided: no renames at sq
			s.Renames = append(s.Renames, SnapRename{Seq: sq})
		}
		for to, from := range r {
			s.Renames = append(s.Renames, SnapRename{Seq: sq, From: from, To: to})
		}
	}
	sort.Slice(s.Renames, func(i, j int) bool {
		a, b := s.Renames[i], s.Renames[j]
		return a.Seq < b.Seq || a.Seq == b.Seq && a.To < b.To
	})
	if len(h.cfg) > 0 {
		s.Raw, s.Touched = h.snapRaw(fork)
	}
	return s, nil
}

// snapRaw takes the recipe keys' changes above fork, and the keys touched
// there.
func (h *History) snapRaw(fork int) ([]SnapRaw, []SnapTouched) {
	id := func(b *block) int {
		if b == nil {
			return -1
		}
		return b.id
	}
	var raw []SnapRaw
	for k, kh := range h.Keys {
		for _, r := range kh.raw {
			if r.seq > fork {
				raw = append(raw, SnapRaw{Key: k, Kind: r.kind, Seq: r.seq, From: r.from, To: r.to, File: r.file, Old: id(r.old), B: id(r.b)})
			}
		}
	}
	slices.SortFunc(raw, func(a, b SnapRaw) int {
		if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	var touched []SnapTouched
	for k, sq := range h.lastTouched {
		if sq > fork {
			touched = append(touched, SnapTouched{k, sq})
		}
	}
	slices.SortFunc(touched, func(a, b SnapTouched) int { return strings.Compare(a.Key, b.Key) })
	return raw, touched
}

// MergeSnapshots appends parts (see SnapshotAbove) to a whole snapshot, in
// order; each must begin where the ones before end. whole is extended in
// place and returned.
func MergeSnapshots(whole *Snapshot, parts ...*Snapshot) (*Snapshot, error) {
	if whole.From != 0 {
		return nil, fmt.Errorf("%w: the first part begins at seq %d", ErrSnapshot, whole.From)
	}
	for _, p := range parts {
		if p.From != len(whole.Commits) || p.Changelog != whole.Changelog || p.Recipes != whole.Recipes {
			return nil, fmt.Errorf("%w: a part from seq %d follows %d commits", ErrSnapshot, p.From, len(whole.Commits))
		}
		if len(p.Blocks) > 0 && len(whole.Blocks) > 0 && p.Blocks[0].ID <= whole.Blocks[len(whole.Blocks)-1].ID {
			return nil, fmt.Errorf("%w: the part from seq %d repeats block %d", ErrSnapshot, p.From, p.Blocks[0].ID)
		}
		if len(p.Slots) < len(whole.Slots) {
			return nil, fmt.Errorf("%w: the part from seq %d has %d files, not %d", ErrSnapshot, p.From, len(p.Slots), len(whole.Slots))
		}
		whole.Head = p.Head
		whole.Commits = append(whole.Commits, p.Commits...)
		whole.Blocks = append(whole.Blocks, p.Blocks...)
		whole.Renames = append(whole.Renames, p.Renames...)
		whole.Raw = append(whole.Raw, p.Raw...)
		whole.Touched = mergeTouched(whole.Touched, p.Touched)
		for i, sl := range p.Slots {
			if i == len(whole.Slots) {
				whole.Slots = append(whole.Slots, SnapSlot{Recipe: sl.Recipe})
			}
			if whole.Slots[i].Recipe != sl.Recipe {
				return nil, fmt.Errorf("%w: file %d of the part from seq %d is of another kind", ErrSnapshot, i, p.From)
			}
			whole.Slots[i].Versions = append(whole.Slots[i].Versions, sl.Versions...)
		}
	}
	return whole, nil
}

// mergeTouched is a with b's keys replacing a's, sorted by key as both.
func mergeTouched(a, b []SnapTouched) []SnapTouched {
	if len(b) == 0 {
		return a
	}
	out := make([]SnapTouched, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0].Key < b[0].Key:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0].Key < a[0].Key:
			out, b = append(out, b[0]), b[1:]
		default: // the same key: the later part's
			out, a, b = append(out, b[0]), a[1:], b[1:]
		}
	}
	return out
}

func snapBlock(b *block) SnapBlock {
	sb := SnapBlock{ID: b.id, Recipe: b.kind == mapFile, Key: b.key, Text: b.text, Hash: b.hash}
	if b.text != "" {
		sb.Hash = textHash([]byte(b.text))
	}
	if b.kind == listFile {
		in := b.info()
		sb.Identity, sb.PRLink, sb.ConfigKeys, sb.Description = in.identity, in.prLink, in.keys, in.description
		if err := b.failed(); err != nil {
			sb.Err = err.Error()
		}
	}
	return sb
}

// RestoreOptions configures Restore.
type RestoreOptions struct {
	Settings   *config.Settings
	IgnoreRevs []plumbing.Hash
	// Text fetches the text of a block restored without it.
	Text func(id int) (string, error)
	// ReadBlob reads a file version (lines at a revision, texts of
	// versions that do not load).
	ReadBlob func(plumbing.Hash) ([]byte, error)
	// PRs resolves the PR of commits whose subject names none, for
	// commits the snapshot does not know (a later Build with this Base).
	PRs PRResolver
	// BaseOnly restores the history only as the Base of a Build: its
	// chain, commits, versions and renames. Lineages and recipe events
	// are not derived (the Build derives its own from the versions), so
	// the History must not be used otherwise.
	BaseOnly bool
}

// ErrSnapshot marks a snapshot that does not hold together.
var ErrSnapshot = errors.New("inconsistent snapshot")

// Restore rebuilds a History from a whole snapshot (see Snapshot).
func Restore(ctx context.Context, s *Snapshot, o RestoreOptions) (*History, error) {
	if s.From != 0 {
		return nil, fmt.Errorf("%w: a part from seq %d is not a whole snapshot", ErrSnapshot, s.From)
	}
	// sized and allocated at once: an index update restores the whole
	// history in a fresh process, where every page of growth faults
	h := &History{Head: plumbing.Hash(s.Head), seq: make(map[plumbing.Hash]int, len(s.Commits)), Keys: map[string]*KeyHistory{},
		ChangelogPath: o.Settings.ChangelogPath(), meta: make(map[plumbing.Hash]*CommitInfo, len(s.Commits)), settings: o.Settings,
		renames: map[int]map[string]string{}, memo: config.NewMemo()}
	if o.ReadBlob != nil {
		// one reader at a time, as for a built History: the repository's
		// reader is not safe for concurrent use, and an index writing its
		// query tables reads lines for the audit and the recipes at once
		h.readBlob = func(b plumbing.Hash) ([]byte, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			return o.ReadBlob(b)
		}
	}
	h.load = func(c plumbing.Hash) (*CommitInfo, error) {
		return nil, fmt.Errorf("%w: commit %s has no metadata", ErrSnapshot, c)
	}
	chain := make([]plumbing.Hash, len(s.Commits))
	infos := make([]CommitInfo, len(s.Commits))
	for i, c := range s.Commits {
		chain[len(chain)-1-i] = plumbing.Hash(c.Hash)
		infos[i] = CommitInfo{Hash: plumbing.Hash(c.Hash), Author: c.Author, Email: c.Email, Date: c.Date,
			Subject: c.Subject, PR: c.PR, PRSource: c.PRSource}
		h.meta[plumbing.Hash(c.Hash)] = &infos[i]
	}
	h.setChain(chain, o.IgnoreRevs)
	if len(h.Chain) > 0 && h.Chain[len(h.Chain)-1] != plumbing.Hash(s.Head) {
		return nil, fmt.Errorf("%w: head %s is not the last commit", ErrSnapshot, s.Head)
	}
	blocks := make(map[int]*block, len(s.Blocks))
	ch := newChunks()
	all := make([]block, len(s.Blocks))
	for i, sb := range s.Blocks {
		b := &all[i]
		b.id, b.text, b.key, b.hash, b.src, b.kind = sb.ID, sb.Text, sb.Key, sb.Hash, o.Text, listFile
		if sb.Recipe {
			b.kind, b.chunks = mapFile, ch
		} else {
			b.known = true
			if sb.Err != "" {
				b.knowErr = errors.New(sb.Err)
			}
			in := &entryInfo{identity: sb.Identity, prLink: sb.PRLink, keys: sb.ConfigKeys, description: sb.Description}
			b.entryOnce.Do(func() { b.entry = in })
		}
		blocks[sb.ID] = b
	}
	for si, ss := range s.Slots {
		sl := &slot{kind: listFile, vers: make([]version, 0, len(ss.Versions))}
		if ss.Recipe {
			sl.kind = mapFile
		}
		for _, sv := range ss.Versions {
			if sv.Seq < 0 || sv.Seq >= len(h.Chain) {
				return nil, fmt.Errorf("%w: version at seq %d of a %d-commit chain", ErrSnapshot, sv.Seq, len(h.Chain))
			}
			v := version{Seq: sv.Seq, Path: sv.Path, Blob: plumbing.Hash(sv.Blob), Err: sv.Err, P: int32(sv.P), S: int32(sv.S),
				note: sv.Note, noted: !ss.Recipe}
			if len(sv.Written)%2 != 0 {
				return nil, fmt.Errorf("%w: version at seq %d has an odd written list", ErrSnapshot, sv.Seq)
			}
			for i := 0; i < len(sv.Written); i += 2 {
				if v.written == nil {
					v.written = map[int]int{}
				}
				v.written[sv.Written[i]] = sv.Written[i+1]
			}
			if len(sv.Mid) > 0 {
				v.Mid = make([]*block, 0, len(sv.Mid))
			}
			for _, id := range sv.Mid {
				b, ok := blocks[id]
				if !ok {
					return nil, fmt.Errorf("%w: slot %d version %d names block %d", ErrSnapshot, si, sv.Seq, id)
				}
				v.Mid = append(v.Mid, b)
			}
			sl.vers = append(sl.vers, v)
		}
		if err := checkSlot(sl); err != nil {
			return nil, err
		}
		if ss.Recipe {
			h.cfg = append(h.cfg, sl)
		} else {
			h.cl = sl
		}
	}
	for _, r := range s.Renames {
		if h.renames[r.Seq] == nil {
			h.renames[r.Seq] = map[string]string{}
		}
		if r.To != "" { // else the decision that nothing was renamed
			h.renames[r.Seq][r.To] = r.From
		}
	}
	if len(h.cfg) > 0 {
		if err := h.restoreRecipes(s, blocks); err != nil {
			return nil, err
		}
	}
	if o.BaseOnly {
		return h, ctx.Err()
	}
	if h.cl != nil {
		if err := h.buildLineages(); err != nil {
			return nil, err
		}
	}
	if len(h.cfg) > 0 {
		// (after the changelog's notes, as a build has them)
		h.Notes = append(h.Notes, h.configNotes()...)
	}
	return h, ctx.Err()
}

// restoreRecipes takes the recipe keys' changes from the snapshot (see
// Snapshot.Raw) instead of replaying the versions.
func (h *History) restoreRecipes(s *Snapshot, blocks map[int]*block) error {
	at := func(id int) (*block, error) {
		if id < 0 {
			return nil, nil
		}
		b, ok := blocks[id]
		if !ok || b.kind != mapFile {
			return nil, fmt.Errorf("%w: a recipe change names block %d", ErrSnapshot, id)
		}
		return b, nil
	}
	last := -1
	for _, r := range s.Raw {
		if r.Seq < last || r.Seq < 0 || r.Seq >= len(h.Chain) {
			return fmt.Errorf("%w: a recipe change at seq %d", ErrSnapshot, r.Seq)
		}
		last = r.Seq
		old, err := at(r.Old)
		if err != nil {
			return err
		}
		b, err := at(r.B)
		if err != nil {
			return err
		}
		kh := h.keyHistory(r.Key)
		kh.raw = append(kh.raw, rawEvent{kind: r.Kind, seq: r.Seq, from: r.From, to: r.To, file: r.File, old: old, b: b})
	}
	h.lastTouched = make(map[string]int, len(s.Touched))
	for _, t := range s.Touched {
		h.lastTouched[t.Key] = t.Seq
	}
	return nil // (the state at head is made when asked for: stateAt)
}

// checkSlot verifies that a slot's deltas apply: a corrupt index must not
// crash perflog or give wrong answers.
func checkSlot(sl *slot) error {
	n := 0
	prev := -1
	for _, v := range sl.vers {
		if v.Seq <= prev {
			return fmt.Errorf("%w: versions out of order at seq %d", ErrSnapshot, v.Seq)
		}
		prev = v.Seq
		if v.Err != "" {
			continue
		}
		if v.P < 0 || v.S < 0 || int(v.P)+int(v.S) > n {
			return fmt.Errorf("%w: the delta at seq %d keeps %d+%d of %d blocks", ErrSnapshot, v.Seq, v.P, v.S, n)
		}
		n = int(v.P) + len(v.Mid) + int(v.S)
	}
	return nil
}
