//go:build cgo

package cuda

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/generic"
)

// gpu is one CUDA device, used through its primary context. All methods are
// safe for concurrent use.
type gpu struct {
	generic.Device[*allocation] // the allocation table and cache (reuse.go), the kernel cache

	id       string // "cuda:0"
	dev      cu.Device
	ctx      cu.Context
	info     device.Info
	maxBlock int
	maxGrid  [3]int

	// fault is the first error with a sticky result (cu.Result.Sticky):
	// from then on the context is unusable, and every operation fails at
	// once with ErrContextLost (see broken).
	fault atomic.Pointer[device.Error]

	closed atomic.Bool
	mu     sync.Mutex
	queues map[*queue]struct{}
	// nqueues counts the queues made, for queue numbers.
	nqueues atomic.Uint64

	staging stagingPool
	clock   clock
	events  eventPool
}

// allocation is an allocation's handle in the generic table, live or a
// freed block the generic cache keeps (see reuse.go).
type allocation struct {
	users  atomic.Pointer[[]*queue] // the queues that have enqueued work on it; copy on write
	fences []fence                  // a cached block's: the work to wait for before it is used again
}

// addUser notes that q enqueues work on a: a load and a scan, except the
// first time a queue uses the allocation.
func (a *allocation) addUser(q *queue) {
	for {
		old := a.users.Load()
		if old != nil && slices.Contains(*old, q) {
			return
		}
		var us []*queue
		if old != nil {
			us = append(us, *old...)
		}
		us = append(us, q)
		if a.users.CompareAndSwap(old, &us) {
			return
		}
	}
}

// usersOf returns the queues that have used a.
func (a *allocation) usersOf() []*queue {
	if p := a.users.Load(); p != nil {
		return *p
	}
	return nil
}

