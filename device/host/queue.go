package host

import (
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/hostexec"
)

// InlineCopyMax is the largest copy a queue runs on the caller's goroutine
// when nothing is pending on it; larger copies go to the queue's goroutine so
// the caller can go on.
const InlineCopyMax = 256 << 10

// NewQueue returns a new in-order queue on d (see Queue).
func (d *Device) NewQueue() (device.Queue, error) {
	q := &Queue{d: d, ring: make([]op, 8), num: d.queues.Add(1)}
	q.cond.L = &q.mu
	q.Queue.Init(launcher{q}, generic.QueueConfig{ID: d.ID(), Info: &d.info, ExactThreads: true})
	return q, nil
}

// Queue is an in-order asynchronous queue of a host device.
//
// When nothing is pending, a small operation (a copy of at most
// InlineCopyMax bytes, or a kernel launch) runs on the caller's goroutine
// before the call returns; otherwise operations go, in order, to the queue's
// own goroutine, started on first need and stopped by Release. Arguments are
// checked when an operation is enqueued, so bad pointers, sizes, shapes and
// arguments are returned by the enqueuing call on either path. An operation
// that runs inline returns its own failure (a kernel that panicked); one that
// runs on the queue's goroutine leaves it for the next Sync or Wait.
//
// A queue is used by one goroutine at a time (device.Queue), while its own
// goroutine runs the work enqueued. Its generic.Queue has the launch
// checks (Launch, LaunchChecked) and the profiling state (Profile, Last).
type Queue struct {
	d *Device

	pending  atomic.Int64 // operations enqueued and not yet completed
	released atomic.Bool
	errSet   atomic.Bool // err is not nil

	mu      sync.Mutex
	cond    sync.Cond // signalled when work arrives and when work completes
	ring    []op      // operations in order, from head, n of them
	head, n int
	enq     uint64 // operations enqueued on the goroutine, ever
	done    uint64 // of which completed
	err     error  // the first asynchronous error since the last Sync
	running bool   // the goroutine is started
	stop    bool
	exited  chan struct{}

	inline op // storage of the operation running inline

	num     uint64 // the queue's number on its device, for native records
	timings []*[timingBlock]timing
	nt      int // timings in use since profiling was last switched on

	generic.Queue
}

// timing is the host device's device.Timing of one operation.
type timing struct {
	q          *Queue
	seq        uint64 // the operation's sequence number on the goroutine; 0 if it ran inline
	begin, end int64
	typ        string
	teams      int // teams granted, for a launch
}

// Profile implements device.Profiler: while on, each operation records
// when it ran on the device clock.
// Switching it on also recycles the timings of earlier operations, so the
// caller reads every Timing it wants before it switches profiling on again
// (the runtime does: a construct writes its records before it ends).
func (q *Queue) Profile(on bool) {
	q.Queue.Profile(on)
	if on {
		q.nt = 0
	}
}

// Ready implements device.ReadyTiming: true for an operation the queue ran
// inline (its times are known).
func (t *timing) Ready() bool { return t.seq == 0 }

// Times implements device.Timing: it waits for the operation if it went to
// the queue's goroutine.
func (t *timing) Times() (begin, end int64, native device.Native, err error) {
	t.wait()
	native = Record{Start: t.begin, End: t.end, Queue: t.q.num}.Native(t.typ, t.q.num, t.teams)
	return t.begin, t.end, native, nil
}

// Span implements device.SpanTiming: Times without the native record.
func (t *timing) Span() (begin, end int64, teams int, err error) {
	t.wait()
	return t.begin, t.end, t.teams, nil
}

// wait waits for the operation if it went to the queue's goroutine.
func (t *timing) wait() {
	if t.seq > 0 {
		q := t.q
		q.mu.Lock()
		for q.done < t.seq && !q.stop {
			q.cond.Wait()
		}
		q.mu.Unlock()
	}
}

