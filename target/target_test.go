package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/mapping"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// useRuntime replaces the process runtime with one started from env for the
// duration of the test. Tests using it must not run in parallel.
func useRuntime(t *testing.T, env map[string]string) *runtimeState {
	t.Helper()
	state()
	var warn bytes.Buffer
	oldWarn := warnOut
	warnOut = &warn
	r := start(func(k string) string { return env[k] })
	warnOut = oldWarn
	setRuntime(t, r)
	if w := warn.String(); w != "" {
		t.Logf("start-up warnings: %s", w)
	}
	return r
}

// setRuntime makes r the process runtime until the test ends (state's
// fast path included).
func setRuntime(t *testing.T, r *runtimeState) {
	old := rt
	rt = r
	rtStarted.Store(r)
	t.Cleanup(func() {
		rt = old
		rtStarted.Store(old)
	})
}

// hostRuntime is a runtime with just the host plugin and one host device.
func hostRuntime(t *testing.T) *runtimeState {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host"})
	require.NotEmpty(t, r.devs, "no host device: %s", r.why())
	return r
}

// runToolChild runs test again in a child process of this test binary,
// with env=1 (which makes the test run its child's part: attach a tool,
// run constructs, print "FAIL: ..." for each mismatch and ok once done)
// on the host plugin's one device, and fails unless the child ends within
// a minute, prints no FAIL and prints ok. It returns the child's output.
func runToolChild(t *testing.T, test, env, ok string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1", "GOMPT_PLUGINS=host", "GOMPT_HOST_DEVICES=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung (killed after 60 s):\n%s", out)
	s := string(out)
	require.NoError(t, err, "child:\n%s", s)
	assert.NotContains(t, s, "FAIL:", "child")
	assert.Contains(t, s, ok, "child")
	return s
}

// childFail is how a runToolChild child reports a mismatch: a "FAIL: "
// line the parent looks for.
func childFail(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }

func memInUse(t *testing.T, r *runtimeState) (int64, int) {
	t.Helper()
	mi, ok := r.devs[0].d.(device.MemInfo)
	require.True(t, ok, "host device does not implement device.MemInfo")
	return mi.MemInUse()
}

// noLeak checks that the host device's memory returns to its level at the
// call when the test ends.
func noLeak(t *testing.T, r *runtimeState) {
	b0, n0 := memInUse(t, r)
	t.Cleanup(func() {
		b, n := memInUse(t, r)
		assert.Equal(t, b0, b, "device memory leaked: bytes in use at the end against the start")
		assert.Equal(t, n0, n, "device memory leaked: allocations at the end against the start")
	})
}

func saxpyRegion(dev, n int, a float32, x, y []float32, maps ...Map) Region {
	return Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(n), Maps: maps,
		Args: []Arg{Int(n), Float32(a), Slice(x), Slice(y)}}
}

func vecs(n int) (x, y []float32) {
	x, y = make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i)
	}
	return
}

func checkSaxpy(t *testing.T, a float32, x, y []float32, y0 func(i int) float32) {
	t.Helper()
	for i := range y {
		require.Equal(t, a*x[i]+y0(i), y[i], "y[%d]", i)
	}
}

func TestTargetSaxpyEveryDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	for _, dev := range []int{0, InitialDevice, len(r.devs), DefaultDevice} {
		x, y := vecs(100003)
		require.NoError(t, Target(saxpyRegion(dev, len(x), 3, x, y, To(x), ToFrom(y))), "device %d", dev)
		checkSaxpy(t, 3, x, y, func(i int) float32 { return float32(2 * i) })
	}
}

// A missing from map leaves the host copy stale, as on a GPU: the host
// device has memory of its own.
func TestHostDeviceMemoryIsSeparate(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(1000)
	require.NoError(t, Target(saxpyRegion(0, len(x), 2, x, y, To(x), To(y))))
	for i := range y {
		require.Equal(t, float32(2*i), y[i], "y[%d] changed without a from map", i)
	}
}

func TestImplicitTofromMap(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(4096)
	require.NoError(t, Target(saxpyRegion(0, len(x), 2, x, y)))
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	require.Zero(t, r.devs[0].table.Len(), "entries left by implicit maps")
}

