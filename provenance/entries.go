package provenance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/changelog"
	"github.com/perflog/perflog/internal/xdiff"
)

// EventKind names what happened to a changelog entry (or recipe) at a
// commit. The values are a public contract (JSON, the index): add, never
// rename.
type EventKind string

// Entry events.
const (
	EvIntroduced EventKind = "introduced"      // the content first appeared
	EvPRLink     EventKind = "pr-link-changed" // only the pr-link changed
	EvEdited     EventKind = "edited"          // the content changed in place
	EvRemoved    EventKind = "removed"         // the entry was deleted
	EvReverted   EventKind = "reverted"        // deleted by a revert commit
	EvReadded    EventKind = "re-added"        // identical content came back
)

// Event is one step in an entry's life.
type Event struct {
	Kind EventKind
	Seq  int
	// Identity, PRLink, Keys and Description describe the entry after the
	// event (before it, for a removal).
	Identity    string
	PRLink      string
	Keys        []string
	Description []string
	// From is the pr-link before a pr-link change.
	From string
	// Unloadable is set on an introduction attributed to a commit at which
	// the changelog did not load: the entry's text is in that version and
	// the next loadable one has it.
	Unloadable bool
}

// Lineage is the life of one changelog entry through history: its
// content may be edited and its pr-link corrected, it may be removed and
// come back.
type Lineage struct {
	ID     int
	Events []Event
}

// Last returns the lineage's newest event at or before seq.
func (l *Lineage) Last(seq int) (Event, bool) {
	var out Event
	ok := false
	for _, e := range l.Events {
		if e.Seq > seq {
			break
		}
		out, ok = e, true
	}
	return out, ok
}

// AliveAt reports whether the entry exists at seq.
func (l *Lineage) AliveAt(seq int) bool {
	e, ok := l.Last(seq)
	return ok && e.Kind != EvRemoved && e.Kind != EvReverted
}

// entryInfo is what the history needs of an entry value.
type entryInfo struct {
	identity    string
	prLink      string
	keys        []string
	description []string
}

func (b *block) info() *entryInfo {
	b.entryOnce.Do(func() {
		b.load()
		e := b.ent // nil when the text does not load: read as empty
		b.entry = &entryInfo{
			identity:    e.Identity(),
			prLink:      e.PRLink(),
			keys:        e.Strings(changelog.FieldConfigKeys),
			description: e.Strings(changelog.FieldDescription),
		}
		// the history needs only this; the parsed entry is dropped (the
		// largest part of a long history's memory)
		b.ent = nil
	})
	return b.entry
}

// inst is a live entry while lineages are built.
type inst struct {
	lin *Lineage
	b   *block
}

func (h *History) event(kind EventKind, seq int, b *block) Event {
	in := b.info()
	return Event{Kind: kind, Seq: seq, Identity: in.identity, PRLink: in.prLink, Keys: in.keys, Description: in.description}
}

// writtenIn finds the oldest unloadable version whose text holds every
// config-key and description line of an entry: where the entry was
// written, though the file did not load then. The versions' texts are
// read on first use.
func (h *History) writtenIn(vs []*version, in *entryInfo) (*version, bool) {
	for _, v := range vs {
		if !v.rawRead {
			v.rawRead = true
			if raw, err := h.readBlob(v.Blob); err == nil {
				v.raw = string(raw)
			}
		}
		all := len(in.description) > 0
		for _, s := range append(append([]string(nil), in.keys...), in.description...) {
			if !strings.Contains(v.raw, s) {
				all = false
				break
			}
		}
		if all {
			return v, true
		}
	}
	return nil, false
}

// lineageHints lets buildLineages start its comparison of two versions
// after the blocks the splitter kept; the tests turn it off to compare.
var lineageHints = true

// isRevert reports whether a commit subject is git's revert subject.
func isRevert(subject string) bool { return strings.HasPrefix(subject, `Revert "`) }

