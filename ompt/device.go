package ompt

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
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

// DeviceHandle is the Go form of ompt_device_t: the opaque handle a tool
// receives in device_initialize and passes to the device entry points.
type DeviceHandle struct {
	num    int
	typ    string
	dev    Device
	lookup LookupFunc

	mu         sync.Mutex // guards the fields below
	finalized  bool
	finalizing bool // DeviceFinalize is delivering the last trace records
	fit        clockFit

	tr tracer // device tracing; has its own lock
}

// Num returns the device number the handle stands for.
func (h *DeviceHandle) Num() int { return h.num }

// Type returns the type string given in device_initialize.
func (h *DeviceHandle) Type() string { return h.typ }

var (
	devMu   sync.Mutex
	devices = map[int]*DeviceHandle{}
)

// DeviceDoc is the documentation string passed to device_initialize.
const DeviceDoc = `gompt device entry points (resolve them with the device's lookup):
ompt_get_device_num_procs(device) int: processors of the device.
ompt_get_device_time(device) ompt_device_time_t: device clock, ns; 0 on error.
ompt_translate_time(device, time) double: device time to host seconds on
  the omp_get_wtime base, from a piecewise linear fit of paired clock
  readings kept per device and refreshed as time passes; monotonic, also
  across refreshes; valid after device_finalize (the fit then stays).
ompt_set_trace_ompt(device, enable, etype): records of target (8),
  target_data_op (9) and target_submit (10) (EMI numbers: the same types)
  are ompt_set_always; every other event ompt_set_never; 0 (all) is
  ompt_set_sometimes. Nothing is recorded until a type is enabled.
ompt_set_trace_native(device, enable, flags): ompt_set_always when the
  device's plugin honours every flag, ompt_set_sometimes for some,
  ompt_set_never for none.
ompt_start_trace, ompt_pause_trace, ompt_flush_trace, ompt_stop_trace: 1 on
  success, 0 otherwise (start twice, stop or pause without start, flush or
  stop from inside this device's own buffer callbacks).
Buffers: entries start 8-byte aligned; an OMPT entry is one
  ompt_record_ompt_t (104 bytes); a native entry is a 48-byte header and
  the plugin's record. Cursors are byte offsets from the buffer's start.
  buffer_complete's bytes is the end offset of the part's records (0 for
  an empty part); a part with buffer_owned = 0 follows a flush and the
  runtime keeps writing after it. Target records come in pairs, endpoint
  begin and end, each with its own time.`

// GetDeviceNumProcsFunc is ompt_get_device_num_procs_t.
type GetDeviceNumProcsFunc func(device *DeviceHandle) int

// GetDeviceTimeFunc is ompt_get_device_time_t.
type GetDeviceTimeFunc func(device *DeviceHandle) uint64

// TranslateTimeFunc is ompt_translate_time_t.
type TranslateTimeFunc func(device *DeviceHandle, time uint64) float64

// DeviceEntryNames lists every name a device lookup resolves: the three
// device entry points, then the eleven tracing entry points (trace.go).
var DeviceEntryNames = []string{
	"ompt_get_device_num_procs", "ompt_get_device_time", "ompt_translate_time",
	"ompt_set_trace_ompt", "ompt_set_trace_native", "ompt_start_trace",
	"ompt_pause_trace", "ompt_flush_trace", "ompt_stop_trace",
	"ompt_advance_buffer_cursor", "ompt_get_record_type",
	"ompt_get_record_ompt", "ompt_get_record_native", "ompt_get_record_abstract",
}

var (
	getDeviceNumProcs GetDeviceNumProcsFunc = func(h *DeviceHandle) int {
		if h == nil || h.isFinalized() {
			return 0
		}
		return h.dev.NumProcs()
	}
	getDeviceTime GetDeviceTimeFunc = func(h *DeviceHandle) uint64 {
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
	translateTime TranslateTimeFunc = func(h *DeviceHandle, t uint64) float64 {
		if h == nil {
			return 0
		}
		// Device clocks count int64 nanoseconds: a time beyond them
		// (UINT64_MAX, say) is read as the largest, without moving the
		// fit's pinning point; a time before the host's Wtime epoch (0 on
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
	}
	return traceLookup(name)
}

func (h *DeviceHandle) isFinalized() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.finalized
}