// startTiming makes the timing of the operation being enqueued, if the
// queue is profiling. Timings live in blocks the queue keeps and reuses
// (no allocation per operation once the blocks exist); a Timing stays valid
// until profiling is switched on again.
func (q *Queue) startTiming(typ string) *timing {
	if !q.Profiling() {
		return nil
	}
	b, i := q.nt/timingBlock, q.nt%timingBlock
	if b == len(q.timings) {
		q.timings = append(q.timings, new([timingBlock]timing))
	}
	q.nt++
	t := &q.timings[b][i]
	*t = timing{q: q, typ: typ}
	q.SetLast(t)
	return t
}

const timingBlock = 64

type opKind uint8

const (
	opCopy   opKind = iota + 1 // dst <- src, within device memory or to/from the host
	opLaunch                   // fn over shape with ha
	opEvent                    // complete ev
	opWait                     // wait for wev, another queue's event
)

// op is one queued operation. Its slices are reused from one operation to
// the next in the same ring slot, so enqueuing allocates nothing in steady
// state.
type op struct {
	kind     opKind
	dst, src []byte
	fn       *Function
	shape    device.Shape
	ha       device.HostArgs
	ev       *Event
	wev      *Event  // opWait's event
	tm       *timing // set while profiling
}

func (q *Queue) closedErr(op string) error {
	return device.Errorf(q.d.ID(), op, device.CodeInvalidArgument, "queue already released")
}

// CopyIn copies src to device memory at dst. src must stay unmodified until
// a later Sync or Wait returns (or until CopyIn returns, for a copy that ran
// inline: one of at most InlineCopyMax bytes on an idle queue).
func (q *Queue) CopyIn(dst device.DevicePtr, src []byte) error {
	if q.released.Load() {
		return q.closedErr("copy to device")
	}
	if len(src) == 0 {
		return nil
	}
	b, err := q.d.Resolve(dst, len(src))
	if err != nil {
		return rename(err, "copy to device")
	}
	return q.copy(b, src, "host copy in")
}

// CopyOut copies device memory at src to dst; see CopyIn for when dst may
// be read.
func (q *Queue) CopyOut(dst []byte, src device.DevicePtr) error {
	if q.released.Load() {
		return q.closedErr("copy from device")
	}
	if len(dst) == 0 {
		return nil
	}
	b, err := q.d.Resolve(src, len(dst))
	if err != nil {
		return rename(err, "copy from device")
	}
	return q.copy(dst, b, "host copy out")
}

var _ device.PeerCopier = (*Queue)(nil)

// CopyPeer implements device.PeerCopier: it copies n bytes from srcPtr on
// src, another host device, to dst on this queue's device, as one copy
// (no staging buffer between). src must be a host device (*Device).
func (q *Queue) CopyPeer(dst device.DevicePtr, src device.Device, srcPtr device.DevicePtr, n int) error {
	const op = "copy between devices"
	if q.released.Load() {
		return q.closedErr(op)
	}
	sd, ok := src.(*Device)
	if !ok {
		return device.Errorf(q.d.ID(), op, device.CodeInvalidArgument, "source device %T is not a host device", src)
	}
	if n < 0 {
		return device.Errorf(q.d.ID(), op, device.CodeInvalidArgument, "negative size %d", n)
	}
	if n == 0 {
		return nil
	}
	from, err := sd.Resolve(srcPtr, n)
	if err != nil {
		return rename(err, op)
	}
	to, err := q.d.Resolve(dst, n)
	if err != nil {
		return rename(err, op)
	}
	return q.copy(to, from, "host copy peer")
}

// Copy copies n bytes from src to dst, both on this device. The ranges may
// overlap.
func (q *Queue) Copy(dst, src device.DevicePtr, n int) error {
	if q.released.Load() {
		return q.closedErr("copy on device")
	}
	if n == 0 {
		return nil
	}
	if n < 0 {
		return device.Errorf(q.d.ID(), "copy on device", device.CodeInvalidArgument, "negative size %d", n)
	}
	s, err := q.d.Resolve(src, n)
	if err != nil {
		return rename(err, "copy on device")
	}
	d, err := q.d.Resolve(dst, n)
	if err != nil {
		return rename(err, "copy on device")
	}
	return q.copy(d, s, "host copy")
}

