package tooltest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// rec records EMI events as lines and checks the slot rules as it goes.
type rec struct {
	mu     sync.Mutex
	lines  []string
	errs   []string
	info   ompt.GetTargetInfoFunc
	nextTD uint64
}

var tool = &rec{}

func (r *rec) add(format string, args ...any) {
	r.mu.Lock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *rec) fail(format string, args ...any) {
	r.mu.Lock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *rec) take() (lines, errs []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines, errs = r.lines, r.errs
	r.lines, r.errs = nil, nil
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
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, typ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
				if h == nil || lk == nil {
					tool.fail("device_initialize %d: nil device or lookup", dev)
				}
				if t, ok := lk("ompt_get_device_time").(ompt.GetDeviceTimeFunc); !ok || t(h) == 0 {
					tool.fail("device %d: ompt_get_device_time missing or 0", dev)
				}
				tool.add("device_initialize dev=%d", dev)
			}))
			set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(dev int, _ string, _ int64, _ uintptr, bytes uint64, _, _ uintptr, _ uint64) {
				if bytes == 0 {
					tool.fail("device_load with 0 bytes")
				}
				tool.add("device_load dev=%d", dev)
			}))
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, task, ttd, td *ompt.Data, code uintptr) {
				if ep == ompt.ScopeBegin {
					tool.mu.Lock()
					tool.nextTD++
					td.Value = 1000 + tool.nextTD
					tool.mu.Unlock()
				}
				if kind.Nowait() == (ttd == nil) {
					tool.fail("%v: target_task_data nil=%v for nowait=%v", kind, ttd == nil, kind.Nowait())
				}
				dn, _, _, ok := tool.info()
				if !ok || dn != dev {
					tool.fail("%v %v: ompt_get_target_info = %d, %v inside the construct on %d", kind, ep, dn, ok, dev)
				}
				tool.add("target %v %v dev=%d td=%d code=%s", kind, ep, dev, td.Value, fn(code))
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, ttd, td *ompt.Data, op *uint64, kind ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, bytes uint64, code uintptr) {
				tdv := uint64(0)
				if td != nil {
					tdv = td.Value
				}
				if ep == ompt.ScopeBegin {
					*op = 7000 + *op%1000 // the tool's own id, must survive to the end
				} else if *op < 7000 {
					tool.fail("host_op_id slot lost the tool's value: %d", *op)
				}
				tool.add("data_op %v %v src_dev=%d dst_dev=%d bytes=%d td=%d code=%s", kind, ep, sd, dd, bytes, tdv, fn(code))
			}))
			set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, td *ompt.Data, op *uint64, teams uint32) {
				tool.add("submit %v teams=%d td=%d", ep, teams, td.Value)
			}))
			set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(td *ompt.Data, host, dev []uintptr, bytes []uint64, flags []uint32, code uintptr) {
				tool.add("map n=%d td=%d", len(host), td.Value)
			}))
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
	for _, e := range errs {
		t.Error(e)
	}
	// The first construct of the binary also initialises the device.
	var filtered []string
	for _, l := range got {
		if strings.HasPrefix(l, "initialize") || strings.HasPrefix(l, "device_") {
			continue
		}
		filtered = append(filtered, l)
	}
	if strings.Join(filtered, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(filtered, "\n"), strings.Join(want, "\n"))
	}
}

func TestMain(m *testing.M) {
	m.Run()
	target.Shutdown()
}

func TestTargetEMISequence(t *testing.T) {
	x, y := make([]float32, 256), make([]float32, 256)
	tool.take()
	err := target.Target(target.Region{Device: 0, Kernel: kernels.Saxpy, Shape: target.Shape{Size: [3]int{256, 1, 1}, Teams: 4},
		Maps: []target.Map{target.To(x), target.ToFrom(y)},
		Args: []target.Arg{target.Int(256), target.Float32(2), target.Slice(x), target.Slice(y)}})
	if err != nil {
		t.Fatal(err)
	}
	td := tool.nextTD + 1000
	f := "TestTargetEMISequence"
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc begin src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc end src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device begin src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device end src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc begin src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_alloc end src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device begin src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_to_device end src_dev=-1 dst_dev=0 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("map n=2 td=%d", td),
		fmt.Sprintf("submit begin teams=4 td=%d", td),
		fmt.Sprintf("submit end teams=4 td=%d", td),
		fmt.Sprintf("data_op ompt_target_data_transfer_from_device begin src_dev=0 dst_dev=-1 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_transfer_from_device end src_dev=0 dst_dev=-1 bytes=1024 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete begin src_dev=0 dst_dev=-1 bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete end src_dev=0 dst_dev=-1 bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete begin src_dev=0 dst_dev=-1 bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("data_op ompt_target_data_delete end src_dev=0 dst_dev=-1 bytes=0 td=%d code=%s", td, f),
		fmt.Sprintf("target ompt_target end dev=0 td=%d code=%s", td, f),
	)
}

