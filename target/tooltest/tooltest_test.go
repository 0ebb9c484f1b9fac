package tooltest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rec records EMI events as lines and checks the slot rules as it goes.
type rec struct {
	mu      sync.Mutex
	lines   []string
	errs    []string
	info    ompt.GetTargetInfoFunc
	nextTD  uint64
	initial int // initial_device_num: the host in data-op events

	mapFlags []uint32              // of the last target_map event
	ttds     map[uint64]*ompt.Data // the tool's target id -> target_task_data at target begin
	marks    map[uint64]uint64     // the tool's mark in a target task's task_data -> its target id
	nextMark uint64
	ends     []opEnd // every data op's end, for order checks

	// tracing
	handle  *ompt.DeviceHandle
	lookup  ompt.LookupFunc
	records []traced
	natives []string // abstract types of the native records read
	loads   []string // device_load file names
	nextOp  uint64
	opIDs   map[uint64]uint64     // host_op_id the tool saw or wrote -> the tool's target id (its target_data value)
	window  map[uint64][2]float64 // the tool's target id -> host begin/end (wtime seconds)
}

// dev names a data op's device number: "host" for initial_device_num
// (the host's number in every callback), the number otherwise.
func (r *rec) dev(n int) string {
	if n == r.initial {
		return "host"
	}
	return fmt.Sprint(n)
}

// opEnd is a data op as its end callback reports it.
type opEnd struct {
	kind     ompt.DataOpKind
	src, dst uintptr
	bytes    uint64
}

// traced is one trace record as the tool copied it out of the buffer.
type traced struct {
	typ        ompt.Callback
	targetID   uint64
	hostOpID   uint64
	op         ompt.DataOpKind
	begin, end float64 // translated to host seconds
	rawBegin   uint64
	rawEnd     uint64
	thread     uint64
	granted    uint32
}

var tool = &rec{}

func (r *rec) add(format string, args ...any) {
	r.mu.Lock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *rec) fail(format string, args ...any) {
	r.mu.Lock()
	r.failLocked(format, args...)
	r.mu.Unlock()
}

// addLocked and failLocked are add and fail with r.mu held.
func (r *rec) addLocked(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *rec) failLocked(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *rec) take() (lines, errs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines, errs = r.lines, r.errs
	r.lines, r.errs, r.ends = nil, nil, nil
	return
}

func fn(pc uintptr) string {
	if f := runtime.FuncForPC(pc); f != nil {
		n := f.Name()
		return n[strings.LastIndex(n, ".")+1:]
	}
	return "?"
}

