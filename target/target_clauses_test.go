package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/faulty"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The same slice named in two map clauses of one target construct is one
// list item whose motions are the union of the clauses' (and nothing
// more), in whichever order the clauses come: map(from: y) map(to: y) is
// tofrom, map(to: y) map(to: y) is to (the kernel's writes stay on the
// device), map(alloc: y) map(alloc: y) is alloc (accepted; nothing copied).
func TestSameSliceInTwoClausesMergesMotions(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 64
	for _, c := range []struct {
		name string
		maps func(y []float32) []Map
		// back: the kernel's result reaches the host; else y keeps its
		// host values.
		back bool
	}{
		{"from then to", func(y []float32) []Map { return []Map{From(y), To(y)} }, true},
		{"to then from", func(y []float32) []Map { return []Map{To(y), From(y)} }, true},
		{"to then tofrom", func(y []float32) []Map { return []Map{To(y), ToFrom(y)} }, true},
		{"tofrom then alloc", func(y []float32) []Map { return []Map{ToFrom(y), Alloc(y)} }, true},
		{"to twice", func(y []float32) []Map { return []Map{To(y), To(y)} }, false},
		{"alloc then to", func(y []float32) []Map { return []Map{Alloc(y), To(y)} }, false},
		{"alloc twice", func(y []float32) []Map { return []Map{Alloc(y), Alloc(y)} }, false},
	} {
		x, y := vecs(n)
		err := Target(saxpyRegion(0, n, 3, x, y, c.maps(y)...))
		require.NoError(t, err, "%s: map(y) twice", c.name)
		for i := range y {
			want := float32(2 * i) // y's host value
			if c.back {
				want = 3*x[i] + float32(2*i)
			}
			require.Equal(t, want, y[i], "%s: y[%d] on the host after the construct", c.name, i)
		}
		assert.False(t, IsPresent(y, 0), "%s: y still mapped after the construct", c.name)
	}
}

// map(alloc: y) map(release: y) in a target construct is refused (release
// is an exit data map type), as map(release: y) alone is, on an offload
// device and on the initial device.
func TestReleaseMergedIntoTargetMapRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(16)
	for _, dev := range []int{0, len(r.devs)} {
		for _, maps := range [][]Map{{Alloc(y), Release(y)}, {Release(y), Alloc(y)}} {
			err := Target(saxpyRegion(dev, 16, 2, x, y, maps...))
			require.ErrorContains(t, err, "does not accept map type release", "device %d: map(%v: y) map(%v: y)", dev, maps[0].item.Type, maps[1].item.Type)
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused constructs")
}

// Two map clauses on slices that start at the same address but differ in
// length are two overlapping list items, which a construct refuses (it
// does not quietly keep one of them): on an offload device and on the
// initial device.
func TestSameStartDifferentLengthRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(16)
	for _, dev := range []int{0, len(r.devs)} {
		for _, maps := range [][]Map{{To(y[:4]), From(y)}, {ToFrom(y), To(y[:8])}} {
			before := append([]float32(nil), y...)
			err := Target(saxpyRegion(dev, 16, 2, x, y, maps...))
			require.ErrorContains(t, err, "overlaps", "device %d: map(y[:a]) map(y[:b])", dev)
			require.Equal(t, before, y, "device %d: y after the refused construct", dev)
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused constructs")
}

// tgtPoke sets b[0] = 42: a kernel on one byte.
var tgtPoke = &device.Kernel{
	Name:   "tgt_poke",
	Params: []device.Param{{Name: "b", Kind: device.ParamBuffer}},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
		a.Bufs[0][0] = 42
	}}},
}

// A one-byte slice named in map(to:) and map(from:) is one list item,
// mapped tofrom: accepted, and the kernel's write comes back.
func TestOneByteItemInTwoClauses(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		b := []byte{7}
		err := Target(Region{Device: Dev(dev), Kernel: tgtPoke, Shape: N(1), Maps: []Map{To(b), From(b)}, Args: []Arg{Slice(b)}})
		require.NoError(t, err, "device %d: map(to: b) map(from: b) of a one-byte b", dev)
		assert.Equal(t, byte(42), b[0], "device %d: b[0] after the construct", dev)
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the constructs")
}

// A slice or device pointer passed for a scalar parameter is refused
// before any device work, on every device, naming the parameter.
func TestSliceForScalarParamRefused(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(16)
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	defer FreeMem(p, 0)
	for _, dev := range []int{0, len(r.devs)} {
		for _, c := range []struct {
			name string
			args []Arg
			want string
		}{
			{"slice for n", []Arg{Slice(x), Float32(2), Slice(x), Slice(y)}, "argument 0 (n): want a int64 scalar, got a slice or pointer"},
			{"slice for a", []Arg{Int(16), Slice(y), Slice(x), Slice(y)}, "argument 1 (a): want a float32 scalar, got a slice or pointer"},
			{"pointer for a", []Arg{Int(16), Ptr(p), Slice(x), Slice(y)}, "argument 1 (a): want a float32 scalar, got a slice or pointer"},
		} {
			if dev != 0 && c.name == "pointer for a" {
				continue // p is device 0's
			}
			before := append([]float32(nil), y...)
			err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(16), Args: c.args})
			require.ErrorContains(t, err, c.want, "device %d: %s", dev, c.name)
			require.Equal(t, before, y, "device %d: %s: y after the refused region", dev, c.name)
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the refused regions")
}