func TestDataRegionUpdateAndRefcounts(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(2048)
	err := Data(0, []Map{To(x), ToFrom(y)}, func() error {
		// Present: the region's own maps neither allocate nor copy.
		if err := Target(saxpyRegion(0, len(x), 1, x, y, To(x), ToFrom(y))); err != nil {
			return err
		}
		assert.Equal(t, float32(2), y[1], "y copied back inside the data region: y[1]")
		// The host changes x; update to brings the change to the device.
		for i := range x {
			x[i] = 1
		}
		if err := Update(0, To(x)); err != nil {
			return err
		}
		if err := Target(saxpyRegion(0, len(x), 1, x, y)); err != nil {
			return err
		}
		if err := Update(0, From(y[:10])); err != nil {
			return err
		}
		assert.Equal(t, float32(2*5)+5+1, y[5], "after update from of y[:10]: y[5]")
		return nil
	})
	require.NoError(t, err)
	for i := range y {
		require.Equal(t, float32(2*i)+float32(i)+1, y[i], "y[%d]", i)
	}
	assert.True(t, IsPresent(y, len(r.devs)), "after the data region y must be present on the initial device")
	assert.False(t, IsPresent(y, 0), "after the data region y must be absent on device 0")
}

// The same slice in two clauses is one list item with both motions.
func TestDuplicateItemsMerge(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(512)
	require.NoError(t, Target(saxpyRegion(0, len(x), 2, x, y, To(x), To(y), From(y))))
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })
	assert.Equal(t, mapping.From, mergeTypes(mapping.Alloc, mapping.From), "alloc+from")
	assert.Equal(t, mapping.Delete, mergeTypes(mapping.Release, mapping.Delete), "release+delete")
}

func TestEnterExitDynamicCounts(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x := make([]float32, 100)
	for _, err := range []error{EnterData(0, To(x)), EnterData(0, To(x))} {
		require.NoError(t, err)
	}
	require.NoError(t, ExitData(0, Release(x)))
	require.True(t, IsPresent(x, 0), "x absent after one release of two enters")
	require.True(t, IsPresent(x[10:20], 0), "a sub-slice of a present slice is not present")
	require.NoError(t, ExitData(0, Delete(x)))
	assert.False(t, IsPresent(x, 0), "x present after delete")
}

func TestNowaitConcurrent(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	var tasks []*Task
	var ys [][]float32
	var xs [][]float32
	for g := 0; g < 16; g++ {
		x, y := vecs(5000 + g)
		xs, ys = append(xs, x), append(ys, y)
		tasks = append(tasks, TargetNowait(saxpyRegion(0, len(x), float32(g), x, y, To(x), ToFrom(y))))
	}
	for g, tk := range tasks {
		require.NoError(t, tk.Wait())
		checkSaxpy(t, float32(g), xs[g], ys[g], func(i int) float32 { return float32(2 * i) })
	}
	x := make([]float32, 64)
	require.NoError(t, EnterDataNowait(0, To(x)).Wait())
	require.NoError(t, UpdateNowait(0, From(x)).Wait())
	require.NoError(t, ExitDataNowait(0, Delete(x)).Wait())
}