func init() {
	ompt.RegisterTool("tooltest", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, initial int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			tool.info = lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)
			tool.add("initialize initial=%d", initial)
			tool.initial = initial
			tool.opIDs = map[uint64]uint64{}
			tool.window = map[uint64][2]float64{}
			tool.ttds = map[uint64]*ompt.Data{}
			tool.marks = map[uint64]uint64{}
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, typ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
				if h == nil || lk == nil {
					tool.fail("device_initialize %d: nil device or lookup", dev)
				}
				if t, ok := lk("ompt_get_device_time").(ompt.GetDeviceTimeFunc); !ok || t(h) == 0 {
					tool.fail("device %d: ompt_get_device_time missing or 0", dev)
				}
				tool.add("device_initialize dev=%d", dev)
				if dev == 0 {
					startTracing(h, lk)
				}
			}))
			set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(dev int, file string, _ int64, _ uintptr, bytes uint64, _, _ uintptr, _ uint64) {
				if bytes == 0 {
					tool.fail("device_load with 0 bytes")
				}
				tool.mu.Lock()
				tool.loads = append(tool.loads, file)
				tool.mu.Unlock()
				tool.add("device_load dev=%d", dev)
			}))
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, task, ttd, td *ompt.Data, code uintptr) {
				now := target.Wtime()
				tool.mu.Lock()
				if ep == ompt.ScopeBegin {
					tool.nextTD++
					td.Value = 1000 + tool.nextTD
					tool.window[td.Value] = [2]float64{now, 0}
					tool.ttds[td.Value] = ttd
					if ttd != nil && ttd.Value > 9_000_000 {
						tool.marks[ttd.Value] = td.Value
					}
				} else {
					w := tool.window[td.Value]
					w[1] = now
					tool.window[td.Value] = w
				}
				tool.mu.Unlock()
				if kind.Nowait() == (ttd == nil) {
					tool.fail("%v: target_task_data nil=%v for nowait=%v", kind, ttd == nil, kind.Nowait())
				}
				dn, tid, _, ok := tool.info()
				if !ok || dn != dev {
					tool.fail("%v %v: ompt_get_target_info = %d, %v inside the construct on %d", kind, ep, dn, ok, dev)
				}
				if tid != td.Value {
					tool.fail("%v %v: ompt_get_target_info target_id %d, the tool's target_data holds %d", kind, ep, tid, td.Value)
				}
				tool.add("target %v %v dev=%d td=%d code=%s", kind, ep, dev, td.Value, fn(code))
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, ttd, td *ompt.Data, op *uint64, kind ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, bytes uint64, code uintptr) {
				tdv := uint64(0)
				if td != nil {
					tdv = td.Value
				} else {
					tool.fail("%v %v: target_data nil (a device memory routine gets its own slot)", kind, ep)
				}
				_, tid, hop, inside := tool.info()
				if inside && (td == nil || tid != td.Value) {
					tool.fail("%v %v: ompt_get_target_info target_id %d, the tool's target_data holds %d", kind, ep, tid, tdv)
				}
				if ep == ompt.ScopeBegin {
					if inside && hop != *op {
						tool.fail("%v begin: ompt_get_target_info host_op_id %d, the slot holds %d", kind, hop, *op)
					}
					tool.mu.Lock()
					tool.nextOp++
					*op = 7_000_000 + tool.nextOp // the tool's own id, must survive to the end
					tool.opIDs[*op] = tdv
					tool.mu.Unlock()
				} else if *op < 7_000_000 {
					tool.fail("host_op_id slot lost the tool's value: %d", *op)
				}
				if _, _, hop, _ := tool.info(); inside && hop != *op {
					tool.fail("%v %v: ompt_get_target_info host_op_id %d, the tool wrote %d", kind, ep, hop, *op)
				}
				if ep == ompt.ScopeEnd {
					tool.mu.Lock()
					tool.ends = append(tool.ends, opEnd{kind, src, dst, bytes})
					tool.mu.Unlock()
				}
				tool.add("data_op %v %v src_dev=%s dst_dev=%s bytes=%d td=%d code=%s", kind, ep, tool.dev(sd), tool.dev(dd), bytes, tdv, fn(code))
			}))
			set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, td *ompt.Data, op *uint64, teams uint32) {
				if ep == ompt.ScopeBegin { // the tool leaves the runtime's host_op_id here
					tool.mu.Lock()
					tool.opIDs[*op] = td.Value
					tool.mu.Unlock()
				}
				if _, tid, hop, _ := tool.info(); tid != td.Value || hop != *op {
					tool.fail("submit %v: ompt_get_target_info %d/%d, the tool's slots %d/%d", ep, tid, hop, td.Value, *op)
				}
				tool.add("submit %v teams=%d td=%d", ep, teams, td.Value)
			}))
			set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(td *ompt.Data, host, dev []uintptr, bytes []uint64, flags []uint32, code uintptr) {
				tool.mu.Lock()
				tool.mapFlags = append([]uint32(nil), flags...)
				tool.mu.Unlock()
				tool.add("map n=%d td=%d", len(host), td.Value)
			}))
			if r := set(ompt.CallbackDependences, ompt.DependencesCallback(func(task *ompt.Data, deps []ompt.Dependence) {
				var l []string
				for _, d := range deps {
					l = append(l, fmt.Sprintf("%v@%#x", d.Type, d.Addr))
				}
				_, tid, _, inside := tool.info()
				tool.mu.Lock()
				defer tool.mu.Unlock()
				ttd, seen := tool.ttds[tid]
				switch {
				case task == nil:
					tool.failLocked("dependences: nil task_data")
				case inside && !seen:
					tool.failLocked("dependences inside construct %d, which had no target begin", tid)
				case inside && ttd != nil && ttd != task:
					tool.failLocked("dependences: task_data %p is not the target_task_data %p of the construct's target begin", task, ttd)
				case inside:
					// a synchronous construct's included task: inside it
					tool.addLocked("dependences td=%d %s", tid, strings.Join(l, " "))
				case task.Value != 0:
					tool.failLocked("dependences of a target task not yet begun: task_data %d, want 0", task.Value)
				default:
					// a nowait construct's target task, before its target
					// begin (at the task's first event): the tool marks its
					// task_data, which its target begin gets again
					tool.nextMark++
					task.Value = 9_000_000 + tool.nextMark
					tool.addLocked("dependences mark=%d %s", task.Value, strings.Join(l, " "))
				}
			})); r != ompt.SetAlways {
				tool.fail("set_callback(dependences) = %v, want ompt_set_always", r)
			}
			// Registered too, but OpenMP 5.2 calls only the EMI form.
			set(ompt.CallbackTarget, ompt.TargetCallback(func(ompt.TargetKind, ompt.Endpoint, int, *ompt.Data, uint64, uintptr) {
				tool.fail("non-EMI target callback called although the EMI one is registered")
			}))
			return 1
		}}
	})
}

