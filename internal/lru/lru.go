// Package lru is a small least-recently-used cache, safe for concurrent
// use.
//
// Dependencies: the standard library only.
package lru

import (
	"container/list"
	"sync"
)

// Cache keeps the n entries used last. The dry run's caches of parsed
// scripts are by content: over a history, hundreds of versions of a
// 2,000-line helper pass through them, and only the last few are asked for
// again.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	n     int
	order *list.List // of *lruItem, most recent first
	items map[K]*list.Element
}

type lruItem[K comparable, V any] struct {
	k K
	v V
}

// New returns a cache of n entries.
func New[K comparable, V any](n int) *Cache[K, V] {
	return &Cache[K, V]{n: n, order: list.New(), items: map[K]*list.Element{}}
}

// Get returns k's value and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruItem[K, V]).v, true
	}
	var zero V
	return zero, false
}

// Put sets k's value, evicting the entry used least lately when full.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		e.Value.(*lruItem[K, V]).v = v
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruItem[K, V]{k, v})
	for c.order.Len() > c.n {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruItem[K, V]).k)
	}
}

// Each calls fn for every entry, most recent first (under the lock: fn
// must not use c).
func (c *Cache[K, V]) Each(fn func(K, V)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Front(); e != nil; e = e.Next() {
		it := e.Value.(*lruItem[K, V])
		fn(it.k, it.v)
	}
}
