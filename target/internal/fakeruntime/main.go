// Command fakeruntime runs the OMPT engine alone, as package target
// drives it (RUNTIME.md), over fake devices with clocks of their own, under
// the tools a program links: tools/timeline's tests run it with
// GOMPT_TRACE set and check the trace it leaves. The engine is the
// runtime's own (target/internal), so a scenario that calls it lives here
// rather than in the tool's tests.
//
// Usage: fakeruntime SCENARIO, with SCENARIO one of basic, noshutdown,
// many and host-fallback. It prints "COUNTER begins=N" (a second Go
// tool's count of constructs, from its finalizer) and, per device,
// "EXPECT device=D ops=N" (the device operations it recorded).
package main

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	hostplugin "github.com/gompt/gompt/device/host"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target/internal/omptrt"
	_ "github.com/gompt/gompt/tools/timeline"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakeruntime basic|noshutdown|many|host-fallback")
		os.Exit(2)
	}
	if err := runScenario(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "scenario:", err)
		os.Exit(2)
	}
}

type fakeRuntime struct{ n int }

func (r fakeRuntime) NumDevices() int { return r.n }

var base = time.Now()

// fakeDevice is an offload device whose clock runs from its own epoch
// (offset ns) at the host clock's rate; with queue != 0 it attaches
// hostplugin.Record records on that queue.
type fakeDevice struct {
	offset int64
	queue  uint64
}

func (d *fakeDevice) NumProcs() int { return 4 }
func (d *fakeDevice) Now() (int64, error) {
	return d.offset + int64(time.Since(base)), nil
}

type nativeDevice struct{ fakeDevice }

func (d *nativeDevice) NativeFlags() uint32 {
	return ompt.NativeDataMotionExplicit | ompt.NativeKernelExecution
}

func spin(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// driver runs constructs the way package target does (RUNTIME.md) and
// counts the device operations it records per device.
type driver struct {
	mu  sync.Mutex
	ops map[int]int
}

func (dr *driver) record(t *omptrt.Target, dev int, d omptrt.Device, queue uint64, b, e int64, teams uint32, flag uint32) {
	o := t.Op()
	if !o.Valid() {
		return
	}
	var native *omptrt.NativeInfo
	if queue != 0 {
		hn := hostplugin.Record{Start: b, End: e, Queue: queue}.Native("", 0, 0)
		native = &omptrt.NativeInfo{Flag: flag, Class: ompt.NativeRecordEvent, Type: "fake op",
			HWID: queue, Start: uint64(b), End: uint64(e), Data: hn.Bytes()}
	}
	o.Record(b, e, teams, native)
	dr.mu.Lock()
	dr.ops[dev]++
	dr.mu.Unlock()
}

func (dr *driver) dataOp(t *omptrt.Target, dev int, d omptrt.Device, queue uint64, op ompt.DataOpKind, n uint64, work time.Duration) {
	src, srcDev, dst, dstDev := uintptr(0x1000), ompt.InitialDevice, uintptr(0x7e00), dev
	if op == ompt.DataOpTransferFromDevice || op == ompt.DataOpDelete {
		src, srcDev, dst, dstDev = 0x7e00, dev, 0x1000, ompt.InitialDevice
	}
	t.DataOpBegin(op, src, srcDev, dst, dstDev, n)
	b, _ := d.Now()
	spin(work)
	e, _ := d.Now()
	t.DataOpEnd(dst)
	dr.record(t, dev, d, queue, b, e, 0, ompt.NativeDataMotionExplicit)
}

func (dr *driver) kernel(t *omptrt.Target, dev int, d omptrt.Device, queue uint64, teams uint32, work time.Duration) {
	t.SubmitBegin(0)
	b, _ := d.Now()
	spin(work)
	e, _ := d.Now()
	t.SubmitEnd()
	dr.record(t, dev, d, queue, b, e, teams, ompt.NativeKernelExecution)
}

// region is a target construct with two map items: alloc and copy in,
// the kernel, copy out and delete.
func (dr *driver) region(dev int, d omptrt.Device, queue uint64, work time.Duration) {
	t := omptrt.TargetBegin(ompt.KindTarget, dev, 0x4000)
	dr.dataOp(t, dev, d, queue, ompt.DataOpAlloc, 4000, work/4)
	dr.dataOp(t, dev, d, queue, ompt.DataOpTransferToDevice, 4000, work)
	dr.kernel(t, dev, d, queue, 8, 2*work)
	dr.dataOp(t, dev, d, queue, ompt.DataOpTransferFromDevice, 4000, work)
	dr.dataOp(t, dev, d, queue, ompt.DataOpDelete, 0, work/4)
	t.End()
}

// counter is a second Go tool, active beside the timeline.
type counter struct {
	mu     sync.Mutex
	begins int
}

func (c *counter) start(int, string) *ompt.StartResult {
	return &ompt.StartResult{
		Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTarget, ompt.TargetCallback(func(_ ompt.TargetKind, ep ompt.Endpoint, _ int, _ *ompt.Data, _ uint64, _ uintptr) {
				if ep == ompt.ScopeBegin {
					c.mu.Lock()
					c.begins++
					c.mu.Unlock()
				}
			}))
			return 1
		},
		Finalize: func(*ompt.Data) {
			c.mu.Lock()
			fmt.Printf("COUNTER begins=%d\n", c.begins)
			c.mu.Unlock()
		},
	}
}