func TestConcurrentGoroutines(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := 0; it < 20; it++ {
				x, y := vecs(1000 + g)
				if err := Target(saxpyRegion(0, len(x), 2, x, y, To(x), ToFrom(y))); err != nil {
					errs <- err
					return
				}
				for i := range y {
					if y[i] != 2*x[i]+float32(2*i) {
						errs <- errors.New("wrong saxpy result under concurrency")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestMemoryRoutines(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	ini := len(r.devs)
	src := make([]int32, 1000)
	for i := range src {
		src[i] = int32(i * 7)
	}
	p, err := AllocMem(4000, 0)
	require.NoError(t, err)
	q, err := AllocMem(4000, ini)
	require.NoError(t, err)
	// host -> device 0 -> device 0 (offset) -> initial device allocation -> host
	require.NoError(t, Memcpy(On(0, p), Host(src), 2000))
	require.NoError(t, Memcpy(On(0, p).Add(2000), On(0, p), 2000))
	require.NoError(t, Memcpy(On(ini, q), On(0, p), 4000))
	dst := make([]int32, 1000)
	require.NoError(t, Memcpy(Host(dst), On(ini, q), 4000))
	for i := range dst {
		require.Equal(t, src[i%500], dst[i], "dst[%d]", i)
	}
	// Memset on the device, then back.
	require.NoError(t, Memset(On(0, p).Add(8), 0xab, 8))
	mb := make([]byte, 24)
	require.NoError(t, Memcpy(Host(mb), On(0, p), 24))
	for i, b := range mb[8:16] {
		require.Equal(t, byte(0xab), b, "memset byte %d", i)
	}
	require.ErrorContains(t, Memset(On(0, p), 1, 5000), "out of bounds", "memset past the allocation")
	hb := make([]byte, 4)
	require.NoError(t, Memset(Host(hb), 7, 4), "host memset")
	require.Equal(t, byte(7), hb[3], "host memset: hb[3]")
	// A rectangle: rows 1..2, columns 2..4 of a 4x5 int32 matrix.
	m := make([]int32, 20)
	for i := range m {
		m[i] = int32(i)
	}
	require.NoError(t, MemcpyRect(On(0, p), Host(m), 4, []int{2, 3}, []int{0, 0}, []int{1, 2}, []int{2, 3}, []int{4, 5}))
	got := make([]int32, 6)
	require.NoError(t, Memcpy(Host(got), On(0, p), 24))
	require.Equal(t, []int32{7, 8, 9, 12, 13, 14}, got, "rect copy")
	// Associate p with a host slice: maps find it present and do not copy.
	h := make([]int32, 6)
	require.NoError(t, Associate(h, p, 0, 0))
	require.True(t, IsPresent(h, 0), "associated slice not present")
	require.NoError(t, Update(0, From(h)))
	require.Equal(t, []int32{7, 8, 9, 12, 13, 14}, h, "update from associated memory")
	require.NoError(t, Disassociate(h, 0))
	assert.False(t, IsAccessible(h, 0), "host device memory must not be accessible from the host")
	assert.True(t, IsAccessible(h, ini), "the initial device's memory must be accessible from the host")
	for _, e := range []error{FreeMem(p, 0), FreeMem(q, ini)} {
		require.NoError(t, e)
	}
}

// Every bad input of the foundation issue: an error that says what was
// wrong, no panic, no leaked device memory, and the next construct works.
func TestBadInput(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	x, y := vecs(100)
	present := make([]float32, 100)
	require.NoError(t, EnterData(0, To(present[:50])))
	defer ExitData(0, Delete(present[:50]))
	clOnly := &device.Kernel{Name: "cl_only", Params: []device.Param{{Name: "n", Kind: device.ParamInt64}},
		Images: []device.Image{{Kind: "opencl-c", Source: "kernel void cl_only(long n) {}"}}}
	p, err := AllocMem(64, 0)
	require.NoError(t, err)
	require.NoError(t, FreeMem(p, 0))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil slice in a map", EnterData(0, To([]float32(nil))), "empty"},
		{"empty slice in a map", Target(saxpyRegion(0, 1, 1, x, y, To(x[:0]))), "empty"},
		{"nil slice argument", Target(Region{Kernel: kernels.Saxpy, Shape: N(1), Args: []Arg{Int(1), Float32(1), Slice([]float32(nil)), Slice(y)}}), "empty"},
		{"overlapping items", Target(saxpyRegion(0, 10, 1, x, y, To(x[:60]), From(x[50:]))), "overlap"},
		{"partial overlap with present", EnterData(0, To(present[25:75])), "extends past"},
		{"exit data of unmapped", ExitData(0, From(x)), "not present"},
		{"present modifier on absent", Target(saxpyRegion(0, 10, 1, x, y, To(x).Present())), "present"},
		{"device out of range", Target(saxpyRegion(7, 10, 1, x, y)), "out of range"},
		{"no image for device", Target(Region{Device: Dev(0), Kernel: clOnly, Shape: N(1), Args: []Arg{Int(1)}}), "no image"},
		{"no Go image on initial device", Target(Region{Device: Dev(InitialDevice), Kernel: clOnly, Shape: N(1), Args: []Arg{Int(1)}}), "no Go image"},
		{"zero size", Target(saxpyRegion(0, 0, 1, x, y)), "at least 1"},
		{"zero inner dimension", Target(Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{4, 0, 5}}, Args: []Arg{Int(1)}}), "dimension 1 is 0 while dimension 2 is in use"},
		{"negative teams", Target(Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: -1}, Args: []Arg{Int(1)}}), "teams"},
		{"wrong argument count", Target(Region{Kernel: kernels.Saxpy, Shape: N(1), Args: []Arg{Int(1)}}), "takes 4 arguments"},
		{"scalar for buffer", Target(Region{Kernel: kernels.Saxpy, Shape: N(1), Args: []Arg{Int(1), Float32(1), Int(3), Slice(y)}}), "want a buffer"},
		{"no kernel", Target(Region{Shape: N(1)}), "no kernel"},
		{"int for a float", Target(Region{Kernel: kernels.Saxpy, Shape: N(1), Args: []Arg{Int(1), Int(2), Slice(x), Slice(y)}}), "want a scalar of type float32 (target.Float32), got target.Int"},
		{"float for an int", Target(Region{Kernel: kernels.Saxpy, Shape: N(1), Args: []Arg{Float32(1), Float32(2), Slice(x), Slice(y)}}), "want a scalar of type int64 (target.Int)"},
		{"double free", FreeMem(p, 0), "not a live allocation"},
		{"memcpy out of bounds", func() error {
			q, err := AllocMem(16, 0)
			if err != nil {
				return err
			}
			defer FreeMem(q, 0)
			return Memcpy(On(0, q), Host(x), 400)
		}(), "out of bounds"},
		{"memcpy from unknown pointer", Memcpy(Host(x), On(0, 0x10), 4), "not inside any allocation"},
		{"update with a map type", Update(0, ToFrom(x)), "motion clause"},
		{"data region without body", Data(0, nil, nil), "no body"},
		{"alloc beyond memory on the initial device", func() error { _, err := AllocMem(math.MaxInt, InitialDevice); return err }(), "half of the memory"},
		{"memcpy_rect dimensions overflow", MemcpyRect(Host(x), Host(y), 1, []int{1, 1}, []int{1 << 62, 0}, []int{0, 0}, []int{1<<62 + 1, 3}, []int{1, 3}), "more bytes than an int"},
		{"memset outside a host slice", Memset(Host(x).Add(1000), 0, 1), "memset destination: offset 1000"},
		{"exit data with a to item on the initial device", ExitData(InitialDevice, To(x)), "target exit data does not accept map type to"},
		{"exit data nowait with a to item on the initial device", ExitDataNowait(InitialDevice, To(x)).Wait(), "target exit data does not accept map type to"},
		{"overlapping items on the initial device", EnterData(InitialDevice, To(x[:60]), To(x[50:])), "overlaps"},
		{"buffers shorter than n on the initial device", Target(saxpyRegion(InitialDevice, 200, 1, x[:4], y[:4])), "needs 200"},
		{"buffers shorter than n on the host device", Target(saxpyRegion(0, 200, 1, x[:4], y[:4])), "needs 200"},
		{"kernel panics on the initial device", Target(Region{Device: Dev(InitialDevice), Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}}), "on the initial device panicked in team"},
		{"kernel panics on the host device", Target(Region{Kernel: panics, Shape: N(1), Args: []Arg{Int(1)}}), "kernel panicked in team"},
	}
	for _, c := range cases {
		assert.ErrorContains(t, c.err, c.want, c.name)
	}
	assert.Equal(t, 1, r.devs[0].table.Len(), "present table entries after bad input:\n%v", r.devs[0].table.Entries())
	// And the runtime still works.
	require.NoError(t, Target(saxpyRegion(0, len(x), 1, x, y, To(x), ToFrom(y))))
}

