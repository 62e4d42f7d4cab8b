package provenance

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

// buildKeys builds the history of a few recipe keys (Options.Keys),
// newest first: it reads a version of a master config file holding one of
// the keys only when the walk crosses a change of it, and stops at the
// commit where the last key (or the key it was renamed from) appears. A
// key created recently costs a short walk; the events are those of the
// full build, restricted to the files holding the keys at Head.
func (h *History) buildKeys(ctx context.Context, r *gitscan.Repo, o Options) error {
	layouts := h.settings.MasterCandidates()
	var all []string // every layout's paths, for the walk
	nfiles := 0
	for _, l := range layouts {
		all = append(all, l...)
		nfiles = max(nfiles, len(l))
	}
	sp := newSplitter()
	readings := make([]*reading, nfiles)
	for i := range readings {
		readings[i] = newReading(mapFile)
	}
	state := make([]slotState, nfiles)
	lastCuts := make([]lastCut, nfiles) // each file's version read last
	lists := make([][]*block, nfiles)   // the newest list read per slot
	interest := map[string]bool{}
	for _, k := range o.Keys {
		interest[k] = true
	}
	var tracked map[int]bool
	var chain []plumbing.Hash // newest first
	walk := gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: o.Head}, Paths: all}
	err := r.Track(ctx, walk, func(st gitscan.Step) error {
		files := selectLayout(layouts, st.Blobs)
		if tracked == nil {
			// at Head: find the files holding the keys
			var err error
			if tracked, err = h.keyFiles(r, sp, files, o.Keys); err != nil {
				return err // (errKeyNotAtHead: Build reads every recipe's history)
			}
		}
		// read the tracked files this commit changed
		type change struct {
			slot int
			v    version
			list []*block
		}
		var changes []change
		for i := 0; i < nfiles; i++ {
			if !tracked[i] {
				continue
			}
			var f cfgFile
			if i < len(files) && !files[i].Blob.IsZero() {
				f = files[i]
			}
			if s := state[i]; s.seen && s.path == f.Path && s.blob == f.Blob {
				continue
			}
			state[i] = slotState{f.Path, f.Blob, true}
			c := change{slot: i, v: version{Seq: len(chain), Path: f.Path, Blob: f.Blob}}
			if !f.Blob.IsZero() {
				cut := func(_ plumbing.Hash, data []byte) error {
					var err error
					if c.list, err = sp.blocksAfter(&lastCuts[i], data, mapFile); err != nil {
						c.v.Err = err.Error()
					}
					return nil
				}
				var err error
				if data, ok := h.headBlob(f.Blob); ok {
					err = cut(f.Blob, data) // read by keyFiles
				} else {
					err = r.ScanBlobs(ctx, []plumbing.Hash{f.Blob}, cut)
				}
				if err != nil {
					return err
				}
			}
			changes = append(changes, c)
		}
		if len(changes) > 0 && len(chain) > 0 {
			// the keys of the newer commit that this one lacks were
			// created (or renamed) by the newer commit
			olderLists := append([][]*block(nil), lists...)
			for _, c := range changes {
				if c.v.Err == "" {
					olderLists[c.slot] = c.list
				}
			}
			h.followKeys(interest, lists, olderLists)
			if len(interest) == 0 {
				return gitscan.ErrStop // every key began at the newer commit
			}
		}
		for _, c := range changes {
			readings[c.slot].add(c.v, c.list)
			if c.v.Err == "" {
				lists[c.slot] = c.list
			}
		}
		chain = append(chain, st.Hash)
		return nil
	})
	if err != nil {
		return err
	}
	h.setChain(chain, o.IgnoreRevs)
	for _, rd := range readings {
		h.cfg = append(h.cfg, rd.finish(len(chain), 0, nil))
	}
	h.buildRecipes()
	return nil
}

// followKeys updates the keys of interest from a newer commit's lists to
// its parent's: a key the parent lacks began at the newer commit, unless
// it was renamed from a key the parent has, which is followed instead.
func (h *History) followKeys(interest map[string]bool, newerLists, olderLists [][]*block) {
	var lost []string
	for k := range interest {
		if !hasKey(olderLists, k) {
			lost = append(lost, k)
		}
	}
	if len(lost) == 0 {
		return // the common case, and cheap: no map of all keys is built
	}
	newer, older := keysOf(newerLists), keysOf(olderLists)
	var gone []string
	for k := range older {
		if _, ok := newer[k]; !ok {
			gone = append(gone, k)
		}
	}
	for _, k := range lost {
		delete(interest, k)
		if old, ok := pairRenames(gone, []string{k}, func(g string) *block { return older[g] },
			func(c string) *block { return newer[c] }, h.memo)[k]; ok {
			interest[old] = true
		}
	}
}

// hasKey reports whether one of the slots' lists holds key.
func hasKey(lists [][]*block, key string) bool {
	for _, l := range lists {
		for _, b := range l {
			if b.key == key {
				return true
			}
		}
	}
	return false
}

// keysOf maps the keys of the slots' lists to their blocks: the first
// slot holding a key wins, and inside a file its last occurrence.
func keysOf(lists [][]*block) map[string]*block {
	m := map[string]*block{}
	for s := len(lists) - 1; s >= 0; s-- {
		seen := map[string]bool{}
		for i := len(lists[s]) - 1; i >= 0; i-- {
			b := lists[s][i]
			if !seen[b.key] {
				seen[b.key] = true
				m[b.key] = b
			}
		}
	}
	return m
}

// keyFiles reads the master config files of a commit and returns the
// positions of those holding one of keys. Their contents are kept (see
// keepHead: the walk's first versions, and line lookups at Head, take
// them from there), and the files in h.headFiles for RecipeKeysAt. A file
// whose text does not contain a key is not cut.
func (h *History) keyFiles(r *gitscan.Repo, sp *splitter, files []cfgFile, keys []string) (map[int]bool, error) {
	tracked := map[int]bool{}
	found := map[string]bool{}
	h.headFiles = files
	for i, f := range files {
		if f.Blob.IsZero() {
			continue
		}
		data, err := r.ReadBlob(f.Blob)
		if err != nil {
			return nil, err
		}
		h.keepHead(f.Blob, data, false)
		if !slices.ContainsFunc(keys, func(k string) bool { return bytes.Contains(data, []byte(k)) }) {
			continue
		}
		bs, err := sp.blocks(data, mapFile)
		if err != nil {
			continue // judged where the version is read
		}
		for _, b := range bs {
			if slices.Contains(keys, b.key) {
				tracked[i], found[b.key] = true, true
			}
		}
	}
	if len(found) < len(keys) {
		return tracked, errKeyNotAtHead
	}
	return tracked, nil
}

// errKeyNotAtHead: a key asked for is not at Head, so the files holding
// it cannot be told from there; only every recipe's history says whether
// it existed before, and what became of it (Build then follows every
// file: the answers are those of a build without Options.Keys).
var errKeyNotAtHead = errors.New("a key is not at Head")

// headKeysOf returns every recipe key of the files at Head, in load order.
func (h *History) headKeysOf(files []cfgFile) []string {
	var lists [][]*block
	sp := newSplitter()
	for _, f := range files {
		if f.Blob.IsZero() {
			continue
		}
		data, err := h.readBlob(f.Blob)
		if err != nil {
			continue
		}
		if bs, err := sp.blocks(data, mapFile); err == nil {
			lists = append(lists, bs)
		}
	}
	return keysInOrder(lists)
}
