package provenance

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/recipe"
)

// EvChangelog marks a log item where only the changelog named the key.
const EvChangelog EventKind = "changelog"

// FieldChange is one field change in a log. JSON names are a contract.
type FieldChange struct {
	Kind    config.ChangeKind `json:"kind"`
	Path    string            `json:"path"`
	OldPath string            `json:"old_path,omitempty"`
	Old     string            `json:"old,omitempty"`
	New     string            `json:"new,omitempty"`
	// Reach says which of the recipe's points the change reaches: "all
	// points", "only tp8 dpa 8k1k" (a launch field of one configuration),
	// "only tp8 8k1k row" (a search-space row's field); "" when unknown.
	Reach string `json:"reach,omitempty"`
	// NotKnownFrom, on a launch field, is the first commit of a stretch
	// in which the points' launch was not known: the change was made at
	// one of the commits from it to this one, not necessarily this one.
	NotKnownFrom string `json:"not_known_from,omitempty"`
}

// LogEntry is a changelog entry a commit added or edited.
type LogEntry struct {
	Event       EventKind `json:"event"`
	ConfigKeys  []string  `json:"config_keys"`
	Description []string  `json:"description"`
	PRLink      string    `json:"pr_link"`
}

// LogItem is one commit of a key's history.
type LogItem struct {
	CommitRef
	// Key is the recipe's key at this commit; From its previous key for a
	// rename.
	Key  string    `json:"key"`
	Kind EventKind `json:"kind"`
	From string    `json:"from,omitempty"`
	// Changes are the field changes (none for a changelog-only item).
	Changes []FieldChange `json:"changes"`
	// Entries are the changelog entries this commit added or edited that
	// name the key.
	Entries []LogEntry `json:"entries"`
	// MissingEntry is set when the recipe changed and no changelog entry
	// of this commit names it.
	MissingEntry bool `json:"missing_entry"`

	seq int
}

// LogOptions filters a log.
type LogOptions struct {
	// Rev is the newest commit considered (zero: Head).
	Rev plumbing.Hash
	// After excludes it and everything older (zero: none excluded).
	After plumbing.Hash
	// Since and Until bound commit dates (zero: unbounded).
	Since, Until time.Time
	// Path keeps field changes matching it (see PathMatch); items left
	// without changes are dropped, changelog-only items too.
	Path string
	// OldestFirst orders the items oldest first.
	OldestFirst bool
	// Launches are the key's launch versions (History.Launches): their
	// changes are listed under the commits that made them, whichever file
	// they touched (kind "launch" where the config did not change).
	Launches []LaunchVersion
}

// Log lists a recipe key's field-level history, newest first: every
// commit that created, changed, renamed or deleted it, with its field
// changes, and the changelog entries of that commit that name it (or the
// fact that none does); commits whose changelog entries name the key
// while the recipe did not change are listed too (kind "changelog").
func (h *History) Log(key string, o LogOptions) ([]LogItem, error) {
	seq, err := h.seqOf(o.Rev)
	if err != nil {
		return nil, err
	}
	after := -1
	if !o.After.IsZero() {
		if after, err = h.seqOf(o.After); err != nil {
			return nil, err
		}
	}
	tl := h.keyTimeline(key, seq)
	if len(tl) == 0 {
		if h.recipeValueAt(key, seq) == nil && !h.everNamed(key) {
			return nil, h.unknownKey(key, seq)
		}
	}
	names := map[string]bool{key: true}
	for _, e := range tl {
		names[e.Key] = true
	}
	bySeq := map[int]*LogItem{}
	var items []*LogItem
	for _, e := range tl {
		if e.Seq <= after {
			continue
		}
		it := &LogItem{Key: e.Key, Kind: e.Kind, From: e.From, Changes: []FieldChange{}, Entries: []LogEntry{}}
		if e.Diff != nil {
			now := h.recipeValueAt(e.Key, e.Seq)
			var before *config.Recipe
			if e.Seq > 0 {
				before = h.recipeValueAt(e.Key, e.Seq-1)
			}
			for _, c := range e.Diff.Changes {
				for _, fc := range filterChange(c, o.Path) {
					if fc.Reach = reach(fc.Path, now); fc.Reach == "" && fc.Kind == config.Removed {
						fc.Reach = reach(fc.Path, before)
					}
					it.Changes = append(it.Changes, fc)
				}
			}
		}
		if o.Path != "" && len(it.Changes) == 0 {
			continue
		}
		bySeq[e.Seq] = it
		items = append(items, it)
		it.Entries = h.entriesNaming(e.Seq, names)
		it.MissingEntry = len(it.Entries) == 0 && e.Kind != EvDeleted
		setSeq(it, e.Seq)
	}
	steps := launchSteps(o.Launches, o.Path)
	for i := range o.Launches {
		v := &o.Launches[i]
		if v.Seq > seq || v.Seq <= after {
			continue
		}
		chs := steps[i]
		if len(chs) == 0 {
			continue
		}
		it := bySeq[v.Seq]
		if it == nil {
			it = &LogItem{Key: v.Key, Kind: EvLaunch, Changes: []FieldChange{}, Entries: h.entriesNaming(v.Seq, names)}
			// a change of the runner's variables alone (paths, caches,
			// the workflow's constants) is no entry's to tell
			it.MissingEntry = len(it.Entries) == 0 && slices.ContainsFunc(chs, func(c FieldChange) bool { return !recipe.RunnerField(c.Path) })
			setSeq(it, v.Seq)
			bySeq[v.Seq] = it
			items = append(items, it)
		}
		it.Changes = append(it.Changes, chs...)
	}
	if o.Path == "" {
		for _, sq := range h.entrySeqs() {
			if sq > seq || sq <= after || bySeq[sq] != nil {
				continue
			}
			if es := h.entriesNaming(sq, names); len(es) > 0 {
				it := &LogItem{Key: key, Kind: EvChangelog, Changes: []FieldChange{}, Entries: es}
				setSeq(it, sq)
				items = append(items, it)
			}
		}
	}
	var out []LogItem
	for _, it := range items {
		ref, err := h.Ref(it.seq)
		if err != nil {
			return nil, err
		}
		it.CommitRef = *ref
		out = append(out, *it)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq > out[j].seq })
	return FilterLog(out, o), nil
}