func expect(t *testing.T, want ...string) {
	t.Helper()
	got, errs := tool.take()
	assert.Empty(t, errs, "slot-rule violations the tool saw")
	// The first construct of the binary also initialises the device.
	var filtered []string
	for _, l := range got {
		if strings.HasPrefix(l, "initialize") || strings.HasPrefix(l, "device_") {
			continue
		}
		filtered = append(filtered, l)
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(filtered, "\n"), "events")
}

func TestMain(m *testing.M) {
	// Device 0 is the host offload device unless the environment picks
	// other plugins (GOMPT_PLUGINS=opencl runs these tests on OpenCL).
	if os.Getenv("GOMPT_PLUGINS") == "" {
		os.Setenv("GOMPT_PLUGINS", "host")
	}
	code := m.Run()
	target.Shutdown()
	os.Exit(code)
}

func TestTargetEMISequence(t *testing.T) {
	x, y := make([]float32, 256), make([]float32, 256)
	tool.take()
	err := target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.Shape{Size: [3]int{256, 1, 1}, Teams: 4},
		Maps: []target.Map{target.To(x), target.ToFrom(y)},
		Args: []target.Arg{target.Int(256), target.Float32(2), target.Slice(x), target.Slice(y)}})
	require.NoError(t, err)
	td := tool.nextTD + 1000
	f := "TestTargetEMISequence"
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc begin src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc end src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device begin src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device end src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc begin src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc end src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device begin src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device end src_dev=host dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("map n=2 td=%d", td),
		fmt.Sprintf("submit begin teams=4 td=%d", td),
		fmt.Sprintf("submit end teams=4 td=%d", td),
		fmt.Sprintf("data_op ompt_target_data_transfer_from_device begin src_dev=0 dst_dev=host bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_from_device end src_dev=0 dst_dev=host bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete begin src_dev=0 dst_dev=host bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete end src_dev=0 dst_dev=host bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete begin src_dev=0 dst_dev=host bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete end src_dev=0 dst_dev=host bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("target ompt_target end dev=0 td=%d code=%s", td, f),
	)
}

func TestPresentItemsMakeNoDataOps(t *testing.T) {
	x := make([]float32, 64)
	require.NoError(t, target.EnterData(0, target.To(x)))
	tool.take()
	err := target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Fill, Shape: target.N(64),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(64), target.Float32(1), target.Slice(x)}})
	require.NoError(t, err)
	td := tool.nextTD + 1000
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=0 td=%d code=TestPresentItemsMakeNoDataOps", td),
		fmt.Sprintf("map n=1 td=%d", td),
		fmt.Sprintf("submit begin teams=0 td=%d", td),
		fmt.Sprintf("submit end teams=0 td=%d", td),
		fmt.Sprintf("target ompt_target end dev=0 td=%d code=TestPresentItemsMakeNoDataOps", td),
	)
	require.NoError(t, target.ExitData(0, target.Delete(x)))
	tool.take()
}

func TestMemoryRoutinesAreOutsideConstructs(t *testing.T) {
	tool.take()
	p, err := target.AllocMem(64, 0)
	require.NoError(t, err)
	h := make([]byte, 64)
	require.NoError(t, target.Memcpy(target.On(0, p), target.Host(h), 64))
	require.NoError(t, target.Memset(target.On(0, p), 0, 64))
	require.NoError(t, target.FreeMem(p, 0))
	f := "TestMemoryRoutinesAreOutsideConstructs"
	expect(t,
		"data_op ompt_target_data_alloc begin src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_alloc end src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_transfer_to_device begin src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_transfer_to_device end src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_memset begin src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_memset end src_dev=host dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_delete begin src_dev=0 dst_dev=host bytes=0 td=0 code="+f,
		"data_op ompt_target_data_delete end src_dev=0 dst_dev=host bytes=0 td=0 code="+f,
	)
}

// memcpy_rect is one data op per contiguous piece: each row of a
// rectangle whose rows are apart, one op for rows that follow each other
// on both sides.
func TestMemcpyRectDataOps(t *testing.T) {
	p, err := target.AllocMem(64, 0)
	require.NoError(t, err)
	defer target.FreeMem(p, 0)
	h := make([]byte, 64)
	tool.take()
	// Three rows of 4 bytes from an 8-wide array: three ops.
	require.NoError(t, target.MemcpyRect(target.On(0, p), target.Host(h), 1, []int{3, 4}, []int{0, 0}, []int{1, 2}, []int{3, 4}, []int{8, 8}))
	// Three whole rows on both sides: one op of 24 bytes.
	require.NoError(t, target.MemcpyRect(target.On(0, p), target.Host(h), 1, []int{3, 8}, []int{1, 0}, []int{2, 0}, []int{8, 8}, []int{8, 8}))
	f := "TestMemcpyRectDataOps"
	var want []string
	for _, n := range []int{4, 4, 4, 24} {
		for _, ep := range []string{"begin", "end"} {
			want = append(want, fmt.Sprintf("data_op ompt_target_data_transfer_to_device %s src_dev=host dst_dev=0 bytes=%d td=0 code=%s", ep, n, f))
		}
	}
	expect(t, want...)
}