func runScenario(name string) error {
	c := &counter{}
	ompt.RegisterTool("counter", c.start)
	dr := &driver{ops: map[int]int{}}
	d0 := &nativeDevice{fakeDevice{offset: 1e12, queue: 1}}
	d1 := &fakeDevice{offset: 5e15}
	switch name {
	case "basic", "noshutdown":
		runtime.LockOSThread()
		omptrt.Start(fakeRuntime{2})
		if err := omptrt.DeviceInitialize(0, "fake native device", d0); err != nil {
			return err
		}
		if err := omptrt.DeviceInitialize(1, "fake device", d1); err != nil {
			return err
		}
		var wg sync.WaitGroup
		wg.Go(func() {
			runtime.LockOSThread() // another host thread
			for range 3 {
				dr.region(1, d1, 0, 30*time.Microsecond)
			}
		})
		for range 3 {
			dr.region(0, d0, 1, 50*time.Microsecond)
		}
		// enter data, an update, exit data
		t := omptrt.TargetBegin(ompt.KindTargetEnterData, 0, 0x4100)
		dr.dataOp(t, 0, d0, 1, ompt.DataOpAlloc, 1<<20, 10*time.Microsecond)
		dr.dataOp(t, 0, d0, 1, ompt.DataOpTransferToDevice, 1<<20, 40*time.Microsecond)
		t.End()
		t = omptrt.TargetBegin(ompt.KindTargetUpdate, 0, 0x4200)
		dr.dataOp(t, 0, d0, 1, ompt.DataOpTransferToDevice, 1<<20, 40*time.Microsecond)
		t.End()
		t = omptrt.TargetBegin(ompt.KindTargetExitData, 0, 0x4300)
		dr.dataOp(t, 0, d0, 1, ompt.DataOpTransferFromDevice, 1<<20, 40*time.Microsecond)
		dr.dataOp(t, 0, d0, 1, ompt.DataOpDelete, 0, 10*time.Microsecond)
		t.End()
		// two nowait constructs that overlap without nesting (a deferred
		// target task begins at its first event, as LLVM's runs when it
		// is scheduled: a's kernel, then b's, then a ends, then b)
		a := omptrt.TargetBegin(ompt.KindTargetNowait, 0, 0x4400)
		b := omptrt.TargetBegin(ompt.KindTargetNowait, 0, 0x4500)
		dr.kernel(a, 0, d0, 2, 4, 30*time.Microsecond)
		dr.kernel(b, 0, d0, 2, 4, 30*time.Microsecond)
		a.End()
		b.End()
		// a device memory routine: target_id 0
		r := omptrt.RoutineBegin(0x4600)
		r.DataOpBegin(ompt.DataOpTransferToDevice, 0x1000, ompt.InitialDevice, 0x7e00, 0, 4000)
		bt, _ := d0.Now()
		spin(20 * time.Microsecond)
		et, _ := d0.Now()
		r.DataOpEnd(0x7e00)
		if o := r.Op(); o.Valid() {
			o.Record(bt, et, 0, nil)
			dr.mu.Lock()
			dr.ops[0]++
			dr.mu.Unlock()
		}
		r.End()
		wg.Wait()
	case "many":
		omptrt.Start(fakeRuntime{1})
		if err := omptrt.DeviceInitialize(0, "fake native device", d0); err != nil {
			return err
		}
		// a burst of short operations can outrun delivery (ompt queues
		// 2048 and then counts losses), so flush every 200 constructs:
		// parts of buffers then come back owned by the runtime too
		h, lookup, ok := omptrt.GetDeviceInfo(0)
		if !ok {
			return fmt.Errorf("no device 0")
		}
		flush := lookup("ompt_flush_trace").(ompt.FlushTraceFunc)
		for i := range 1500 {
			dr.region(0, d0, 1, 0)
			if i%200 == 199 && flush(h) != 1 {
				return fmt.Errorf("flush failed")
			}
		}
	case "host-fallback":
		// constructs on the initial device (number N): no device records
		omptrt.Start(fakeRuntime{1})
		t := omptrt.TargetBegin(ompt.KindTarget, 1, 0x4000)
		t.End()
	default:
		return fmt.Errorf("unknown scenario %q", name)
	}
	dr.mu.Lock()
	defer dr.mu.Unlock()
	for dev := range 2 {
		fmt.Printf("EXPECT device=%d ops=%d\n", dev, dr.ops[dev])
	}
	if name != "noshutdown" {
		omptrt.Finalize()
	}
	return nil
}