func TestOffloadPolicy(t *testing.T) {
	r := useRuntime(t, map[string]string{"GOMPT_PLUGINS": "nodevice", "OMP_TARGET_OFFLOAD": "mandatory"})
	require.Empty(t, r.devs, "devices from a plugin with none")
	x, y := vecs(10)
	err := Target(saxpyRegion(DefaultDevice, 10, 1, x, y))
	require.ErrorIs(t, err, ErrDevice, "mandatory with no device")
	require.ErrorContains(t, err, "mandatory", "mandatory with no device")
	require.ErrorContains(t, err, "nodevice: no device: a test plugin with no device", "mandatory with no device")

	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_TARGET_OFFLOAD": "disabled"})
	require.Zero(t, NumDevices(), "disabled: devices")
	require.Zero(t, InitialDeviceNum(), "disabled: initial device")
	require.NoError(t, Target(saxpyRegion(DefaultDevice, 10, 2, x, y)))
	checkSaxpy(t, 2, x, y, func(i int) float32 { return float32(2 * i) })

	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "nodevice"})
	require.NoError(t, Target(saxpyRegion(DefaultDevice, 10, 1, x, y)), "default policy without devices must fall back")
	require.True(t, IsInitialDevice(DefaultDevice), "default device is not the initial device with no devices")

	r = useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_DEFAULT_DEVICE": "0"})
	assert.False(t, IsInitialDevice(DefaultDevice), "OMP_DEFAULT_DEVICE=0 with a host device must offload")
	assert.Len(t, r.devs, 1, "OMP_DEFAULT_DEVICE=0 with a host device")
}

