package target

// Behaviour a program relies on that mutation testing (issue 21,
// ci/mutate) found no test pinning.

import (
	"testing"

	"github.com/gompt/gompt/device"
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
