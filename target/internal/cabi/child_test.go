package cabi

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
)

type fakeRuntime struct{ n int }

func (r fakeRuntime) NumDevices() int { return r.n }

// clock is a device whose clock is the host's monotonic clock plus offset.
type clock struct {
	procs  int
	offset int64
}

var t0 = time.Now()

func (d clock) NumProcs() int       { return d.procs }
func (d clock) Now() (int64, error) { return d.offset + int64(time.Since(t0)), nil }

// childMain runs one scenario in a fresh process (see main_test.go) and
// returns the exit code. Besides what the tools write, it prints
// "state=<ompt state after Start>" on stdout.
func childMain(scenario string) int {
	var p *printer
	if f := os.Getenv("CABI_GO_OUTPUT"); f != "" {
		var err error
		if p, err = newPrinter(f); err != nil {
			fmt.Println(err)
			return 2
		}
		ompt.RegisterTool("goprinter", p.start)
	}
	omptrt.Start(fakeRuntime{2})
	fmt.Printf("state=%v\n", omptrt.CurrentState())
	switch scenario {
	case "start":
	case "events":
		driveEvents()
	case "concurrent":
		driveConcurrent()
	case "trace":
		driveTraced()
	default:
		fmt.Println("unknown scenario", scenario)
		return 2
	}
	omptrt.Finalize()
	if p != nil {
		p.close()
	}
	return 0
}

const code = 0x4a1b2c

// driveEvents makes the runtime calls of RUNTIME.md for a sequence of
// constructs on two devices, one after the other.
func driveEvents() {
	must(omptrt.DeviceInitialize(0, "host gompt host device", clock{procs: 4}))
	mod, err := omptrt.DeviceLoad(0, "", 0, 0, 1234, 0, 0)
	must(err)

	// target with one tofrom item
	t := omptrt.TargetBegin(ompt.KindTarget, 0, code)
	t.DataOpBegin(ompt.DataOpAlloc, 0x1000, ompt.InitialDevice, 0, 0, 64)
	t.DataOpEnd(0xd000)
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0xd000, 0, 64)
	t.DataOpEnd(0xd000)
	if t != nil {
		t.Map([]uintptr{0x1000}, []uintptr{0xd000}, []uint64{64}, []uint32{ompt.MapFlagTo | ompt.MapFlagFrom})
	}
	t.SubmitBegin(4)
	t.SubmitEnd()
	t.DataOpBegin(ompt.DataOpTransferFromDevice, 0xd000, 0, 0x1000, ompt.InitialDevice, 64)
	t.DataOpEnd(0x1000)
	t.DataOpBegin(ompt.DataOpDelete, 0xd000, 0, 0, ompt.InitialDevice, 0)
	t.DataOpEnd(0)
	t.End()

	// target data region: enter data with two items, update, exit data
	t = omptrt.TargetBegin(ompt.KindTargetEnterData, 0, code+1)
	t.DataOpBegin(ompt.DataOpAlloc, 0x2000, ompt.InitialDevice, 0, 0, 32)
	t.DataOpEnd(0xe000)
	t.DataOpBegin(ompt.DataOpAlloc, 0x3000, ompt.InitialDevice, 0, 0, 16)
	t.DataOpEnd(0xf000)
	if t != nil {
		t.Map([]uintptr{0x2000, 0x3000}, []uintptr{0xe000, 0xf000}, []uint64{32, 16}, []uint32{ompt.MapFlagAlloc, ompt.MapFlagTo | ompt.MapFlagImplicit})
	}
	t.End()
	t = omptrt.TargetBegin(ompt.KindTargetUpdate, 0, code+2)
	t.DataOpBegin(ompt.DataOpTransferToDevice, 0x3000, ompt.InitialDevice, 0xf000, 0, 16)
	t.DataOpEnd(0xf000)
	t.End()
	t = omptrt.TargetBegin(ompt.KindTargetExitData, 0, code+3)
	t.DataOpBegin(ompt.DataOpDelete, 0xe000, 0, 0, ompt.InitialDevice, 0)
	t.DataOpEnd(0)
	t.DataOpBegin(ompt.DataOpDelete, 0xf000, 0, 0, ompt.InitialDevice, 0)
	t.DataOpEnd(0)
	t.End()

	// a nowait target on device 1, finished on another goroutine
	must(omptrt.DeviceInitialize(1, "opencl Portable Computing Language", clock{procs: 2, offset: 1 << 40}))
	t = omptrt.TargetBegin(ompt.KindTargetNowait, 1, code+4)
	if t != nil {
		t.Dependences([]ompt.Dependence{{Addr: 0x4000, Type: ompt.DependenceIn}, {Addr: 0x5000, Type: ompt.DependenceInOut}})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.DataOpBegin(ompt.DataOpAllocAsync, 0x4000, ompt.InitialDevice, 0, 1, 8)
		t.DataOpEnd(0xa000)
		t.SubmitBegin(0)
		t.SubmitEnd()
		t.DataOpBegin(ompt.DataOpDeleteAsync, 0xa000, 1, 0, ompt.InitialDevice, 0)
		t.DataOpEnd(0)
		t.End()
	}()
	<-done

	// device memory routines: omp_target_alloc, memcpy dev->dev, memset, free
	r := omptrt.RoutineBegin(code + 5)
	r.DataOpBegin(ompt.DataOpAlloc, 0, ompt.InitialDevice, 0, 0, 128)
	r.DataOpEnd(0xb000)
	r.End()
	r = omptrt.RoutineBegin(code + 6)
	r.DataOpBegin(ompt.DataOpTransferFromDevice, 0xb000, 0, 0xa100, 1, 128)
	r.DataOpEnd(0xa100)
	r.DataOpBegin(ompt.DataOpMemset, 0, ompt.InitialDevice, 0xb000, 0, 128)
	r.DataOpEnd(0xb000)
	r.End()
	r = omptrt.RoutineBegin(code + 7)
	r.DataOpBegin(ompt.DataOpDelete, 0xb000, 0, 0, ompt.InitialDevice, 0)
	r.DataOpEnd(0)
	r.End()

	must(omptrt.DeviceUnload(0, mod))
	must(omptrt.DeviceFinalize(0))
	// device 1 is finalized by omptrt.Finalize
}

