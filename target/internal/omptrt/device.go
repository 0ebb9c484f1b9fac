package omptrt

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/gompt/gompt/internal/omptlink"
	"github.com/gompt/gompt/ompt"
)

// Device is what the runtime gives the tools interface about one offload
// device, for the device entry points. target wraps its device.Device in
// it. Both methods are called from any goroutine, possibly concurrently,
// including from inside tool callbacks.
type Device interface {
	// NumProcs returns the number of processors (compute units, SMs,
	// worker goroutines) of the device.
	NumProcs() int
	// Now reads the device clock, in nanoseconds, monotonic, on the
	// device's own epoch (device.Device.Now).
	Now() (int64, error)
}

// devState is one device_initialize'd device; tools see its handle h.
type devState struct {
	h      *ompt.DeviceHandle // what the tools see
	num    int
	typ    string
	dev    Device
	lookup ompt.LookupFunc

	mu         sync.Mutex // guards the fields below
	finalized  bool
	finalizing bool // DeviceFinalize is delivering the last trace records
	fit        clockFit

	tr tracer // device tracing; has its own lock
}

// devOf returns the device of a handle the tools were given, nil for nil
// or a handle gompt never made.
func devOf(h *ompt.DeviceHandle) *devState {
	if h == nil {
		return nil
	}
	tab := handles.Load()
	if tab == nil || h.Num() < 0 || h.Num() >= len(*tab) {
		return nil
	}
	if d := (*tab)[h.Num()]; d != nil && d.h == h {
		return d
	}
	return nil
}

// devTab returns the current handles table (nil before any device).
func devTab() []*devState {
	if p := handles.Load(); p != nil {
		return *p
	}
	return nil
}

// handles indexes the initialized devices by number, for devOf: a copy
// made under devMu at each DeviceInitialize, read with one atomic load
// (the tracing entry points ask for every record a tool walks).
var handles atomic.Pointer[[]*devState]

var (
	devMu   sync.Mutex
	devices = map[int]*devState{}
)

var (
	getDeviceNumProcs ompt.GetDeviceNumProcsFunc = func(dh *ompt.DeviceHandle) int {
		h := devOf(dh)
		if h == nil || h.isFinalized() {
			return 0
		}
		return h.dev.NumProcs()
	}
	getDeviceTime ompt.GetDeviceTimeFunc = func(dh *ompt.DeviceHandle) uint64 {
		h := devOf(dh)
		if h == nil || h.isFinalized() {
			return 0
		}
		h.resampleIfStale() // keep a sync point near every time handed out
		v, err := h.dev.Now()
		if err != nil || v < 0 {
			return 0
		}
		return uint64(v)
	}
	translateTime ompt.TranslateTimeFunc = func(dh *ompt.DeviceHandle, t uint64) float64 {
		h := devOf(dh)
		if h == nil {
			return 0
		}
		// Device clocks count int64 nanoseconds: a time beyond them
		// (UINT64_MAX, say) is read as the largest, without moving the
		// fit's pinning point; a time before the host's ompt.Wtime epoch (0 on
		// a device whose clock started long before the program) is 0 s,
		// as omp_get_wtime is never negative. Both keep the map monotonic.
		if t > math.MaxInt64 {
			h.mu.Lock()
			defer h.mu.Unlock()
			return max(h.fit.at(math.MaxInt64), 0)
		}
		return max(h.translate(int64(t)), 0)
	}
)

func deviceLookup(name string) any {
	switch name {
	case "ompt_get_device_num_procs":
		return getDeviceNumProcs
	case "ompt_get_device_time":
		return getDeviceTime
	case "ompt_translate_time":
		return translateTime
	case ompt.BufferLimitsEntryName:
		if mode == Mode60 {
			return bufferLimits
		}
		return nil // OpenMP 6.0's: not a name of 5.2
	}
	return traceLookup(name)
}

func (h *devState) isFinalized() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.finalized
}

// DeviceInitialize records device deviceNum (0..N-1) as initialized and
// dispatches device_initialize(deviceNum, typ, handle, lookup, DeviceDoc)
// to the tools. The runtime calls it once per device, after the plugin has
// initialized the device and before any other event that names it; it may
// be called with no tool active (GetDeviceInfo then works for tools that
// ask later). Errors: nil dev, a negative deviceNum, or a device already
// initialized.
func DeviceInitialize(deviceNum int, typ string, dev Device) error {
	if dev == nil {
		return fmt.Errorf("ompt: DeviceInitialize(%d): nil Device", deviceNum)
	}
	if deviceNum < 0 {
		return fmt.Errorf("ompt: DeviceInitialize(%d): a negative device number; offload devices are numbered 0..N-1", deviceNum)
	}
	h := &devState{h: (*ompt.DeviceHandle)(omptlink.NewDeviceHandle(deviceNum, typ)), num: deviceNum, typ: typ, dev: dev, lookup: deviceLookup}
	h.tr.init(h)
	devMu.Lock()
	if _, ok := devices[deviceNum]; ok {
		devMu.Unlock()
		return fmt.Errorf("ompt: DeviceInitialize(%d): device already initialized", deviceNum)
	}
	devices[deviceNum] = h
	tab := make([]*devState, max(deviceNum+1, len(devTab())))
	copy(tab, devTab())
	tab[deviceNum] = h
	handles.Store(&tab)
	devMu.Unlock()
	h.mu.Lock()
	h.fit.resample(h.dev)
	h.mu.Unlock()
	// each tool gets its own lookup: a trace it starts delivers the ids it holds
	if d := cur.Load(); d != nil {
		inLife(d, ompt.CallbackDeviceInitialize, func() {
			for _, t := range d.tools {
				if t.done.Load() {
					continue
				}
				t.devInit(deviceNum)
				if f, ok := t.callback(ompt.CallbackDeviceInitialize).(ompt.DeviceInitializeCallback); ok {
					func() {
						ok := false
						defer t.guard(&ok)
						f(deviceNum, typ, h.h, t.devLookup, ompt.DeviceDoc)
						ok = true
					}()
				}
			}
		})
	}
	return nil
}