func (q *Queue) copy(dst, src []byte, typ string) error {
	tm := q.startTiming(typ)
	if len(dst) <= InlineCopyMax && q.pending.Load() == 0 {
		if tm != nil {
			tm.begin = q.d.now()
		}
		copy(dst, src)
		if tm != nil {
			tm.end = q.d.now()
		}
		return nil
	}
	o := q.slot()
	o.kind, o.dst, o.src, o.tm = opCopy, dst, src, tm
	seq := q.push()
	if tm != nil {
		tm.seq = seq
	}
	return nil
}

// rename makes a Resolve error report the operation that asked.
func rename(err error, op string) error {
	if e, ok := err.(*device.Error); ok {
		e.Op = op
	}
	return err
}

var _ device.CheckedLauncher = (*Queue)(nil)

// LaunchChecked implements device.CheckedLauncher: Launch without the
// checks of the shape and of nil buffer pointers the runtime has made
// (generic.Queue.CheckTrusted). The function's device and the argument
// count are still checked, and buffer pointers still resolved. It makes
// the steps of generic.Queue's Launch itself, with direct calls: the
// runtime's launch path.
func (q *Queue) LaunchChecked(f device.Function, shape *device.Shape, args []device.Arg) error {
	fn, ok := q.own(f)
	if !ok {
		return q.kernelErr(f)
	}
	if err := q.CheckTrusted(fn.k, args); err != nil {
		return err
	}
	return q.launch(fn, shape, args) // the host device passes no fault record
}

// launcher is a Queue as generic.Queue's Launcher: the steps of a launch
// around its checks, unexported, so that a caller launches only through
// the checked Launch and LaunchChecked.
type launcher struct{ *Queue }

// KernelOf implements generic.Launcher: f must come from this device's
// Load, on a queue not released.
func (q launcher) KernelOf(f device.Function) (*device.Kernel, error) {
	if fn, ok := q.own(f); ok {
		return fn.k, nil
	}
	return nil, q.kernelErr(f)
}

// own returns f as a Function of this device, if it is one and the queue
// is not released.
func (q *Queue) own(f device.Function) (*Function, bool) {
	fn, ok := f.(*Function)
	return fn, ok && fn != nil && fn.d == q.d && !q.released.Load()
}

// kernelErr is the error of a launch of f, which own refused.
func (q *Queue) kernelErr(f device.Function) error {
	fn, ok := f.(*Function)
	if !ok || fn == nil {
		return device.Errorf(q.d.ID(), "launch", device.CodeInvalidArgument,
			"function %T was not loaded by a host device", f)
	}
	k := fn.k
	if q.released.Load() {
		return q.closedErr("launch " + k.Name)
	}
	return device.Errorf(q.d.ID(), "launch "+k.Name, device.CodeInvalidArgument,
		"kernel %s was loaded on %s, not on this device", k.Name, fn.d.ID())
}

// EnqueueLaunch implements generic.Launcher (launch).
func (q launcher) EnqueueLaunch(f device.Function, _ *device.Kernel, shape *device.Shape, args []device.Arg) (bool, error) {
	return false, q.launch(f.(*Function), shape, args)
}