func TestNowaitKindsAndAsyncOps(t *testing.T) {
	x := make([]float32, 32)
	tool.take()
	require.NoError(t, target.EnterDataNowait(0, target.To(x)).Wait())
	require.NoError(t, target.ExitDataNowait(0, target.Delete(x)).Wait())
	require.NoError(t, target.UpdateNowait(0, target.To(x)).Wait(), "update of an unmapped slice: nothing to do")
	got, errs := tool.take()
	assert.Empty(t, errs, "slot-rule violations the tool saw")
	joined := strings.Join(got, "\n")
	for _, want := range []string{"ompt_target_enter_data_nowait begin", "ompt_target_data_alloc_async",
		"ompt_target_data_transfer_to_device_async", "ompt_target_exit_data_nowait end", "ompt_target_data_delete_async"} {
		assert.Contains(t, joined, want, "nowait events")
	}
	// Each nowait construct names its caller (codeptr_ra), as the
	// synchronous ones do.
	for _, kind := range []string{"enter_data_nowait", "exit_data_nowait", "update_nowait"} {
		for _, ep := range []string{"begin", "end"} {
			want := fmt.Sprintf("target ompt_target_%s %s dev=0 ", kind, ep)
			found := false
			for _, l := range got {
				if strings.HasPrefix(l, want) {
					found = true
					assert.True(t, strings.HasSuffix(l, " code=TestNowaitKindsAndAsyncOps"), "%s: the tool was told %q; want the caller", kind, l)
				}
			}
			assert.True(t, found, "no %q... event in:\n%s", want, joined)
		}
	}
}

func TestInitialDeviceConstruct(t *testing.T) {
	x := make([]float32, 16)
	n := target.InitialDeviceNum()
	tool.take()
	require.NoError(t, target.Target(target.Region{Device: target.Dev(target.InitialDevice), Kernel: kernels.Fill, Shape: target.N(16),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(16), target.Float32(3), target.Slice(x)}}))
	td := tool.nextTD + 1000
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=%d td=%d code=TestInitialDeviceConstruct", n, td),
		fmt.Sprintf("submit begin teams=0 td=%d", td),
		fmt.Sprintf("submit end teams=0 td=%d", td),
		fmt.Sprintf("target ompt_target end dev=%d td=%d code=TestInitialDeviceConstruct", n, td),
	)
	assert.Equal(t, float32(3), x[7], "x[7]")
}

// startTracing starts tracing every record type on the device through the
// standard entry points.
func startTracing(h *ompt.DeviceHandle, lk ompt.LookupFunc) {
	tool.handle, tool.lookup = h, lk
	set := lk("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)
	if r := set(h, true, 0); r != ompt.SetAlways && r != ompt.SetSometimes {
		tool.fail("set_trace_ompt(all) = %v", r)
	}
	start := lk("ompt_start_trace").(ompt.StartTraceFunc)
	advance := lk("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	rtype := lk("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	rompt := lk("ompt_get_record_ompt").(ompt.GetRecordOMPTFunc)
	rnative := lk("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	rabstract := lk("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	translate := lk("ompt_translate_time").(ompt.TranslateTimeFunc)
	ok := start(h, func(int) []byte { return make([]byte, 1<<16) },
		func(dev int, buf []byte, bytes, cur uint64, owned bool) {
			for bytes > 0 {
				if rtype(buf, cur) == ompt.RecordKindOMPT {
					r := rompt(buf, cur)
					t := traced{typ: r.Event(), targetID: r.TargetID, rawBegin: r.Time, thread: r.ThreadID}
					t.begin = translate(h, r.Time)
					t.rawEnd = r.Time
					if d := r.DataOp(); d != nil {
						t.hostOpID, t.op, t.rawEnd = d.HostOpID, ompt.DataOpKind(d.OpType), d.EndTime
					}
					if k := r.Kernel(); k != nil {
						t.hostOpID, t.rawEnd, t.granted = k.HostOpID, k.EndTime, k.GrantedNumTeams
					}
					t.end = translate(h, t.rawEnd)
					tool.mu.Lock()
					tool.records = append(tool.records, t)
					tool.mu.Unlock()
				} else if rtype(buf, cur) == ompt.RecordKindNative {
					p, _ := rnative(buf, cur)
					if a := rabstract(p); a != nil {
						tool.mu.Lock()
						tool.natives = append(tool.natives, a.Type)
						tool.mu.Unlock()
					}
				}
				next, more := advance(h, buf, bytes, cur)
				if !more {
					break
				}
				cur = next
			}
		})
	if ok != 1 {
		tool.fail("start_trace = %d", ok)
	}
}

func flush(t *testing.T) []traced {
	t.Helper()
	if tool.handle == nil {
		// The first test to trace, run alone (-run): device 0 starts
		// with its first construct.
		x := make([]float32, 1)
		require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(1),
			Args: []target.Arg{target.Int(1), target.Float32(1), target.Slice(x), target.Slice(x)}}), "device 0's first construct")
	}
	require.NotNil(t, tool.handle, "device 0 was never initialised")
	require.EqualValues(t, 1, tool.lookup("ompt_flush_trace").(ompt.FlushTraceFunc)(tool.handle), "flush_trace")
	tool.mu.Lock()
	defer tool.mu.Unlock()
	rs := tool.records
	tool.records = nil
	return rs
}

