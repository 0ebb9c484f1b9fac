// Package zerocopytest runs the runtime with GOMPT_ZERO_COPY=on, as a
// program that asked for unified-shared-memory maps does: on every device
// that shares the host's memory and can use the program's slices in place,
// maps copy nothing, kernels see the host's latest writes and the host
// theirs, and a tool sees associations, not transfers.
package zerocopytest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	os.Setenv("GOMPT_ZERO_COPY", "on")
	code := m.Run()
	if err := target.Shutdown(); err != nil && code == 0 {
		fmt.Println("shutdown:", err)
		code = 1
	}
	os.Exit(code)
}

// ops records the data ops of constructs, by kind.
var ops struct {
	mu    sync.Mutex
	kinds []ompt.DataOpKind
	bytes []uint64
}

func init() {
	ompt.RegisterTool("zerocopytest", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackTargetDataOpEMI, ompt.TargetDataOpEMICallback(func(ep ompt.Endpoint, _, _ *ompt.Data, _ *uint64, kind ompt.DataOpKind, _ uintptr, _ int, _ uintptr, _ int, bytes uint64, _ uintptr) {
				if ep != ompt.ScopeBegin {
					return
				}
				ops.mu.Lock()
				ops.kinds = append(ops.kinds, kind)
				ops.bytes = append(ops.bytes, bytes)
				ops.mu.Unlock()
			}))
			return 1
		}}
	})
}

func takeOps() ([]ompt.DataOpKind, []uint64) {
	ops.mu.Lock()
	defer ops.mu.Unlock()
	k, b := ops.kinds, ops.bytes
	ops.kinds, ops.bytes = nil, nil
	return k, b
}

// zeroCopyDevices are the devices whose maps use the program's memory;
// the test fails where an OpenCL device that shares the host's memory is
// not one of them.
func zeroCopyDevices(t *testing.T) []target.DeviceInfo {
	var out []target.DeviceInfo
	for _, d := range target.Devices() {
		if d.Plugin == "opencl" && d.UnifiedMemory {
			assert.True(t, d.ZeroCopy, "%s (%s) shares the host's memory: its maps should use it", d.ID, d.Name)
		}
		if d.Plugin == "host" {
			assert.False(t, d.ZeroCopy, "%s: the host device keeps its own memory", d.ID)
		}
		if d.ZeroCopy {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Skip("no device that uses the program's memory in place")
	}
	return out
}

func saxpy(dev int, n int, a float32, x, y []float32, maps ...target.Map) error {
	return target.Target(target.Region{Device: target.Dev(dev), Kernel: kernels.Saxpy, Shape: target.N(n), Maps: maps,
		Args: []target.Arg{target.Int(n), target.Float32(a), target.Slice(x), target.Slice(y)}})
}

// OpenMP's unified-shared-memory semantics, which a program that conforms
// to 5.2 without them could tell apart (and so they are opt-in): a host
// write after a to map is what the kernel reads, a kernel's write is in
// the host's slice when the construct ends, with the data region still
// open and no from map; sub-slices at odd offsets alias too.
func TestUnifiedMemorySemantics(t *testing.T) {
	for _, d := range zeroCopyDevices(t) {
		const n = 1 << 16
		xa, ya := make([]float32, n+16), make([]float32, n+16)
		x, y := xa[3:3+n], ya[5:5+n]
		takeOps()
		err := target.Data(d.Num, []target.Map{target.To(x), target.To(y)}, func() error {
			for i := range x {
				x[i], y[i] = float32(i), 1 // after the map
			}
			if err := saxpy(d.Num, n, 2, x, y); err != nil {
				return err
			}
			for i := range y {
				if y[i] != 2*float32(i)+1 {
					return fmt.Errorf("y[%d] = %v inside the data region, want %v: the kernel's write is not in the host's slice", i, y[i], 2*float32(i)+1)
				}
			}
			y[0] = 100 // the host's write, seen by the next kernel
			return saxpy(d.Num, 1, 1, x, y)
		})
		require.NoError(t, err, d.ID)
		assert.Equal(t, float32(100), y[0], "%s", d.ID)
		assert.Zero(t, xa[2]+xa[3+n]+ya[4]+ya[5+n], "%s: nothing around the sub-slices written", d.ID)
		kinds, bytes := takeOps()
		assert.Equal(t, []ompt.DataOpKind{ompt.DataOpAssociate, ompt.DataOpAssociate, ompt.DataOpDisassociate, ompt.DataOpDisassociate}, kinds,
			"%s: a tool sees each map associate the program's memory, and no transfer", d.ID)
		assert.Equal(t, []uint64{4 * n, 4 * n, 4 * n, 4 * n}, bytes, "%s: the bytes of each association", d.ID)
		assert.False(t, target.IsPresent(x, d.Num) || target.IsPresent(y, d.Num), "%s: nothing left mapped", d.ID)
	}
}

// A slice mapped twice, always maps, update to and from, and exit data
// with delete: counts as ever, no data motion, nothing left behind.
func TestPresentUpdateDelete(t *testing.T) {
	for _, d := range zeroCopyDevices(t) {
		const n = 4096
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = 1
		}
		takeOps()
		require.NoError(t, target.EnterData(d.Num, target.To(x), target.Alloc(y)))
		require.NoError(t, target.EnterData(d.Num, target.To(x[7:99]), target.To(y[1:]).Always()))
		require.NoError(t, target.Update(d.Num, target.To(x), target.From(y[3:9])))
		require.NoError(t, saxpy(d.Num, n-1, 3, x[1:], y[1:], target.ToFrom(x[1:]), target.ToFrom(y[1:])))
		assert.Equal(t, float32(0), y[0], d.ID)
		assert.Equal(t, float32(3), y[1], d.ID)
		assert.True(t, target.IsPresent(x, d.Num), d.ID)
		require.NoError(t, target.ExitData(d.Num, target.Delete(x), target.From(y)))
		assert.False(t, target.IsPresent(x, d.Num), d.ID)
		assert.True(t, target.IsPresent(y, d.Num), "%s: y's dynamic count was 2", d.ID)
		require.NoError(t, target.ExitData(d.Num, target.Release(y)))
		assert.False(t, target.IsPresent(y, d.Num), d.ID)
		kinds, _ := takeOps()
		assert.Equal(t, []ompt.DataOpKind{ompt.DataOpAssociate, ompt.DataOpAssociate, ompt.DataOpDisassociate, ompt.DataOpDisassociate}, kinds, d.ID)
		// Exit of what is not mapped, and a slice too short for the kernel,
		// are the same errors as ever.
		err := target.ExitData(d.Num, target.From(x))
		assert.ErrorIs(t, err, device.ErrNotFound, d.ID)
		err = saxpy(d.Num, n+1, 1, x, y, target.ToFrom(x), target.ToFrom(y))
		assert.Error(t, err, d.ID)
		assert.False(t, target.IsPresent(x, d.Num) || target.IsPresent(y, d.Num), "%s: nothing left mapped", d.ID)
	}
}