// buildLineages walks the changelog versions oldest first and follows
// every entry: entries are matched by content identity (config-keys,
// description and flags; pr-link and formatting ignored) in order, so an
// insertion in the middle, a reformat or a pr-link correction moves no
// entry; what is left between two matches is paired as edits
// (changelog.PairEditsFunc) or is an addition or a removal. An addition whose
// identity was removed before revives that lineage (re-added).
func (h *History) buildLineages() error {
	var live []inst
	dead := map[string][]*Lineage{} // identity → removed lineages, oldest first
	var pending []*version          // versions that do not load since the last one that does
	var r goodReplay                // r.cur: the blocks of the current version
	var invalid []*version          // the versions that did not load before v
	// synced: live holds the blocks cur held before v, so the blocks v kept
	// (its first P and last S) are known to match without comparing them;
	// comparing every block of every version was quadratic in the history
	synced := true
	for i := range h.cl.vers {
		v := &h.cl.vers[i]
		for _, iv := range invalid { // their texts are of no more use
			iv.raw, iv.rawRead = "", false
		}
		invalid = nil
		r.apply(v)
		if !v.noted { // known when restored: computing it reads the version again
			v.note, v.noted = h.versionError(v, r.cur, r.bad), true
		}
		if msg := v.note; msg != "" {
			h.Notes = append(h.Notes, Note{Seq: v.Seq, Commit: h.Chain[v.Seq], Path: h.ChangelogPath, Message: msg})
			pending = append(pending, v)
			synced = false
			continue
		}
		invalid = pending
		pending = nil
		items := r.cur
		// common prefix and suffix of identical blocks
		p, q := 0, 0
		hint := synced && v.Err == "" && lineageHints
		if hint {
			p = min(int(v.P), len(live), len(items))
		}
		for p < len(live) && p < len(items) && live[p].b == items[p] {
			p++
		}
		if hint {
			q = min(int(v.S), len(live)-p, len(items)-p)
		}
		for q < len(live)-p && q < len(items)-p && live[len(live)-1-q].b == items[len(items)-1-q] {
			q++
		}
		synced = true // live is items from here on
		if p == len(live) && p == len(items) {
			continue
		}
		mid := live[p : len(live)-q]
		news := items[p : len(items)-q]
		next := make([]inst, 0, len(news)) // what replaces mid
		oldIDs := make([]string, len(mid))
		for i, in := range mid {
			oldIDs[i] = in.b.info().identity
		}
		newIDs := make([]string, len(news))
		for j, b := range news {
			newIDs[j] = b.info().identity
		}
		// 1. an LCS of identities; 2. equal identities left over anywhere
		// (the file was reordered); 3. edits inside each gap
		// (changelog.PairEditsFunc); what remains was added or removed
		const unset = -1
		from := make([]int, len(news)) // old index a new entry continues
		edited := make([]bool, len(news))
		for j := range from {
			from[j] = unset
		}
		usedOld := make([]bool, len(mid))
		type gap struct{ olds, news []int }
		var gaps []gap
		xdiff.Match(oldIDs, newIDs, func(i, j int) {
			from[j], usedOld[i] = i, true
		}, func(olds, nws []int) { gaps = append(gaps, gap{olds, nws}) })
		if len(gaps) > 0 {
			byID := map[string][]int{}
			for _, g := range gaps {
				for _, i := range g.olds {
					byID[oldIDs[i]] = append(byID[oldIDs[i]], i)
				}
			}
			for _, g := range gaps {
				for _, j := range g.news {
					if is := byID[newIDs[j]]; len(is) > 0 {
						from[j], usedOld[is[0]] = is[0], true
						byID[newIDs[j]] = is[1:]
					}
				}
			}
			for _, g := range gaps {
				var restO, restN []int
				for _, i := range g.olds {
					if !usedOld[i] {
						restO = append(restO, i)
					}
				}
				for _, j := range g.news {
					if from[j] == unset {
						restN = append(restN, j)
					}
				}
				if len(restO) == 0 || len(restN) == 0 {
					continue
				}
				oi := func(k int) *entryInfo { return mid[restO[k]].b.info() }
				ni := func(k int) *entryInfo { return news[restN[k]].info() }
				for _, pr := range changelog.PairEditsFunc(len(restO), len(restN),
					func(a, b int) bool { return slices.Equal(oi(a).keys, ni(b).keys) },
					func(a, b int) bool { return oi(a).prLink != "" && oi(a).prLink == ni(b).prLink },
					func(a, b int) bool { return slices.Equal(oi(a).description, ni(b).description) }) {
					i, j := restO[pr[0]], restN[pr[1]]
					from[j], usedOld[i], edited[j] = i, true, true
				}
			}
		}
		for j, b := range news {
			switch i := from[j]; {
			case i != unset && edited[j]:
				in := mid[i]
				in.lin.Events = append(in.lin.Events, h.event(EvEdited, v.Seq, b))
				next = append(next, inst{in.lin, b})
			case i != unset:
				in := mid[i]
				if a, c := in.b.info(), b.info(); a.prLink != c.prLink {
					e := h.event(EvPRLink, v.Seq, b)
					e.From = a.prLink
					in.lin.Events = append(in.lin.Events, e)
				}
				next = append(next, inst{in.lin, b})
			default:
				id := b.info().identity
				if ds := dead[id]; len(ds) > 0 {
					lin := ds[len(ds)-1]
					dead[id] = ds[:len(ds)-1]
					lin.Events = append(lin.Events, h.event(EvReadded, v.Seq, b))
					next = append(next, inst{lin, b})
					continue
				}
				lin := &Lineage{ID: len(h.Lineages) + 1}
				h.Lineages = append(h.Lineages, lin)
				ev := h.event(EvIntroduced, v.Seq, b)
				if len(invalid) > 0 {
					// decided once per version and block (kept in the
					// snapshot: deciding reads the unloadable versions)
					at, known := v.written[b.id]
					if !known {
						at = -1
						if iv, ok := h.writtenIn(invalid, b.info()); ok {
							at = iv.Seq
						}
						if v.written == nil {
							v.written = map[int]int{}
						}
						v.written[b.id] = at
					}
					if at >= 0 {
						ev.Seq, ev.Unloadable = at, true
					}
				}
				lin.Events = append(lin.Events, ev)
				next = append(next, inst{lin, b})
			}
		}
		var removed []inst
		for i, in := range mid {
			if !usedOld[i] {
				removed = append(removed, in)
			}
		}
		if len(removed) > 0 {
			kind := EvRemoved
			if ci, err := h.CommitAt(v.Seq); err != nil {
				return err
			} else if isRevert(ci.Subject) {
				kind = EvReverted
			}
			for _, in := range removed {
				in.lin.Events = append(in.lin.Events, h.event(kind, v.Seq, in.b))
				id := in.b.info().identity
				dead[id] = append(dead[id], in.lin)
			}
		}
		live = slices.Replace(live, p, len(live)-q, next...)
	}
	// the entries after the last version, which the audit at Head lists
	// (EntriesAt would replay every version again)
	h.clHead.list, h.clHead.at = r.result()
	h.clHead.ok = true
	return nil
}