func TestBadEnvironmentWarns(t *testing.T) {
	var w bytes.Buffer
	old := warnOut
	warnOut = &w
	defer func() { warnOut = old }()
	c := readConfig(func(k string) string {
		return map[string]string{"OMP_TARGET_OFFLOAD": "sometimes", "OMP_DEFAULT_DEVICE": "-4",
			"OMP_DISPLAY_ENV": "loud", "GOMPT_PLUGINS": "host,,cuda", "GOMPT_INFO": "99"}[k]
	})
	assert.Equal(t, OffloadDefault, c.offload, "bad OMP_TARGET_OFFLOAD did not fall back to the default")
	assert.Zero(t, c.defaultDevice, "bad OMP_DEFAULT_DEVICE did not fall back to the default")
	assert.Empty(t, c.displayEnv, "bad OMP_DISPLAY_ENV did not fall back to the default")
	assert.Zero(t, c.info, "bad GOMPT_INFO did not fall back to the default")
	assert.Equal(t, DefaultPlugins(), strings.Join(c.plugins, ","), "bad GOMPT_PLUGINS did not fall back to the default")
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	require.Len(t, lines, 5, "want one warning line per bad variable, got:\n%s", w.String())
	for i, v := range []string{"OMP_TARGET_OFFLOAD", "OMP_DEFAULT_DEVICE", "OMP_DISPLAY_ENV", "GOMPT_PLUGINS", "GOMPT_INFO"} {
		assert.True(t, strings.HasPrefix(lines[i], "gompt: "+v+"="), "warning %q does not name %s", lines[i], v)
		assert.Contains(t, lines[i], "want", "warning for %s: what it accepts", v)
		assert.Contains(t, lines[i], "using", "warning for %s: the default", v)
	}
}

func TestDisplayEnv(t *testing.T) {
	r := hostRuntime(t)
	var b bytes.Buffer
	r.cfg.displayEnv = "verbose"
	r.displayEnv(&b)
	for _, want := range []string{"OPENMP DISPLAY ENVIRONMENT BEGIN", "_OPENMP = '202111'", "OMP_TARGET_OFFLOAD = 'DEFAULT'", "host:0", "END"} {
		assert.Contains(t, b.String(), want, "OMP_DISPLAY_ENV output")
	}
}

// The hot path of an empty target region allocates nothing.
func TestEmptyTargetAllocatesNothing(t *testing.T) {
	hostRuntime(t)
	reg := Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Args: []Arg{Int(1)}}
	x := make([]float32, 1024)
	tf := Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Maps: []Map{ToFrom(x)}, Args: []Arg{Int(1)}}
	for _, c := range []struct {
		name string
		r    Region
	}{{"empty", reg}, {"tofrom 4KiB", tf}} {
		require.NoError(t, Target(c.r))
		assert.Zero(t, testing.AllocsPerRun(200, func() { Target(c.r) }), "%s target region: allocations per run", c.name)
	}
}