// driveConcurrent runs target constructs on 8 goroutines at once.
func driveConcurrent() {
	must(omptrt.DeviceInitialize(0, "host gompt host device", clock{procs: 4}))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				host := uintptr(0x10000 * (g + 1))
				dev := host + 0x1000000
				t := omptrt.TargetBegin(ompt.KindTarget, 0, code)
				t.DataOpBegin(ompt.DataOpAlloc, host, ompt.InitialDevice, 0, 0, uint64(i+1))
				t.DataOpEnd(dev)
				if t != nil {
					t.Map([]uintptr{host}, []uintptr{dev}, []uint64{uint64(i + 1)}, []uint32{ompt.MapFlagTo})
				}
				t.SubmitBegin(uint32(g))
				t.SubmitEnd()
				t.DataOpBegin(ompt.DataOpDelete, dev, 0, 0, ompt.InitialDevice, 0)
				t.DataOpEnd(0)
				t.End()
			}
		}()
	}
	wg.Wait()
}

// nativeClock is a clock whose plugin records native records (hostplugin.Record)
// for explicit data motion and kernel execution.
type nativeClock struct{ clock }

func (nativeClock) NativeFlags() uint32 {
	return ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution
}

// Codes that tell testdata/ctrace.c what to do at the end of a construct.
const (
	codeFlush = 0xf100 // flush device 0 from a thread of the tool
	codeStop  = 0xf200 // stop, then restart, tracing on the construct's device
	codePause = 0xf300 // pause tracing during the construct
)

// driveTraced makes the runtime calls of RUNTIME.md "Tracing" for
// constructs on two devices: per operation, device timestamps taken only
// when the device traces, then Op and Record with a hostplugin.Record record.
// Device 0 honours native records, device 1 does not.
func driveTraced() {
	d0, d1 := nativeClock{clock{procs: 4}}, clock{procs: 2, offset: 1 << 40}
	must(omptrt.DeviceInitialize(0, "host gompt host device", d0))
	must(omptrt.DeviceInitialize(1, "opencl Portable Computing Language", d1))
	for i := range 6 {
		tracedConstruct(0, code+uintptr(i), d0)
	}
	tracedConstruct(0, codeFlush, d0)
	tracedConstruct(0, codePause, d0)
	tracedConstruct(0, code, d0)
	tracedConstruct(1, code, d1)
	tracedConstruct(1, codeStop, d1)
	tracedConstruct(1, code, d1)

	// omp_target_memcpy host -> device 1: recorded on device 1, target_id 0
	r := omptrt.RoutineBegin(code + 9)
	r.DataOpBegin(ompt.DataOpTransferToDevice, 0x5000, ompt.InitialDevice, 0xc000, 1, 256)
	var b, e int64
	tracing := omptrt.Tracing(1)
	if tracing {
		b, _ = d1.Now()
	}
	if tracing {
		e, _ = d1.Now()
	}
	r.DataOpEnd(0xc000)
	o := r.Op()
	o.Record(b, e, 0, nil)
	r.End()

	must(omptrt.DeviceFinalize(0))
	// device 1 is finalized by omptrt.Finalize
}