// Every traced device interval, translated to host time, lies inside the
// host-side begin/end callback times of its construct; records carry the
// ids the EMI tool holds (its target_data values, the host_op_ids it wrote
// for data ops, the runtime's it left for kernels), so the tool joins each
// record to its callbacks; records of one queue do not overlap (on a
// device whose times are host readings that bracket each operation,
// Info.BracketTimes, as rusticl's: their begins and their ends are each
// in queue order).
func TestTraceRecordsMatchCallbacks(t *testing.T) {
	info, err := target.OpenDevice(0)
	require.NoError(t, err)
	x, y := make([]float32, 1<<12), make([]float32, 1<<12)
	flush(t)
	tool.take()
	for i := 0; i < 5; i++ {
		require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(len(x)),
			Maps: []target.Map{target.To(x), target.ToFrom(y)},
			Args: []target.Arg{target.Int(len(x)), target.Float32(2), target.Slice(x), target.Slice(y)}}))
	}
	recs := flush(t)
	tool.take()
	counts := map[ompt.Callback]int{}
	const slack = 1e-6 // 1 us
	tool.mu.Lock()
	defer tool.mu.Unlock()
	windows := tool.window
	var last, lastBegin float64
	for i, r := range recs {
		counts[r.typ]++
		assert.NotZero(t, r.rawBegin, "record %d: begin time", i)
		assert.GreaterOrEqual(t, r.rawEnd, r.rawBegin, "record %d: end time against begin", i)
		assert.NotZero(t, r.thread, "record %d: thread id", i)
		w, ok := windows[r.targetID]
		if !assert.True(t, ok, "record %d (%v): target_id %d of no construct seen by the callbacks", i, r.typ, r.targetID) {
			continue
		}
		assert.GreaterOrEqual(t, r.begin, w[0]-slack, "record %d (%v %v): [%.9f, %.9f] begins before its construct's callbacks [%.9f, %.9f]", i, r.typ, r.op, r.begin, r.end, w[0], w[1])
		assert.LessOrEqual(t, r.end, w[1]+slack, "record %d (%v %v): [%.9f, %.9f] ends after its construct's callbacks [%.9f, %.9f]", i, r.typ, r.op, r.begin, r.end, w[0], w[1])
		if r.typ != ompt.CallbackTarget {
			assert.NotZero(t, r.hostOpID, "record %d (%v): host_op_id", i, r.typ)
			assert.Equal(t, tool.opIDs[r.hostOpID], r.targetID, "record %d (%v): the target of host_op_id %d in the callbacks against the record's", i, r.typ, r.hostOpID)
			queued := r.typ == ompt.CallbackTargetSubmit || r.op == ompt.DataOpTransferToDevice || r.op == ompt.DataOpTransferFromDevice
			switch {
			case queued && info.BracketTimes:
				assert.GreaterOrEqual(t, r.begin, lastBegin-slack, "record %d (%v): begins before the previous operation began (bracketing times: %s)", i, r.typ, info.TimeSource)
				assert.GreaterOrEqual(t, r.end, last-slack, "record %d (%v): ends before the previous operation ended (bracketing times: %s)", i, r.typ, info.TimeSource)
			case queued:
				assert.GreaterOrEqual(t, r.begin, last-slack, "record %d (%v): begins before the previous operation ended", i, r.typ)
			}
			if queued {
				last, lastBegin = r.end, r.begin
			}
		}
		if r.typ == ompt.CallbackTargetSubmit {
			assert.NotZero(t, r.granted, "record %d: granted teams of a kernel record", i)
		}
	}
	// 5 constructs: 2 target records, 2 allocs, 2 copies in, 1 copy out, 2 deletes, 1 kernel.
	want := map[ompt.Callback]int{ompt.CallbackTarget: 10, ompt.CallbackTargetDataOp: 35, ompt.CallbackTargetSubmit: 5}
	for k, n := range want {
		assert.Equal(t, n, counts[k], "%v records (all: %v)", k, counts)
	}
}

