package gitscan

import (
	"context"
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// TrackOptions configures Track.
type TrackOptions struct {
	WalkOptions
	// Paths are the files to follow, each independently.
	Paths []string
}

// Validate checks the options.
func (o *TrackOptions) Validate() error {
	if err := o.WalkOptions.Validate(); err != nil {
		return err
	}
	if len(o.Paths) == 0 {
		return errors.New("track: no paths")
	}
	return nil
}

// Step is one commit of a Track walk.
type Step struct {
	Node
	// Blobs holds the blob of each tracked path at this commit, in the
	// order of TrackOptions.Paths; the zero hash when the path is absent
	// (or not a regular file).
	Blobs []plumbing.Hash
}

// Track walks first-parent history like FirstParent and reports the blob
// of every tracked path at each commit. It compares tree entry hashes level
// by level and reuses the previous commit's answer below an unchanged
// directory, so a commit that leaves a path's directory alone costs one root
// tree read, whatever the depth. It never diffs trees and never reads blobs
// (see ScanBlobs). The Blobs slice is reused between calls.
func (r *Repo) Track(ctx context.Context, o TrackOptions, fn func(Step) error) error {
	if err := o.Validate(); err != nil {
		return err
	}
	res := make([]*pathMemo, len(o.Paths))
	for i, p := range o.Paths {
		res[i] = newPathMemo(p)
	}
	blobs := make([]plumbing.Hash, len(o.Paths))
	return r.FirstParent(ctx, o.WalkOptions, func(n Node) error {
		for i, m := range res {
			h, err := m.resolve(r, n.Tree)
			if err != nil {
				return err
			}
			blobs[i] = h
		}
		return fn(Step{Node: n, Blobs: blobs})
	})
}

// pathMemo resolves one path below successive root trees, remembering the
// tree hash seen at each level and what it resolved to.
type pathMemo struct {
	parts []string
	trees []plumbing.Hash // trees[i]: the directory searched for parts[i]
	found []treeEntry     // found[i]: what parts[i] was in trees[i]
	depth int             // levels of trees/found that are valid
}

func newPathMemo(p string) *pathMemo {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return &pathMemo{parts: parts, trees: make([]plumbing.Hash, len(parts)), found: make([]treeEntry, len(parts))}
}

func (m *pathMemo) resolve(r *Repo, root plumbing.Hash) (plumbing.Hash, error) {
	tree := root
	for i, name := range m.parts {
		if i < m.depth && m.trees[i] == tree {
			if i == len(m.parts)-1 || m.found[i].mode&modeMask != modeDir {
				return m.result(i), nil
			}
			tree = m.found[i].hash
			continue
		}
		data, err := r.readTree(tree)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		e, ok, err := findTreeEntry(data, name)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		m.trees[i], m.depth = tree, i+1
		if !ok {
			m.found[i] = treeEntry{}
			return plumbing.ZeroHash, nil
		}
		m.found[i] = e
		if i == len(m.parts)-1 || e.mode&modeMask != modeDir {
			return m.result(i), nil
		}
		tree = e.hash
	}
	return plumbing.ZeroHash, nil
}

// result is the answer when level i ended the lookup.
func (m *pathMemo) result(i int) plumbing.Hash {
	e := m.found[i]
	if i == len(m.parts)-1 && e.mode&modeMask == modeFile {
		return e.hash
	}
	return plumbing.ZeroHash
}