// tgtWide adds 1 to element 0 of each of its 17 float32 buffers.
var tgtWide = func() *device.Kernel {
	ps := make([]device.Param, 17)
	for i := range ps {
		ps[i] = device.BufferParam(fmt.Sprintf("b%d", i), device.ParamFloat32, "")
	}
	return &device.Kernel{
		Name:   "tgt_wide",
		Params: ps,
		Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, team, teams int) {
			for i := range a.Bufs {
				a.F32(i)[0]++
			}
		}}},
	}
}()

// A kernel of 17 slice arguments, none named in a map clause: each is
// mapped tofrom for the region (the 17th too) and its result comes back.
func TestSeventeenImplicitSlices(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, len(r.devs)} {
		bufs := make([][]float32, 17)
		args := make([]Arg, 17)
		for i := range bufs {
			bufs[i] = []float32{float32(i), -1}
			args[i] = Slice(bufs[i])
		}
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: tgtWide, Shape: N(1), Args: args}), "device %d: 17 slice arguments", dev)
		for i, b := range bufs {
			assert.Equal(t, []float32{float32(i) + 1, -1}, b, "device %d: argument %d after the region", dev, i)
		}
	}
	assert.Zero(t, r.devs[0].table.Len(), "present entries after the region")
}

// A copy back to the host that fails when a target construct unmaps its
// items is the construct's error: the program is told its from data did
// not arrive, and nothing stays mapped or allocated.
func TestExitCopyOutFailureReturned(t *testing.T) {
	r := faultRuntime(t)
	noLeak(t, r)
	for _, c := range []struct {
		name string
		run  func(x, y []float32) error
	}{
		{"Target", func(x, y []float32) error { return Target(saxpyRegion(0, 32, 2, x, y, To(x), ToFrom(y))) }},
		{"Target implicit", func(x, y []float32) error { return Target(saxpyRegion(0, 32, 2, x, y)) }},
		{"TargetNowait", func(x, y []float32) error {
			return TargetNowait(saxpyRegion(0, 32, 2, x, y, To(x), From(y).Always())).Wait()
		}},
		{"Target with depend", func(x, y []float32) error {
			return Target(saxpyRegion(0, 32, 2, x, y, To(x), ToFrom(y), DependInOut(y)))
		}},
	} {
		x, y := vecs(32)
		before := faultPlan.Injected(faulty.CopyOut)
		faultPlan.FailNth(faulty.CopyOut, 1, device.CodeUnknown)
		err := c.run(x, y)
		faultPlan.Reset()
		require.Equal(t, 1, faultPlan.Injected(faulty.CopyOut)-before, "%s: copies out failed", c.name)
		assert.True(t, isInjectedIn(err, faulty.CopyOut), "%s whose copy of y back failed: %v; want the copy failure", c.name, err)
		assert.Empty(t, mappingEntries(0), "%s: the present table after the failed copy out", c.name)
	}
}

// A target construct with depend items returns its own failure: a kernel
// that panics, synchronous or nowait; a queue the device cannot make.
func TestDependConstructReturnsItsFailure(t *testing.T) {
	hostRuntime(t)
	y := make([]float32, 8)
	err := Target(Region{Device: Dev(0), Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{DependOut(y)}})
	require.ErrorContains(t, err, "panicked", "Target with a depend item whose kernel panics")
	require.NotErrorIs(t, err, ErrDependence, "Target with a depend item whose kernel panics: its own failure")
	err = TargetNowait(Region{Device: Dev(0), Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}, Maps: []Map{DependOut(y)}}).Wait()
	require.ErrorContains(t, err, "panicked", "TargetNowait with a depend item whose kernel panics")
	depTableEmpty(t)
}

func TestDependConstructQueueFailure(t *testing.T) {
	r := faultRuntime(t)
	for _, nowait := range []bool{false, true} {
		x, y := vecs(8)
		require.NoError(t, Target(saxpyRegion(0, 8, 2, x, y)), "nowait %v: the construct before", nowait)
		x, y = vecs(8)
		// The device's one idle construct is busy (held here), so the
		// construct needs a new queue.
		held, err := r.devs[0].take()
		require.NoError(t, err)
		made := faultPlan.Calls(faulty.NewQueue)
		faultPlan.FailNth(faulty.NewQueue, 1, device.CodeOutOfResources)
		reg := saxpyRegion(0, 8, 2, x, y, DependInOut(y))
		if nowait {
			err = TargetNowait(reg).Wait()
		} else {
			err = Target(reg)
		}
		faultPlan.Reset()
		require.NoError(t, r.devs[0].give(held))
		require.Equal(t, made+1, faultPlan.Calls(faulty.NewQueue), "nowait %v: queues made", nowait)
		require.True(t, isInjected(err, faulty.NewQueue), "nowait %v: Target with a depend item whose queue the device could not make: %v", nowait, err)
		assert.Equal(t, float32(2), y[1], "nowait %v: y[1] after the construct that did not run", nowait)
	}
	depTableEmpty(t)
}

