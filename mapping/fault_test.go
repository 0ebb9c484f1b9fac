package mapping

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sortedEntries(tab *Table) []Entry { return sortEntries(tab.Entries()) }

func sortEntries(es []Entry) []Entry {
	slices.SortFunc(es, func(a, b Entry) int {
		switch {
		case a.Host < b.Host:
			return -1
		case a.Host > b.Host:
			return 1
		}
		return 0
	})
	return es
}

// enterScenario builds a table with a present entry p (dynamic 1) and an
// associated entry q, and returns the items of a target region that maps
// three new ranges around them.
func enterScenario(t *testing.T) (*Table, *fakeOps, []Item) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 5000)
	p, q := mem[1000:2000], mem[3000:3500]
	require.NoError(t, tab.Enter(f, []Item{{Host: p, Type: To}}, Dynamic, nil))
	qp, err := f.Alloc(&Item{Host: q}, len(q)) // memory the user owns
	require.NoError(t, err)
	require.NoError(t, tab.Associate(q, qp))
	f.take()
	items := []Item{
		{Host: mem[0:100], Type: ToFrom, Name: "A"},
		{Host: p[10:20], Type: To, Always: true, Name: "p[10:20]"},
		{Host: mem[2500:2600], Type: To, Name: "B"},
		{Host: q, Type: ToFrom, Always: true, Name: "q"},
		{Host: mem[4000:4100], Type: Alloc, Name: "C"},
	}
	return tab, f, items
}

// TestEnterFailureAtomic fails each device operation of a multi-item Enter in
// turn: the table must be exactly as before, and every buffer the call made
// freed.
func TestEnterFailureAtomic(t *testing.T) {
	tab, f, items := enterScenario(t)
	require.NoError(t, tab.Enter(f, items, Structured, make([]device.DevicePtr, len(items))))
	ok := f.take()
	want := []string{"alloc 100 -> 0x102000", "copyin 0x102000 100", "copyin 0x10000a 10",
		"alloc 100 -> 0x103000", "copyin 0x103000 100", "copyin 0x101000 500", "alloc 100 -> 0x104000"}
	require.Equal(t, want, ok, "operations")
	checkConsistent(t, tab, f)

	for n := 1; n <= len(ok); n++ {
		t.Run(fmt.Sprint("fail op ", n), func(t *testing.T) {
			tab, f, items := enterScenario(t)
			before := sortedEntries(tab)
			live := f.live()
			f.failAt = f.calls + n
			err := tab.Enter(f, items, Structured, make([]device.DevicePtr, len(items)))
			require.ErrorIs(t, err, errInjected, "want the injected failure")
			log := f.take()
			require.True(t, strings.HasSuffix(log[n-1], "failed"), "op %d did not fail: %q", n, log)
			// After the failure, only frees of what this call made, newest first.
			var made []string
			for _, l := range log[:n-1] {
				if strings.HasPrefix(l, "alloc") {
					made = append(made, l[strings.Index(l, "-> ")+3:])
				}
			}
			var freed []string
			for _, l := range log[n:] {
				var p string
				var size int
				_, err := fmt.Sscanf(l, "free %s %d", &p, &size)
				require.NoError(t, err, "after the failure: %q is not a free", l)
				require.Equal(t, 100, size, "after the failure: %q", l)
				freed = append(freed, p)
			}
			slices.Reverse(made)
			require.Equal(t, made, freed, "buffers freed (newest first) against those the call made")
			require.Equal(t, before, sortedEntries(tab), "the table changed")
			require.Equal(t, live, f.live(), "live buffers")
			checkConsistent(t, tab, f)
			// The table still works: the same Enter succeeds afterwards.
			f.failAt = 0
			require.NoError(t, tab.Enter(f, items, Structured, nil))
			require.NoError(t, tab.Exit(f, items, Structured))
			require.Equal(t, before, sortedEntries(tab), "entries after a successful enter and exit")
			checkConsistent(t, tab, f)
		})
	}
}

// TestEnterFailureRollbackFreeFails: when a free during the undo fails too,
// both errors are returned and the entry is still removed from the table.
func TestEnterFailureRollbackFreeFails(t *testing.T) {
	f, tab := newFake(), New(dev)
	a, b := make([]byte, 8), make([]byte, 8)
	f.failAt = 2 // the copy in of a
	err := tab.Enter(failFree{f}, []Item{{Host: a, Type: To}, {Host: b, Type: To}}, Structured, nil)
	assert.ErrorIs(t, err, errInjected)
	assert.ErrorContains(t, err, "undoing map of")
	assert.Equal(t, 0, tab.Len(), "entries after a failed enter")
}

type failFree struct{ *fakeOps }

func (failFree) Free(p device.DevicePtr, size int, host []byte) error {
	return errors.New("free refused")
}

// exitScenario maps A (structured 1), P (structured 1, dynamic 1) and C
// (structured 1), and returns the exit items of the structured region.
func exitScenario(t *testing.T) (*Table, *fakeOps, []Item) {
	f, tab := newFake(), New(dev)
	mem := make([]byte, 5000)
	p := mem[1000:2000]
	require.NoError(t, tab.Enter(f, []Item{{Host: p, Type: To}}, Dynamic, nil))
	items := []Item{
		{Host: mem[0:100], Type: ToFrom, Name: "A"},
		{Host: p, Type: From, Always: true, Name: "P"},
		{Host: mem[4000:4100], Type: From, Name: "C"},
	}
	require.NoError(t, tab.Enter(f, items, Structured, nil))
	f.take()
	return tab, f, items
}