// launch runs fn over shape with args, inline on an idle queue, else on
// the queue's goroutine. Buffer arguments are resolved to the device
// memory from the pointer to the end of its allocation.
func (q *Queue) launch(fn *Function, shape *device.Shape, args []device.Arg) error {
	k := fn.k
	inline := q.pending.Load() == 0
	o := &q.inline
	if !inline {
		o = q.slot()
	}
	o.ha.Bufs = o.ha.Bufs[:0]
	o.ha.Args = append(o.ha.Args[:0], args...)
	o.ha.Kernel = k
	bufs := false // o.ha.Bufs holds memory to forget after the launch
	for i := range k.Params {
		p := &k.Params[i]
		var b []byte
		if p.Kind == device.ParamBuffer {
			var err error
			bufs = true
			if b, err = q.d.resolveTail(args[i].Ptr, "launch"); err != nil {
				clear(o.ha.Bufs)
				var cause error = err
				if e, ok := err.(*device.Error); ok {
					cause = e.Err
				}
				return device.Errorf(q.d.ID(), "launch "+k.Name, device.CodeInvalidArgument,
					"argument %d (%s): %v", i, p.Name, cause)
			}
		}
		o.ha.Bufs = append(o.ha.Bufs, b)
	}
	tm := q.startTiming("host kernel")
	if tm != nil {
		tm.teams = q.d.pool.Teams(shape, &o.ha)
	}
	if inline {
		// The shape stays where the caller put it (no copy into o).
		if tm != nil {
			tm.begin = q.d.now()
		}
		err := q.d.launch(fn, &o.ha, shape)
		if tm != nil {
			tm.end = q.d.now()
		}
		if bufs {
			clear(o.ha.Bufs) // the rest are nil: a launch with only scalars skips the write barriers
		}
		return err
	}
	o.kind, o.fn, o.shape, o.tm = opLaunch, fn, *shape, tm
	seq := q.push()
	if tm != nil {
		tm.seq = seq
	}
	return nil
}

// launch runs fn over shape with ha, turning a panic of the kernel into
// an error.
func (d *Device) launch(fn *Function, ha *device.HostArgs, shape *device.Shape) error {
	err := d.pool.Try(fn.host, ha, shape)
	if tp, ok := err.(*hostexec.TeamPanic); ok {
		if f := device.GoFault(fn.k.Name, tp.Value, tp.PCs); f != nil {
			return f // Go's bounds or division check, with the source line
		}
		return device.Errorf(d.ID(), "launch "+fn.k.Name, device.CodeUnknown,
			"kernel panicked in team %d of %d: %v", tp.Team, tp.Teams, tp.Value)
	}
	return err
}

// Record returns an event completing when all work enqueued so far has
// completed; its Time is the device clock at that moment.
func (q *Queue) Record() (device.Event, error) {
	if q.released.Load() {
		return nil, q.closedErr("record")
	}
	ev := &Event{q: q}
	if q.pending.Load() == 0 {
		ev.t = q.d.now()
		q.mu.Lock()
		ev.err = q.err
		q.mu.Unlock()
		return ev, nil
	}
	o := q.slot()
	o.kind, o.ev = opEvent, ev
	ev.seq = q.push()
	return ev, nil
}

// WaitEvent implements device.Waiter: the queue's later operations start
// once ev, an event of another queue of this device, has completed; the
// caller does not wait. A failure of the work before ev becomes this
// queue's error too, for its next Sync and the events recorded after.
func (q *Queue) WaitEvent(ev device.Event) (bool, error) {
	if q.released.Load() {
		return false, q.closedErr("wait for event")
	}
	e, ok := ev.(*Event)
	if !ok || e.q.d != q.d {
		return false, nil
	}
	if e.q == q {
		// In order already. A failure before ev that a Sync has returned
		// since is this queue's error again, as a wait for another
		// queue's failed event would make it; before ev completes no
		// Sync can have cleared it.
		q.mu.Lock()
		if e.seq <= q.done && e.err != nil && q.err == nil {
			q.err = e.err
			q.errSet.Store(true)
		}
		q.mu.Unlock()
		return true, nil
	}
	o := q.slot()
	o.kind, o.wev = opWait, e
	q.push()
	return true, nil
}

// Idle implements device.Idler: true when nothing enqueued is pending
// (everything ran inline or the queue's goroutine has finished it) and
// no failure of that work waits for the next Sync. errSet is written
// before pending drops, so it is read after.
func (q *Queue) Idle() bool { return q.pending.Load() == 0 && !q.errSet.Load() }

// Sync waits for all work enqueued so far and returns the first error of
// the work that ran on the queue's goroutine since the last Sync, clearing
// it.
func (q *Queue) Sync() error {
	if q.released.Load() {
		return q.closedErr("sync")
	}
	return q.wait()
}