// BenchmarkEmptyTargetTraced: an empty target region on a traced device with
// the test tool's callbacks.
func BenchmarkEmptyTargetTraced(b *testing.B) {
	r := target.Region{Device: target.Dev(0), Kernel: kernels.Empty, Shape: target.Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Args: []target.Arg{target.Int(1)}}
	for b.Loop() {
		require.NoError(b, target.Target(r))
		if len(tool.lines) > 1000 {
			tool.take()
		}
	}
}

// A slice the kernel uses that no clause maps is mapped tofrom and
// reported with the implicit flag; the clauses' items are not, whatever
// their names.
func TestImplicitMapFlag(t *testing.T) {
	x, y := make([]float32, 64), make([]float32, 64)
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(64),
		Maps: []target.Map{target.To(x).Named("argument 9")},
		Args: []target.Arg{target.Int(64), target.Float32(1), target.Slice(x), target.Slice(y)}}))
	tool.take()
	tool.mu.Lock()
	f := tool.mapFlags
	tool.mu.Unlock()
	want := []uint32{ompt.MapFlagTo, ompt.MapFlagTo | ompt.MapFlagFrom | ompt.MapFlagImplicit}
	require.Equal(t, want, f, "map flags")
}

// Every device memory routine that has a data-op callback has a trace
// record, with the host_op_id the tool wrote at its begin: associate and
// disassociate included, and a memcpy of a buffer onto itself (src ==
// dst, which moves nothing) and over overlapping ranges of it.
func TestRoutineRecords(t *testing.T) {
	p, err := target.AllocMem(256, 0) // initialises device 0 when run alone
	require.NoError(t, err)
	flush(t)
	h := make([]byte, 64)
	for i := range h {
		h[i] = byte(i)
	}
	tool.take()
	steps := []struct {
		op ompt.DataOpKind
		fn func() error
	}{
		{ompt.DataOpAssociate, func() error { return target.Associate(h, p, 64, 0) }},
		{ompt.DataOpTransferToDevice, func() error { return target.Update(0, target.To(h)) }},
		{ompt.DataOpTransferFromDevice, func() error { return target.Memcpy(target.On(0, p), target.On(0, p), 256) }},
		{ompt.DataOpTransferFromDevice, func() error { return target.Memcpy(target.On(0, p).Add(65), target.On(0, p).Add(64), 63) }},
		{ompt.DataOpDisassociate, func() error { return target.Disassociate(h, 0) }},
		{ompt.DataOpDelete, func() error { return target.FreeMem(p, 0) }},
	}
	var want []ompt.DataOpKind
	for _, s := range steps {
		require.NoError(t, s.fn(), "%v", s.op)
		want = append(want, s.op)
	}
	lines, errs := tool.take()
	assert.Empty(t, errs, "slot-rule violations the tool saw")
	// The update is a construct: it has target records besides its op.
	var got []ompt.DataOpKind
	recs := flush(t)
	tool.mu.Lock()
	defer tool.mu.Unlock()
	for i, r := range recs {
		if r.typ != ompt.CallbackTargetDataOp {
			continue
		}
		got = append(got, r.op)
		assert.Contains(t, tool.opIDs, r.hostOpID, "record %d (%v): host_op_id is not one the tool wrote at a begin", i, r.op)
		assert.GreaterOrEqual(t, r.hostOpID, uint64(7_000_000), "record %d (%v): host_op_id is not one the tool wrote at a begin", i, r.op)
		assert.NotZero(t, r.rawBegin, "record %d (%v): begin time", i, r.op)
		assert.GreaterOrEqual(t, r.rawEnd, r.rawBegin, "record %d (%v): end time against begin", i, r.op)
	}
	assert.Equal(t, want, got, "data-op records; callbacks:\n%s", strings.Join(lines, "\n"))
	var cbs []string
	for _, l := range lines {
		if strings.Contains(l, " end ") && strings.HasPrefix(l, "data_op") {
			cbs = append(cbs, strings.Fields(l)[1])
		}
	}
	assert.Len(t, cbs, len(want), "data-op end callbacks, one per record")
}

