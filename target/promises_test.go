package target

// Behaviour a program relies on that mutation testing (issue 21,
// ci/mutate) found no test pinning.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
)

// A data region whose maps fail on entry returns that error and does not
// run its body; nothing stays mapped.
func TestDataRegionEntryFailureSkipsBody(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := make([]float32, 64), make([]float32, 64)
	ran := false
	err := Data(0, []Map{To(x), From(y).Present()}, func() error { ran = true; return nil })
	if device.CodeOf(err) != device.CodeNotFound {
		t.Fatalf("data region with map(present: y) of an absent y: %v", err)
	}
	if ran {
		t.Fatal("the body ran although the region's maps failed")
	}
	if IsPresent(x, 0) || IsPresent(y, 0) {
		t.Fatal("a failed data region left its items mapped")
	}
}

// map(to: a) and map(always, from: a) in one construct are one list item
// that keeps always: a present a is copied back at the region's end,
// where without always it would stay on the device only.
func TestMergedItemKeepsAlways(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(256)
	if err := EnterData(0, To(x), To(y)); err != nil {
		t.Fatal(err)
	}
	// y present (enter data): only always copies it back.
	if err := Target(saxpyRegion(0, len(x), 2, x, y, To(y), From(y).Always())); err != nil {
		t.Fatal(err)
	}
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	if err := ExitData(0, Delete(x), Delete(y)); err != nil {
		t.Fatal(err)
	}
}

// Memcpy from device memory at an offset to the host copies the bytes from
// that offset, on the host device and on the initial device, and the whole
// of an initial-device allocation is usable.
func TestMemcpyFromAnOffset(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	src := make([]byte, 64)
	for i := range src {
		src[i] = byte(i + 1)
	}
	for _, dev := range []int{0, len(r.devs)} {
		p, err := AllocMem(len(src), dev)
		if err != nil {
			t.Fatal(err)
		}
		if err := Memcpy(On(dev, p), Host(src), len(src)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 16)
		if err := Memcpy(Host(got), On(dev, p).Add(48), 16); err != nil {
			t.Fatal(err)
		}
		for i, b := range got {
			if b != src[48+i] {
				t.Fatalf("device %d: byte %d from offset 48 = %d, want %d", dev, i, b, src[48+i])
			}
		}
		// The allocation's last byte, through a one-byte Memset and copy.
		if err := Memset(On(dev, p).Add(len(src)-1), 0xee, 1); err != nil {
			t.Fatal(err)
		}
		last := make([]byte, 2)
		if err := Memcpy(Host(last), On(dev, p).Add(len(src)-2), 2); err != nil {
			t.Fatal(err)
		}
		if last[0] != src[len(src)-2] || last[1] != 0xee {
			t.Fatalf("device %d: last two bytes %v", dev, last)
		}
		if err := FreeMem(p, dev); err != nil {
			t.Fatal(err)
		}
	}
}

// Loc.Add(0) on host memory is the same memory, and an empty host slice
// is a valid side of an empty copy.
func TestHostLocEdges(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(16, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer FreeMem(p, 0)
	src := []byte("0123456789abcdef")
	if err := Memcpy(On(0, p), Host(src).Add(0), 16); err != nil {
		t.Fatalf("Memcpy from Host(src).Add(0): %v", err)
	}
	dst := make([]byte, 16)
	if err := Memcpy(Host(dst).Add(0), On(0, p), 16); err != nil || string(dst) != string(src) {
		t.Fatalf("Memcpy to Host(dst).Add(0): %v, %q", err, dst)
	}
	if err := Memcpy(Host([]byte(nil)), On(0, p), 0); err != nil {
		t.Errorf("empty copy to a nil host slice: %v", err)
	}
	if err := Memcpy(Host(dst).Add(17), On(0, p), 0); err == nil || !strings.Contains(err.Error(), "offset 17 is outside the host slice") {
		t.Errorf("host offset past the slice: %v", err)
	}
}

// A default-device ICV naming no device falls back to the initial device
// (OMP_TARGET_OFFLOAD=default); the same number given explicitly is an
// error.
func TestDefaultDeviceOutOfRangeFallsBack(t *testing.T) {
	r := hostRuntime(t)
	old := GetDefaultDevice()
	t.Cleanup(func() { SetDefaultDevice(old) })
	SetDefaultDevice(len(r.devs) + 5)
	x, y := vecs(64)
	if err := Target(saxpyRegion(DefaultDevice, len(x), 2, x, y)); err != nil {
		t.Fatalf("default device out of range: %v; want the initial device", err)
	}
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	if err := Target(saxpyRegion(len(r.devs)+5, len(x), 2, x, y)); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("explicit device out of range: %v", err)
	}
}

// An association that does not fit its allocation is refused with the
// device range it asked for: from p, devOffset plus the slice's bytes.
func TestAssociateErrorNamesTheRange(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	p, err := AllocMem(64, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer FreeMem(p, 0)
	err = Associate(make([]byte, 40), p, 30, 0)
	if want := fmt.Sprintf("[%v,+70)", p); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v; want it to name %s", err, want)
	}
}

