package pack

import (
	"container/list"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

type cacheKey struct {
	pack int
	off  int64
}

type cached struct {
	t    plumbing.ObjectType
	data []byte
	// verified: the content hashed to the id it was asked for (a delta
	// base is cached by offset, unverified, until it is asked for by id)
	verified bool
}

// lru is a least-recently-used cache of decoded objects bounded by bytes.
// Evicted buffers that were never handed out for keeping go to onEvict.
//
// A cache given room to grow (room, shared by the caches of one scan)
// doubles its budget, as far as the room allows, whenever an object it
// evicted is asked for again: the versions of a
// file are deltas against versions up to git's delta window (ten by
// default) newer, so a budget that holds fewer versions than that
// decodes the same bases over and over (on a history ten times the
// corpus, whose changelog versions are 4 MB, 26,000 decodes for 8,100
// versions with a fixed 2 MB budget).
type lru struct {
	budget, used int
	room         *int       // the bytes it may still grow by, shared (nil: fixed)
	ghosts       []cacheKey // keys evicted lately, oldest first
	ll           *list.List
	m            map[cacheKey]*list.Element
	onEvict      func([]byte)
}

// maxGhosts bounds the evicted keys a growing cache remembers.
const maxGhosts = 64

type lruItem struct {
	key    cacheKey
	val    cached
	pinned bool // handed to a caller that may keep it
}

func newLRU(budget int, onEvict func([]byte)) *lru {
	return &lru{budget: budget, ll: list.New(), m: map[cacheKey]*list.Element{}, onEvict: onEvict}
}

// verified says whether k's entry was checked against its id.
func (c *lru) verified(k cacheKey) bool {
	e, ok := c.m[k]
	return ok && e.Value.(*lruItem).val.verified
}

// setVerified records that k's entry matched its id.
func (c *lru) setVerified(k cacheKey) {
	if e, ok := c.m[k]; ok {
		e.Value.(*lruItem).val.verified = true
	}
}

// drop forgets k's entry (content that failed its check).
func (c *lru) drop(k cacheKey) {
	if e, ok := c.m[k]; ok {
		c.ll.Remove(e)
		delete(c.m, k)
		c.used -= cap(e.Value.(*lruItem).val.data)
	}
}

func (c *lru) get(k cacheKey) (cached, bool) {
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*lruItem).val, true
	}
	return cached{}, false
}

func (c *lru) pin(k cacheKey) {
	if e, ok := c.m[k]; ok {
		e.Value.(*lruItem).pinned = true
	}
}

// missed notes that k was not cached: an object evicted lately makes a
// growing cache double its budget.
func (c *lru) missed(k cacheKey) {
	if c.room == nil || *c.room <= 0 {
		return
	}
	if i := slices.Index(c.ghosts, k); i >= 0 {
		c.ghosts = slices.Delete(c.ghosts, i, i+1)
		more := min(c.budget, *c.room)
		c.budget += more
		*c.room -= more
	}
}

func (c *lru) trim() {
	for c.used > c.budget && c.ll.Len() > keepNewest {
		e := c.ll.Back()
		it := e.Value.(*lruItem)
		c.ll.Remove(e)
		delete(c.m, it.key)
		if c.room != nil && *c.room > 0 {
			if len(c.ghosts) == maxGhosts {
				c.ghosts = slices.Delete(c.ghosts, 0, 1)
			}
			c.ghosts = append(c.ghosts, it.key)
		}
		c.used -= cap(it.val.data)
		if !it.pinned && c.onEvict != nil {
			c.onEvict(it.val.data)
		}
	}
}

// keepNewest objects stay cached whatever the budget: a file larger than
// the budget (a 10x changelog is 4 MB) is still the base of the version
// read after it.
const keepNewest = 2

func (c *lru) put(k cacheKey, v cached) {
	c.m[k] = c.ll.PushFront(&lruItem{key: k, val: v})
	c.used += cap(v.data)
	c.trim()
}
