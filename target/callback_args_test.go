package target

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
)

// What a tool is told about the program's device memory routines, map
// clauses and depend clauses: the addresses, devices, sizes and types it
// gets must be the program's. A Go tool in a child process of
// TestToolsAreToldWhatTheProgramDid records every data op, map and
// dependences callback; the child checks them against what it did.

type toldOp struct {
	ep           ompt.Endpoint
	kind         ompt.DataOpKind
	src          uintptr
	sd           int
	dst          uintptr
	dd           int
	bytes        uint64
	targetTaskID uint64
}

type toldMap struct {
	host, dev []uintptr
	bytes     []uint64
	flags     []uint32
}

var told struct {
	mu    sync.Mutex
	ops   []toldOp
	maps  []toldMap
	deps  [][]ompt.Dependence
	loads []string
}

// toldTake returns what the tool was told since the last call.
func toldTake() (ops []toldOp, maps []toldMap, deps [][]ompt.Dependence) {
	told.mu.Lock()
	defer told.mu.Unlock()
	ops, maps, deps = told.ops, told.maps, told.deps
	told.ops, told.maps, told.deps = nil, nil, nil
	return
}

func init() {
	if os.Getenv("GOMPT_TEST_TOLD_TOOL") != "1" {
		return
	}
	ompt.RegisterTool("told", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, kind ompt.DataOpKind, src uintptr, sd int, dst uintptr, dd int, bytes uint64, _ uintptr) {
				told.mu.Lock()
				told.ops = append(told.ops, toldOp{ep: ep, kind: kind, src: src, sd: sd, dst: dst, dd: dd, bytes: bytes})
				told.mu.Unlock()
			}))
			set(ompt.CallbackTargetMapEMI, ompt.TargetMapEMICallback(func(_ *ompt.Data, host, dev []uintptr, bytes []uint64, flags []uint32, _ uintptr) {
				told.mu.Lock()
				told.maps = append(told.maps, toldMap{append([]uintptr(nil), host...), append([]uintptr(nil), dev...),
					append([]uint64(nil), bytes...), append([]uint32(nil), flags...)})
				told.mu.Unlock()
			}))
			set(ompt.CallbackDeviceLoad, ompt.DeviceLoadCallback(func(dev int, file string, _ int64, _ uintptr, _ uint64, _, _ uintptr, _ uint64) {
				told.mu.Lock()
				told.loads = append(told.loads, fmt.Sprintf("%s@%d", file, dev))
				told.mu.Unlock()
			}))
			set(ompt.CallbackDependences, ompt.DependencesCallback(func(_ *ompt.Data, deps []ompt.Dependence) {
				told.mu.Lock()
				told.deps = append(told.deps, append([]ompt.Dependence(nil), deps...))
				told.mu.Unlock()
			}))
			return 1
		}}
	})
}

// TestToolsAreToldWhatTheProgramDid runs the child below and fails with
// every mismatch it found.
func TestToolsAreToldWhatTheProgramDid(t *testing.T) {
	if os.Getenv("GOMPT_TEST_TOLD_TOOL") == "1" {
		toldChild()
		return
	}
	runToolChild(t, "TestToolsAreToldWhatTheProgramDid", "GOMPT_TEST_TOLD_TOOL", "told-ok")
}

