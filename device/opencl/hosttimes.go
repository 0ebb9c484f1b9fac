//go:build cgo

package opencl

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device/opencl/internal/cl"
)

// Host times. A driver whose commands carry no usable profiling times
// (probeStamps: rusticl 22.3 reports the placeholders 0, 1, 2 and 3 for
// every command) still runs everything; only tools need the times. Its
// device time is then the host's CLOCK_MONOTONIC (Now), and each
// operation's times are host readings that bracket it:
//   - a profiled operation begins at a reading taken just before its
//     enqueue (it cannot start earlier) and ends at a reading taken when
//     the driver calls back with its completion (clSetEventCallback), or,
//     where no callback has come yet, when the plugin saw it complete;
//   - an event recorded on a queue (a marker) is timed at the reading
//     taken when its completion was seen.
//
// A queue runs in order, so an operation is over once a later one is:
// each end is clamped into the interval left by the ends fixed before it
// on the same queue (brackets.fix), which keeps ends, and event times, in
// queue order while each still lies after its operation's real end.

// hostNow reads the clock of a device in host-times mode.
func hostNow() int64 { return cl.HostClock(cl.CLOCK_MONOTONIC) }

// bracketsMax bounds the fixed ends a queue remembers; past it the older
// half is forgotten (an operation so old is long over).
const bracketsMax = 256

// brackets holds the ends fixed so far on one queue in host-times mode,
// by key: 2*seq for the operation that made the queue's count seq, 2*seq+1
// for an event recorded after it. Safe for concurrent use.
type brackets struct {
	mu   sync.Mutex
	keys []uint64 // ascending
	ends []int64  // non-decreasing, as keys
}

// fix fixes the end of the operation or event key, seen complete at seen
// (a host reading taken after its completion), and returns it: seen,
// raised to the latest end fixed for an earlier key (or the same: two
// events recorded with nothing between them) and lowered to the earliest
// end fixed for a later one. Both moves keep it after the real end: the
// raise only makes it later, and a later key's operation finished after
// this one.
func (b *brackets) fix(key uint64, seen int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := sort.Search(len(b.keys), func(i int) bool { return b.keys[i] > key })
	end := seen
	if i > 0 {
		end = max(end, b.ends[i-1])
	}
	if i < len(b.keys) {
		end = min(end, b.ends[i])
	}
	b.keys = append(b.keys, 0)
	b.ends = append(b.ends, 0)
	copy(b.keys[i+1:], b.keys[i:])
	copy(b.ends[i+1:], b.ends[i:])
	b.keys[i], b.ends[i] = key, end
	if len(b.keys) > bracketsMax {
		n := copy(b.keys, b.keys[bracketsMax/2:])
		copy(b.ends, b.ends[bracketsMax/2:])
		b.keys, b.ends = b.keys[:n], b.ends[:n]
	}
	return end
}

// hostTiming is what a timing keeps in host-times mode: the reading
// before its enqueue, and the driver's completion callback's reading (0
// until it comes).
type hostTiming struct {
	begin int64
	done  atomic.Int64
}

// watch arranges for the completion callback of ev to record the time in
// t.host. A driver without callbacks leaves it 0: the end is then the
// reading taken when the plugin sees the command complete.
func (t *timing) watch(ev cl.Event) {
	cl.OnComplete(ev, func(int32) { t.host.done.Store(hostNow()) })
}

// hostTimes returns the profile of the timing's operation in host-times
// mode, which has completed: from the reading before its enqueue to its
// end fixed on the queue (brackets.fix).
func (t *timing) hostTimes() Profile {
	seen := t.host.done.Load()
	if seen == 0 {
		seen = hostNow()
	}
	end := t.q.marks.fix(2*t.seq, max(seen, t.host.begin))
	b := t.host.begin
	return Profile{Queued: b, Submit: b, Start: b, End: end}
}
