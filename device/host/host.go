// Package host is the "host" device plugin: offload devices that run on the
// CPU, each with its own memory, so that a program offloading to them does
// everything it would do with an accelerator (allocations, copies that really
// happen, kernels that see only device memory) and can be checked without
// one. Kernels run as their Go image (device.ImageHost) on teams of worker
// goroutines (device/hostexec). The host device is the reference the other
// plugins are tested against (device/devicetest).
//
// Importing the package registers the plugin as "host". GOMPT_HOST_DEVICES
// sets how many devices it has: a whole number 0..64, default 1. However
// many there are, they share one memory budget, half of the memory the
// process may use (see Device.Info). Queues copy from one host device to
// another directly (device.PeerCopier), as GPUs of one plugin do.
package host

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/generic"
	"github.com/gompt/gompt/device/host/internal/hostclock"
	"github.com/gompt/gompt/device/hostexec"
)

// Name is the plugin's registered name.
const Name = "host"

// MaxDevices is the largest GOMPT_HOST_DEVICES accepted.
const MaxDevices = 64

// FunctionBytes is what Function.Bytes reports: a nominal size, since a Go
// image is compiled into the program and nothing is loaded.
const FunctionBytes = 4096

// MaxThreadsPerTeam is the largest Shape.Threads a launch accepts
// (hostexec.MaxThreadsPerTeam, which the initial device shares).
const MaxThreadsPerTeam = hostexec.MaxThreadsPerTeam

// EnvDevices names the variable that sets how many host devices there
// are.
const EnvDevices = "GOMPT_HOST_DEVICES"

// images are the kinds of kernel image a host device runs: Go images.
var images = []device.ImageKind{device.ImageHost}

func init() {
	device.RegisterPlugin(device.Registration{
		Name: Name, Plugin: newPlugin(),
		Order:  30, // after the accelerators: cuda, opencl, host
		Images: images,
		Native: RecordKind,
		Env: []device.EnvVar{
			{Name: EnvDevices, Accepts: fmt.Sprintf("a whole number 0..%d", MaxDevices), Default: "1",
				Check: func(v string) bool { _, warn := parseCount(v); return warn == "" }},
			{Name: hostclock.EnvVar, Accepts: "auto, tsc or monotonic", Default: "auto", Check: func(v string) bool {
				switch strings.ToLower(strings.TrimSpace(v)) {
				case "", "auto", "tsc", "monotonic":
					return true
				}
				return false
			}},
		},
	})
}

// Record is the host device's native trace record (RecordKind): the
// interval, on the host device's clock (Device.Now, ns), during which the
// operation ran, and the queue that ran it (its number on its device,
// also the record's HWID).
type Record struct {
	Start, End int64
	Queue      uint64 // the queue's number on its device (1, 2, ...)
}

// RecordKind is the kind of Record, the host device's native records.
var RecordKind = device.RegisterNative[Record](Name, func(r Record, n device.Native) error {
	if r.Queue != n.HWID {
		return fmt.Errorf("queue %d, but the record's HWID is %d", r.Queue, n.HWID)
	}
	return nil
})

// Native returns the device.Native that carries r, with the operation's
// type name, where it ran and, for a launch, the teams it ran.
func (r Record) Native(typ string, hwid uint64, teams int) device.Native {
	return device.NewNative(RecordKind, r, typ, hwid, teams)
}

// newPlugin returns the plugin: its devices are made on the first call of
// Devices, reading GOMPT_HOST_DEVICES (a bad value gives 1 device, and
// its warning on stderr once, from the runtime or from here). With GOMPT_HOST_DEVICES=0 it has no device and
// an error wrapping device.ErrNoDevice.
func newPlugin() *generic.Plugin {
	return generic.NewPlugin(Name, func() ([]device.Device, error) {
		n, _ := parseCount(device.Getenv(EnvDevices)) // a refused value is "": 1 device, and one warning
		if n == 0 {
			return nil, device.NoDevice(Name, errors.New("GOMPT_HOST_DEVICES=0 asks for no host devices"))
		}
		devs := make([]device.Device, n)
		for i := range n {
			devs[i] = newDeviceOf(i, n, processBudget())
		}
		return devs, nil
	})
}