func toldChild() {
	fail := childFail
	// the host in data ops: N, the initial device's number, as the tool's
	// initialize got it (InitialDevice, -1, is how programs name it)
	host := InitialDeviceNum()
	// one checks that ops is one begin and one end of a data op with the
	// given arguments; the end carries the destination address end.
	one := func(what string, ops []toldOp, want toldOp, end uintptr) {
		if len(ops) != 2 || ops[0].ep != ompt.ScopeBegin || ops[1].ep != ompt.ScopeEnd {
			fail("%s: the tool was told %+v; want one data op's begin and end", what, ops)
			return
		}
		want.ep = ompt.ScopeBegin
		if ops[0] != want {
			fail("%s: begin %+v; want %+v", what, ops[0], want)
		}
		want.ep, want.dst = ompt.ScopeEnd, end
		if ops[1] != want {
			fail("%s: end %+v; want %+v", what, ops[1], want)
		}
	}
	defer fmt.Println("told-ok")
	Wtime() // starts the runtime and the tool
	toldTake()

	// Device memory routines on the offload device.
	p, err := AllocMem(100, 0)
	if err != nil {
		fail("AllocMem: %v", err)
		return
	}
	ops, _, _ := toldTake()
	one("AllocMem(100, 0)", ops, toldOp{kind: ompt.DataOpAlloc, sd: host, dd: 0, bytes: 100}, uintptr(p))
	if err := Memset(On(0, p).Add(16), 7, 32); err != nil {
		fail("Memset: %v", err)
	}
	ops, _, _ = toldTake()
	one("Memset(p+16, 7, 32)", ops, toldOp{kind: ompt.DataOpMemset, sd: host, dst: uintptr(p) + 16, dd: 0, bytes: 32}, uintptr(p)+16)
	h := make([]byte, 64)
	if err := Memcpy(Host(h).Add(4), On(0, p).Add(8), 24); err != nil {
		fail("Memcpy: %v", err)
	}
	ops, _, _ = toldTake()
	hp := addr(h)
	one("Memcpy(h+4, p+8, 24)", ops, toldOp{kind: ompt.DataOpTransferFromDevice, src: uintptr(p) + 8, sd: 0, dst: hp + 4, dd: host, bytes: 24}, hp+4)
	if h[4+8] != 7 || h[4+7] != 0 || h[4+23] != 7 || h[4+24] != 0 {
		fail("Memcpy from the device copied %v", h)
	}
	if err := Memcpy(On(0, p).Add(40), Host(h).Add(2), 10); err != nil {
		fail("Memcpy: %v", err)
	}
	ops, _, _ = toldTake()
	one("Memcpy(p+40, h+2, 10)", ops, toldOp{kind: ompt.DataOpTransferToDevice, src: hp + 2, sd: host, dst: uintptr(p) + 40, dd: 0, bytes: 10}, uintptr(p)+40)

	// A rectangle: 2 rows of 3 4-byte elements, from (1, 2) of a 4x8 host
	// array to (0, 1) of a 4x8 device array: one data op per row, with
	// the row's own addresses.
	hr := make([]float32, 32)
	if err := MemcpyRect(On(0, p), Host(hr), 4, []int{2, 3}, []int{0, 1}, []int{1, 2}, []int{3, 8}, []int{4, 8}); err != nil {
		fail("MemcpyRect: %v", err)
	}
	ops, _, _ = toldTake()
	hrp := addr(device.Bytes(hr))
	if len(ops) != 4 {
		fail("MemcpyRect of 2 rows: told %+v; want 2 data ops", ops)
	} else {
		for i := range 2 {
			src, dst := hrp+uintptr(((1+i)*8+2)*4), uintptr(p)+uintptr((i*8+1)*4)
			one(fmt.Sprintf("MemcpyRect row %d", i), ops[2*i:2*i+2], toldOp{kind: ompt.DataOpTransferToDevice, src: src, sd: host, dst: dst, dd: 0, bytes: 12}, dst)
		}
	}
	if err := FreeMem(p, 0); err != nil {
		fail("FreeMem: %v", err)
	}
	ops, _, _ = toldTake()
	one("FreeMem(p, 0)", ops, toldOp{kind: ompt.DataOpDelete, src: uintptr(p), sd: 0, dd: host}, 0)

	// Map clauses: every item with its host address, size, the device
	// address it has during the construct, and its map type.
	x, y := vecs(16)
	if err := EnterData(0, To(x)); err != nil {
		fail("EnterData: %v", err)
	}
	xp, err := MappedPtr(x, 0)
	if err != nil {
		fail("MappedPtr: %v", err)
	}
	toldTake()
	if err := Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))); err != nil {
		fail("Target: %v", err)
	}
	_, maps, _ := toldTake()
	if len(maps) == 0 {
		fail("Target with map(to: x) map(tofrom: y): the tool was told no map")
	} else {
		m := maps[0]
		if len(m.host) != 2 || m.host[0] != addr(device.Bytes(x)) || m.host[1] != addr(device.Bytes(y)) ||
			m.bytes[0] != 64 || m.bytes[1] != 64 || m.dev[0] != uintptr(xp) || m.dev[1] == 0 || m.dev[1] == m.dev[0] ||
			m.flags[0] != ompt.MapFlagTo || m.flags[1] != ompt.MapFlagTo|ompt.MapFlagFrom {
			fail("Target map: told host %#x dev %#x bytes %v flags %v; want x (%#x, present at %#x) to, y tofrom, 64 bytes each",
				m.host, m.dev, m.bytes, m.flags, addr(device.Bytes(x)), uintptr(xp))
		}
	}
	// An exit construct's map event names each item's device address,
	// looked up in the present table before the item goes.
	if err := ExitData(0, Release(x)); err != nil {
		fail("ExitData: %v", err)
	}
	if _, maps, _ = toldTake(); len(maps) != 1 || len(maps[0].host) != 1 || maps[0].host[0] != addr(device.Bytes(x)) ||
		maps[0].dev[0] != uintptr(xp) || maps[0].bytes[0] != 64 || maps[0].flags[0] != ompt.MapFlagRelease {
		fail("ExitData(release x): told %+v; want x (%#x) at its device address %#x, 64 bytes, release", maps, addr(device.Bytes(x)), uintptr(xp))
	}

	// Each kernel's image is loaded, and the load told, once per device.
	for range 2 {
		if err := Target(saxpyRegion(0, 16, 2, x, y, To(x), ToFrom(y))); err != nil {
			fail("Target: %v", err)
		}
	}
	told.mu.Lock()
	if n := slices.Index(told.loads, "saxpy@0"); n < 0 || slices.Contains(told.loads[n+1:], "saxpy@0") {
		fail("device loads told: %v; want saxpy on device 0 once", told.loads)
	}
	told.mu.Unlock()
	toldTake()

	// An array the construct maps only because the kernel takes it is
	// reported as implicit, tofrom.
	if err := Target(saxpyRegion(0, 16, 2, x, y, To(x))); err != nil {
		fail("Target: %v", err)
	}
	if _, maps, _ = toldTake(); len(maps) == 0 || len(maps[0].flags) != 2 ||
		maps[0].flags[0] != ompt.MapFlagTo || maps[0].flags[1] != ompt.MapFlagTo|ompt.MapFlagFrom|ompt.MapFlagImplicit ||
		maps[0].host[1] != addr(device.Bytes(y)) || maps[0].dev[1] == 0 {
		fail("Target map(to: x) with y only an argument: told %+v; want x to, y implicit tofrom at a device address", maps)
	}

	// A construct's own data ops: each names the host array and the
	// device copy it allocated, as the alloc's end told it.
	xh, yh := addr(device.Bytes(x)), addr(device.Bytes(y))
	if err := Target(saxpyRegion(0, 16, 2, x, y, To(x), From(y))); err != nil {
		fail("Target: %v", err)
	}
	ops, _, _ = toldTake()
	var dx, dy uintptr
	for i := 0; i+1 < len(ops); i += 2 {
		if ops[i].kind == ompt.DataOpAlloc && ops[i].src == xh {
			dx = ops[i+1].dst
		}
		if ops[i].kind == ompt.DataOpAlloc && ops[i].src == yh {
			dy = ops[i+1].dst
		}
	}
	pair := func(o toldOp, end uintptr) string {
		o.ep = ompt.ScopeBegin
		b := fmt.Sprintf("%+v", o)
		o.ep, o.dst = ompt.ScopeEnd, end
		return b + " " + fmt.Sprintf("%+v", o)
	}
	var got, wantOps []string
	for i := 0; i+1 < len(ops); i += 2 {
		got = append(got, fmt.Sprintf("%+v %+v", ops[i], ops[i+1]))
	}
	wantOps = []string{
		pair(toldOp{kind: ompt.DataOpAlloc, src: xh, sd: host, dd: 0, bytes: 64}, dx),
		pair(toldOp{kind: ompt.DataOpAlloc, src: yh, sd: host, dd: 0, bytes: 64}, dy),
		pair(toldOp{kind: ompt.DataOpTransferToDevice, src: xh, sd: host, dst: dx, dd: 0, bytes: 64}, dx),
		pair(toldOp{kind: ompt.DataOpTransferFromDevice, src: dy, sd: 0, dst: yh, dd: host, bytes: 64}, yh),
		pair(toldOp{kind: ompt.DataOpDelete, src: dx, sd: 0, dd: host}, 0),
		pair(toldOp{kind: ompt.DataOpDelete, src: dy, sd: 0, dd: host}, 0),
	}
	slices.Sort(got)
	slices.Sort(wantOps)
	if dx == 0 || dy == 0 || dx == dy || !slices.Equal(got, wantOps) {
		fail("Target map(to: x) map(from: y): told\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(wantOps, "\n\t"))
	}

	// Associate and Disassociate name the host range and the device
	// address.
	q, err := AllocMem(64, 0)
	if err != nil {
		fail("AllocMem: %v", err)
		return
	}
	toldTake()
	if err := Associate(x, q, 0, 0); err != nil {
		fail("Associate: %v", err)
	}
	ops, _, _ = toldTake()
	one("Associate(x, q, 0, 0)", ops, toldOp{kind: ompt.DataOpAssociate, src: xh, sd: host, dst: uintptr(q), dd: 0, bytes: 64}, uintptr(q))
	if err := Disassociate(x, 0); err != nil {
		fail("Disassociate: %v", err)
	}
	ops, _, _ = toldTake()
	one("Disassociate(x, 0)", ops, toldOp{kind: ompt.DataOpDisassociate, src: xh, sd: host, dst: uintptr(q), dd: 0}, uintptr(q))
	FreeMem(q, 0)
	toldTake()

	// The initial device's memory routines: the host is both ends.
	ip, err := AllocMem(24, InitialDevice)
	if err != nil {
		fail("AllocMem on the initial device: %v", err)
		return
	}
	ops, _, _ = toldTake()
	one("AllocMem(24, InitialDevice)", ops, toldOp{kind: ompt.DataOpAlloc, sd: host, dd: host, bytes: 24}, uintptr(ip))
	if err := FreeMem(ip, InitialDevice); err != nil {
		fail("FreeMem on the initial device: %v", err)
	}
	ops, _, _ = toldTake()
	one("FreeMem(ip, InitialDevice)", ops, toldOp{kind: ompt.DataOpDelete, src: uintptr(ip), sd: host, dd: host}, 0)

	// Depend clauses: each slice item with its address and type, in the
	// order given; a task dependence has no variable.
	a, b, c := make([]int32, 4), make([]int32, 4), make([]int32, 4)
	first := Go(func() error { return nil })
	toldTake()
	tk := TargetNowait(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(4), Args: []Arg{Int(4), Float32(1), Slice(y)},
		Maps: []Map{ToFrom(y), DependIn(a), DependOn(first), DependOut(b), DependInOut(c)}})
	if err := tk.Wait(); err != nil {
		fail("TargetNowait with depend items: %v", err)
	}
	_, _, deps := toldTake()
	if err := Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(4), Args: []Arg{Int(4), Float32(1), Slice(y)},
		Maps: []Map{ToFrom(y), DependOut(a)}}); err != nil {
		fail("Target with one depend item: %v", err)
	}
	if _, _, d1 := toldTake(); len(d1) != 1 || len(d1[0]) != 1 || d1[0][0] != (ompt.Dependence{Addr: addr(device.Bytes(a)), Type: ompt.DependenceOut}) {
		fail("Target depend(out: a): told %v; want [out a] once", d1)
	}
	if err := Target(Region{Device: Dev(0), Kernel: kernels.Fill, Shape: N(4), Args: []Arg{Int(4), Float32(1), Slice(y)},
		Maps: []Map{ToFrom(y)}}); err != nil {
		fail("Target: %v", err)
	}
	if _, _, d0 := toldTake(); len(d0) != 0 {
		fail("Target without depend items: told dependences %v; want none", d0)
	}
	want := []ompt.Dependence{{Addr: addr(device.Bytes(a)), Type: ompt.DependenceIn}, {Addr: addr(device.Bytes(b)), Type: ompt.DependenceOut}, {Addr: addr(device.Bytes(c)), Type: ompt.DependenceInOut}}
	if len(deps) != 1 || fmt.Sprint(deps[0]) != fmt.Sprint(want) {
		fail("depend(in: a) DependOn(t) depend(out: b) depend(inout: c): told %v; want %v once", deps, want)
	}
}
