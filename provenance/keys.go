package provenance

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/gitscan"
)

// buildKeys builds the history of a few recipe keys (Options.Keys),
// newest first and lazily: it reads a master config version only when the
// walk crosses a change of a file holding one of the keys, and stops at
// the commit where the last key (or the key it was renamed from) appears.
// Keys created recently cost a short walk; the answers are those of the
// full build, restricted to the files holding the keys at Head.
func (h *History) buildKeys(ctx context.Context, r *gitscan.Repo, o Options) error {
	layouts := h.settings.MasterCandidates()
	var all []string // every layout's paths, for the walk
	for _, l := range layouts {
		all = append(all, l...)
	}
	sp := newSplitter()
	read := func(files []cfgFile) (map[string]placedIn, []string, error) {
		recipes := map[string]placedIn{}
		var order []string
		for _, f := range files {
			if f.Blob.IsZero() {
				continue
			}
			var items []placed
			var serr error
			err := r.ScanBlobs(ctx, []plumbing.Hash{f.Blob}, func(_ plumbing.Hash, data []byte) error {
				items, serr = sp.split(data, mapFile)
				if errors.Is(serr, errNoSplit) {
					items, serr = wholeFile(data, mapFile)
				}
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
			if serr != nil {
				return nil, nil, serr
			}
			for _, it := range items {
				if _, dup := recipes[it.b.key]; !dup {
					order = append(order, it.b.key)
				}
				recipes[it.b.key] = placedIn{it, f.Path}
			}
		}
		return recipes, order, nil
	}

	type ver struct {
		start   plumbing.Hash // the version holds from this commit on
		files   []cfgFile
		invalid string
		recipes map[string]placedIn
		order   []string
	}
	var vers []*ver           // newest first
	tracked := map[int]bool{} // index into a layout of the files followed
	interest := map[string]bool{}
	for _, k := range o.Keys {
		interest[k] = true
	}
	var chain []plumbing.Hash // newest first
	var cur *ver
	walk := gitscan.TrackOptions{WalkOptions: gitscan.WalkOptions{From: o.Head}, Paths: all}
	err := r.Track(ctx, walk, func(st gitscan.Step) error {
		files := selectLayout(layouts, st.Blobs)
		if cur == nil {
			// at Head: find the files holding the keys
			var err error
			if tracked, h.headKeys, err = keyFiles(r, sp, files, o.Keys); err != nil {
				return err
			}
			if len(tracked) == 0 {
				chain = append(chain, st.Hash) // unknown keys: Head alone
				return gitscan.ErrStop
			}
		}
		var sel []cfgFile
		for i, f := range files {
			if tracked[i] {
				sel = append(sel, f)
			}
		}
		if cur != nil && sameFiles(cur.files, sel) {
			chain = append(chain, st.Hash)
			cur.start = st.Hash
			return nil
		}
		v := &ver{start: st.Hash, files: sel}
		rec, order, err := read(sel)
		if err != nil {
			v.invalid = err.Error()
			if cur != nil { // carried forward: the newer version stands
				rec, order = cur.recipes, cur.order
			}
		}
		v.recipes, v.order = rec, order
		if cur != nil {
			// keys of the newer version that this older one lacks were
			// created (or renamed) at cur.start
			var gone []string
			for _, k := range v.order {
				if _, ok := cur.recipes[k]; !ok {
					gone = append(gone, k)
				}
			}
			for k := range interest {
				if _, ok := v.recipes[k]; ok {
					continue
				}
				delete(interest, k)
				if old, ok := pairRenames(gone, []string{k}, func(g string) *block { return v.recipes[g].b },
					func(c string) *block { return cur.recipes[c].b })[k]; ok {
					interest[old] = true
				}
			}
			if len(interest) == 0 {
				return gitscan.ErrStop // cur is where the last key began
			}
		}
		chain = append(chain, st.Hash)
		vers = append(vers, v)
		cur = v
		return nil
	})
	if err != nil {
		return err
	}
	n := len(chain)
	h.Chain = make([]plumbing.Hash, n)
	for i, c := range chain {
		h.Chain[n-1-i] = c
		h.seq[c] = n - 1 - i
	}
	h.ignore = map[int]bool{}
	for _, c := range o.IgnoreRevs {
		if sq, ok := h.seq[c]; ok {
			h.ignore[sq] = true
		}
	}
	for i := len(vers) - 1; i >= 0; i-- {
		v := vers[i]
		cv := cfgVersion{Seq: h.seq[v.start], Files: v.files, recipes: v.recipes, order: v.order}
		if v.invalid != "" {
			cv.Invalid = true
			h.Notes = append(h.Notes, Note{Seq: cv.Seq, Commit: v.start, Path: filesText(v.files), Message: "does not load: " + v.invalid})
		}
		h.cfgVersions = append(h.cfgVersions, cv)
	}
	h.buildRecipes()
	return nil
}

// keyFiles reads the master config files of a commit and returns the
// indexes of those holding one of keys, and every key in load order.
func keyFiles(r *gitscan.Repo, sp *splitter, files []cfgFile, keys []string) (map[int]bool, []string, error) {
	tracked := map[int]bool{}
	var order []string
	seen := map[string]bool{}
	for i, f := range files {
		if f.Blob.IsZero() {
			continue
		}
		data, err := r.ReadBlob(f.Blob)
		if err != nil {
			return nil, nil, err
		}
		items, err := sp.split(data, mapFile)
		if errors.Is(err, errNoSplit) {
			items, err = wholeFile(data, mapFile)
		}
		if err != nil {
			continue // judged where the version is read
		}
		for _, it := range items {
			if !seen[it.b.key] {
				seen[it.b.key] = true
				order = append(order, it.b.key)
			}
			for _, k := range keys {
				if it.b.key == k {
					tracked[i] = true
				}
			}
		}
	}
	return tracked, order, nil
}

func filesText(fs []cfgFile) string {
	var ps []string
	for _, f := range fs {
		ps = append(ps, f.Path)
	}
	return strings.Join(ps, ", ")
}