// DeviceInitialize records device deviceNum (0..N-1) as initialized and
// dispatches device_initialize(deviceNum, typ, handle, lookup, DeviceDoc)
// to the tools. The runtime calls it once per device, after the plugin has
// initialized the device and before any other event that names it; it may
// be called with no tool active (GetDeviceInfo then works for tools that
// ask later). Errors: nil dev, or a device already initialized.
func DeviceInitialize(deviceNum int, typ string, dev Device) error {
	if dev == nil {
		return fmt.Errorf("ompt: DeviceInitialize(%d): nil Device", deviceNum)
	}
	h := &DeviceHandle{num: deviceNum, typ: typ, dev: dev, lookup: deviceLookup}
	h.tr.init(h)
	devMu.Lock()
	if _, ok := devices[deviceNum]; ok {
		devMu.Unlock()
		return fmt.Errorf("ompt: DeviceInitialize(%d): device already initialized", deviceNum)
	}
	devices[deviceNum] = h
	devMu.Unlock()
	h.mu.Lock()
	h.fit.resample(h.dev)
	h.mu.Unlock()
	// each tool gets its own lookup: a trace it starts delivers the ids it holds
	if d := cur.Load(); d != nil {
		for _, t := range d.tools {
			if t.done.Load() {
				continue
			}
			t.devInit(deviceNum)
			if f, ok := t.callback(CallbackDeviceInitialize).(DeviceInitializeCallback); ok {
				func() { defer t.guard(); f(deviceNum, typ, h, t.devLookup, DeviceDoc) }()
			}
		}
	}
	return nil
}

func liveDevice(op string, deviceNum int) (*DeviceHandle, error) {
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
	dispatchDevice(CallbackDeviceLoad, func(f DeviceLoadCallback) {
		f(deviceNum, filename, offsetInFile, vmaInFile, bytes, hostAddr, deviceAddr, moduleID)
	})
	return moduleID, nil
}

// DeviceUnload dispatches device_unload for a module DeviceLoad returned.
func DeviceUnload(deviceNum int, moduleID uint64) error {
	if _, err := liveDevice("DeviceUnload", deviceNum); err != nil {
		return err
	}
	dispatchDevice(CallbackDeviceUnload, func(f DeviceUnloadCallback) { f(deviceNum, moduleID) })
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
		for _, t := range d.tools {
			if t.done.Load() || !t.devFinal(deviceNum) {
				continue // a detached tool got it from detach
			}
			if f, ok := t.callback(CallbackDeviceFinalize).(DeviceFinalizeCallback); ok {
				func() { defer t.guard(); f(deviceNum) }()
			}
		}
	}
	return err
}

// dispatchDevice calls every attached tool's callback for device event ev
// (of Go type F) through call, each guarded against the tool's panic.
func dispatchDevice[F any](ev Callback, call func(F)) {
	d := cur.Load()
	if d == nil {
		return
	}
	for _, t := range d.tools {
		if f, ok := t.callback(ev).(F); ok && !t.done.Load() {
			func() { defer t.guard(); call(f) }()
		}
	}
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
func GetDeviceInfo(deviceNum int) (*DeviceHandle, LookupFunc, bool) {
	h, err := liveDevice("GetDeviceInfo", deviceNum)
	if err != nil {
		return nil, nil, false
	}
	return h, h.lookup, true
}

// epoch is the zero of Wtime.
var epoch = time.Now()

// Wtime returns seconds since the runtime's epoch on the monotonic clock.
// It is omp_get_wtime's base: target's omp_get_wtime returns it, and
// ompt_translate_time maps device times onto it.
func Wtime() float64 { return float64(time.Since(epoch)) / 1e9 }