// FilterLog keeps the items of a log (newest first, one per commit) that
// o's dates allow, in o's order. It applies a whole log's stored answer
// (LaunchState.Log) to Since, Until and OldestFirst; Path and After need
// the history (Log).
//
// It also reads the log in one path vocabulary (oneVocabulary): a commit
// that changed no field (it only moved fields between the layouts of the
// recipe schema, or reformatted the recipe), and named the key in no
// changelog entry, is left out; one that did name it in an entry is a
// changelog-only item.
func FilterLog(items []LogItem, o LogOptions) []LogItem {
	var out []LogItem
	for _, it := range items {
		if (!o.Since.IsZero() && it.Date.Before(o.Since)) || (!o.Until.IsZero() && it.Date.After(o.Until)) {
			continue
		}
		it.Changes = oneVocabulary(it.Changes)
		if len(it.Changes) == 0 && it.Kind == EvChanged {
			if len(it.Entries) == 0 {
				continue // a layout change alone
			}
			it.Kind, it.MissingEntry = EvChangelog, false
		}
		out = append(out, it)
	}
	if o.OldestFirst {
		// the commits' order reversed; items of one commit keep theirs
		var runs [][]LogItem
		for i := 0; i < len(out); {
			j := i + 1
			for j < len(out) && out[j].Commit == out[i].Commit {
				j++
			}
			runs = append(runs, out[i:j])
			i = j
		}
		slices.Reverse(runs)
		out = slices.Concat(runs...)
	}
	return out
}

func setSeq(it *LogItem, sq int) { it.seq = sq }

// oneVocabulary writes field changes in today's layout
// (config.CanonicalPath) and drops what is then no change: a field
// removed from the old layout and added to the new with its value, a
// value "changed" to itself, a move between the layouts ("(was ...)").
func oneVocabulary(fcs []FieldChange) []FieldChange {
	if len(fcs) == 0 {
		return fcs
	}
	type leaf struct{ path, value string }
	removed, added := map[leaf]int{}, map[leaf]int{}
	out := make([]FieldChange, 0, len(fcs))
	for _, fc := range fcs {
		fc.Path = config.CanonicalPath(fc.Path)
		if fc.OldPath != "" && config.CanonicalPath(fc.OldPath) == fc.Path {
			fc.OldPath = ""
		}
		switch fc.Kind {
		case config.Changed:
			if fc.Old == fc.New && fc.OldPath == "" {
				continue
			}
		case config.Removed:
			removed[leaf{fc.Path, fc.Old}]++
		case config.Added:
			added[leaf{fc.Path, fc.New}]++
		}
		out = append(out, fc)
	}
	return slices.DeleteFunc(out, func(fc FieldChange) bool {
		var l leaf
		switch fc.Kind {
		case config.Removed:
			l = leaf{fc.Path, fc.Old}
		case config.Added:
			l = leaf{fc.Path, fc.New}
		default:
			return false
		}
		return removed[l] > 0 && added[l] > 0
	})
}

