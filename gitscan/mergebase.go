package gitscan

import (
	"bytes"
	"container/heap"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"
)

// MergeBase returns the best common ancestor of a and b (the first of them
// when several exist, as `git merge-base` prints). It is git's own
// algorithm (commit.c: paint_down_to_common, remove_redundant), reading
// commits through the pack reader: go-git's decodes every commit of the
// history when a branch is behind its base (docs/dev/performance.md).
// As in git, the boundary commits of a shallow clone have no parents.
func (r *Repo) MergeBase(a, b plumbing.Hash) (plumbing.Hash, error) {
	if a == b {
		return a, nil
	}
	w := &mbWalk{r: r, commits: map[plumbing.Hash]*mbCommit{}, shallow: r.ShallowCommits()}
	bases, err := w.mergeBases(a, b)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("merge-base %s %s: %w", short(a), short(b), err)
	}
	if len(bases) == 0 {
		return plumbing.ZeroHash, fmt.Errorf("%s and %s: %w", short(a), short(b), ErrNoMergeBase)
	}
	return bases[0].h, nil
}

// The marks of a paint: reachable from the first side, from the second,
// below a common ancestor already found, and found.
const (
	mbParent1 = 1 << iota
	mbParent2
	mbStale
	mbResult
)

type mbCommit struct {
	h       plumbing.Hash
	date    int64 // the committer's, as git orders a walk
	parents []plumbing.Hash
	flags   uint8
}

type mbWalk struct {
	r       *Repo
	commits map[plumbing.Hash]*mbCommit
	shallow []plumbing.Hash // sorted
}

func (w *mbWalk) get(h plumbing.Hash) (*mbCommit, error) {
	if c, ok := w.commits[h]; ok {
		return c, nil
	}
	data, rc, err := w.r.readCommit(h)
	if err != nil {
		return nil, err
	}
	c := &mbCommit{h: h, date: committerDate(data), parents: rc.parents}
	if _, ok := slices.BinarySearchFunc(w.shallow, h, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) }); ok {
		c.parents = nil
	}
	w.commits[h] = c
	return c, nil
}

// mergeBases is git's get_merge_bases: the common ancestors of a and b
// that no other one reaches, newest first.
func (w *mbWalk) mergeBases(a, b plumbing.Hash) ([]*mbCommit, error) {
	one, err := w.get(a)
	if err != nil {
		return nil, err
	}
	two, err := w.get(b)
	if err != nil {
		return nil, err
	}
	found, err := w.paint(one, []*mbCommit{two})
	if err != nil {
		return nil, err
	}
	// (found is newest first, and so are its filters below)
	bases := slices.DeleteFunc(found, func(c *mbCommit) bool { return c.flags&mbStale != 0 })
	if len(bases) < 2 {
		return bases, nil
	}
	// several: drop those another one reaches (remove_redundant)
	redundant := make([]bool, len(bases))
	for i := range bases {
		if redundant[i] {
			continue
		}
		var others []*mbCommit
		var at []int
		for j := range bases {
			if j != i && !redundant[j] {
				others, at = append(others, bases[j]), append(at, j)
			}
		}
		w.clear()
		if _, err := w.paint(bases[i], others); err != nil {
			return nil, err
		}
		if bases[i].flags&mbParent2 != 0 {
			redundant[i] = true
		}
		for k, j := range at {
			if others[k].flags&mbParent1 != 0 {
				redundant[j] = true
			}
		}
	}
	var out []*mbCommit
	for i, c := range bases {
		if !redundant[i] {
			out = append(out, c)
		}
	}
	return out, nil
}

// paint marks what one and twos reach, newest commit first, until only
// commits below a common ancestor are left; it returns the common
// ancestors met, newest first.
func (w *mbWalk) paint(one *mbCommit, twos []*mbCommit) ([]*mbCommit, error) {
	q := &mbQueue{}
	one.flags |= mbParent1
	q.put(one)
	for _, t := range twos {
		t.flags |= mbParent2
		q.put(t)
	}
	var found []*mbCommit
	for q.hasNonStale() {
		c := q.get()
		flags := c.flags & (mbParent1 | mbParent2 | mbStale)
		if flags == mbParent1|mbParent2 {
			if c.flags&mbResult == 0 {
				c.flags |= mbResult
				found = insertByDate(found, c)
			}
			flags |= mbStale // what it reaches is not the best
		}
		for _, ph := range c.parents {
			p, err := w.get(ph)
			if err != nil {
				return nil, err
			}
			if p.flags&flags == flags {
				continue
			}
			p.flags |= flags
			q.put(p)
		}
	}
	return found, nil
}

func (w *mbWalk) clear() {
	for _, c := range w.commits {
		c.flags = 0
	}
}

// insertByDate inserts c after the commits as new as it or newer (git's
// commit_list_insert_by_date).
func insertByDate(list []*mbCommit, c *mbCommit) []*mbCommit {
	i := 0
	for i < len(list) && list[i].date >= c.date {
		i++
	}
	return slices.Insert(list, i, c)
}

// committerDate is the timestamp of a commit's committer header (0 when
// it has none or it does not parse, as git reads it).
func committerDate(b []byte) int64 {
	for len(b) > 0 {
		var line []byte
		line, b = cutLine(b)
		if len(line) == 0 {
			break // the message
		}
		rest, ok := bytes.CutPrefix(line, []byte("committer "))
		if !ok {
			continue
		}
		if gt := bytes.LastIndexByte(rest, '>'); gt >= 0 {
			rest = rest[gt+1:]
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		d, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return d
	}
	return 0
}

// mbQueue is git's prio_queue of commits by date: newest first, and in
// the order they were put among equal dates.
type mbQueue struct {
	items []mbItem
	n     int
}

type mbItem struct {
	c   *mbCommit
	seq int
}

func (q *mbQueue) Len() int { return len(q.items) }
func (q *mbQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.c.date != b.c.date {
		return a.c.date > b.c.date
	}
	return a.seq < b.seq
}
func (q *mbQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *mbQueue) Push(x any)    { q.items = append(q.items, x.(mbItem)) }
func (q *mbQueue) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}

func (q *mbQueue) put(c *mbCommit) {
	heap.Push(q, mbItem{c, q.n})
	q.n++
}

func (q *mbQueue) get() *mbCommit { return heap.Pop(q).(mbItem).c }

// hasNonStale reports whether a commit in the queue is not yet known to
// be below a common ancestor (git's queue_has_nonstale).
func (q *mbQueue) hasNonStale() bool {
	for _, it := range q.items {
		if it.c.flags&mbStale == 0 {
			return true
		}
	}
	return false
}
