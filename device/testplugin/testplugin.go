// Package testplugin is a device plugin that exists to prove that a new
// plugin is one package and one import: nothing else in the tree names it.
// Importing it registers the plugin "testplugin" (after host in the default
// order) with a native record type of its own (Record), the Go images of
// kernels, and a variable of its own, GOMPT_TESTPLUGIN_DEVICES (how many
// devices, 1..4; default 2). Its tests run device/devicetest on it, the
// runtime and a C tool over it, and ompt-devinfo built with it.
//
// Its devices hold their memory in Go slices at synthetic addresses (the
// generic device's Config.Space), run every operation on the caller's
// goroutine, kernels as their Go images on device/hostexec's teams, and
// time each operation with their own clock: a plugin in some 200 lines,
// all of them vendor calls.
package testplugin

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/hostexec"
)

// Name is the plugin's registered name.
const Name = "testplugin"

// EnvDevices names the variable that sets how many devices there are.
const EnvDevices = "GOMPT_TESTPLUGIN_DEVICES"

// Record is the plugin's native trace record: a layout of its own, read by
// the C tool of its tests as struct { int64_t start, end; uint32_t seq,
// op; uint64_t magic; }.
type Record struct {
	Start, End int64  // the operation's interval on the device clock (Device.Now ns)
	Seq        uint32 // the operation's number on its queue, from 1
	Op         uint32 // OpCopyIn, OpCopyOut, OpCopy or OpLaunch
	Magic      uint64 // RecordMagic
}

// Record.Op values.
const (
	OpCopyIn = 1 + iota
	OpCopyOut
	OpCopy
	OpLaunch
)

// RecordMagic is every Record's Magic: "testplug".
const RecordMagic = 0x67756c7074736574

// RecordKind is the kind of Record.
var RecordKind = device.RegisterNative[Record](Name, func(r Record, n device.Native) error {
	if r.Magic != RecordMagic || r.Seq == 0 || r.Op < OpCopyIn || r.Op > OpLaunch {
		return fmt.Errorf("magic %#x, seq %d, op %d", r.Magic, r.Seq, r.Op)
	}
	return nil
})

func init() {
	device.RegisterPlugin(device.Registration{
		Name:   Name,
		Plugin: generic.NewPlugin(Name, open),
		Order:  40, // after host
		Images: []device.ImageKind{device.ImageHost},
		Native: RecordKind,
		Env: []device.EnvVar{{Name: EnvDevices, Accepts: "a whole number 1..4", Default: "2", Check: func(v string) bool {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return err == nil && n >= 1 && n <= 4
		}}},
	})
}

