package lru

import (
	"slices"
	"testing"
)

// TestEvictsLeastRecentlyUsed: a full cache drops the entry used least
// lately, where a Get counts as a use and a Put of a present key updates it.
func TestEvictsLeastRecentlyUsed(t *testing.T) {
	c := New[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get(a) = %d, %v", v, ok)
	}
	c.Put("c", 3) // b is the least recent
	if _, ok := c.Get("b"); ok {
		t.Error("b was not evicted")
	}
	c.Put("a", 10)
	var keys []string
	c.Each(func(k string, v int) { keys = append(keys, k) })
	if want := []string{"a", "c"}; !slices.Equal(keys, want) {
		t.Errorf("entries %v, want %v (most recent first)", keys, want)
	}
	if v, _ := c.Get("a"); v != 10 {
		t.Errorf("a = %d after its update, want 10", v)
	}
}
