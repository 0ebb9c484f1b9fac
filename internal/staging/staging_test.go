package staging

import (
	"bytes"
	"sync"
	"testing"
)

// The pool hands out free buffers before it makes new ones, never makes
// more than Max at once, stops at the first buffer it cannot make, makes
// none once closed, and Close returns exactly the free ones.
func TestPool(t *testing.T) {
	p := &Pool[int]{Max: 3}
	next := 0
	mk := func() (int, bool) { next++; return next, true }
	if got := p.Get(2, mk); len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("Get(2) = %v, want [1 2]", got)
	}
	if got := p.Get(5, mk); len(got) != 1 || got[0] != 3 {
		t.Fatalf("Get(5) over a budget of 3 = %v, want [3]", got)
	}
	if got := p.Get(1, mk); len(got) != 0 {
		t.Fatalf("Get with the budget used = %v, want none", got)
	}
	p.Put([]int{2, 3})
	if got := p.Get(1, mk); len(got) != 1 || got[0] != 3 {
		t.Fatalf("Get after Put = %v, want the last given back, [3]", got)
	}
	if live, made := p.Counts(); live != 3 || made != 3 {
		t.Fatalf("Counts = %d, %d, want 3, 3", live, made)
	}
	if free := p.Close(); len(free) != 1 || free[0] != 2 {
		t.Fatalf("Close = %v, want the one free buffer [2]", free)
	}
	if got := p.Get(1, mk); len(got) != 0 {
		t.Fatalf("Get after Close = %v, want none", got)
	}
	if live, _ := p.Counts(); live != 2 {
		t.Fatalf("live after Close = %d, want the 2 still out", live)
	}

	q := &Pool[int]{Max: 10}
	calls := 0
	failAt2 := func() (int, bool) { calls++; return calls, calls < 2 }
	if got := q.Get(5, failAt2); len(got) != 1 || calls != 2 {
		t.Fatalf("Get stopping at a failed make = %v after %d calls, want [1] after 2", got, calls)
	}
}

// ParallelCopy copies every byte, for sizes around its split points, from
// several goroutines at once.
func TestParallelCopy(t *testing.T) {
	var wg sync.WaitGroup
	for _, n := range []int{0, 1, 1<<20 - 1, 1 << 20, 3<<20 + 7, 16<<20 + 1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*7 + i>>20)
			}
			dst := make([]byte, n)
			ParallelCopy(dst, src)
			if !bytes.Equal(dst, src) {
				t.Errorf("ParallelCopy of %d bytes changed the data", n)
			}
		}()
	}
	wg.Wait()
}
