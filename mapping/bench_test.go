package mapping

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sinkPtr device.DevicePtr

var benchSizes = []int{1, 1000, 1000000}

// BenchmarkLookup translates one interior sub-range of a table with the given
// number of live entries (the same range every time, so the path is hot in
// cache: this measures the search itself).
func BenchmarkLookup(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			tab, h := newBenchTableMid(n)
			require.Equal(b, n, tab.Len(), "entries")
			b.ReportAllocs()
			for b.Loop() {
				p, err := tab.Translate(h)
				if err != nil {
					require.NoError(b, err) // tested first: require's Helper call would be timed
				}
				sinkPtr = p
			}
		})
	}
}

// BenchmarkLookupRandom translates interior sub-ranges of 4096 entries chosen
// at random, so a large table also pays for cache misses.
func BenchmarkLookupRandom(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint("entries=", n), func(b *testing.B) {
			tab, mem := newBenchTable(n)
			r := rand.New(rand.NewSource(1))
			probes := make([][]byte, 4096)
			for i := range probes {
				off := r.Intn(n) * benchEntrySize
				probes[i] = mem[off+2 : off+10]
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p, err := tab.Translate(probes[i&4095])
				if err != nil {
					require.NoError(b, err) // tested first: require's Helper call would be timed
				}
				sinkPtr = p
				i++
			}
		})
	}
}

// nopOps hands out device addresses without memory and copies nothing: the
// benchmarks measure the table's own cost.
type nopOps struct{ next device.DevicePtr }

func (o *nopOps) Alloc(it *Item, size int) (device.DevicePtr, error) {
	o.next += 0x10000
	return o.next, nil
}
func (o *nopOps) Free(device.DevicePtr, int, []byte) error { return nil }
func (o *nopOps) CopyIn(device.DevicePtr, []byte) error    { return nil }
func (o *nopOps) CopyOut([]byte, device.DevicePtr) error   { return nil }
func (o *nopOps) Fence() device.Event                      { return nil }
func (o *nopOps) After(device.Event, bool)                 {}

// BenchmarkEnterExit4KiB maps and unmaps one new 4 KiB tofrom item (a target
// region's whole bookkeeping: alloc, copy in, copy out, free) in a table with
// 1000 other live entries.
func BenchmarkEnterExit4KiB(b *testing.B) {
	tab, _ := newBenchTableMid(1000)
	ops := &nopOps{}
	items := []Item{{Host: make([]byte, 4096), Type: ToFrom}}
	ptrs := make([]device.DevicePtr, 1)
	b.ReportAllocs()
	b.SetBytes(4096)
	for b.Loop() {
		// Errors are tested first: require's Helper call would be timed.
		if err := tab.Enter(ops, items, Structured, ptrs); err != nil {
			require.NoError(b, err, "Enter")
		}
		if err := tab.Exit(ops, items, Structured); err != nil {
			require.NoError(b, err, "Exit")
		}
	}
}

// TestSteadyStateNoAlloc checks that Enter and Exit of one new item, and
// Translate, do not allocate once the table's pools are warm.
func TestSteadyStateNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tab, h := newBenchTableMid(1000)
	ops := &nopOps{}
	items := []Item{{Host: make([]byte, 4096), Type: ToFrom}}
	ptrs := make([]device.DevicePtr, 1)
	n := testing.AllocsPerRun(1000, func() {
		require.NoError(t, tab.Enter(ops, items, Structured, ptrs))
		require.NoError(t, tab.Exit(ops, items, Structured))
	})
	assert.Zero(t, n, "Enter+Exit of one new item: allocations per run")
	n = testing.AllocsPerRun(1000, func() { sinkPtr, _ = tab.Translate(h) })
	assert.Zero(t, n, "Translate: allocations per run")
	assert.Equal(t, 1000, tab.Len(), "entries")
}

func TestBenchTable(t *testing.T) {
	for _, n := range []int{0, 1, 2, 1000} {
		tab, h := newBenchTableMid(n)
		want := max(n, 1)
		require.Equal(t, want, tab.Len(), "newBenchTableMid(%d): entries", n)
		require.Len(t, h, 8, "newBenchTableMid(%d): the range", n)
		require.True(t, tab.IsPresent(h), "newBenchTableMid(%d): the range is present", n)
		p, err := tab.Translate(h)
		require.NoError(t, err)
		es := tab.Entries()
		mid := es[want/2]
		assert.Equal(t, mid.Host+4, addr(h), "range %s is not 4 bytes into the middle entry %v", rng(h), mid)
		assert.Equal(t, mid.Device+4, p, "range %s -> %v is not 4 bytes into the middle entry %v", rng(h), p, mid)
	}
}

// benchEntrySize is the host bytes of each entry newBenchTable makes.
const benchEntrySize = 16

// newBenchTableMid returns a table on device "bench:0" holding entries live
// entries (at least 1), and an interior sub-range of the middle entry to
// look up with Translate or IsPresent. The entries are associated ranges of
// one host allocation of 16*entries bytes, inserted in address order as a
// program's allocations usually are, with made-up device addresses that are
// never dereferenced. Building a million entries takes well under a second.
func newBenchTableMid(entries int) (*Table, []byte) {
	t, mem := newBenchTable(entries)
	mid := (len(mem) / benchEntrySize / 2) * benchEntrySize
	return t, mem[mid+4 : mid+12 : mid+12]
}

func newBenchTable(entries int) (*Table, []byte) {
	if entries < 1 {
		entries = 1
	}
	t := New("bench:0")
	mem := make([]byte, entries*benchEntrySize)
	for i := 0; i < entries; i++ {
		off := i * benchEntrySize
		// Associate cannot fail here: ranges are disjoint and non-empty.
		_ = t.Associate(mem[off:off+benchEntrySize:off+benchEntrySize], device.DevicePtr(0x10000+2*off))
	}
	return t, mem
}