func TestPresentItemsMakeNoDataOps(t *testing.T) {
	x := make([]float32, 64)
	if err := target.EnterData(0, target.To(x)); err != nil {
		t.Fatal(err)
	}
	tool.take()
	err := target.Target(target.Region{Device: 0, Kernel: kernels.Fill, Shape: target.N(64),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(64), target.Float32(1), target.Slice(x)}})
	if err != nil {
		t.Fatal(err)
	}
	td := tool.nextTD + 1000
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=0 td=%d code=TestPresentItemsMakeNoDataOps", td),
		fmt.Sprintf("map n=1 td=%d", td),
		fmt.Sprintf("submit begin teams=0 td=%d", td),
		fmt.Sprintf("submit end teams=0 td=%d", td),
		fmt.Sprintf("target ompt_target end dev=0 td=%d code=TestPresentItemsMakeNoDataOps", td),
	)
	if err := target.ExitData(0, target.Delete(x)); err != nil {
		t.Fatal(err)
	}
	tool.take()
}

func TestMemoryRoutinesAreOutsideConstructs(t *testing.T) {
	tool.take()
	p, err := target.AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	h := make([]byte, 64)
	if err := target.Memcpy(target.On(0, p), target.Host(h), 64); err != nil {
		t.Fatal(err)
	}
	if err := target.FreeMem(p, 0); err != nil {
		t.Fatal(err)
	}
	f := "TestMemoryRoutinesAreOutsideConstructs"
	expect(t,
		"data_op ompt_target_data_alloc begin src_dev=-1 dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_alloc end src_dev=-1 dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_transfer_to_device begin src_dev=-1 dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_transfer_to_device end src_dev=-1 dst_dev=0 bytes=64 td=0 code="+f,
		"data_op ompt_target_data_delete begin src_dev=0 dst_dev=-1 bytes=0 td=0 code="+f,
		"data_op ompt_target_data_delete end src_dev=0 dst_dev=-1 bytes=0 td=0 code="+f,
	)
}

func TestNowaitKindsAndAsyncOps(t *testing.T) {
	x := make([]float32, 32)
	tool.take()
	if err := target.EnterDataNowait(0, target.To(x)).Wait(); err != nil {
		t.Fatal(err)
	}
	if err := target.ExitDataNowait(0, target.Delete(x)).Wait(); err != nil {
		t.Fatal(err)
	}
	got, errs := tool.take()
	for _, e := range errs {
		t.Error(e)
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"ompt_target_enter_data_nowait begin", "ompt_target_data_alloc_async",
		"ompt_target_data_transfer_to_device_async", "ompt_target_exit_data_nowait end", "ompt_target_data_delete_async"} {
		if !strings.Contains(joined, want) {
			t.Errorf("nowait events lack %q:\n%s", want, joined)
		}
	}
}

func TestInitialDeviceConstruct(t *testing.T) {
	x := make([]float32, 16)
	n := target.InitialDeviceNum()
	tool.take()
	if err := target.Target(target.Region{Device: target.InitialDevice, Kernel: kernels.Fill, Shape: target.N(16),
		Maps: []target.Map{target.ToFrom(x)}, Args: []target.Arg{target.Int(16), target.Float32(3), target.Slice(x)}}); err != nil {
		t.Fatal(err)
	}
	td := tool.nextTD + 1000
	expect(t,
		fmt.Sprintf("target ompt_target begin dev=%d td=%d code=TestInitialDeviceConstruct", n, td),
		fmt.Sprintf("submit begin teams=0 td=%d", td),
		fmt.Sprintf("submit end teams=0 td=%d", td),
		fmt.Sprintf("target ompt_target end dev=%d td=%d code=TestInitialDeviceConstruct", n, td),
	)
	if x[7] != 3 {
		t.Errorf("x[7] = %g", x[7])
	}
}