// parseCount parses GOMPT_HOST_DEVICES: the number of devices and, for a bad
// value, the one-line warning to print.
func parseCount(v string) (n int, warn string) {
	s := strings.TrimSpace(v)
	if s == "" {
		return 1, ""
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxDevices {
		return 1, fmt.Sprintf("gompt: GOMPT_HOST_DEVICES=%q: want a whole number 0..%d; using 1", v, MaxDevices)
	}
	return n, ""
}

// Device is one host offload device. All its methods are safe for concurrent
// use. Its generic.Device does the bookkeeping of device.Device (Alloc,
// Free, Load, MemInUse, with their checks and caches); the host device
// makes memory, loads Go images and runs queues; its driver (the methods
// generic.Device calls unchecked: MemAlloc, MemFree, LoadImage) is
// unexported, so that a caller reaches memory only through the checked
// Alloc and Free. Resolve gives direct access to its memory.
type Device struct {
	generic.Device[[]byte] // an allocation's handle is its memory

	info device.Info

	queues atomic.Uint64 // queues made, for their numbers
	// queued is the operations enqueued on the goroutines of the
	// device's queues and not yet completed (MayReuse).
	queued atomic.Int64
	pool   *hostexec.Pool

	mu        sync.Mutex
	slots     []slot // sorted by addr; see mem.go
	free      [numClasses][]int32
	retired   []int32 // big slots freed while work was queued (MemFree)
	base, top uint64  // address space [base, limit); top is the next new slot
	limit     uint64
	backing   int64 // Go memory held: allocated blocks, and those the cache keeps
	shared    *budget
}

// newDevice returns host device n (of at most MaxDevices), drawing on the
// process's one budget.
func newDevice(n int) *Device { return newDeviceIn(n, processBudget()) }

// newDeviceIn returns host device n (of at most MaxDevices) drawing on
// budget b.
func newDeviceIn(n int, b *budget) *Device { return newDeviceOf(n, MaxDevices, b) }

// newDeviceOf returns host device n of count drawing on budget b.
func newDeviceOf(n, count int, b *budget) *Device {
	d := &Device{
		pool:   hostexec.Default(),
		shared: b,
	}
	space := spaceBitsFor(count)
	d.base = addrBase + uint64(n)<<space
	d.top, d.limit = d.base, d.base+1<<space
	maxAlloc := min(uint64(b.limit)/2, 1<<(space-1))
	procs := runtime.GOMAXPROCS(0)
	d.info = device.Info{
		Name:              "gompt host device",
		Vendor:            "gompt",
		Backend:           Name,
		Type:              "cpu",
		Version:           "1.0",
		DriverVersion:     runtime.Version(),
		GlobalMem:         uint64(b.limit),
		LocalMem:          64 << 10,
		MaxAlloc:          maxAlloc,
		ComputeUnits:      procs,
		MaxThreadsPerTeam: MaxThreadsPerTeam,
		MaxTeams:          hostexec.MaxTeams,
		ClockMHz:          0,
		TimerResolutionNS: 1,
		UnifiedMemory:     false,
		Caps:              device.AllCaps(MaxThreadsPerTeam),
		Extra: []device.Attr{
			{Key: "GOMAXPROCS", Value: strconv.Itoa(procs)},
			{Key: "NumCPU", Value: strconv.Itoa(runtime.NumCPU())},
			{Key: "GOOS", Value: runtime.GOOS},
			{Key: "GOARCH", Value: runtime.GOARCH},
			{Key: "GlobalMem source", Value: b.how},
			{Key: "address space", Value: ""},
			{Key: "memory budget", Value: strconv.FormatInt(b.limit, 10) + " bytes, shared by every host device of the process"},
		},
	}
	d.info.Extra[5].Value = d.spaceString()
	d.Device.Init(driver{d}, generic.Config{
		ID:     device.ID(Name, n),
		Info:   d.info,
		Images: images,
		// Freed blocks of up to cacheMaxClass bytes are kept for reuse,
		// an eighth of the budget (at most 1 GiB) per device.
		CacheLimit: min(b.limit/8, 1<<30),
		CacheMax:   cacheMaxClass,
	})
	b.add(d)
	return d
}

// driver is a Device as generic.Device's Driver: the unchecked steps
// under its checked Alloc, Free and Load.
type driver struct{ *Device }

// MayReuse implements generic.Reuser: a freed block the cache keeps may
// serve a new allocation once no operation queued on the goroutine of
// any of the device's queues is still to complete, since one queued
// before the Free may use it (a launch or copy of a nowait construct).
// Operations that run inline have completed when their call returns.
func (d driver) MayReuse() bool { return d.queued.Load() == 0 }

// Info describes the device. GlobalMem is the memory budget that every host
// device of the process shares, half of the memory the process may use
// (physical memory, or the cgroup limit when lower; the "GlobalMem source"
// attribute says which): the live allocations of all host devices together,
// with the free blocks they keep for reuse, never hold more than that, so
// one device may hold all of it only while the others hold nothing.
// MaxAlloc, the largest single allocation, is half of it.
func (d *Device) Info() device.Info {
	info := d.info
	info.TimeSource = hostclock.Source()
	info.Extra = append(slices.Clone(d.info.Extra), device.Attr{Key: "clock", Value: info.TimeSource})
	return info
}

// Now returns the host clock (internal/hostclock, beside this package): nanoseconds since its
// first use, plus one, so that it is always > 0; read from the CPU's
// time-stamp counter where that is safe, else Go's monotonic clock. Info's
// "clock" attribute says which.
func (d *Device) Now() (int64, error) { return d.now(), nil }

func (d *Device) now() int64 { return hostclock.Now() }

// Function is a kernel loaded on a host device: its Go image.
type Function struct {
	k    *device.Kernel
	d    *Device
	host device.HostFunc
}

// Kernel returns the kernel f was loaded from.
func (f *Function) Kernel() *device.Kernel { return f.k }

// Image returns device.ImageHost.
func (f *Function) Image() device.ImageKind { return device.ImageHost }

// Bytes returns FunctionBytes, a nominal size.
func (f *Function) Bytes() int { return FunctionBytes }

// LoadImage returns k's Go image img as a Function of this device
// (generic.Driver): nothing is built.
func (d driver) LoadImage(k *device.Kernel, img *device.Image) (device.Function, error) {
	return &Function{k: k, d: d.Device, host: img.Host}, nil
}
