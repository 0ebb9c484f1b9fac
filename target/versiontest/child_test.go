package versiontest

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
)

// The child's Go tool prints one line per event, to stdout:
//
//	start omp_version=V
//	init initial_device_num=N
//	buffer_limits dev=D resolved=0|1 max=M bytes=B
//	target begin|end kind=K dev=D
//	op begin|end kind=K src_dev=S dest_dev=D bytes=B [src base=A size=E ndims=N vol=[a b] off=[a b] dims=[a b] dest ...]
//	rec kind=K src_dev=S dest_dev=D bytes=B src=A dest=A
//	rectbase src=A dest=A (the arrays of the rectangular copy)
//	mark WHAT
//
// so the parent reads what each mode reports.

var (
	outMu sync.Mutex
)

func out(format string, args ...any) {
	outMu.Lock()
	fmt.Printf(format+"\n", args...)
	outMu.Unlock()
}

func init() {
	if os.Getenv(childEnv) != "go" {
		return
	}
	ompt.RegisterTool("versiontest", func(v int, _ string) *ompt.StartResult {
		out("start omp_version=%d", v)
		return &ompt.StartResult{Initialize: func(l ompt.LookupFunc, initial int, _ *ompt.Data) int {
			out("init initial_device_num=%d", initial)
			set := l("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(k ompt.TargetKind, ep ompt.Endpoint, dev int, _, _, _ *ompt.Data, _ uintptr) {
				out("target %s kind=%d dev=%d", endpoint(ep), k, dev)
			}))
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, op ompt.DataOpKind, src uintptr, srcDev int, dst uintptr, dstDev int, n uint64, _ uintptr) {
				line := fmt.Sprintf("op %s kind=%d src_dev=%d dest_dev=%d bytes=%d", endpoint(ep), op, srcDev, dstDev, n)
				if op == ompt.DataOpTransferRect || op == ompt.DataOpTransferRectAsync {
					line += " " + rectLine("src", ompt.SubvolumeAt(src)) + " " + rectLine("dest", ompt.SubvolumeAt(dst))
				}
				out("%s", line)
			}))
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(func(dev int, _ string, h *ompt.DeviceHandle, dl ompt.LookupFunc, _ string) {
				bl, ok := dl(ompt.BufferLimitsEntryName).(ompt.GetBufferLimitsFunc)
				if ok {
					m, b, valid := bl(h)
					out("buffer_limits dev=%d resolved=1 max=%d bytes=%d ok=%t", dev, m, b, valid)
				} else {
					out("buffer_limits dev=%d resolved=0", dev)
				}
				dl("ompt_set_trace_ompt").(ompt.SetTraceOMPTFunc)(h, true, 0)
				dl("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 1<<16) },
					func(_ int, buf []byte, n, begin uint64, _ bool) {
						for cur := range ompt.Records(buf, n, begin) {
							r := ompt.RecordAt(buf, cur)
							if r == nil || r.DataOp() == nil {
								continue
							}
							d := r.DataOp()
							out("rec kind=%d src_dev=%d dest_dev=%d bytes=%d src=%#x dest=%#x", d.OpType, d.SrcDeviceNum, d.DestDeviceNum, d.Bytes, d.SrcAddr, d.DestAddr)
						}
					})
			}))
			return 1
		}}
	})
}

func endpoint(ep ompt.Endpoint) string {
	if ep == ompt.ScopeBegin {
		return "begin"
	}
	return "end"
}

func rectLine(side string, s *ompt.Subvolume) string {
	vol, off, dims := s.Dims()
	return fmt.Sprintf("%s base=%#x size=%d ndims=%d vol=%v off=%v dims=%v", side, s.Base, s.Size, s.NumDims, vol, off, dims)
}

// child runs one of each data operation; devices 0 and 1 are host
// offload devices, 2 the initial device.
func child() int {
	fail := func(what string, err error) int {
		fmt.Printf("FAIL %s: %v\n", what, err)
		return 1
	}
	const n = 64
	host := make([]float32, n)
	back := make([]float32, n)
	for i := range host {
		host[i] = float32(i)
	}
	out("mark alloc")
	p0, err := target.AllocMem(4*n, 0)
	if err != nil {
		return fail("alloc", err)
	}
	p1, err := target.AllocMem(4*n, 1)
	if err != nil {
		return fail("alloc 1", err)
	}
	out("mark h2d")
	if err := target.Memcpy(target.On(0, p0), target.Host(host), 4*n); err != nil {
		return fail("h2d", err)
	}
	out("mark d2d")
	if err := target.Memcpy(target.On(1, p1), target.On(0, p0), 4*n); err != nil {
		return fail("d2d", err)
	}
	out("mark d2same") // within one device, as LLVM's target_memcpy.c
	if err := target.Memcpy(target.On(0, p0), target.On(0, p0), 4*n); err != nil {
		return fail("d2same", err)
	}
	out("mark d2h")
	if err := target.Memcpy(target.Host(back), target.On(1, p1), 4*n); err != nil {
		return fail("d2h", err)
	}
	if back[n-1] != float32(n-1) {
		return fail("d2h", fmt.Errorf("got %v", back[n-1]))
	}
	out("mark memset")
	if err := target.Memset(target.On(0, p0), 0, 4*n); err != nil {
		return fail("memset", err)
	}
	out("mark rect")
	// rows 1..2, columns 2..5 of an 8x8 float32 array: two rows of 16 bytes
	out("rectbase src=%#x dest=%#x", uintptr(unsafe.Pointer(&host[0])), uintptr(p0))
	if err := target.MemcpyRect(target.On(0, p0), target.Host(host), 4, []int{2, 4}, []int{1, 2}, []int{1, 2}, []int{8, 8}, []int{8, 8}); err != nil {
		return fail("rect", err)
	}
	out("mark associate")
	assoc := make([]float32, n)
	if err := target.Associate(assoc, p1, 0, 1); err != nil {
		return fail("associate", err)
	}
	if err := target.Disassociate(assoc, 1); err != nil {
		return fail("disassociate", err)
	}
	out("mark free")
	if err := target.FreeMem(p0, 0); err != nil {
		return fail("free", err)
	}
	if err := target.FreeMem(p1, 1); err != nil {
		return fail("free 1", err)
	}
	x := make([]float32, n)
	shape := target.Shape{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1}
	out("mark target")
	if err := target.Target(target.Region{Device: target.Dev(0), Kernel: kernels.Empty, Shape: shape, Args: []target.Arg{target.Int(1)}, Maps: []target.Map{target.ToFrom(x)}}); err != nil {
		return fail("target", err)
	}
	out("mark nowait")
	if err := target.TargetNowait(target.Region{Device: target.Dev(0), Kernel: kernels.Empty, Shape: shape, Args: []target.Arg{target.Int(1)}, Maps: []target.Map{target.ToFrom(x)}}).Wait(); err != nil {
		return fail("nowait", err)
	}
	out("mark host")
	if err := target.Target(target.Region{Device: target.Dev(target.InitialDevice), Kernel: kernels.Empty, Shape: shape, Args: []target.Arg{target.Int(1)}, Maps: []target.Map{target.ToFrom(x)}}); err != nil {
		return fail("host target", err)
	}
	out("mark shutdown")
	if err := target.Shutdown(); err != nil {
		return fail("shutdown", err)
	}
	out("mark done")
	return 0
}