// The end of a target construct, the end of a target data region and
// target exit data copy back and free their list items in reverse list
// order (LLVM's order: its targetDataEnd walks the list backwards), all
// copies before the frees; entering goes in list order.
func TestExitInReverseOrder(t *testing.T) {
	a, b, c := make([]float32, 16), make([]float32, 32), make([]float32, 64)
	addrOf := func(s []float32) uintptr { return uintptr(unsafe.Pointer(&s[0])) }
	maps := []target.Map{target.ToFrom(a), target.ToFrom(b), target.ToFrom(c)}
	in := []uintptr{addrOf(a), addrOf(b), addrOf(c)}
	check := func(what string) {
		t.Helper()
		tool.mu.Lock()
		ends := tool.ends
		tool.mu.Unlock()
		tool.take()
		var alloc, to, from, del []uintptr
		dev := map[uintptr]uintptr{} // device address -> host address
		for _, e := range ends {
			switch e.kind {
			case ompt.DataOpAlloc:
				alloc = append(alloc, e.src)
			case ompt.DataOpTransferToDevice:
				to = append(to, e.src)
				dev[e.dst] = e.src
			case ompt.DataOpTransferFromDevice:
				from = append(from, e.dst)
			case ompt.DataOpDelete:
				del = append(del, dev[e.src])
			}
		}
		rev := []uintptr{in[2], in[1], in[0]}
		assert.Equal(t, in, alloc, "%s: allocs, want list order", what)
		assert.Equal(t, in, to, "%s: copies in, want list order", what)
		assert.Equal(t, rev, from, "%s: copies back, want reverse list order", what)
		assert.Equal(t, rev, del, "%s: deletes, want reverse list order", what)
		var kinds []ompt.DataOpKind
		for _, e := range ends {
			if n := len(kinds); n == 0 || kinds[n-1] != e.kind {
				kinds = append(kinds, e.kind)
			}
		}
		want := []ompt.DataOpKind{ompt.DataOpAlloc, ompt.DataOpTransferToDevice, ompt.DataOpAlloc, ompt.DataOpTransferToDevice,
			ompt.DataOpAlloc, ompt.DataOpTransferToDevice, ompt.DataOpTransferFromDevice, ompt.DataOpDelete}
		assert.Equal(t, want, kinds, "%s: data ops in runs", what)
	}
	tool.take()
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Fill, Shape: target.N(16),
		Maps: maps, Args: []target.Arg{target.Int(16), target.Float32(1), target.Slice(a)}}))
	check("target")
	require.NoError(t, target.Data(0, maps, func() error { return nil }))
	check("target data")
	require.NoError(t, target.EnterData(0, target.To(a), target.To(b), target.To(c)))
	require.NoError(t, target.ExitData(0, target.From(a), target.From(b), target.From(c)))
	check("target enter data, target exit data")
}

// A tool can tell which kernel ran: device_load names the module after its
// kernel (a module is one kernel's image, one entry), and a launch's native
// record, read through ompt_get_record_native and ompt_get_record_abstract,
// has the type "PLUGIN kernel: NAME".
func TestKernelNames(t *testing.T) {
	x := make([]float32, 64)
	run := func(k *device.Kernel, args ...target.Arg) {
		t.Helper()
		require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: k, Shape: target.N(64), Maps: []target.Map{target.ToFrom(x)}, Args: args}))
	}
	run(kernels.Fill, target.Int(64), target.Float32(1), target.Slice(x)) // device 0 initialised, and Fill loaded
	flush(t)
	set := tool.lookup("ompt_set_trace_native").(ompt.SetTraceNativeFunc)
	r := set(tool.handle, true, ompt.NativeKernelExecution)
	require.NotContains(t, []ompt.SetResult{ompt.SetNever, ompt.SetError}, r, "set_trace_native(kernel execution)")
	defer set(tool.handle, false, ompt.NativeKernelExecution)
	tool.mu.Lock()
	tool.natives = nil
	tool.mu.Unlock()
	run(kernels.Fill, target.Int(64), target.Float32(2), target.Slice(x))
	xi, yi := make([]int32, 64), make([]int32, 64)
	require.NoError(t, target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Copy32, Shape: target.N(64), Maps: []target.Map{target.To(xi), target.From(yi)},
		Args: []target.Arg{target.Int(64), target.Slice(xi), target.Slice(yi)}}))
	flush(t)
	tool.take()
	tool.mu.Lock()
	defer tool.mu.Unlock()
	assert.Contains(t, tool.loads, kernels.Fill.Name, "device_load file names")
	assert.Contains(t, tool.loads, kernels.Copy32.Name, "device_load file names")
	var kern []string
	for _, n := range tool.natives {
		if strings.Contains(n, "kernel") {
			kern = append(kern, n)
		}
	}
	if assert.Len(t, kern, 2, "native kernel record types") {
		assert.True(t, strings.HasSuffix(kern[0], " kernel: "+kernels.Fill.Name), "native kernel record type %q, want \"PLUGIN kernel: %s\"", kern[0], kernels.Fill.Name)
		assert.True(t, strings.HasSuffix(kern[1], " kernel: "+kernels.Copy32.Name), "native kernel record type %q, want \"PLUGIN kernel: %s\"", kern[1], kernels.Copy32.Name)
	}
}