// open makes the devices.
func open() ([]device.Device, error) {
	n := 2
	if v := device.Getenv(EnvDevices); v != "" {
		n, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	devs := make([]device.Device, n)
	for i := range devs {
		d := &Device{epoch: time.Now()}
		c := generic.Config{ID: device.ID(Name, i), Images: []device.ImageKind{device.ImageHost}, Info: device.Info{
			Name: "gompt test plugin device", Vendor: "gompt", Backend: Name, Type: "cpu", Version: "1",
			GlobalMem: 1 << 30, MaxAlloc: 1 << 28, ComputeUnits: hostexec.Default().Workers(), MaxThreadsPerTeam: 256,
			TimerResolutionNS: 1, Caps: device.AllCaps(256), TimeSource: "time.Since", Extra: []device.Attr{{Key: "native record", Value: "testplugin Record"}},
		}}
		c.Space.Lo = uint64(i+1) << 40
		c.Space.Hi = c.Space.Lo + 1<<40
		d.Init(d, c)
		devs[i] = d
	}
	return devs, nil
}

// Device is one test plugin device.
type Device struct {
	generic.Device[[]byte] // an allocation's handle is its memory
	epoch                  time.Time
	queues                 atomic.Uint64
}

// MemAlloc allocates Go memory (generic.Driver); address 0 asks for a
// synthetic one.
func (d *Device) MemAlloc(_, span int) (device.DevicePtr, []byte, error) {
	return 0, make([]byte, span), nil
}

// MemFree leaves the memory to the garbage collector (generic.Driver).
func (d *Device) MemFree(device.DevicePtr, []byte, int) error { return nil }

// LoadImage returns the Go image as the function (generic.Driver).
func (d *Device) LoadImage(k *device.Kernel, img *device.Image) (device.Function, error) {
	return &function{k: k, d: d, host: img.Host}, nil
}

// Now reads the device clock: nanoseconds since the device was made, plus
// one.
func (d *Device) Now() (int64, error) { return int64(time.Since(d.epoch)) + 1, nil }

func (d *Device) now() int64 { t, _ := d.Now(); return t }

// NewQueue returns a queue that runs each operation before it returns.
func (d *Device) NewQueue() (device.Queue, error) {
	q := &queue{d: d, info: d.Info(), num: d.queues.Add(1)}
	q.Queue.Init(q, generic.QueueConfig{ID: d.ID(), Info: &q.info})
	return q, nil
}

type function struct {
	k    *device.Kernel
	d    *Device
	host device.HostFunc
}

func (f *function) Kernel() *device.Kernel  { return f.k }
func (f *function) Image() device.ImageKind { return device.ImageHost }
func (f *function) Bytes() int              { return 1 }

type queue struct {
	d             *Device
	info          device.Info
	num           uint64
	seq           uint32
	released      bool
	generic.Queue // Launch's checks, Profile and Last: a device.Profiler
}

// timing is one operation's device.Timing: it ran before its call
// returned.
type timing struct {
	rec   Record
	hwid  uint64
	teams int
}

func (t *timing) Times() (int64, int64, device.Native, error) {
	return t.rec.Start, t.rec.End, device.NewNative(RecordKind, t.rec, typeNames[t.rec.Op], t.hwid, t.teams), nil
}

// Span implements device.SpanTiming: the times alone, for operations
// whose native records no tool asked for.
func (t *timing) Span() (int64, int64, int, error) { return t.rec.Start, t.rec.End, t.teams, nil }

func (t *timing) Ready() bool { return true }

var typeNames = [...]string{"", "testplugin copy in", "testplugin copy out", "testplugin copy", "testplugin kernel"}

// run times op (the operation do performs) if the queue profiles.
func (q *queue) run(op uint32, teams int, do func() error) error {
	if q.released {
		return q.d.Errorf(typeNames[op], device.CodeInvalidArgument, "queue already released")
	}
	q.seq++
	begin := q.d.now()
	if err := do(); err != nil {
		return err
	}
	if q.Profiling() {
		q.SetLast(&timing{rec: Record{Start: begin, End: q.d.now(), Seq: q.seq, Op: op, Magic: RecordMagic}, hwid: q.num, teams: teams})
	}
	return nil
}

func (q *queue) bytes(op string, p device.DevicePtr, n int) ([]byte, error) {
	mem, off, _, err := q.d.Lookup(op, p, n)
	if err != nil {
		return nil, err
	}
	return mem[off : off+n], nil
}

func (q *queue) CopyIn(dst device.DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return q.run(OpCopyIn, 0, func() error {
		b, err := q.bytes("copy to device", dst, len(src))
		copy(b, src)
		return err
	})
}

func (q *queue) CopyOut(dst []byte, src device.DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return q.run(OpCopyOut, 0, func() error {
		b, err := q.bytes("copy from device", src, len(dst))
		copy(dst, b)
		return err
	})
}

func (q *queue) Copy(dst, src device.DevicePtr, n int) error {
	if n == 0 {
		return nil
	}
	return q.run(OpCopy, 0, func() error {
		s, err := q.bytes("copy on device", src, n)
		if err != nil {
			return err
		}
		d, err := q.bytes("copy on device", dst, n)
		copy(d, s) // memmove
		return err
	})
}

// KernelOf implements generic.Launcher: f must come from this
// device's Load.
func (q *queue) KernelOf(f device.Function) (*device.Kernel, error) {
	fn, ok := f.(*function)
	if !ok || fn.d != q.d {
		return nil, q.d.Errorf("launch", device.CodeInvalidArgument, "function %T was not loaded on this device", f)
	}
	return fn.k, nil
}

// EnqueueLaunch implements generic.Launcher: the kernel runs before the
// call returns.
func (q *queue) EnqueueLaunch(f device.Function, _ *device.Kernel, shape *device.Shape, args []device.Arg) (bool, error) {
	return false, q.launch(f.(*function), shape, args)
}

func (q *queue) launch(fn *function, shape *device.Shape, args []device.Arg) error {
	ha := &device.HostArgs{Bufs: make([][]byte, len(args)), Args: args, Kernel: fn.k}
	for i, p := range fn.k.Params {
		if p.Kind == device.ParamBuffer {
			mem, off, size, err := q.d.Lookup("launch "+fn.k.Name, args[i].Ptr, 0)
			if err != nil {
				return err
			}
			ha.Bufs[i] = mem[off:size]
		}
	}
	pool := hostexec.Default()
	return q.run(OpLaunch, pool.Teams(shape, ha), func() error {
		if err := pool.Try(fn.host, ha, shape); err != nil {
			return q.d.Errorf("launch "+fn.k.Name, device.CodeUnknown, "%v", err)
		}
		return nil
	})
}

type event struct{ t int64 }

func (e event) Wait() error          { return nil }
func (e event) Time() (int64, error) { return e.t, nil }

func (q *queue) Record() (device.Event, error) { return event{q.d.now()}, nil }
func (q *queue) Sync() error                   { return nil }
func (q *queue) Release() error {
	if q.released {
		return q.d.Errorf("release", device.CodeInvalidArgument, "queue already released")
	}
	q.released = true
	return nil
}