// EventsSettledAt returns the seq through which the changelog events of
// h are those of any history that shares its commits through seq fork.
// Mostly fork itself; but an entry that first comes into a version after
// fork is introduced at the oldest version that did not load in the run
// of them before it (Event.Unloadable), and that run may begin at or
// before fork: the events from its first version on can still change.
func (h *History) EventsSettledAt(fork int) int {
	settled := fork
	if h.cl == nil {
		return settled
	}
	for i := len(h.cl.vers) - 1; i >= 0; i-- {
		v := &h.cl.vers[i]
		if v.Seq > fork {
			continue
		}
		if v.noted && v.note == "" {
			break // the newest version at or before fork that loads
		}
		settled = v.Seq - 1
	}
	return settled
}

// EntryAt is one entry of the changelog at a revision with its lineage.
type EntryAt struct {
	Index int // 1-based position in the file
	Line  int
	Lin   *Lineage
	b     *block
	info  *entryInfo
}

// Keys returns the entry's config-keys.
func (e *EntryAt) Keys() []string { return e.info.keys }

// PRLink returns the entry's pr-link.
func (e *EntryAt) PRLink() string { return e.info.prLink }

// Description returns the entry's description bullets.
func (e *EntryAt) Description() []string { return e.info.description }

// EntriesAt lists the entries of the changelog at seq (the newest version
// that loads, at or before seq) and attaches each to its lineage: live
// lineages with the entry's identity, oldest first, in file order.
func (h *History) EntriesAt(seq int) []*EntryAt {
	out, _ := h.entriesAt(seq)
	return out
}

// entriesAt is EntriesAt with the version the entries are of (nil when
// there is none).
func (h *History) entriesAt(seq int) ([]*EntryAt, *version) {
	if h.cl == nil {
		return nil, nil
	}
	var good []*block
	var at *version
	if n := len(h.cl.vers); h.clHead.ok && n > 0 && seq >= h.cl.vers[n-1].Seq {
		good, at = h.clHead.list, h.clHead.at // after the last version
	} else {
		var r goodReplay
		for i := range h.cl.vers {
			if v := &h.cl.vers[i]; v.Seq <= seq {
				r.apply(v)
			}
		}
		good, at = r.result()
	}
	if at == nil || at.Blob.IsZero() {
		return nil, nil
	}
	lines := h.linesOf(at, listFile, len(good))
	byID := map[string][]*Lineage{}
	for _, l := range h.Lineages {
		if e, ok := l.Last(seq); ok && e.Kind != EvRemoved && e.Kind != EvReverted {
			byID[e.Identity] = append(byID[e.Identity], l)
		}
	}
	out := make([]*EntryAt, len(good))
	for i, b := range good {
		in := b.info()
		e := &EntryAt{Index: i + 1, Line: lines[i], b: b, info: in}
		if ls := byID[in.identity]; len(ls) > 0 {
			e.Lin = ls[0]
			byID[in.identity] = ls[1:]
		}
		out[i] = e
	}
	return out, at
}

