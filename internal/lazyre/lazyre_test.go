package lazyre

import (
	"sync"
	"testing"
)

func TestNew(t *testing.T) {
	re := New(`^a(b+)$`)
	first := re()
	if m := first.FindStringSubmatch("abbb"); len(m) != 2 || m[1] != "bbb" {
		t.Fatalf("match = %q", m)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if re() != first {
				t.Error("compiled more than once")
			}
		}()
	}
	wg.Wait()
}

func TestInvalidPatternPanicsOnFirstUse(t *testing.T) {
	re := New(`(`) // must not panic here
	defer func() {
		if recover() == nil {
			t.Fatal("an invalid pattern did not panic on first use")
		}
	}()
	re()
}
