package mapping

import "github.com/gompt/gompt/device"

// benchEntrySize is the host bytes of each entry NewBenchTable makes.
const benchEntrySize = 16

// NewBenchTable returns a table on device "bench:0" holding entries live
// entries (at least 1), and an interior sub-range of the middle entry to
// look up with Translate or IsPresent. It is for benchmarks (the project's
// bench command and this package's): the entries are associated ranges of
// one host allocation of 16*entries bytes, inserted in address order as a
// program's allocations usually are, with made-up device addresses that are
// never dereferenced. Building a million entries takes well under a second.
func NewBenchTable(entries int) (*Table, []byte) {
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