// goodReplay replays changelog versions to the last one whose entries
// all load (the entries EntriesAt lists).
type goodReplay struct {
	// cur is replayed in place; good is the list of at, the last version
	// whose entries all load (cur itself while goodIsCur; copied before a
	// version with a failing entry changes cur)
	cur, good []*block
	at        *version
	goodIsCur bool
	bad       int // blocks of cur that do not load
}

// apply applies the next version (one that does not cut changes nothing).
func (r *goodReplay) apply(v *version) {
	if v.Err != "" {
		return
	}
	for _, b := range r.cur[v.P : len(r.cur)-int(v.S)] {
		if b.failed() != nil {
			r.bad--
		}
	}
	for _, b := range v.Mid {
		if b.failed() != nil {
			r.bad++
		}
	}
	if r.goodIsCur && r.bad != 0 {
		r.good, r.goodIsCur = slices.Clone(r.cur), false
	}
	r.cur = v.applyInPlace(r.cur)
	if r.bad == 0 {
		r.at, r.goodIsCur = v, true
	}
}

func (r *goodReplay) result() ([]*block, *version) {
	if r.goodIsCur {
		return r.cur, r.at
	}
	return r.good, r.at
}

// linesOf returns the first line of each of the n blocks of a version
// (zeros when the version cannot be read again).
func (h *History) linesOf(v *version, kind fileKind, n int) []int {
	if kind == listFile {
		// the changelog at Head, as Build cut it: not read and cut again
		h.mu.Lock()
		lines, blob := h.headLines, h.headLinesBlob
		h.mu.Unlock()
		if blob == v.Blob && len(lines) == n {
			return slices.Clone(lines)
		}
	}
	out := make([]int, n)
	ps, err := h.placedOf(v.Blob, kind)
	if err != nil || len(ps) != n {
		return out
	}
	for i, p := range ps {
		out[i] = int(p.line)
	}
	return out
}

// placedOf cuts a version read again from git into positioned blocks
// (the last few are kept: blame asks for the same file per key).
func (h *History) placedOf(blob plumbing.Hash, kind fileKind) ([]placed, error) {
	h.mu.Lock()
	if ps, ok := h.placedMemo[blob]; ok {
		h.mu.Unlock()
		return ps, nil
	}
	h.mu.Unlock()
	data, err := h.readBlob(blob)
	if err != nil {
		return nil, err
	}
	ps, err := newSplitter().split(data, kind)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if h.placedMemo == nil || len(h.placedMemo) > 4 {
		h.placedMemo = map[plumbing.Hash][]placed{}
	}
	h.placedMemo[blob] = ps
	h.mu.Unlock()
	return ps, nil
}

// versionError explains why a changelog version cannot be taken ("" when
// it can): it does not cut or load, or one of its entries does not load.
func (h *History) versionError(v *version, cur []*block, bad int) string {
	if v.Err != "" {
		return "does not load: " + v.Err
	}
	if bad == 0 {
		return ""
	}
	lines := h.linesOf(v, listFile, len(cur))
	for i, b := range cur {
		if err := b.failed(); err != nil {
			return fmt.Sprintf("does not load: the entry at line %d: %s", lines[i], shiftLines(err.Error(), lines[i]-1))
		}
	}
	return ""
}

// Introduction returns the event that brought the entry's current content
// at seq: its newest introduced, re-added or edited event, looking through
// edits made by ignored commits.
func (h *History) Introduction(l *Lineage, seq int) (Event, bool) {
	var out Event
	found := false
	for _, e := range l.Events {
		if e.Seq > seq {
			break
		}
		switch e.Kind {
		case EvIntroduced, EvReadded:
			out, found = e, true
		case EvEdited:
			if !h.ignore[e.Seq] || !found {
				out, found = e, true
			}
		}
	}
	return out, found
}

// KeysIn reports whether an entry's config-keys name key, with '*' globs.
func KeysIn(keys []string, key string) bool {
	return slices.ContainsFunc(keys, func(k string) bool {
		if !strings.Contains(k, "*") {
			return k == key
		}
		return globMatch(k, key)
	})
}