func (q *Queue) wait() error {
	// Nothing was ever left to the goroutine, or all of it is done with no
	// error: no lock needed. errSet is written before pending drops.
	if q.pending.Load() == 0 && !q.errSet.Load() {
		return nil
	}
	q.mu.Lock()
	for q.done < q.enq {
		q.cond.Wait()
	}
	err := q.err
	q.err = nil
	q.errSet.Store(false)
	q.mu.Unlock()
	return err
}

// Release waits for the queue's work, stops its goroutine and returns the
// first pending error. Any later call on the queue is an error.
func (q *Queue) Release() error {
	if q.released.Swap(true) {
		return q.closedErr("release")
	}
	err := q.wait()
	q.mu.Lock()
	q.stop = true
	running := q.running
	q.cond.Broadcast()
	q.mu.Unlock()
	if running {
		<-q.exited
	}
	return err
}

// slot returns the ring slot the next operation goes in, growing the ring
// when full. Only the goroutine using the queue calls it; push publishes it.
func (q *Queue) slot() *op {
	q.mu.Lock()
	if q.n == len(q.ring) {
		ring := make([]op, 2*len(q.ring))
		for i := range q.n {
			ring[i] = q.ring[(q.head+i)%len(q.ring)]
		}
		q.ring, q.head = ring, 0
	}
	o := &q.ring[(q.head+q.n)%len(q.ring)]
	q.mu.Unlock()
	return o
}

// push publishes the operation filled in after slot and returns its
// sequence number.
func (q *Queue) push() uint64 {
	q.mu.Lock()
	q.n++
	q.enq++
	seq := q.enq
	q.pending.Add(1)
	q.d.queued.Add(1)
	if !q.running {
		q.running = true
		q.exited = make(chan struct{})
		go q.loop()
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	return seq
}

// loop is the queue's goroutine: it runs the operations in order until
// Release.
func (q *Queue) loop() {
	defer close(q.exited)
	q.mu.Lock()
	for {
		for q.n == 0 && !q.stop {
			q.cond.Wait()
		}
		if q.n == 0 {
			q.mu.Unlock()
			return
		}
		o := &q.ring[q.head]
		q.mu.Unlock()

		var err error
		if o.tm != nil {
			o.tm.begin = q.d.now()
		}
		switch o.kind {
		case opCopy:
			copy(o.dst, o.src)
		case opLaunch:
			err = q.d.launch(o.fn, &o.ha, &o.shape)
		case opEvent:
			o.ev.t = q.d.now()
		case opWait:
			err = o.wev.Wait()
		}
		if o.tm != nil {
			o.tm.end = q.d.now()
		}

		q.mu.Lock()
		if err != nil && q.err == nil {
			q.err = err
			q.errSet.Store(true)
		}
		o = &q.ring[q.head] // the ring may have grown meanwhile
		if o.kind == opEvent {
			o.ev.err = q.err
		}
		o.dst, o.src, o.fn, o.ev, o.wev, o.tm = nil, nil, nil, nil, nil, nil
		clear(o.ha.Bufs)
		q.head = (q.head + 1) % len(q.ring)
		q.n--
		q.done++
		q.pending.Add(-1)
		q.d.queued.Add(-1)
		q.cond.Broadcast()
	}
}

// Event is a point in a host queue.
type Event struct {
	q   *Queue
	seq uint64 // the queue's enq count at Record; 0: complete at Record
	t   int64
	err error
}

// Wait blocks until the event completes and returns the first error of the
// queue's asynchronous work up to it (which Sync has not cleared before
// Record); it does not clear the queue's error.
func (e *Event) Wait() error {
	q := e.q
	q.mu.Lock()
	for q.done < e.seq {
		q.cond.Wait()
	}
	err := e.err
	q.mu.Unlock()
	return err
}

// Time waits for the event and returns the device time at which the work
// before it had completed.
func (e *Event) Time() (int64, error) {
	if err := e.Wait(); err != nil {
		return 0, err
	}
	return e.t, nil
}