// openGPU opens CUDA device ordinal as plugin device number n; sched is
// the value of EnvSched ("" for the default).
func openGPU(n, ordinal, driver int, lib, sched string) (*gpu, error) {
	dev, err := cu.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	attr := func(a cu.DeviceAttribute) int {
		if err != nil {
			return 0
		}
		var v int
		v, err = cu.DeviceGetAttribute(a, dev)
		return v
	}
	name, err := cu.DeviceGetName(dev)
	if err != nil {
		return nil, err
	}
	major := attr(cu.DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
	minor := attr(cu.DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
	if err != nil {
		return nil, err
	}
	if major*10+minor < minCompute {
		return nil, fmt.Errorf("%s has compute capability %d.%d; gompt's PTX needs %d.%d or newer",
			name, major, minor, minCompute/10, minCompute%10)
	}
	g := &gpu{
		id:       device.ID(Name, n),
		dev:      dev,
		maxBlock: attr(cu.DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
		maxGrid: [3]int{attr(cu.DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), attr(cu.DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
			attr(cu.DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)},
		queues: map[*queue]struct{}{},
	}
	g.staging.Max = stagingMax
	sms := attr(cu.DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
	if err != nil {
		return nil, err
	}
	// The rest only describe the device: one a driver does not answer is
	// shown as 0 rather than costing the whole GPU.
	info := func(a cu.DeviceAttribute) int {
		v, e := cu.DeviceGetAttribute(a, dev)
		if e != nil {
			return 0
		}
		return v
	}
	clockKHz := info(cu.DEVICE_ATTRIBUTE_CLOCK_RATE)
	memKHz := info(cu.DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
	busWidth := info(cu.DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
	l2 := info(cu.DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
	shared := info(cu.DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
	warp := info(cu.DEVICE_ATTRIBUTE_WARP_SIZE)
	engines := info(cu.DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT)
	integrated := info(cu.DEVICE_ATTRIBUTE_INTEGRATED)
	pciDomain := info(cu.DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)
	pciBus := info(cu.DEVICE_ATTRIBUTE_PCI_BUS_ID)
	pciDev := info(cu.DEVICE_ATTRIBUTE_PCI_DEVICE_ID)
	uuid, _ := cu.DeviceGetUuid(dev) // zero when the driver cannot say
	total, err := cu.DeviceTotalMem(dev)
	if err != nil {
		return nil, err
	}
	schedWait := schedule(dev, sched)
	g.ctx, err = cu.DevicePrimaryCtxRetain(dev)
	if err != nil {
		return nil, err
	}
	free, _, err := cu.MemGetInfo(g.ctx)
	if err == nil {
		err = g.clock.init(g.ctx, func(err error) { g.fail("device clock", err) })
	}
	if err != nil {
		cu.DevicePrimaryCtxRelease(dev)
		return nil, err
	}
	g.info = device.Info{
		Name:              name,
		Vendor:            "NVIDIA",
		Backend:           Name,
		Type:              "gpu",
		Version:           fmt.Sprintf("sm_%d%d", major, minor),
		DriverVersion:     versionString(driver),
		GlobalMem:         total,
		LocalMem:          uint64(shared),
		MaxAlloc:          total,
		ComputeUnits:      sms,
		MaxThreadsPerTeam: g.maxBlock,
		MaxTeams:          g.maxGrid[0],
		ClockMHz:          clockKHz / 1000,
		TimerResolutionNS: 500, // cuEventElapsedTime: about half a microsecond
		UnifiedMemory:     integrated != 0,
		// Every GPU the PTX (sm_75) runs on has float64 and 64-bit
		// atomics; a kernel's static shared memory and its block are
		// checked again against its own limits when its module loads.
		Caps: device.Caps{
			FP64:         device.Feature{Has: true, Name: "float64 (sm_75)"},
			Int64Atomics: device.Feature{Has: true, Name: "64-bit atomics (sm_75)"},
			LocalMem:     device.Limit{N: int64(shared), From: "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"},
			TeamSize:     device.Limit{N: int64(g.maxBlock), From: "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"},
		},
		TimeSource: "CUDA events (cuEventElapsedTime) fitted to Go's monotonic clock at reference events",
		Extra: []device.Attr{
			{Key: "UUID", Value: formatUUID(uuid)},
			{Key: "PCI bus id", Value: fmt.Sprintf("%08x:%02x:%02x.0", pciDomain, pciBus, pciDev)},
			{Key: "compute capability", Value: fmt.Sprintf("%d.%d", major, minor)},
			{Key: "CUDA ordinal", Value: strconv.Itoa(ordinal)},
			{Key: "multiprocessors", Value: strconv.Itoa(sms)},
			{Key: "clock MHz", Value: strconv.Itoa(clockKHz / 1000)},
			{Key: "memory clock MHz", Value: strconv.Itoa(memKHz / 1000)},
			{Key: "memory bus width", Value: strconv.Itoa(busWidth)},
			{Key: "global memory", Value: strconv.FormatUint(total, 10)},
			{Key: "free memory", Value: strconv.FormatUint(free, 10)},
			{Key: "L2 cache", Value: strconv.Itoa(l2)},
			{Key: "max threads per block", Value: strconv.Itoa(g.maxBlock)},
			{Key: "max grid", Value: fmt.Sprintf("%dx%dx%d", g.maxGrid[0], g.maxGrid[1], g.maxGrid[2])},
			{Key: "warp size", Value: strconv.Itoa(warp)},
			{Key: "copy engines", Value: strconv.Itoa(engines)},
			{Key: "driver version", Value: versionString(driver)},
			{Key: "driver library", Value: lib},
			{Key: "waiting", Value: schedWait},
		},
	}
	// Freed blocks are kept for reuse, a quarter of the device's memory
	// (reuse.go); every size is made at its class's whole size, where
	// that fits MaxAlloc, and one that fits only at its exact size is
	// made at it, and not kept.
	g.Device.Init(g, generic.Config{ID: g.id, Info: g.info, Images: images,
		Hint:       "for a kernel written in Go, install clang-19 and libclc-19 and run go generate (gompt-kernels makes the PTX then); for device code written by hand, generate PTX from OpenCL C or CUDA C with clang as kernels/gen.sh does",
		CacheLimit: int64(total / 4), CacheMax: int(min(total, math.MaxInt)), ExactFallback: true})
	return g, nil
}

// formatUUID formats as nvidia-smi does: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func formatUUID(u [16]byte) string {
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// Info describes the device; free memory in Extra is as at start-up.
func (g *gpu) Info() device.Info { return g.info }

// The device's generic part is read through these, not the embedded
// field's names.
var _ generic.Driver[*allocation] = (*gpu)(nil)

// fail wraps a driver error as a device error of operation op. A sticky
// result marks the device broken: the first such error is kept for the
// errors of every later operation (broken).
func (g *gpu) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *cu.Error
	if errors.As(err, &ce) {
		e := &device.Error{Op: op, Device: g.id, Code: ce.Code(), Err: err}
		if ce.Result.Sticky() {
			g.fault.CompareAndSwap(nil, e)
		}
		return e
	}
	var de *device.Error
	if errors.As(err, &de) {
		return err
	}
	return &device.Error{Op: op, Device: g.id, Code: device.CodeUnknown, Err: err}
}

func (g *gpu) errClosed(op string) error {
	return device.Errorf(g.id, op, device.CodeInvalidDevice, "device is closed")
}

// BindingContext returns the device's CUDA context for the raw baselines
// of device/cuda/curaw (which only they use), or the error of operation op
// on a closed device or one whose context is lost.
func (g *gpu) BindingContext(op string) (cu.Context, error) {
	if err := g.usable(op); err != nil {
		return nil, err
	}
	return g.ctx, nil
}

var (
	_ device.Device   = (*gpu)(nil)
	_ device.MemInfo  = (*gpu)(nil)
	_ device.Closer   = (*gpu)(nil)
	_ device.Queue    = (*queue)(nil)
	_ device.Event    = (*event)(nil)
	_ device.Function = (*function)(nil)
)

// broken returns the error of operation op on a device whose context a
// sticky error has made unusable, or nil while the device works. The error
// has CodeInvalidDevice, wraps ErrContextLost and names the first error.
func (g *gpu) broken(op string) error {
	first := g.fault.Load()
	if first == nil {
		return nil
	}
	return &device.Error{Op: op, Device: g.id, Code: device.CodeInvalidDevice,
		Err: fmt.Errorf("%w; the first error was in %s: %w", ErrContextLost, first.Op, first.Err)}
}

// usable returns the error of operation op on a closed or broken device,
// or nil.
func (g *gpu) usable(op string) error {
	if g.closed.Load() {
		return g.errClosed(op)
	}
	return g.broken(op)
}

// MemAlloc returns span bytes of device memory for an allocation of size
// bytes (generic.Driver), from cuMemAlloc. The address is the CUdeviceptr
// itself, so interior pointers work.
func (g *gpu) MemAlloc(size, span int) (device.DevicePtr, *allocation, error) {
	const op = "alloc"
	if err := g.usable(op); err != nil {
		return 0, nil, err
	}
	dp, err := cu.MemAlloc(g.ctx, span)
	if err != nil {
		e := g.fail(op, err)
		if isOOM(err) {
			free, total, _ := cu.MemGetInfo(g.ctx)
			e = device.Errorf(g.id, op, device.CodeOutOfResources,
				"%d bytes: the device has %d of %d bytes free: %w", size, free, total, err)
		}
		return 0, nil, e
	}
	return device.DevicePtr(dp), &allocation{}, nil
}

func isOOM(err error) bool {
	var ce *cu.Error
	return errors.As(err, &ce) && ce.Result == cu.ERROR_OUT_OF_MEMORY
}

// MemFree releases p with cuMemFree, which waits for the device's work
// (generic.Driver): an allocation the cache does not keep, or a block
// leaving it (after its fences). On a broken device p is forgotten (the
// memory goes with the context) and the error says why. Safe for
// concurrent use.
func (g *gpu) MemFree(p device.DevicePtr, _ *allocation, _ int) error {
	const op = "free"
	if g.closed.Load() {
		return g.errClosed(op)
	}
	if g.fault.Load() != nil {
		cu.MemFree(g.ctx, cu.DevicePtr(p)) // fails at once: the binding forgets the block
		return g.broken(op)
	}
	return g.fail(op, cu.MemFree(g.ctx, cu.DevicePtr(p)))
}

// use reports an error unless [p, p+n) lies inside one live allocation (n
// may be 0: p may then be the allocation's end), and notes that queue q
// enqueues work on that allocation (see Free).
func (g *gpu) use(op string, q *queue, p device.DevicePtr, n int) error {
	if err := g.usable(op); err != nil {
		return err
	}
	a, _, _, err := g.Lookup(op, p, n)
	if err != nil {
		return err
	}
	a.addUser(q)
	return nil
}

// Close releases everything the device holds: queues (after their work),
// loaded modules, live and cached memory, staging buffers, events (those of
// Record not yet waited for too) and the primary context. Later calls
// on the device, and Waits for those events, fail with CodeInvalidDevice.
// It returns the errors joined, except on a broken device (see broken),
// where the driver fails every call with the error already reported: Close
// then releases what it can and the context, and returns nil.
func (g *gpu) Close() error {
	g.mu.Lock()
	if g.closed.Load() {
		g.mu.Unlock()
		return nil
	}
	queues := make([]*queue, 0, len(g.queues))
	for q := range g.queues {
		queues = append(queues, q)
	}
	g.mu.Unlock()
	var errs []error
	for _, q := range queues {
		errs = append(errs, q.Release())
	}
	_, err := g.Trim() // the cache's blocks, after their fences
	errs = append(errs, err)
	g.closed.Store(true)
	live, _ := g.Forget()
	for _, sp := range live {
		errs = append(errs, g.fail("free", cu.MemFree(g.ctx, cu.DevicePtr(sp.Base))))
	}
	for _, f := range g.Kernels().Take() {
		errs = append(errs, g.fail("unload", cu.ModuleUnload(g.ctx, f.(*function).mod)))
	}
	errs = append(errs, g.closeStaging(), g.events.close(g), g.clock.close(g.ctx))
	errs = append(errs, g.fail("close", cu.DevicePrimaryCtxRelease(g.dev)))
	if g.fault.Load() != nil {
		errs = slices.DeleteFunc(errs, func(err error) bool {
			var ce *cu.Error
			return err == nil || errors.Is(err, ErrContextLost) || errors.As(err, &ce) && ce.Result.Sticky()
		})
	}
	return errors.Join(errs...)
}
