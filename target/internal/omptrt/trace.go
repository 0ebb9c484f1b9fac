package omptrt

import (
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// NativeDevice is implemented by a Device whose plugin attaches native
// records to its operations; NativeFlags returns the Native* monitoring
// flags it can honour. A Device without it honours none, and
// ompt_set_trace_native answers ompt_set_never for every flag.
type NativeDevice interface {
	NativeFlags() uint32
}

// ringCap is the size of a device's ring at first, in 8-byte words (an
// entry takes 5 to 13: about 2048 operations). The ring doubles, up to
// ringMax words (4 MiB, some 65536 operations), when the application
// makes records faster than the tracing goroutine delivers them for a
// while (a GC cycle, a slow buffer callback, the goroutine not
// scheduled), and when a quarter of it fills sooner than a tick again
// and again (run), so that a fast stream of records wakes the tracing
// goroutine about once a tick rather than once per few hundred
// constructs (docs/performance.md has what those wake-ups cost the
// constructs). Records the full ring has no room for are dropped and
// counted as lost. Vars for tests.
var ringCap, ringMax = 2048 * 8, 65536 * 8

type traceState int32

const (
	traceOff traceState = iota
	traceOn
	tracePaused
	traceStopping
)

// recordable is the set of record types gompt writes, one bit per event
// number.
const recordable = 1<<ompt.CallbackTarget | 1<<ompt.CallbackTargetDataOp | 1<<ompt.CallbackTargetSubmit

// tracer is one device's tracing: what the tool enabled, the session's
// callbacks, the ring of records waiting for delivery, and the worker
// goroutine that delivers them.
type tracer struct {
	h      *devState
	types  atomic.Uint32 // enabled record types (bits 8, 9, 10); written under mu
	native atomic.Uint32 // enabled native flags; written under mu

	mu        sync.Mutex
	work      sync.Cond // worker: records, a flush or a stop
	idle      sync.Cond // flushers: flushDone moved, or the session ended
	state     traceState
	request   ompt.BufferRequestFunc
	complete  ompt.BufferCompleteFunc
	owner     atomic.Pointer[tool] // the tool that started the session (nil: unknown); its ids go into the records
	fill      []uint64             // producers append entries (see encTarget); bounded by cap
	spare     []uint64
	waiting   bool // worker is in work.Wait
	kick      bool // a tick came: deliver whatever is queued
	flushReq  uint64
	flushDone uint64
	worker    uintptr // getg of the worker
	waitFor   *tracer // the tracer whose flush or stop this worker's callback waits for; under waitMu
	done      chan struct{}
	calling   atomic.Int32 // the buffer callback the worker is in (callingRequest...), for stop's report

	written, lost atomic.Uint64 // since DeviceInitialize
	lostAtStart   uint64        // lost when the session started; under mu

	// worker-owned: the buffer being filled
	buf       []byte
	live      *liveBuf // buf's registration
	part, end uint64   // the current part is buf[part:end]
	noBuf     bool     // a request failed during this batch
	puts      uint64   // records put since written was last raised (one atomic add per batch, not per record)
	batches   uint64   // batches taken from the ring with entries in them, in this session (tests read it after the session)

	// of lost: records of operations whose device times could not be
	// read, in all and when the session started (under mu); last, so the
	// fields above keep their cache lines
	untimed        atomic.Uint64
	untimedAtStart uint64
}

func (tr *tracer) init(h *devState) {
	tr.h = h
	tr.work.L = &tr.mu
	tr.idle.L = &tr.mu
}

// traceable reports whether h is a live device handle made by
// DeviceInitialize.
func traceable(h *devState) bool {
	return h != nil && h.dev != nil && h.tr.h == h && !h.isFinalized()
}

// The published set of devices that accept records: one atomic load
// answers Tracing. Rebuilt (copy on write) on every change of a device's
// tracing state or enabled types.
type traceTable struct{ t []*tracer }

var (
	traced  atomic.Pointer[traceTable]
	traceMu sync.Mutex // serialises publishTrace
)

func (tab *traceTable) get(dev int) *tracer {
	if tab == nil || uint(dev) >= uint(len(tab.t)) {
		return nil
	}
	return tab.t[dev]
}

func tracerOf(dev int) *tracer { return traced.Load().get(dev) }

// publishTrace rebuilds the table from the current state of every device.
// Callers must not hold any tracer's mu or devMu.
func publishTrace() {
	traceMu.Lock()
	defer traceMu.Unlock()
	hs := deviceHandles()
	var tab *traceTable
	for _, h := range hs {
		tr := &h.tr
		tr.mu.Lock()
		on := tr.state == traceOn && (tr.types.Load() != 0 || tr.native.Load() != 0)
		tr.mu.Unlock()
		if !on {
			continue
		}
		if tab == nil {
			tab = &traceTable{}
		}
		for len(tab.t) <= h.num {
			tab.t = append(tab.t, nil)
		}
		tab.t[h.num] = tr
	}
	traced.Store(tab)
}

// Tracing reports whether device deviceNum records trace records now
// (tracing started, not paused, some record type or native flag
// enabled). One atomic load, no allocation: the runtime calls it before
// each device operation and takes device timestamps (queue events) only
// when it is true.
func Tracing(deviceNum int) bool { return traced.Load().get(deviceNum) != nil }

// TraceStats reports for device deviceNum how many trace entries were
// written into tool buffers and how many were lost (queue full, no
// buffer or too small a buffer from buffer_request, a buffer callback
// that panicked, a device time that could not be read) since the device
// was initialized; for the runtime's GOMPT_INFO. An unknown device
// reports 0, 0.
func TraceStats(deviceNum int) (written, lost uint64) {
	devMu.Lock()
	h := devices[deviceNum]
	devMu.Unlock()
	if h == nil {
		return 0, 0
	}
	return h.tr.written.Load(), h.tr.lost.Load()
}

// Tools read TraceStats through their device handles
// (ompt.DeviceHandle.TraceStats).
func init() { omptlink.TraceStats = TraceStats }
