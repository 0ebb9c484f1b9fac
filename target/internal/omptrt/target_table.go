package omptrt

import (
	"sync"
	"sync/atomic"
	"time"
)

// The table of constructs in progress, for ompt_get_target_info and
// ompt_get_state, which is also where free Targets wait to be reused. Go
// has no thread-local storage, so each Target records the goroutine that
// last dispatched one of its events (t.g); an inquiry answers for the most
// recently begun construct whose last event was dispatched on the calling
// goroutine. Inside a callback that is always the construct of the event
// being dispatched.
//
// A Target, once made, stays in its slot for the life of the process: it
// is taken by a compare-and-swap of its g from 0 to the taking goroutine
// (which also publishes it to currentTarget) and freed by storing 0 again,
// two atomic operations per construct and no pool. Slots fill from the
// lowest, so inquiries and takers scan a short prefix; when all of them
// are busy the construct gets a Target of its own, kept in a set until it
// ends.
const activeSlots = 256

var (
	activeTab   [activeSlots]atomic.Pointer[Target]
	activeHi    atomic.Int32 // slots below it hold a Target; tableMu serializes its growth
	tableMu     sync.Mutex   // guards the table's growth and overflowSet
	overflowSet = map[*Target]struct{}{}
	overflowN   atomic.Int32 // len(overflowSet), read without the lock
)

// acquire takes a free Target for goroutine g.
func acquire(g uintptr) *Target {
	for i := range activeTab[:activeHi.Load()] {
		if t := activeTab[i].Load(); t.g.Load() == 0 && t.g.CompareAndSwap(0, g) {
			return t
		}
	}
	t := &Target{}
	t.g.Store(g) // taken before anyone can see it
	tableMu.Lock()
	defer tableMu.Unlock()
	if n := activeHi.Load(); n < activeSlots {
		activeTab[n].Store(t)
		activeHi.Store(n + 1)
		return t
	}
	t.overflow = true
	overflowSet[t] = struct{}{}
	overflowN.Store(int32(len(overflowSet)))
	return t
}

// release frees t, whose fields its owner has reset; an overflow Target
// is dropped with the toolslot words it holds.
func (t *Target) release() {
	// Counted only while a waitCallbacks runs (a plain load otherwise, not
	// a locked add on every construct), before g is cleared: a waiter sees
	// one or the other. A release that read no waiter just before one
	// began clears g unannounced; if its goroutine takes the same Target
	// again before the waiter looks, the waiter waits for that construct's
	// end too, which is counted. It waits longer, never too little.
	if waiters.Load() != 0 {
		t.ends.Add(1)
	}
	if !t.overflow {
		t.g.Store(0)
		return
	}
	tableMu.Lock()
	delete(overflowSet, t)
	overflowN.Store(int32(len(overflowSet)))
	tableMu.Unlock()
	for i := range t.slots {
		freeKeep(t.slots[i].keep)
	}
}

// handedOff is the g of a nowait construct between its TargetBegin and
// its task's first event: owned by no goroutine (none has this address),
// yet not free (0).
const handedOff uintptr = 1

// abandoned is the g of a construct whose goroutine ended inside it (a
// tool's callback called runtime.Goexit): never free again, since the
// construct's code may still touch it as the goroutine unwinds, and never
// waited for.
const abandoned uintptr = 2

// abandonConstructs marks the constructs goroutine g is in abandoned.
func abandonConstructs(g uintptr) {
	for i := range activeTab[:activeHi.Load()] {
		if c := activeTab[i].Load(); c.g.CompareAndSwap(g, abandoned) {
			c.giveToken() // the goroutine's: it never reaches the end
		}
	}
	tableMu.Lock()
	for c := range overflowSet {
		if c.g.CompareAndSwap(g, abandoned) {
			c.giveToken()
		}
	}
	tableMu.Unlock()
}

// currentTarget returns the construct the calling goroutine is in, and
// snapshots of its fields read after the ownership check.
func currentTarget() (t *Target, id uint64) {
	g := getg()
	for i := range activeTab[:activeHi.Load()] {
		c := activeTab[i].Load()
		if c.g.Load() != g {
			continue
		}
		if cid := c.id; cid > id {
			t, id = c, cid
		}
	}
	if overflowN.Load() == 0 {
		return t, id
	}
	tableMu.Lock()
	for c := range overflowSet {
		if c.g.Load() == g {
			if cid := c.id; cid > id {
				t, id = c, cid
			}
		}
	}
	tableMu.Unlock()
	return t, id
}

// waiters counts the waitCallbacks in progress.
var waiters atomic.Int32

// waitCallbacks waits until every construct in progress, other than
// those of the calling goroutine, has ended. detach calls it after
// setting the tool's done flag: a construct that checked the flag before
// (and may be calling the tool) is in progress, and one that begins later
// sees the flag, so no callback of the tool runs after its finalizer. It
// costs the hot path one plain atomic load per construct (release); the
// price is that ompt_finalize_tool waits for whole constructs on other
// goroutines, not only for their callbacks.
func waitCallbacks() { waitCallbacksFor(-1) }

// waitCallbacksFor is waitCallbacks for at most d (d < 0: as long as it
// takes); false if some construct was still in progress then.
func waitCallbacksFor(d time.Duration) bool {
	waiters.Add(1)
	defer waiters.Add(-1)
	deadline := time.Now().Add(d)
	g := getg()
	type busy struct {
		c    *Target
		ends uint32
	}
	var list []busy
	note := func(c *Target) {
		ends := c.ends.Load()
		if og := c.g.Load(); og != 0 && og != g && og != abandoned {
			list = append(list, busy{c, ends})
		}
	}
	for i := range activeTab[:activeHi.Load()] {
		note(activeTab[i].Load())
	}
	tableMu.Lock()
	for c := range overflowSet {
		note(c)
	}
	tableMu.Unlock()
	for _, b := range list {
		for og := b.c.g.Load(); b.c.ends.Load() == b.ends && og != 0 && og != abandoned; og = b.c.g.Load() {
			if d >= 0 && time.Now().After(deadline) {
				return false
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	return true
}