func BenchmarkEmptyTarget(b *testing.B) {
	reg := Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Args: []Arg{Int(1)}}
	for b.Loop() {
		if err := Target(reg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTargetTofrom4KiB(b *testing.B) {
	x := make([]float32, 1024)
	reg := Region{Kernel: kernels.Empty, Shape: Shape{Size: [3]int{1, 1, 1}, Teams: 1}, Maps: []Map{ToFrom(x)}, Args: []Arg{Int(1)}}
	for b.Loop() {
		if err := Target(reg); err != nil {
			b.Fatal(err)
		}
	}
}

// A Region with no device clause runs on the default device, as OpenMP's
// target construct does: the default-device ICV (SetDefaultDevice,
// OMP_DEFAULT_DEVICE), not device 0; Dev(0) names device 0.
func TestRegionWithoutDeviceRunsOnDefaultDevice(t *testing.T) {
	r := hostRuntime(t)
	noLeak(t, r)
	const n = 256
	x, y := ones(n)
	require.NoError(t, EnterData(0, To(x), To(y)))
	reg := Region{Kernel: kernels.Saxpy, Shape: N(n), Args: []Arg{Int(n), Float32(2), Slice(x), Slice(y)}}
	run := func(reg Region, want float32, what string) {
		t.Helper()
		require.NoError(t, Target(reg))
		wantAll(t, what, y, want)
	}
	// ICV initial value 0: y is present there, so only its device copy changes.
	run(reg, 1, "no device clause, default device 0")
	SetDefaultDevice(InitialDeviceNum())
	run(reg, 3, "no device clause, default device the initial device")
	run(Region{Device: Dev(0), Kernel: reg.Kernel, Shape: reg.Shape, Args: reg.Args}, 3, "Dev(0) with the initial device as default")
	require.NoError(t, ExitData(0, From(y), Delete(x)))
	wantAll(t, "device 0's copy after two runs there", y, 5)

	useRuntime(t, map[string]string{"GOMPT_PLUGINS": "host", "OMP_DEFAULT_DEVICE": "1"})
	require.NoError(t, EnterData(0, To(y)))
	run(reg, 7, "no device clause, OMP_DEFAULT_DEVICE=1 (the initial device)")
	require.NoError(t, ExitData(0, Delete(y)))
	assert.Equal(t, "no device clause, device(0)", (DeviceClause{}).String()+", "+Dev(0).String(), "DeviceClause strings")
}

// One list item in a from clause and a delete clause of one exit data
// construct, in either order, with or without always: it is copied back
// and then deleted, on every device, as LLVM's runtime does with the two
// clauses (OpenMP 5.0 allows a list item in several map clauses). At
// 069ff17 the two merged into a plain delete and the copy was dropped.
// A release with a delete is a delete; tofrom with delete is refused, as
// tofrom alone is on exit data.
func TestExitDataFromAndDeleteCopiesBack(t *testing.T) {
	r, cl := clRuntime(t)
	noLeakOn(t, r)
	const n = 300
	for _, dev := range withCL(cl, 0, len(r.devs)) {
		for _, c := range []struct {
			name string
			maps func(y []float32) []Map
		}{
			{"always from, delete", func(y []float32) []Map { return []Map{From(y).Always(), Delete(y)} }},
			{"delete, always from", func(y []float32) []Map { return []Map{Delete(y), From(y).Always()} }},
			{"from, delete", func(y []float32) []Map { return []Map{From(y), Delete(y)} }},
			{"delete, from, release", func(y []float32) []Map { return []Map{Delete(y), From(y), Release(y)} }},
		} {
			x, y := vecs(n)
			require.NoError(t, EnterData(dev, To(x), To(y)), "%s: enter", c.name)
			require.NoError(t, EnterData(dev, To(y)), "%s: enter again (dynamic count 2)", c.name)
			require.NoError(t, Target(saxpyRegion(dev, n, 2, x, y)), "%s: kernel", c.name)
			if dev != len(r.devs) { // the initial device runs on y itself
				assert.Equal(t, float32(2), y[1], "%s on device %d: the kernel ran on the device's copy only", c.name, dev)
			}
			require.NoError(t, ExitData(dev, c.maps(y)...), "%s on device %d", c.name, dev)
			assert.Equal(t, 2*x[1]+2, y[1], "%s on device %d: y[1] was not copied back", c.name, dev)
			assert.Equal(t, 2*x[n-1]+float32(2*(n-1)), y[n-1], "%s on device %d: y[n-1]", c.name, dev)
			if dev != len(r.devs) {
				assert.False(t, IsPresent(y, dev), "%s on device %d: y still present", c.name, dev)
			}
			require.NoError(t, ExitData(dev, Delete(x)))
		}
		y := make([]float32, 8)
		require.NoError(t, EnterData(dev, To(y)))
		err := ExitData(dev, ToFrom(y), Delete(y))
		if dev != len(r.devs) {
			assert.ErrorContains(t, err, "tofrom", "device %d: tofrom with delete on exit data", dev)
		}
		require.NoError(t, ExitData(dev, Delete(y)))
	}
	assert.Equal(t, mapping.FromDelete, mergeTypes(mapping.From, mapping.Delete), "from+delete")
	assert.Equal(t, mapping.FromDelete, mergeTypes(mapping.Delete, mapping.From), "delete+from")
	assert.Equal(t, mapping.FromDelete, mergeTypes(mapping.FromDelete, mapping.Release), "from+delete+release")
	assert.Equal(t, uint32(ompt.MapFlagFrom|ompt.MapFlagDelete), mapFlags(&mapping.Item{Type: mapping.FromDelete}, false), "from+delete's OMPT map flags")
}