// tgtStderr runs fn with standard error captured and returns what it
// wrote there.
func tgtStderr(t *testing.T, fn func()) string {
	t.Helper()
	rd, wr, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stderr
	os.Stderr = wr
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(rd)
		done <- b
	}()
	defer func() {
		os.Stderr = old
	}()
	fn()
	os.Stderr = old
	wr.Close()
	return string(<-done)
}

// GOMPT_INFO=7 prints each allocation, naming its item, each copy back
// to the host (device address -> host address) and, after each
// construct, the present table: its size and its entries.
func TestInfoCopyBackAndTable(t *testing.T) {
	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "GOMPT_INFO": "7"})
	x, y := vecs(16)
	x2, y2 := vecs(8)
	var terr, eerr, xerr, t2err error
	out := tgtStderr(t, func() {
		eerr = EnterData(0, To(x))
		terr = Target(saxpyRegion(0, 16, 2, x, y, To(x), From(y)))
		xerr = ExitData(0, Delete(x))
		t2err = Target(saxpyRegion(0, 8, 2, x2, y2, To(x2).Named("x2")))
	})
	require.NoError(t, eerr)
	require.NoError(t, terr)
	require.NoError(t, xerr)
	require.NoError(t, t2err)
	for _, want := range []string{
		"gompt: host:0: copy 64 bytes device 0x",
		fmt.Sprintf("-> host %#x\n", addr(device.Bytes(y))),
		// Map items are named by their Named label, by the argument an
		// implicit one is, or by their host address.
		fmt.Sprintf(" for host %#x\n", addr(device.Bytes(y))),
		" for x2\n",
		" for argument 3\n",
		"gompt: host:0: present table after the construct: 1 entries\n",
		fmt.Sprintf("gompt: host:0:   [%#x,%#x)", addr(device.Bytes(x)), addr(device.Bytes(x))+64),
		"gompt: host:0: present table after the construct: 0 entries\n",
	} {
		assert.Contains(t, out, want, "GOMPT_INFO=7 output")
	}
	assert.Equal(t, 4, strings.Count(out, "present table after the construct"), "present tables printed, one per construct:\n%s", out)
}

// Shutdown waits for the tasks begun before it (a Go task, a nowait
// construct depending on it), which complete; a nowait construct or Go
// task refused because Shutdown has begun does not hold Shutdown up: it
// returns once the earlier tasks end. Shutdown ends the process's runtime, so the
// test runs in a child process.
func TestRefusedTaskDoesNotHoldShutdown(t *testing.T) {
	if os.Getenv("GOMPT_TEST_TGT_SHUTDOWN_CHILD") == "1" {
		tgtRefusedTaskChild()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRefusedTaskDoesNotHoldShutdown$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOMPT_TEST_TGT_SHUTDOWN_CHILD=1", "GOMPT_PLUGINS=host")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child failed:\n%s", out)
	require.Contains(t, string(out), "tgt-shutdown-ok", "child:\n%s", out)
}

func tgtRefusedTaskChild() {
	fail := func(format string, a ...any) {
		fmt.Printf("FAIL: "+format+"\n", a...)
		os.Exit(1)
	}
	// A task that never ends must not keep the child for ever.
	time.AfterFunc(time.Minute, func() { fail("the child did not finish in a minute") })
	r := state()
	release := make(chan struct{})
	gate := Go(func() error { <-release; return nil }) // in flight when Shutdown begins
	x0, y0 := vecs(8)
	after := TargetNowait(saxpyRegion(0, 8, 2, x0, y0, DependOn(gate))) // begun before Shutdown, runs after gate
	done := make(chan error, 1)
	go func() { done <- shutdownWithin(20 * time.Second) }()
	for !r.closing.Load() {
		runtime.Gosched()
	}
	select {
	case err := <-done:
		fail("Shutdown returned (%v) while tasks begun before it were in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	x, y := vecs(8)
	if err := TargetNowait(saxpyRegion(0, 8, 2, x, y)).Wait(); !errors.Is(err, ErrShutdown) {
		fail("TargetNowait once Shutdown has begun: %v, want the shut-down error", err)
	}
	if err := Go(func() error { return nil }).Wait(); !errors.Is(err, ErrShutdown) {
		fail("Go once Shutdown has begun: %v, want the shut-down error", err)
	}
	close(release)
	if err := gate.Wait(); err != nil {
		fail("the task begun before Shutdown: %v", err)
	}
	if err := after.Wait(); err != nil {
		fail("the construct begun before Shutdown: %v", err)
	}
	for i := range y0 {
		if want := 2*x0[i] + float32(2*i); y0[i] != want {
			fail("the construct begun before Shutdown: y[%d] = %g, want %g", i, y0[i], want)
		}
	}
	if err := <-done; err != nil {
		fail("Shutdown: %v", err)
	}
	fmt.Println("tgt-shutdown-ok")
}