func liveDevice(op string, deviceNum int) (*devState, error) {
	devMu.Lock()
	h := devices[deviceNum]
	devMu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("ompt: %s(%d): device not initialized (call DeviceInitialize first)", op, deviceNum)
	}
	if h.isFinalized() {
		return nil, fmt.Errorf("ompt: %s(%d): device already finalized", op, deviceNum)
	}
	return h, nil
}

// DeviceLoad dispatches device_load for a code image loaded on device
// deviceNum (bytes > 0; filename "" when the image has no file; 0 for
// addresses that do not exist) and returns the module id, to be passed to
// DeviceUnload. The runtime calls it once per image per device, before the
// first construct that launches from it. Errors: device not initialized
// or finalized, bytes == 0.
func DeviceLoad(deviceNum int, filename string, offsetInFile int64, vmaInFile uintptr, bytes uint64, hostAddr, deviceAddr uintptr) (moduleID uint64, err error) {
	if _, err := liveDevice("DeviceLoad", deviceNum); err != nil {
		return 0, err
	}
	if bytes == 0 {
		return 0, fmt.Errorf("ompt: DeviceLoad(%d): image of 0 bytes (bytes must be > 0)", deviceNum)
	}
	moduleID = nextID()
	dispatchDevice(ompt.CallbackDeviceLoad, func(f ompt.DeviceLoadCallback) {
		f(deviceNum, filename, offsetInFile, vmaInFile, bytes, hostAddr, deviceAddr, moduleID)
	})
	return moduleID, nil
}

// DeviceUnload dispatches device_unload for a module DeviceLoad returned.
func DeviceUnload(deviceNum int, moduleID uint64) error {
	if _, err := liveDevice("DeviceUnload", deviceNum); err != nil {
		return err
	}
	dispatchDevice(ompt.CallbackDeviceUnload, func(f ompt.DeviceUnloadCallback) { f(deviceNum, moduleID) })
	return nil
}

// DeviceFinalize dispatches device_finalize for device deviceNum, the last
// event for it; its handle's entry points then answer 0. The runtime calls
// it at shutdown for each device it initialized (Finalize does it for any
// device the runtime did not). Errors: device not initialized, or
// finalized already.
func DeviceFinalize(deviceNum int) error {
	h, err := liveDevice("DeviceFinalize", deviceNum)
	if err != nil {
		return err
	}
	h.mu.Lock()
	if h.finalized || h.finalizing {
		h.mu.Unlock()
		return fmt.Errorf("ompt: DeviceFinalize(%d): device already finalized", deviceNum)
	}
	h.finalizing = true
	h.mu.Unlock()
	// Deliver every record before device_finalize, none after. The device
	// still counts as live meanwhile, so the tool's buffer callbacks can
	// translate the last records' times.
	_, err = h.tr.stop()
	h.mu.Lock()
	h.finalized = true
	h.mu.Unlock()
	if d := cur.Load(); d != nil {
		inLife(d, ompt.CallbackDeviceFinalize, func() {
			for _, t := range d.tools {
				if t.done.Load() || !t.devFinal(deviceNum) {
					continue // a detached tool got it from detach
				}
				if f, ok := t.callback(ompt.CallbackDeviceFinalize).(ompt.DeviceFinalizeCallback); ok {
					func() { ok := false; defer t.guard(&ok); f(deviceNum); ok = true }()
				}
			}
		})
	}
	return err
}

// dispatchDevice calls every attached tool's callback for device event ev
// (of Go type F) through call, each guarded against the tool's panic.
func dispatchDevice[F any](ev ompt.Callback, call func(F)) {
	d := cur.Load()
	if d == nil {
		return
	}
	inLife(d, ev, func() {
		for _, t := range d.tools {
			if f, ok := t.callback(ev).(F); ok && !t.done.Load() {
				func() { ok := false; defer t.guard(&ok); call(f); ok = true }()
			}
		}
	})
}

// inLife runs dispatch, which calls the tools' callbacks for device
// event ev, inside a hold of the calling OS thread (hostScope, with d's
// tools) when some tool of d registered ev: those callbacks come in a
// life of the thread, as every event but the buffer callbacks does.
func inLife(d *dispatcher, ev ompt.Callback, dispatch func()) {
	for _, t := range d.tools {
		if !t.done.Load() && t.callback(ev) != nil {
			s := hostScope(d)
			defer s.End()
			break
		}
	}
	dispatch()
}

// finalizeDevices finalizes every live device, in device-number order.
func finalizeDevices() {
	devMu.Lock()
	var nums []int
	for n, h := range devices {
		if !h.isFinalized() {
			nums = append(nums, n)
		}
	}
	devMu.Unlock()
	sort.Ints(nums)
	for _, n := range nums {
		DeviceFinalize(n)
	}
}

// GetDeviceInfo returns the handle and lookup function of an initialized,
// not finalized device: the technical report's ompt_target_get_device_info,
// for tools that want a device's entry points outside device_initialize.
func GetDeviceInfo(deviceNum int) (*ompt.DeviceHandle, ompt.LookupFunc, bool) {
	h, err := liveDevice("GetDeviceInfo", deviceNum)
	if err != nil {
		return nil, nil, false
	}
	return h.h, h.lookup, true
}