// filterChange returns c when it matches the path filter; an added or
// removed subtree holding matching fields gives those fields instead.
func filterChange(c config.Change, filter string) []FieldChange {
	fc := FieldChange{Kind: c.Kind, Path: c.Path, Old: c.Old, New: c.New}
	if c.OldPath != c.Path {
		fc.OldPath = c.OldPath
	}
	filter = config.CanonicalPath(filter)
	if filter == "" || (PathMatch(filter, config.CanonicalPath(c.Path)) && (strings.Contains(filter, "*") || config.HasPathPrefix(config.CanonicalPath(c.Path), filter))) {
		return []FieldChange{fc}
	}
	if c.Kind == config.Changed {
		return nil
	}
	var out []FieldChange
	for _, f := range c.Leaves() {
		if !PathMatch(filter, config.CanonicalPath(f.Path)) {
			continue
		}
		sub := FieldChange{Kind: c.Kind, Path: f.Path}
		if c.Kind == config.Removed {
			sub.Old = f.Value
		} else {
			sub.New = f.Value
		}
		out = append(out, sub)
	}
	return out
}

// everNamed reports whether a changelog entry ever named key itself. A
// glob does not count: it stands for keys that exist, and a misspelt key
// matches globs too ("dsr1-fp4-mi355x-sglng" matches dsr1*), which would
// give it a history of other keys' entries instead of "did you mean".
func (h *History) everNamed(key string) bool {
	for _, l := range h.Lineages {
		for _, e := range l.Events {
			if slices.Contains(e.Keys, key) {
				return true
			}
		}
	}
	return false
}

// entrySeqs lists the seqs at which changelog entries were added or
// edited, ascending.
func (h *History) entrySeqs() []int {
	h.entryIdxOnce.Do(h.indexEntries)
	return h.entrySeqList
}

func (h *History) indexEntries() {
	h.entryAt = map[int][]Event{}
	for _, l := range h.Lineages {
		for _, e := range l.Events {
			switch e.Kind {
			case EvIntroduced, EvEdited, EvReadded:
				if _, ok := h.entryAt[e.Seq]; !ok {
					h.entrySeqList = append(h.entrySeqList, e.Seq)
				}
				h.entryAt[e.Seq] = append(h.entryAt[e.Seq], e)
			}
		}
	}
	sort.Ints(h.entrySeqList)
}

// NamedBy returns the changelog entries added or edited at seq that name
// one of the keys ("" keys are ignored).
func (h *History) NamedBy(seq int, keys ...string) []LogEntry {
	names := map[string]bool{}
	for _, k := range keys {
		if k != "" {
			names[k] = true
		}
	}
	return h.entriesNaming(seq, names)
}

// entriesNaming returns the entries added or edited at seq that name one
// of the keys.
func (h *History) entriesNaming(seq int, keys map[string]bool) []LogEntry {
	h.entryIdxOnce.Do(h.indexEntries)
	out := []LogEntry{}
	for _, e := range h.entryAt[seq] {
		for k := range keys {
			if KeysIn(e.Keys, k) {
				out = append(out, LogEntry{Event: e.Kind, ConfigKeys: e.Keys, Description: e.Description, PRLink: e.PRLink})
				break
			}
		}
	}
	return out
}

// DiffReport is the outcome of KeyDiff.
type DiffReport struct {
	Key   string    `json:"key"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	Items []LogItem `json:"items"`
	// Net is the difference between the recipe at From and at To.
	Net []FieldChange `json:"net"`
}

// KeyDiff lists, oldest first, every field change and changelog entry
// touching a key in from..to (from excluded), and the net difference: the
// short list to read before re-running a benchmark to bisect a regression.
//
// launches (History.Launches up to to, or nil) add what the recipe's
// points launch: its changes among the items, its net change in Net.
func (h *History) KeyDiff(key string, from, to plumbing.Hash, launches []LaunchVersion) (*DiffReport, error) {
	fs, err := h.seqOf(from)
	if err != nil {
		return nil, err
	}
	ts, err := h.seqOf(to)
	if err != nil {
		return nil, err
	}
	items, err := h.Log(key, LogOptions{Rev: to, After: from, OldestFirst: true, Launches: launches})
	if err != nil {
		return nil, err
	}
	rep := &DiffReport{Key: key, From: h.Chain[fs].String(), To: h.Chain[ts].String(), Items: items, Net: []FieldChange{}}
	// the key may have had another name at from
	oldKey := key
	for _, e := range h.keyTimeline(key, ts) {
		if e.Seq > fs && e.Kind == EvRenamed && e.From != "" {
			oldKey = e.From
		}
	}
	a, b := h.recipeValueAt(oldKey, fs), h.recipeValueAt(key, ts)
	for _, c := range config.Diff(a, b).Changes {
		fc := FieldChange{Kind: c.Kind, Path: c.Path, Old: c.Old, New: c.New, Reach: reach(c.Path, b)}
		if fc.Reach == "" {
			fc.Reach = reach(c.Path, a)
		}
		if c.OldPath != c.Path {
			fc.OldPath = c.OldPath
		}
		rep.Net = append(rep.Net, fc)
	}
	rep.Net = oneVocabulary(rep.Net)
	if launches != nil {
		rep.Net = append(rep.Net, netLaunchChanges(launchAt(launches, fs), launchAt(launches, ts), "")...)
	}
	return rep, nil
}