// TestExitFailure fails each device operation of a multi-item structured
// Exit in turn. The construct has ended, so nothing could retry: a failed
// copy is reported and the mapping released all the same; a failed free is
// retried once. Either way the table ends as after a successful exit and
// no device memory leaks.
func TestExitFailure(t *testing.T) {
	tab, f, items := exitScenario(t)
	require.NoError(t, tab.Exit(f, items, Structured))
	ok := f.take()
	// Reverse list order (C, P, A), as LLVM's exit.
	want := []string{"copyout 0x102000 100", "copyout 0x100000 1000", "copyout 0x101000 100",
		"free 0x102000 100", "free 0x101000 100"}
	require.Equal(t, want, ok, "operations")

	for n := 1; n <= len(ok); n++ {
		t.Run(fmt.Sprint("fail op ", n), func(t *testing.T) {
			tab, f, items := exitScenario(t)
			before := sortedEntries(tab)
			// What a successful exit leaves: P, with its structured count gone.
			var after []Entry
			for _, e := range before {
				if e.Host == addr(items[1].Host) {
					e.Structured--
					after = append(after, e)
				}
			}
			f.failAt = f.calls + n
			err := tab.Exit(f, items, Structured)
			if n <= 3 { // a copy failed
				require.ErrorIs(t, err, errInjected, "failed copy")
				require.ErrorContains(t, err, "the mapping is released", "failed copy")
			} else {
				require.NoError(t, err, "a free that fails once is retried")
			}
			require.Equal(t, sortEntries(after), sortedEntries(tab), "entries")
			checkConsistent(t, tab, f)
		})
	}
	// A free that keeps failing: the structured exit still releases the
	// mapping, and says the buffer may be lost.
	tab, f, items = exitScenario(t)
	err := tab.Exit(failFree{f}, items, Structured)
	require.ErrorContains(t, err, "failed twice", "free failing twice")
	assert.False(t, tab.IsPresent(items[0].Host), "a structured exit must release A even when its free fails")
	assert.True(t, tab.IsPresent(items[1].Host), "P stays (dynamic count)")
}

// TestDynamicExitFailureKeepsMapping: exit data can be retried by the
// program, so a failed copy leaves the mapping present as before.
func TestDynamicExitFailureKeepsMapping(t *testing.T) {
	f, tab := newFake(), New(dev)
	x := make([]byte, 64)
	require.NoError(t, tab.Enter(f, []Item{{Host: x, Type: To}}, Dynamic, nil))
	f.take()
	f.failAt = f.calls + 1
	err := tab.Exit(f, []Item{{Host: x, Type: From}}, Dynamic)
	require.ErrorIs(t, err, errInjected)
	require.ErrorContains(t, err, "stays present")
	require.True(t, tab.IsPresent(x), "present after the failed exit")
	f.failAt = 0
	require.NoError(t, tab.Exit(f, []Item{{Host: x, Type: From}}, Dynamic))
	assert.False(t, tab.IsPresent(x), "the retried exit did not unmap")
	checkConsistent(t, tab, f)
}

// TestConcurrent runs goroutines that each map their own data and one shared
// range with Enter, check it with Translate, Update and IsPresent, and unmap
// it, while a reader takes snapshots; run it with -race.
func TestConcurrent(t *testing.T) {
	f, tab := newFake(), New(dev)
	shared := make([]byte, 4096)
	const workers, rounds = 8, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	stop := make(chan struct{})
	go func() { // reader
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, e := range tab.Entries() {
				if e.Size <= 0 || (e.Structured == 0 && e.Dynamic == 0) {
					errs <- fmt.Errorf("snapshot has a bad entry %v", e)
					return
				}
			}
			_ = tab.Len()
			_ = tab.IsPresent(shared)
		}
	}()
	wg.Add(1)
	var workersWG sync.WaitGroup
	for w := 0; w < workers; w++ {
		workersWG.Add(1)
		go func() {
			defer workersWG.Done()
			own := make([]byte, 256)
			for r := 0; r < rounds; r++ {
				fill(own, byte(w*16+r))
				items := []Item{{Host: own, Type: ToFrom}, {Host: shared[w*8 : w*8+8], Type: To}}
				ptrs := make([]device.DevicePtr, 2)
				if err := tab.Enter(f, items, Structured, ptrs); err != nil {
					errs <- err
					return
				}
				if p, err := tab.Translate(own[100:200]); err != nil || p != ptrs[0]+100 {
					errs <- fmt.Errorf("translate: %v %v, want %v", p, err, ptrs[0]+100)
					return
				}
				if !tab.IsPresent(shared[w*8 : w*8+1]) {
					errs <- errors.New("shared range not present while mapped")
					return
				}
				if err := tab.Update(f, []Item{{Host: own[:16], Type: From}}); err != nil {
					errs <- err
					return
				}
				if own[0] != byte(w*16+r) {
					errs <- fmt.Errorf("worker %d round %d: device copy %d", w, r, own[0])
					return
				}
				if err := tab.Exit(f, items, Structured); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	workersWG.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, 0, tab.Len(), "entries after all exits")
	assert.Equal(t, 0, f.live(), "live buffers after all exits")
}
