package ompt

import (
	"time"
	"unsafe"

	"github.com/gompt/gompt/internal/omptlink"
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
// device entry points, then the eleven tracing entry points.
var DeviceEntryNames = []string{
	"ompt_get_device_num_procs", "ompt_get_device_time", "ompt_translate_time",
	"ompt_set_trace_ompt", "ompt_set_trace_native", "ompt_start_trace",
	"ompt_pause_trace", "ompt_flush_trace", "ompt_stop_trace",
	"ompt_advance_buffer_cursor", "ompt_get_record_type",
	"ompt_get_record_ompt", "ompt_get_record_native", "ompt_get_record_abstract",
}

// BufferLimitsEntryName is OpenMP 6.0's device entry point
// ompt_get_buffer_limits, which a device lookup resolves (to a
// GetBufferLimitsFunc) only with GOMPT_OMPT_VERSION=6.0.
const BufferLimitsEntryName = "ompt_get_buffer_limits"

// GetBufferLimitsFunc is ompt_get_buffer_limits_t (OpenMP 6.0): how many
// trace buffers the runtime may hold from the tool at once for the
// device (maxConcurrentAllocs) and how large a buffer it recommends
// (recommendedBytes); ok is false (the C form returns 0 and writes
// nothing) for a nil, never-initialized or finalized device.
type GetBufferLimitsFunc func(device *DeviceHandle) (maxConcurrentAllocs int, recommendedBytes uint64, ok bool)

// Device tracing entry points: the Go forms of the omp-tools.h typedefs,
// resolved by each device's lookup. A buffer is a []byte (for a C tool,
// target/internal/cabi's view of the C memory the tool gave: the same bytes); a
// cursor is a byte offset into it. Results that C returns through pointer
// arguments are Go results; C's int flags are Go bools where they are
// arguments. All are safe for concurrent use from any goroutine,
// including from inside callbacks; a nil, never-initialized or finalized
// device makes them fail (0, SetError, RecordKindInvalid, nil).
type (
	// BufferRequestFunc is ompt_callback_buffer_request_t: the tool returns
	// a buffer for device deviceNum's records (nil or empty: none). The
	// tool keeps ownership of the memory; the runtime writes into it
	// until it hands it back with buffer_owned = 1.
	BufferRequestFunc func(deviceNum int) (buffer []byte)
	// BufferCompleteFunc is ompt_callback_buffer_complete_t: records of
	// device deviceNum lie in buffer from cursor begin up to offset bytes
	// (bytes == 0: none). owned is buffer_owned: true on the last part of
	// a buffer, which is the tool's again; false on an earlier part (after
	// a flush), when the runtime keeps writing into the rest.
	BufferCompleteFunc func(deviceNum int, buffer []byte, bytes uint64, begin uint64, owned bool)

	// SetTraceOMPTFunc is ompt_set_trace_ompt_t; etype 0 means every type.
	SetTraceOMPTFunc func(device *DeviceHandle, enable bool, etype Callback) SetResult
	// SetTraceNativeFunc is ompt_set_trace_native_t; flags are Native* bits.
	SetTraceNativeFunc func(device *DeviceHandle, enable bool, flags uint32) SetResult
	// StartTraceFunc is ompt_start_trace_t: 1 on success.
	StartTraceFunc func(device *DeviceHandle, request BufferRequestFunc, complete BufferCompleteFunc) int
	// PauseTraceFunc is ompt_pause_trace_t: 1 on success.
	PauseTraceFunc func(device *DeviceHandle, beginPause bool) int
	// FlushTraceFunc is ompt_flush_trace_t: 1 on success.
	FlushTraceFunc func(device *DeviceHandle) int
	// StopTraceFunc is ompt_stop_trace_t: 1 on success.
	StopTraceFunc func(device *DeviceHandle) int
	// AdvanceBufferCursorFunc is ompt_advance_buffer_cursor_t: ok when the
	// entry after current lies within buffer[:size]. device may be nil.
	AdvanceBufferCursorFunc func(device *DeviceHandle, buffer []byte, size uint64, current uint64) (next uint64, ok bool)
	// GetRecordTypeFunc is ompt_get_record_type_t.
	GetRecordTypeFunc func(buffer []byte, current uint64) RecordKind
	// GetRecordOMPTFunc is ompt_get_record_ompt_t: a pointer into buffer,
	// nil if the entry is not an OMPT record.
	GetRecordOMPTFunc func(buffer []byte, current uint64) *RecordOMPT
	// GetRecordNativeFunc is ompt_get_record_native_t: a pointer to the
	// native record in buffer (its plugin's registered record type: host.Record, ...; device.NativeTypeOf describes any) and
	// the host_op_id of its operation; nil if the entry is not native.
	GetRecordNativeFunc func(buffer []byte, current uint64) (native unsafe.Pointer, hostOpID uint64)
	// GetRecordAbstractFunc is ompt_get_record_abstract_t; native must be
	// a pointer get_record_native returned (nil gives nil).
	GetRecordAbstractFunc func(native unsafe.Pointer) *RecordAbstract
)

// DeviceHandle is the Go form of ompt_device_t: the opaque handle a tool
// receives in device_initialize and passes to the device entry points.
type DeviceHandle struct {
	num int
	typ string
}

// Num returns the device number the handle stands for.
func (h *DeviceHandle) Num() int { return h.num }

// Type returns the type string given in device_initialize.
func (h *DeviceHandle) Type() string { return h.typ }

// TraceStats reports how many trace entries the runtime has written into
// the tool's buffers for this device since it was initialized, and how
// many it lost: the delivery queue was full, the tool gave no buffer or
// one too small from its buffer_request, a buffer callback panicked, or
// a device time could not be read. gompt's own: OMPT has no such entry
// point, so a C tool has none either.
func (h *DeviceHandle) TraceStats() (written, lost uint64) {
	if f := omptlink.TraceStats; f != nil && h != nil {
		return f(h.num)
	}
	return 0, 0
}

func init() {
	omptlink.NewDeviceHandle = func(num int, typ string) unsafe.Pointer {
		return unsafe.Pointer(&DeviceHandle{num: num, typ: typ})
	}
}

// epoch is the zero of Wtime.
var epoch = time.Now()

// Wtime returns seconds since the runtime's epoch on the monotonic clock.
// It is omp_get_wtime's base: target's omp_get_wtime returns it, and
// ompt_translate_time maps device times onto it.
func Wtime() float64 { return float64(time.Since(epoch)) / 1e9 }