// One runtime runs many different kernels on one device, each loaded once
// and kept: a program is not limited to one or two kernels.
func TestManyKernelsOneDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 32
	for round := range 2 {
		x, y := vecs(n)
		if err := Target(saxpyRegion(0, n, 2, x, y)); err != nil {
			t.Fatalf("round %d saxpy: %v", round, err)
		}
		checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
		f := make([]float32, n)
		if err := Target(Region{Kernel: kernels.Fill, Shape: N(n), Args: []Arg{Int(n), Float32(3), Slice(f)}}); err != nil {
			t.Fatalf("round %d fill: %v", round, err)
		}
		c := make([]float32, n)
		if err := Target(Region{Kernel: kernels.VecAdd, Shape: N(n), Args: []Arg{Int(n), Slice(f), Slice(f), Slice(c)}}); err != nil {
			t.Fatalf("round %d vecadd: %v", round, err)
		}
		src, dst := make([]int32, n), make([]int32, n)
		for i := range src {
			src[i] = int32(i * 3)
		}
		if err := Target(Region{Kernel: kernels.Copy32, Shape: N(n), Args: []Arg{Int(n), Slice(src), Slice(dst)}}); err != nil {
			t.Fatalf("round %d copy32: %v", round, err)
		}
		for i := range n {
			if f[i] != 3 || c[i] != 6 || dst[i] != src[i] {
				t.Fatalf("round %d, element %d: fill %v, vecadd %v, copy %d", round, i, f[i], c[i], dst[i])
			}
		}
	}
}

// A launch shape whose third dimension is in use (sizes n x 1 x 4) on a
// kernel that iterates over one is refused, as n x 4 is: the kernel would
// see only its first plane.
func TestShapeThirdDimensionOnOneDimensionalKernel(t *testing.T) {
	hostRuntime(t)
	x, y := vecs(16)
	for _, size := range [][3]int{{16, 1, 4}, {16, 4, 1}} {
		r := saxpyRegion(0, 16, 2, x, y)
		r.Shape = Shape{Size: size}
		err := Target(r)
		if err == nil || !strings.Contains(err.Error(), "the kernel iterates over 1") {
			t.Errorf("shape %v on a one-dimensional kernel: %v", size, err)
		}
	}
}

// GOMPT_INFO=1 prints each map operation on standard error, naming the
// device.
func TestInfoMappingLines(t *testing.T) {
	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "1"})
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = wr
	x, y := vecs(16)
	terr := Target(saxpyRegion(0, 16, 2, x, y))
	os.Stderr = old
	wr.Close()
	out, _ := io.ReadAll(rd)
	if terr != nil {
		t.Fatal(terr)
	}
	for _, want := range []string{"gompt: host:0: alloc 64 bytes at", "gompt: host:0: copy 64 bytes host", "gompt: host:0: free 64 bytes at"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("GOMPT_INFO=1 output lacks %q:\n%s", want, out)
		}
	}
}

// map(to: a) and map(present, from: a) in one construct are one list item
// that keeps present: an absent a is an error, not mapped.
func TestMergedItemKeepsPresent(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(64)
	err := Target(saxpyRegion(0, len(x), 2, x, y, To(y), From(y).Present()))
	if device.CodeOf(err) != device.CodeNotFound || !strings.Contains(err.Error(), "present modifier") {
		t.Fatalf("map(to: y) map(present, from: y) of an absent y: %v", err)
	}
	if IsPresent(y, 0) {
		t.Fatal("the refused y was mapped")
	}
}

// A data region on the initial device checks its maps as an offload
// device would: bad ones are refused and the body does not run.
func TestInitialDeviceDataRegionChecksMaps(t *testing.T) {
	r := hostRuntime(t)
	ran := false
	x := make([]float32, 8)
	err := Data(len(r.devs), []Map{To(x), From(x[2:6])}, func() error { ran = true; return nil })
	if err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("data region with overlapping maps on the initial device: %v", err)
	}
	if ran {
		t.Fatal("the body ran")
	}
}

// PluginDevice answers for every offload device and for nothing else;
// MappingEntries of the initial device or of no device is nil.
func TestPluginDeviceAndMappingEntriesRange(t *testing.T) {
	r := hostRuntime(t)
	for n := range r.devs {
		if d, ok := PluginDevice(n); !ok || d == nil {
			t.Errorf("PluginDevice(%d) = %v, %v", n, d, ok)
		}
	}
	for _, n := range []int{-1, len(r.devs), len(r.devs) + 1} {
		if _, ok := PluginDevice(n); ok {
			t.Errorf("PluginDevice(%d) answered for no offload device", n)
		}
	}
	for _, n := range []int{len(r.devs), InitialDevice, -7, len(r.devs) + 3} {
		if es := mappingEntries(n); es != nil {
			t.Errorf("inspect.MappingEntries(%d) = %v, want nil", n, es)
		}
	}
}