// tracedConstruct is one target construct with four data operations and
// a kernel, each recorded as package target records it.
func tracedConstruct(dev int, pc uintptr, clk omptrt.Device) {
	const host, dptr = 0x1000, 0xd000
	stamp := func(tr bool) (b, e int64) {
		if tr {
			b, _ = clk.Now()
			e, _ = clk.Now()
		}
		return b, e
	}
	t := omptrt.TargetBegin(ompt.KindTarget, dev, pc)
	op := func(kind ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, n uint64, final uintptr) {
		t.DataOpBegin(kind, src, sd, dst, dd, n)
		b, e := stamp(t.Tracing())
		t.DataOpEnd(final)
		o := t.Op()
		hn := hostplugin.Record{Start: b, End: e, Queue: 3}.Native("", 0, 0)
		o.Record(b, e, 0, &omptrt.NativeInfo{Flag: ompt.NativeDataMotionExplicit, Class: ompt.NativeRecordEvent,
			Type: "host copy", HWID: 7, Start: uint64(b), End: uint64(e), Data: hn.Bytes()})
	}
	op(ompt.DataOpAlloc, host, ompt.InitialDevice, 0, dev, 64, dptr)
	op(ompt.DataOpTransferToDevice, host, ompt.InitialDevice, dptr, dev, 64, dptr)
	if t != nil {
		t.Map([]uintptr{host}, []uintptr{dptr}, []uint64{64}, []uint32{ompt.MapFlagTo | ompt.MapFlagFrom})
	}
	t.SubmitBegin(4)
	b, e := stamp(t.Tracing())
	t.SubmitEnd()
	o := t.Op()
	hn := hostplugin.Record{Start: b, End: e, Queue: 3}.Native("", 0, 0)
	o.Record(b, e, 8, &omptrt.NativeInfo{Flag: ompt.NativeKernelExecution, Class: ompt.NativeRecordEvent,
		Type: "host kernel", HWID: 7, Start: uint64(b), End: uint64(e), Data: hn.Bytes()})
	op(ompt.DataOpTransferFromDevice, dptr, dev, host, ompt.InitialDevice, 64, host)
	op(ompt.DataOpDelete, dptr, dev, 0, ompt.InitialDevice, 0, 0)
	t.End()
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// printer is a Go tool that prints events in the line format of
// examples/tools/ctool, so the two faces can be compared line by line.
type printer struct {
	mu sync.Mutex
	f  *os.File
}

func newPrinter(path string) (*printer, error) {
	f, err := os.Create(path)
	return &printer{f: f}, err
}

func (p *printer) close() { p.f.Close() }

func (p *printer) emit(format string, args ...any) {
	p.mu.Lock()
	fmt.Fprintf(p.f, format+"\n", args...)
	p.mu.Unlock()
}

func flagNames(f uint32) string {
	var s []string
	for i, n := range []string{"to", "from", "alloc", "release", "delete", "implicit"} {
		if f&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}

func join[T any](xs []T, f func(T) string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = f(x)
	}
	return strings.Join(s, ",")
}

func (p *printer) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
		set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
		set(ompt.CallbackDeviceInitialize, func(dev int, typ string, _ *ompt.DeviceHandle, _ ompt.LookupFunc, _ string) {
			p.emit("ompt device_initialize dev=%d type=\"%s\"", dev, typ)
		})
		set(ompt.CallbackDeviceFinalize, func(dev int) { p.emit("ompt device_finalize dev=%d", dev) })
		set(ompt.CallbackDeviceLoad, func(dev int, file string, _ int64, _ uintptr, bytes uint64, _, _ uintptr, mod uint64) {
			p.emit("ompt device_load dev=%d file=\"%s\" bytes=%d module=%d", dev, file, bytes, mod)
		})
		set(ompt.CallbackDeviceUnload, func(dev int, mod uint64) { p.emit("ompt device_unload dev=%d module=%d", dev, mod) })
		set(ompt.CallbackTarget, func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, _ *ompt.Data, id uint64, code uintptr) {
			p.emit("ompt target %v kind=%s dev=%d target_id=%d code=%#x", ep, strings.TrimPrefix(kind.String(), "ompt_"), dev, id, code)
		})
		set(ompt.CallbackTargetDataOp, func(tid, hop uint64, op ompt.DataOpKind, src uintptr, sdev int, dst uintptr, ddev int, n uint64, code uintptr) {
			p.emit("ompt target_data_op target_id=%d host_op_id=%d op=%s src=%#x/%d dest=%#x/%d bytes=%d code=%#x",
				tid, hop, strings.TrimPrefix(op.String(), "ompt_target_data_"), src, sdev, dst, ddev, n, code)
		})
		set(ompt.CallbackTargetMap, func(tid uint64, host, dev []uintptr, bytes []uint64, flags []uint32, _ uintptr) {
			hex := func(a uintptr) string { return fmt.Sprintf("%#x", a) }
			p.emit("ompt target_map target_id=%d n=%d host=%s dev=%s bytes=%s flags=%s", tid, len(host),
				join(host, hex), join(dev, hex), join(bytes, func(b uint64) string { return fmt.Sprint(b) }), join(flags, flagNames))
		})
		info := lookup("ompt_get_target_info").(ompt.GetTargetInfoFunc)
		set(ompt.CallbackDependences, func(_ *ompt.Data, deps []ompt.Dependence) {
			_, tid, _, _ := info()
			p.emit("ompt dependences target_id=%d n=%d deps=%s", tid, len(deps), join(deps, func(d ompt.Dependence) string {
				return fmt.Sprintf("%s@%#x", strings.TrimPrefix(d.Type.String(), "ompt_dependence_type_"), d.Addr)
			}))
		})
		set(ompt.CallbackTargetSubmit, func(tid, hop uint64, teams uint32) {
			p.emit("ompt target_submit target_id=%d host_op_id=%d teams=%d", tid, hop, teams)
		})
		return 1
	}}
}