// Goroutines sharing one array, each with nowait constructs over its own
// chunk at an odd offset, and all reading one shared input mapped by each.
func TestGoroutinesNowait(t *testing.T) {
	for _, d := range zeroCopyDevices(t) {
		const g, chunk = 8, 1001
		x := make([]float32, g*chunk+3)
		y := make([]float32, g*chunk+3)
		for i := range x {
			x[i] = float32(i % 97)
		}
		var wg sync.WaitGroup
		errs := make([]error, g)
		for w := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lo := 3 + w*chunk
				xs, ys := x[lo:lo+chunk], y[lo:lo+chunk]
				for range 5 {
					tk := target.TargetNowait(target.Region{Device: target.Dev(d.Num), Kernel: kernels.Saxpy, Shape: target.N(chunk),
						Maps: []target.Map{target.To(xs), target.ToFrom(ys)},
						Args: []target.Arg{target.Int(chunk), target.Float32(1), target.Slice(xs), target.Slice(ys)}})
					if err := tk.Wait(); err != nil {
						errs[w] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for w, err := range errs {
			require.NoError(t, err, "%s: goroutine %d", d.ID, w)
		}
		for i := 3; i < len(y); i++ {
			if y[i] != 5*x[i] {
				t.Fatalf("%s: y[%d] = %v, want %v", d.ID, i, y[i], 5*x[i])
			}
		}
		assert.Zero(t, y[0]+y[1]+y[2], d.ID)
		assert.False(t, target.IsPresent(x, d.Num) || target.IsPresent(y, d.Num), "%s: nothing left mapped", d.ID)
	}
}

// Shutdown while slices are mapped in place: no error, no panic (the
// plugin releases its pins), and the slices stay the program's.
func TestShutdownWhileMapped(t *testing.T) {
	if os.Getenv("ZEROCOPY_SHUTDOWN_CHILD") == "1" {
		x := make([]float32, 1<<16)
		for _, d := range target.Devices() {
			if d.ZeroCopy {
				if err := target.EnterData(d.Num, target.To(x)); err != nil {
					fmt.Println("ENTER-ERROR", err)
				}
			}
		}
		if err := target.Shutdown(); err != nil {
			fmt.Println("SHUTDOWN-ERROR", err)
		}
		x[0] = 1
		fmt.Println("DONE")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestShutdownWhileMapped$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ZEROCOPY_SHUTDOWN_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "DONE")
	assert.NotContains(t, string(out), "ERROR")
	assert.False(t, strings.Contains(string(out), "panic"), "%s", out)
}
