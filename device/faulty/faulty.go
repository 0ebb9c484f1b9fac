// Package faulty is a fault-injection wrapper for devices, in the manner of
// database/sql's fakedb: a wrapped device behaves exactly as the device it
// wraps until its Plan says otherwise, then fails the Nth call of one kind
// of operation (alloc, free, copy in, copy out, copy, launch, record, new
// queue, queue sync, queue release, device close) with a *device.Error
// naming the operation, or delays every queue operation. Tests of the runtime use it to check that every fault leaves
// the present table and device memory as they were.
//
// Wrap wraps one device. Register registers a plugin named "faulty" whose
// devices are those of the "host" plugin, wrapped with one Plan; a test
// binary calls it before the runtime starts and sets GOMPT_PLUGINS=faulty
// (or lists faulty among other plugins) so package target uses it.
//
// A wrapped device forwards device.MemInfo, and its queues forward
// device.Profiler, when what they wrap implements them. A wrapped device
// always implements device.Closer, so that a failing Close can be injected:
// it closes the device it wraps when that implements device.Closer, and
// otherwise has nothing to close.
package faulty

import (
	"fmt"
	"sync"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/kcache"
)

// Op is a kind of device operation a Plan counts and can fail.
type Op int

// Operations.
const (
	Alloc Op = iota
	Free
	CopyIn
	CopyOut
	Copy
	Launch
	Record
	NewQueue
	// Sync, Release and Close still do what they wrap (the queue's work
	// is finished, the queue released, the device closed, so nothing
	// leaks) and then return the injected error in place of its result,
	// as a device reports a failure it finds while finishing.
	Sync
	Release
	Close
	numOps
)

var opNames = [...]string{"alloc", "free", "copy to device", "copy from device", "copy", "launch", "record", "new queue", "sync", "release", "close"}

// String returns the operation's name as errors show it: "alloc",
// "copy to device".
func (o Op) String() string {
	if o >= 0 && o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// Ops lists every operation, in order.
func Ops() []Op {
	out := make([]Op, numOps)
	for i := range out {
		out[i] = Op(i)
	}
	return out
}

// ErrInjected is the cause of every injected failure: errors.Is(err,
// faulty.ErrInjected) tells an injected fault from a real one.
var ErrInjected = fmt.Errorf("faulty: injected failure")

// Plan says which calls of the devices wrapped with it fail. All methods
// are safe for concurrent use; the zero Plan injects nothing.
type Plan struct {
	mu       sync.Mutex
	calls    [numOps]int64 // calls of each operation so far
	failAt   [numOps]int64 // call number that fails; 0: none
	code     [numOps]device.Code
	injected [numOps]int64
	delay    time.Duration
}

// FailNth makes the nth call (n >= 1) of op counted from now fail with a
// *device.Error of the given code naming the operation and the device. The
// failure fires once. n < 1 disarms op.
func (p *Plan) FailNth(op Op, n int, code device.Code) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n < 1 {
		p.failAt[op] = 0
		return
	}
	p.failAt[op] = p.calls[op] + int64(n)
	p.code[op] = code
}

// Delay makes every queue operation (copies, launches, records) of the
// wrapped devices sleep for d before it is enqueued; 0 stops delaying.
func (p *Plan) Delay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Reset disarms every failure and the delay. Counts stay.
func (p *Plan) Reset() {
	p.mu.Lock()
	p.failAt = [numOps]int64{}
	p.delay = 0
	p.mu.Unlock()
}

// Calls returns how many calls of op the wrapped devices have had.
func (p *Plan) Calls(op Op) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.calls[op])
}

// Injected returns how many calls of op have failed by injection.
func (p *Plan) Injected(op Op) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return int(p.injected[op])
}

// Armed reports whether a failure of op is pending (armed and not fired).
func (p *Plan) Armed(op Op) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failAt[op] != 0
}

// check counts a call of op on device id and returns the injected error,
// if this call is the one to fail, after the plan's delay for queue work.
func (p *Plan) check(op Op, id string) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.calls[op]++
	var err error
	if p.failAt[op] != 0 && p.calls[op] == p.failAt[op] {
		p.failAt[op] = 0
		p.injected[op]++
		err = &device.Error{Op: op.String(), Device: id, Code: p.code[op], Err: ErrInjected}
	}
	d := p.delay
	p.mu.Unlock()
	if d > 0 && op >= CopyIn && op <= Record {
		time.Sleep(d)
	}
	return err
}

// Wrap returns d with the faults of plan injected (nil plan: none). The
// result implements device.MemInfo exactly when d does, and always
// device.Closer.
// Injected errors name the device by d's ID method if it has one ("host:0"),
// else by its backend.
func Wrap(d device.Device, plan *Plan) device.Device {
	id := d.Info().Backend
	if n, ok := d.(interface{ ID() string }); ok {
		id = n.ID()
	}
	return wrap(d, plan, id)
}

func wrap(d device.Device, plan *Plan, id string) device.Device {
	w := &dev{d: d, plan: plan, id: id}
	if _, mi := d.(device.MemInfo); mi {
		return &devMem{w}
	}
	return w
}

type dev struct {
	d    device.Device
	plan *Plan
	id   string
}

type devMem struct{ *dev }