// The depend items of a target task reach the tools as
// ompt_callback_dependences with the target_task_data slot of its target
// events: for a nowait construct when its task is created, before its
// target begin, so a value the tool writes there is the one its target
// events get; for a synchronous one right after its target begin. A task
// dependence (DependOn) has no variable and is not listed.
func TestDependencesCallback(t *testing.T) {
	x, y := make([]float32, 64), make([]float32, 64)
	require.NoError(t, target.EnterData(0, target.To(x), target.To(y)))
	tool.take()
	// the marks the tool writes at the nowait constructs' dependences,
	// which come at their tasks' first events: t2's task runs after t1's
	tool.mu.Lock()
	m1, m2 := 9_000_000+tool.nextMark+1, 9_000_000+tool.nextMark+2
	tool.mu.Unlock()
	t1 := target.TargetNowait(target.Region{Device: target.Dev(0), Kernel: kernels.Saxpy, Shape: target.N(64),
		Maps: []target.Map{target.DependIn(x), target.DependOut(y)},
		Args: []target.Arg{target.Int(64), target.Float32(2), target.Slice(x), target.Slice(y)}})
	t2 := target.UpdateNowait(0, target.From(y), target.DependInOut(y), target.DependOn(t1))
	for _, tk := range []*target.Task{t1, t2} {
		require.NoError(t, tk.Wait())
	}
	tool.mu.Lock()
	td1, td2 := tool.marks[m1], tool.marks[m2]
	tool.mu.Unlock()
	assert.NotEqual(t, m1, m2, "the marks the tool wrote at the nowait constructs' dependences")
	assert.NotZero(t, td1, "the target begin the first nowait construct's mark %d reached", m1)
	assert.NotZero(t, td2, "the target begin the second nowait construct's mark %d reached", m2)
	assert.NotEqual(t, td1, td2, "the target begins the marks %d, %d reached", m1, m2)
	require.NoError(t, target.Update(0, target.To(x), target.DependIn(x)))
	td3 := tool.nextTD + 1000
	got, errs := tool.take()
	assert.Empty(t, errs, "slot-rule violations the tool saw")
	// a nowait construct's dependences carry the tool's mark, which its
	// target begin found in target_task_data: name them by the construct
	tool.mu.Lock()
	for i, l := range got {
		for m, td := range tool.marks {
			got[i] = strings.Replace(l, fmt.Sprintf("mark=%d ", m), fmt.Sprintf("td=%d ", td), 1)
			l = got[i]
		}
	}
	tool.mu.Unlock()
	px, py := fmt.Sprintf("%p", &x[0]), fmt.Sprintf("%p", &y[0])
	var deps []string
	for _, l := range got {
		if strings.HasPrefix(l, "dependences") {
			deps = append(deps, l)
		}
	}
	want := []string{
		fmt.Sprintf("dependences td=%d ompt_dependence_type_in@%s ompt_dependence_type_out@%s", td1, px, py),
		fmt.Sprintf("dependences td=%d ompt_dependence_type_inout@%s", td2, py),
		fmt.Sprintf("dependences td=%d ompt_dependence_type_in@%s", td3, px),
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(deps, "\n"), "dependences events")
	// A nowait construct's dependences come before its target begin (when
	// its task was created); a synchronous one's right after its target
	// begin. Other constructs' events may come between, on other
	// goroutines.
	for _, c := range []struct {
		td     uint64
		nowait bool
	}{{td1, true}, {td2, true}, {td3, false}} {
		var mine []string
		for _, l := range got {
			if strings.Contains(l, fmt.Sprintf("td=%d ", c.td)) || strings.HasSuffix(l, fmt.Sprintf("td=%d", c.td)) {
				mine = append(mine, l)
			}
		}
		first, second := "target ", "dependences"
		if c.nowait {
			first, second = second, first
		}
		if assert.GreaterOrEqual(t, len(mine), 2, "construct td=%d (nowait %v): events:\n%s", c.td, c.nowait, strings.Join(mine, "\n")) {
			assert.True(t, strings.HasPrefix(mine[0], first), "construct td=%d (nowait %v): events do not begin with %s:\n%s", c.td, c.nowait, first, strings.Join(mine, "\n"))
			assert.True(t, strings.HasPrefix(mine[1], second), "construct td=%d (nowait %v): second event is not %s:\n%s", c.td, c.nowait, second, strings.Join(mine, "\n"))
			assert.Contains(t, mine[map[bool]int{false: 0, true: 1}[c.nowait]], " begin ", "construct td=%d (nowait %v): its target event is not a begin", c.td, c.nowait)
		}
	}
	require.NoError(t, target.ExitData(0, target.Delete(x), target.Delete(y)))
}
