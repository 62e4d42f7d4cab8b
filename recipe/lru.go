package recipe

import (
	"container/list"
	"sync"
)

// lru is a small cache that keeps the n entries used last. The dry run's
// caches of parsed scripts are by content: over a history, hundreds of
// versions of a 2,000-line helper pass through them, and only the last
// few are asked for again.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	n     int
	order *list.List // of *lruItem, most recent first
	items map[K]*list.Element
}

type lruItem[K comparable, V any] struct {
	k K
	v V
}

func newLRU[K comparable, V any](n int) *lru[K, V] {
	return &lru[K, V]{n: n, order: list.New(), items: map[K]*list.Element{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruItem[K, V]).v, true
	}
	var zero V
	return zero, false
}

func (c *lru[K, V]) put(k K, v V) {
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

// each calls fn for every entry (under the lock: fn must not use c).
func (c *lru[K, V]) each(fn func(K, V)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.order.Front(); e != nil; e = e.Next() {
		it := e.Value.(*lruItem[K, V])
		fn(it.k, it.v)
	}
}