func (d *devMem) MemInUse() (int64, int) { return d.d.(device.MemInfo).MemInUse() }

// Close closes the wrapped device, if it has a Close, and returns the
// injected error when this call is the one to fail.
func (d *dev) Close() error {
	ierr := d.plan.check(Close, d.id)
	var err error
	if c, ok := d.d.(device.Closer); ok {
		err = c.Close()
	}
	if ierr != nil {
		return ierr
	}
	return err
}

// Unwrap returns the wrapped device.
func (d *dev) Unwrap() device.Device { return d.d }

// Kernels passes on the wrapped device's kernel cache (kcache.Of):
// Load is not an operation a Plan fails.
func (d *dev) Kernels() *kcache.Kernels { return kcache.Of(d.d) }

func (d *dev) Info() device.Info                              { return d.d.Info() }
func (d *dev) Load(k *device.Kernel) (device.Function, error) { return d.d.Load(k) }
func (d *dev) Now() (int64, error)                            { return d.d.Now() }

func (d *dev) Alloc(size int) (device.Buffer, error) {
	if err := d.plan.check(Alloc, d.id); err != nil {
		return device.Buffer{}, err
	}
	return d.d.Alloc(size)
}

func (d *dev) Free(p device.DevicePtr) error {
	if err := d.plan.check(Free, d.id); err != nil {
		return err
	}
	return d.d.Free(p)
}

func (d *dev) NewQueue() (device.Queue, error) {
	if err := d.plan.check(NewQueue, d.id); err != nil {
		return nil, err
	}
	q, err := d.d.NewQueue()
	if err != nil {
		return nil, err
	}
	w := &queue{q: q, d: d}
	if pr, ok := q.(device.Profiler); ok {
		return &profQueue{queue: w, p: pr}, nil
	}
	return w, nil
}

// queue is a wrapped queue. A failure is returned by the enqueuing call;
// nothing is enqueued on the wrapped queue then.
type queue struct {
	q device.Queue
	d *dev
}

type profQueue struct {
	*queue
	p device.Profiler
}

func (q *profQueue) Profile(on bool)     { q.p.Profile(on) }
func (q *profQueue) Last() device.Timing { return q.p.Last() }

func (q *queue) CopyIn(dst device.DevicePtr, src []byte) error {
	if err := q.d.plan.check(CopyIn, q.d.id); err != nil {
		return err
	}
	return q.q.CopyIn(dst, src)
}

func (q *queue) CopyOut(dst []byte, src device.DevicePtr) error {
	if err := q.d.plan.check(CopyOut, q.d.id); err != nil {
		return err
	}
	return q.q.CopyOut(dst, src)
}

func (q *queue) Copy(dst, src device.DevicePtr, n int) error {
	if err := q.d.plan.check(Copy, q.d.id); err != nil {
		return err
	}
	return q.q.Copy(dst, src, n)
}

func (q *queue) Launch(f device.Function, shape device.Shape, args []device.Arg) error {
	if err := q.d.plan.check(Launch, q.d.id); err != nil {
		return err
	}
	return q.q.Launch(f, shape, args)
}

func (q *queue) Record() (device.Event, error) {
	if err := q.d.plan.check(Record, q.d.id); err != nil {
		return nil, err
	}
	return q.q.Record()
}

// Sync waits for the wrapped queue and returns the injected error when
// this call is the one to fail, in place of the wait's result.
func (q *queue) Sync() error {
	ierr := q.d.plan.check(Sync, q.d.id)
	err := q.q.Sync()
	if ierr != nil {
		return ierr
	}
	return err
}

// Release releases the wrapped queue and returns the injected error when
// this call is the one to fail, in place of the release's result.
func (q *queue) Release() error {
	ierr := q.d.plan.check(Release, q.d.id)
	err := q.q.Release()
	if ierr != nil {
		return ierr
	}
	return err
}

// Name is the name Register gives the plugin.
const Name = "faulty"

// newPlugin returns the plugin whose devices are those of plugin inner,
// wrapped with plan on the first call of Devices.
func newPlugin(inner string, plan *Plan) device.Plugin {
	return generic.NewPlugin(Name, func() ([]device.Device, error) {
		in, ok := device.Lookup(inner)
		if !ok {
			return nil, fmt.Errorf("plugin %q to wrap is not registered (registered: %v)", inner, device.Plugins())
		}
		devs, err := in.Devices()
		if len(devs) == 0 {
			return nil, fmt.Errorf("plugin %q has no devices: %v", inner, err)
		}
		out := make([]device.Device, len(devs))
		for i, d := range devs {
			out[i] = wrap(d, plan, device.ID(Name, i))
		}
		return out, nil
	})
}

// Register registers the plugin "faulty", whose devices are the "host"
// plugin's devices wrapped with plan, and returns plan. Call it once, from
// a test's init or TestMain, before the runtime starts (the first call into
// package target); the host plugin must be linked in. It panics if called
// twice, as device.Register does. The runtime uses the plugin when
// GOMPT_PLUGINS names it. Do not name "host" in GOMPT_PLUGINS too: both
// would share the same devices and memory.
func Register(plan *Plan) *Plan {
	if plan == nil {
		plan = new(Plan)
	}
	device.Register(Name, newPlugin("host", plan))
	return plan
}
