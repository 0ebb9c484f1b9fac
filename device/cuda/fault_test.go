//go:build cgo && linux

package cuda

// Fault-path tests against a fake driver (testdata/fakecuda.c), beside the
// GPU tests of gpu_test.go: the fake runs no kernel, so it checks only how
// the plugin handles a driver that fails (out of memory, a JIT failure, a
// failed launch, copy or synchronisation, a device that fails to open) and
// that the plugin gives every driver object back, even on those paths. The
// fake counts its live objects and every call with a stale handle, a range
// outside a live allocation or no live context ("misuse"); each test ends
// with all of them at zero.
//
// A process loads one driver library, so TestFakeDriverFaults builds the
// fake and runs the TestFault* tests in a child process that has
// GOMPT_CUDA_LIBRARY pointing at it; run directly, they skip.

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/curaw"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/internal/dl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeChildEnv marks the child process of TestFakeDriverFaults.
const fakeChildEnv = "GOMPT_FAKECUDA_CHILD"

// faultTests are the tests the child runs; each must pass there.
var faultTests = []string{
	"TestFaultBaseline", "TestFaultOpen", "TestFaultOutOfMemory", "TestFaultInvalidPTX", "TestFaultLoadWithoutPTX",
	"TestFaultMissingEntry", "TestFaultPTXParamNames", "TestFaultLaunch", "TestFaultStagedCopy", "TestFaultNoPinnedMemory",
	"TestFaultSync", "TestFaultConcurrent", "TestFaultRaw", "TestFaultClose", "TestFaultSticky",
	"TestFaultReuse", "TestFaultReuseFences", "TestFaultClock", "TestFaultClockTimer", "TestFaultSched",
	"TestFaultOverlap", "TestFaultBounceRing", "TestFaultBounceOrder", "TestFaultBounceErrors",
	"TestFaultBounceConcurrent", "TestFaultChunks", "TestFaultCopyOverlap",
	"TestFaultWaitEvent", "TestFaultWaitEventDecline", "TestFaultWaitEventOuts", "TestFaultWaitEventSticky",
	"TestFaultWaitEventConformance",
}

// buildFakeDriver compiles testdata/fakecuda.c into a shared library in a
// temporary directory and returns its path.
func buildFakeDriver(t *testing.T, flags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "gcc is needed for this test in CI")
		t.Skip("no gcc to build the fake driver")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "fakecuda.c"))
	require.NoError(t, err)
	lib := filepath.Join(t.TempDir(), "libfakecuda.so")
	args := append([]string{"-shared", "-fPIC", "-O1", "-g", "-Wall", "-Wextra", "-pthread", "-o", lib, src}, flags...)
	out, err := exec.Command(gcc, args...).CombinedOutput()
	require.NoError(t, err, "gcc: %v\n%s", err, out)
	if len(out) > 0 {
		t.Logf("gcc warns about the fake driver:\n%s", out)
	}
	return lib
}

// TestFakeDriverFaults runs the fault tests in a child process whose CUDA
// driver is the fake, so that this process can still load the real one.
func TestFakeDriverFaults(t *testing.T) {
	needCgo(t)
	if os.Getenv(fakeChildEnv) != "" {
		t.Skip("in the child")
	}
	lib := buildFakeDriver(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFault", "-test.v", "-test.timeout=3m")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", EnvLibrary+"="+lib)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "fault tests failed (%v):\n%s", err, out)
	for _, name := range faultTests {
		assert.Contains(t, string(out), "--- PASS: "+name+" ", "%s did not pass in the child:\n%s", name, out)
	}
	if testing.Verbose() {
		t.Logf("child output:\n%s", out)
	}
}

// TestDriverWithoutUnusedSymbols gives the plugin a driver without the
// entry points it does not use (cuGetErrorName, cuMemHostRegister,
// cuMemHostUnregister): the driver loads, and the raw baselines' fault
// test (devices open, memory, copies, streams, modules, launches) passes
// with it in a child process.
func TestDriverWithoutUnusedSymbols(t *testing.T) {
	needCgo(t)
	if os.Getenv(fakeChildEnv) != "" {
		t.Skip("in the child")
	}
	lib := buildFakeDriver(t, "-DFAKECUDA_ONLY_USED")
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultRaw$", "-test.v", "-test.timeout=1m")
	cmd.Env = append(os.Environ(), fakeChildEnv+"=1", EnvLibrary+"="+lib)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "with a driver lacking the unused entry points (%v):\n%s", err, out)
	require.Contains(t, string(out), "--- PASS: TestFaultRaw ", "with a driver lacking the unused entry points (%v):\n%s", err, out)
}

// fakeState mirrors struct fakecuda_state of the fake.
type fakeState struct {
	Allocs, AllocBytes, HostAllocs, HostRegs, Streams, Events, Modules, CtxRefs int64
	Injected, Misuse, LeakedAtRelease, Launches, PageableWaits, StreamWaits     int64
}

// fakeState is read as 14 int64s.
var _ [14]int64 = [unsafe.Sizeof(fakeState{}) / 8]int64{}

// live returns the part of s that counts live objects.
func (s fakeState) live() fakeState {
	return fakeState{Allocs: s.Allocs, AllocBytes: s.AllocBytes, HostAllocs: s.HostAllocs, HostRegs: s.HostRegs,
		Streams: s.Streams, Events: s.Events, Modules: s.Modules, CtxRefs: s.CtxRefs}
}

// fakeLib is the fake's control block, reached through dlsym.
type fakeLib struct {
	state  *[14]int64
	misuse *[512]byte
	spec   *[1024]byte
	gen    *int32
	hostNS *int64 // the fake's host clock with FAKECUDA_CLOCK_MANUAL
	gate   *int32 // opens the FAKECUDA_GATE kernels

	base     fakeState // the fake's counters at the start of the test
	bindBase cu.Live   // the binding's
}

var fake struct {
	once sync.Once
	d    *fakeLib
	err  error
}

// fakeDriverIn returns the fake of the child process, with the test's
// baseline taken, or skips the test outside the child. It checks that the
// previous test left nothing live, and disarms faults when the test ends.
func fakeDriverIn(t *testing.T) *fakeLib {
	t.Helper()
	lib := os.Getenv(EnvLibrary)
	if os.Getenv(fakeChildEnv) == "" || lib == "" {
		t.Skip("runs against the fake driver in the child process of TestFakeDriverFaults")
	}
	fake.once.Do(func() {
		l, err := dl.Open(lib)
		if err != nil {
			fake.err = err
			return
		}
		d := &fakeLib{}
		for _, s := range []struct {
			name string
			p    *unsafe.Pointer
		}{
			{"fakecuda_state", (*unsafe.Pointer)(unsafe.Pointer(&d.state))},
			{"fakecuda_misuse_msg", (*unsafe.Pointer)(unsafe.Pointer(&d.misuse))},
			{"fakecuda_fail_spec", (*unsafe.Pointer)(unsafe.Pointer(&d.spec))},
			{"fakecuda_fail_gen", (*unsafe.Pointer)(unsafe.Pointer(&d.gen))},
			{"fakecuda_host_ns", (*unsafe.Pointer)(unsafe.Pointer(&d.hostNS))},
			{"fakecuda_gate", (*unsafe.Pointer)(unsafe.Pointer(&d.gate))},
		} {
			if *s.p, err = l.Sym(s.name); err != nil {
				fake.err = err
				return
			}
		}
		fake.d = d
	})
	require.Nil(t, fake.err, "fake driver %s", lib)
	f := fake.d
	// The clock's timer would call the driver at any moment, among the
	// calls a test counts; the tests that want it turn it on.
	clockTimer = 0
	f.rebase()
	require.Equal(t, (fakeState{}), f.base.live(), "the fake holds live objects at the start of the test")
	f.arm("")
	t.Cleanup(func() { f.arm("") })
	return f
}

// rebase takes the baseline of checkClean and injected.
func (f *fakeLib) rebase() {
	f.base, f.bindBase = f.read(), cu.LiveObjects()
}

func (f *fakeLib) read() fakeState {
	var v [14]int64
	for i := range v {
		v[i] = atomic.LoadInt64(&f.state[i])
	}
	return *(*fakeState)(unsafe.Pointer(&v))
}

// arm replaces the armed faults with spec (see fakecuda.c); "" disarms.
// Call counts start from here.
func (f *fakeLib) arm(spec string) {
	if len(spec) >= len(f.spec) {
		panic("fault spec too long")
	}
	copy(f.spec[:], spec)
	f.spec[len(spec)] = 0
	atomic.AddInt32(f.gen, 1)
}

// injected returns the failures injected since the test began.
func (f *fakeLib) injected() int64 { return f.read().Injected - f.base.Injected }

// checkClean fails t unless, since the baseline, the fake holds no live
// object, no call misused the driver, and leakedAllocs device allocations
// the plugin failed to free were freed by their context's final release
// (the binding still counts those).
func (f *fakeLib) checkClean(t *testing.T, leakedAllocs int64) {
	t.Helper()
	s := f.read()
	assert.Equal(t, (fakeState{}), s.live(), "the fake driver still holds")
	if n := s.Misuse - f.base.Misuse; n != 0 {
		msg := f.misuse[:bytes.IndexByte(f.misuse[:], 0)]
		assert.Zero(t, n, "driver calls misused the driver; the first ever: %s", msg)
	}
	assert.Equal(t, leakedAllocs, s.LeakedAtRelease-f.base.LeakedAtRelease, "objects were still live when their context was released")
	l, b := cu.LiveObjects(), f.bindBase
	d := cu.Live{Allocs: l.Allocs - b.Allocs, HostAllocs: l.HostAllocs - b.HostAllocs,
		Streams: l.Streams - b.Streams, Events: l.Events - b.Events, Modules: l.Modules - b.Modules}
	assert.Equal(t, cu.Live{Allocs: leakedAllocs}, d, "live driver objects the binding counts more than at the start")
}

// open opens the plugin's devices on the fake afresh. When the test ends,
// faults are disarmed, the devices closed and the fake checked clean.
func (f *fakeLib) open(t *testing.T) []device.Device {
	t.Helper()
	devs, err := newPlugin("").Devices()
	require.NoError(t, err, "Devices on the fake driver")
	t.Cleanup(func() {
		f.arm("")
		for _, d := range devs {
			assert.NoError(t, d.(device.Closer).Close(), "Close")
		}
		f.checkClean(t, 0)
	})
	return devs
}

// wantErr fails t unless err has code and contains each of want.
func wantErr(t *testing.T, what string, err error, code device.Code, want ...string) {
	t.Helper()
	wantCode(t, what, err, code)
	for _, w := range want {
		assert.Contains(t, err.Error(), w, "%s: error %q does not contain", what, err)
	}
}

// pattern returns n pseudo-random bytes, the same for the same seed.
func pattern(n, seed int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// roundTrip copies data to buf and back through q and checks it.
func roundTrip(t *testing.T, q device.Queue, buf device.DevicePtr, data []byte) {
	t.Helper()
	must(t, "CopyIn", q.CopyIn(buf, data))
	got := make([]byte, len(data))
	must(t, "CopyOut", q.CopyOut(got, buf))
	must(t, "Sync", q.Sync())
	require.True(t, bytes.Equal(got, data), "round trip of %d bytes changed the data", len(data))
}

// TestFaultCopyOverlap runs devicetest's same-buffer and overlapping copies on
// the fake, which counts a cuMemcpyDtoDAsync over overlapping ranges (left
// undefined by CUDA) as misuse: the plugin copies them as memmove, in
// pieces that do not overlap or through a temporary block, and leaves no
// block behind.
func TestFaultCopyOverlap(t *testing.T) {
	f := fakeDriverIn(t)
	devs := f.open(t)
	devicetest.TestOverlap(t, devs[0])
}

// TestFaultBaseline uses two fake devices with no fault armed: copies of
// both sizes, a device copy, a peer copy, a launch, events and profiling
// succeed and misuse nothing. It checks the fake as much as the plugin.
func TestFaultBaseline(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_DEVICES", "2")
	devs := f.open(t)
	require.Len(t, devs, 2, "devices, want 2")
	info := devs[1].Info()
	assert.EqualValues(t, 256<<20, info.GlobalMem, "info of the fake device: %+v", info)
	assert.EqualValues(t, 132, info.ComputeUnits, "info of the fake device: %+v", info)
	assert.EqualValues(t, 1024, info.MaxThreadsPerTeam, "info of the fake device: %+v", info)
	assert.Equal(t, "sm_90", info.Version, "info of the fake device: %+v", info)
	assert.Equal(t, "12.8", info.DriverVersion, "info of the fake device: %+v", info)
	assert.Contains(t, info.Name, "not a GPU", "info of the fake device: %+v", info)
	if s := f.read(); assert.EqualValues(t, 2, s.CtxRefs, "open devices hold %+v; want a context, a clock stream and a clock event each", s.live()) && assert.EqualValues(t, 2, s.Streams, "open devices hold %+v; want a context, a clock stream and a clock event each", s.live()) {
		assert.EqualValues(t, 2, s.Events, "open devices hold %+v; want a context, a clock stream and a clock event each", s.live())
	}
	d := devs[0]
	const big = 2*stagingChunk + 999
	a, err := d.Alloc(big)
	must(t, "Alloc", err)
	b, err := d.Alloc(big)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	q.(device.Profiler).Profile(true)
	roundTrip(t, q, a.Ptr, pattern(100, 1))
	roundTrip(t, q, a.Ptr, pattern(big, 2))
	must(t, "Copy", q.Copy(b.Ptr, a.Ptr, big))
	got := make([]byte, big)
	must(t, "CopyOut", q.CopyOut(got, b.Ptr))
	must(t, "Sync", q.Sync())
	assert.True(t, bytes.Equal(got, pattern(big, 2)), "device copy changed the data")
	// The fake runs a stream's copies when they are waited for: a small
	// CopyOut (through the queue's bounce ring) has not written its slice
	// yet.
	small := make([]byte, 100)
	must(t, "CopyOut", q.CopyOut(small, a.Ptr))
	assert.True(t, bytes.Equal(small, make([]byte, 100)), "the fake ran an asynchronous copy before its stream was waited for")
	must(t, "Sync", q.Sync())
	assert.True(t, bytes.Equal(small, pattern(big, 2)[:100]), "small CopyOut gave wrong data")
	assert.EqualValues(t, stagingDepth+1, f.read().HostAllocs, "page-locked allocations after copies on one queue, want %d staging buffers and a bounce ring", stagingDepth)

	fn, err := d.Load(kernels.Saxpy)
	must(t, "Load", err)
	args := []device.Arg{{Bits: 1000}, {Bits: uint64(math.Float32bits(2))}, {Ptr: a.Ptr}, {Ptr: b.Ptr}}
	must(t, "Launch", q.Launch(fn, device.Shape{Size: [3]int{1000, 1, 1}}, args))
	tm := q.(device.Profiler).Last()
	ev, err := q.Record()
	must(t, "Record", err)
	t1, err := ev.Time()
	must(t, "event Time", err)
	begin, end, native, err := tm.Times()
	must(t, "Times", err)
	assert.LessOrEqual(t, begin, end, "launch timing %d..%d (%s), event at %d", begin, end, native.Type, t1)
	assert.Positive(t, begin, "launch timing %d..%d (%s), event at %d", begin, end, native.Type, t1)
	assert.Positive(t, t1, "launch timing %d..%d (%s), event at %d", begin, end, native.Type, t1)
	assert.Equal(t, "cuda kernel", native.Type, "launch timing %d..%d (%s), event at %d", begin, end, native.Type, t1)
	n := f.read().Launches - f.base.Launches
	assert.EqualValues(t, 1, n, "the fake saw %d launches, want 1", n)

	peer := devs[1]
	pb, err := peer.Alloc(4096)
	must(t, "Alloc on the peer", err)
	pq, err := peer.NewQueue()
	must(t, "NewQueue on the peer", err)
	must(t, "CopyIn on the peer", pq.CopyIn(pb.Ptr, pattern(4096, 3)))
	must(t, "Sync on the peer", pq.Sync())
	must(t, "CopyPeer", q.(device.PeerCopier).CopyPeer(a.Ptr, peer, pb.Ptr, 4096))
	got = make([]byte, 4096)
	must(t, "CopyOut", q.CopyOut(got, a.Ptr))
	must(t, "Sync", q.Sync())
	assert.True(t, bytes.Equal(got, pattern(4096, 3)), "peer copy changed the data")
	must(t, "Release", pq.Release())
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(a.Ptr))
	must(t, "Free", d.Free(b.Ptr))
	must(t, "Free", peer.Free(pb.Ptr))
}

// TestFaultOpen fails the driver while the plugin opens its devices: the
// plugin has no device (or fewer), says why, and keeps nothing.
func TestFaultOpen(t *testing.T) {
	f := fakeDriverIn(t)
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"no device", map[string]string{"FAKECUDA_DEVICES": "0"}, []string{"no CUDA device", "CUDA_ERROR_NO_DEVICE"}},
		{"old driver", map[string]string{"FAKECUDA_DRIVER_VERSION": "9020"}, []string{"supports CUDA 9.2, too old"}},
		{"old GPU", map[string]string{"FAKECUDA_CC": "6.1"}, []string{"compute capability 6.1"}},
		{"Volta", map[string]string{"FAKECUDA_CC": "7.0"}, []string{"compute capability 7.0", "PTX needs 7.5 or newer"}},
		{"cuInit", map[string]string{"FAKECUDA_FAIL": "cuInit:1:999"}, []string{"failed to initialise", "cuInit: CUDA_ERROR_UNKNOWN"}},
		{"context", map[string]string{"FAKECUDA_FAIL": "cuDevicePrimaryCtxRetain:1"}, []string{"CUDA device 0", "cuDevicePrimaryCtxRetain"}},
		{"memory info", map[string]string{"FAKECUDA_FAIL": "cuMemGetInfo_v2:1"}, []string{"cuMemGetInfo_v2"}},
		{"block limit", map[string]string{"FAKECUDA_FAIL": "cuDeviceGetAttribute:3"}, []string{"cuDeviceGetAttribute"}},
		{"total memory", map[string]string{"FAKECUDA_FAIL": "cuDeviceTotalMem:1"}, []string{"cuDeviceTotalMem_v2"}},
		{"clock stream", map[string]string{"FAKECUDA_FAIL": "cuStreamCreate:1:2"}, []string{"cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY"}},
		{"clock event", map[string]string{"FAKECUDA_FAIL": "cuEventCreate:2:2"}, []string{"cuEventCreate"}},
		{"clock record", map[string]string{"FAKECUDA_FAIL": "cuEventRecord:3"}, []string{"cuEventRecord"}},
		{"clock poll", map[string]string{"FAKECUDA_FAIL": "cuEventQuery:2:999"}, []string{"cuEventQuery: CUDA_ERROR_UNKNOWN"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f.rebase()
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			devs, err := newPlugin("").Devices()
			require.Empty(t, devs, "devices, want none")
			wantErr(t, "Devices", err, device.CodeUnknown, c.want...)
			assert.ErrorIs(t, err, device.ErrNoDevice, "error %v does not wrap ErrNoDevice", err)
			assert.False(t, c.env["FAKECUDA_FAIL"] != "" && f.injected() != 1, "%d failures injected, want 1", f.injected())
			f.checkClean(t, 0)
		})
	}
	// Attributes that only describe the device read as zero when the
	// driver does not answer: the clock rate (the 8th attribute read) and
	// the UUID.
	t.Run("descriptive attributes", func(t *testing.T) {
		f.rebase()
		t.Setenv("FAKECUDA_FAIL", "cuDeviceGetAttribute:8,cuDeviceGetUuid:1")
		info := f.open(t)[0].Info()
		var uuid string
		for _, a := range info.Extra {
			if a.Key == "UUID" {
				uuid = a.Value
			}
		}
		assert.Zero(t, info.ClockMHz, "clock %d MHz, %d SMs, UUID %s, %d failures injected; want 0, 132, zero, 2", info.ClockMHz, info.ComputeUnits, uuid, f.injected())
		assert.EqualValues(t, 132, info.ComputeUnits, "clock %d MHz, %d SMs, UUID %s, %d failures injected; want 0, 132, zero, 2", info.ClockMHz, info.ComputeUnits, uuid, f.injected())
		assert.Equal(t, "GPU-00000000-0000-0000-0000-000000000000", uuid, "clock %d MHz, %d SMs, UUID %s, %d failures injected; want 0, 132, zero, 2", info.ClockMHz, info.ComputeUnits, uuid, f.injected())
		assert.EqualValues(t, 2, f.injected(), "clock %d MHz, %d SMs, UUID %s, %d failures injected; want 0, 132, zero, 2", info.ClockMHz, info.ComputeUnits, uuid, f.injected())
	})

	// One of two devices fails to open: the other is device 0.
	f.rebase()
	t.Setenv("FAKECUDA_DEVICES", "2")
	t.Setenv("FAKECUDA_FAIL", "cuDevicePrimaryCtxRetain:1")
	devs := f.open(t)
	require.Len(t, devs, 1, "devices, want the one that opened")
	var ordinal string
	for _, a := range devs[0].Info().Extra {
		if a.Key == "CUDA ordinal" {
			ordinal = a.Value
		}
	}
	if id := devs[0].(*gpu).id; assert.Equal(t, "cuda:0", id, "the device that opened is %s, CUDA ordinal %s; want cuda:0, ordinal 1", id, ordinal) {
		assert.Equal(t, "1", ordinal, "the device that opened is %s, CUDA ordinal %s; want cuda:0, ordinal 1", id, ordinal)
	}
}

// TestFaultOutOfMemory runs a 64 MiB device out of memory.
func TestFaultOutOfMemory(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_MEM_LIMIT", "67108864")
	d := f.open(t)[0]
	mi := d.(device.MemInfo)
	require.EqualValues(t, 64<<20, d.Info().GlobalMem, "GlobalMem")
	// A block in the cache, for the out-of-memory path to give back.
	small, err := d.Alloc(3 << 20)
	must(t, "Alloc", err)
	must(t, "Free", d.Free(small.Ptr))
	require.NotZero(t, d.(*gpu).CacheBytes(), "a freed 3 MiB block was not cached")
	kept, err := d.Alloc(2 << 20)
	must(t, "Alloc", err)

	// 63 MiB: its size class (64 MiB) fails, again after the cache is
	// given back, and the exact size fails too.
	_, err = d.Alloc(63 << 20)
	wantErr(t, "Alloc of 63 MiB with 2 MiB live", err, device.CodeOutOfResources,
		"66060288 bytes: the device has 65011712 of 67108864 bytes free", "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY")
	assert.ErrorIs(t, err, device.ErrOutOfResources, "is not ErrOutOfResources")
	if b, n := mi.MemInUse(); assert.EqualValues(t, 2<<20, b, "MemInUse after the failure: %d bytes in %d, want 2 MiB in 1", b, n) {
		assert.EqualValues(t, 1, n, "MemInUse after the failure: %d bytes in %d, want 2 MiB in 1", b, n)
	}
	assert.EqualValues(t, 1, f.read().Allocs, "driver allocations after the failure")
	assert.Zero(t, d.(*gpu).CacheBytes(), "cache bytes after the failure (cache given back)")

	// 61 MiB: its size class does not fit in the 62 MiB free, the exact size does.
	b, err := d.Alloc(61 << 20)
	must(t, "Alloc of 61 MiB with 2 MiB live", err)
	s := f.read()
	assert.EqualValues(t, 63<<20, s.AllocBytes, "the driver holds %d bytes, want 63 MiB (61 MiB allocated at its exact size)", s.AllocBytes)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	roundTrip(t, q, b.Ptr+(40<<20), pattern(5<<20, 4))
	must(t, "Free", d.Free(b.Ptr))

	// Every cuMemAlloc fails: the error is the driver's, nothing is held.
	f.arm("cuMemAlloc_v2:1:2:0")
	_, err = d.Alloc(1 << 20)
	wantErr(t, "Alloc with cuMemAlloc failing", err, device.CodeOutOfResources, "cuMemAlloc_v2")
	assert.NotZero(t, f.injected(), "no failure was injected")
	f.arm("")
	if b, n := mi.MemInUse(); assert.EqualValues(t, 2<<20, b, "MemInUse after the failures: %d bytes in %d, want 2 MiB in 1", b, n) {
		assert.EqualValues(t, 1, n, "MemInUse after the failures: %d bytes in %d, want 2 MiB in 1", b, n)
	}

	// The device keeps working.
	buf, err := d.Alloc(16 << 20)
	must(t, "Alloc after out of memory", err)
	roundTrip(t, q, buf.Ptr, pattern(16<<20, 5))
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(buf.Ptr))
	must(t, "Free", d.Free(kept.Ptr))
	if b, n := mi.MemInUse(); assert.Zero(t, b, "MemInUse at the end: %d bytes in %d", b, n) {
		assert.Zero(t, n, "MemInUse at the end: %d bytes in %d", b, n)
	}
}

// badPTX is rejected by the fake's JIT at its line 6.
const badPTX = `.version 6.3
.target sm_75
.address_size 64
.visible .entry broken()
{
	FAKECUDA_BAD_PTX;
}
`

func TestFaultInvalidPTX(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	k := &device.Kernel{Name: "broken", Images: []device.Image{{Kind: ImagePTX, Source: badPTX}}}
	for i := 0; i < 2; i++ { // a failed load is not cached
		_, err := d.Load(k)
		wantErr(t, "Load of invalid PTX", err, device.CodeInvalidBinary,
			"load broken", "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX", "JIT log:\nptxas application ptx input, line 6")
		var ce *cu.Error
		assert.True(t, errors.As(err, &ce), "the *cu.Error of %v lacks the JIT log", err)
		assert.Contains(t, ce.Log, "FAKECUDA_BAD_PTX", "the *cu.Error of %v lacks the JIT log", err)
	}
	assert.Zero(t, f.read().Modules, "modules live after failed loads")

	// A load failure the fake injects carries its log too; then the kernel loads.
	f.arm("cuModuleLoadDataEx:1:222")
	_, err := d.Load(kernels.Saxpy)
	wantErr(t, "Load with the JIT failing", err, device.CodeInvalidBinary,
		"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "injected failure of cuModuleLoadDataEx")
	fn, err := d.Load(kernels.Saxpy)
	must(t, "Load after a failure", err)
	if fn2, _ := d.Load(kernels.Saxpy); assert.Same(t, fn, fn2, "a loaded kernel is not cached") {
		assert.NotZero(t, fn.Bytes(), "a loaded kernel is not cached")
	}
	assert.EqualValues(t, 1, f.read().Modules, "modules live, want 1")
}

func TestFaultMissingEntry(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	img, _ := kernels.Saxpy.Image(ImagePTX)
	k := &device.Kernel{Name: "nosuch", Params: kernels.Saxpy.Params,
		Images: []device.Image{{Kind: ImagePTX, Entry: "nosuch", Source: img.Source}}}
	_, err := d.Load(k)
	wantErr(t, "Load of a missing entry", err, device.CodeNotFound,
		`no entry "nosuch"`, "entries: gompt_saxpy", "cuModuleGetFunction: CUDA_ERROR_NOT_FOUND")
	assert.Zero(t, f.read().Modules, "modules live after a missing entry, want the module unloaded")

	// The other failures after the module has loaded unload it too.
	for _, spec := range []string{"cuModuleGetFunction:1:400", "cuFuncGetAttribute:1:1"} {
		f.arm(spec)
		_, err := d.Load(kernels.Saxpy)
		name := spec[:strings.IndexByte(spec, ':')]
		require.Error(t, err, "Load with %s failing", name)
		assert.Contains(t, err.Error(), name, "Load with %s failing: %v", name, err)
		s := f.read()
		assert.Zero(t, s.Modules, "modules live after %s failed", name)
	}
	f.arm("")
	_, err = d.Load(kernels.Saxpy)
	must(t, "Load after the failures", err)
}

// A kernel whose Params name two buffers of one type in another order than
// its PTX's parameters is refused at load naming both, before the driver
// sees the PTX (no module is loaded); the PTX's order loads.
func TestFaultPTXParamNames(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	a := device.BufferParam("a", device.ParamFloat32, "1")
	b := device.BufferParam("b", device.ParamFloat32, "1")
	k := func(ps ...device.Param) *device.Kernel {
		return &device.Kernel{Name: "swap2", Params: ps, Images: []device.Image{{Kind: ImagePTX, Source: swap2PTX}}}
	}
	_, err := d.Load(k(b, a))
	wantErr(t, "Load of a and b swapped", err, device.CodeInvalidBinary,
		"load swap2", `PTX entry swap2's parameter 0 is named "a" but the Kernel's parameter 0 is "b"; Params must list the parameters in the PTX's order`)
	assert.Zero(t, f.read().Modules, "modules live after the refused load")
	fn, err := d.Load(k(a, b))
	must(t, "Load in the PTX's order", err)
	assert.NotNil(t, fn, "the kernel in the PTX's order")
	assert.EqualValues(t, 1, f.read().Modules, "modules live, want 1")
}

func TestFaultLaunch(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	fn, err := d.Load(kernels.Saxpy)
	must(t, "Load", err)
	const n = 4096
	x, err := d.Alloc(4 * n)
	must(t, "Alloc", err)
	y, err := d.Alloc(4 * n)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	p := q.(device.Profiler)
	p.Profile(true)
	args := []device.Arg{{Bits: n}, {Bits: uint64(math.Float32bits(2))}, {Ptr: x.Ptr}, {Ptr: y.Ptr}}
	shape := device.Shape{Size: [3]int{n, 1, 1}}
	events := f.read().Events

	f.arm("cuLaunchKernel:1")
	err = q.Launch(fn, shape, args)
	wantErr(t, "Launch with cuLaunchKernel failing", err, device.CodeOutOfResources,
		"launch saxpy", "cuLaunchKernel: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
	assert.Nil(t, p.Last(), "a launch that failed to enqueue left a timing")
	f.arm("cuLaunchKernel:1:999")
	wantErr(t, "Launch with the driver failing", q.Launch(fn, shape, args), device.CodeUnknown, "CUDA_ERROR_UNKNOWN")
	assert.EqualValues(t, 2, f.injected(), "failures injected, want 2")
	f.arm("")
	s := f.read()
	assert.Equal(t, f.base.Launches, s.Launches, "launches after two failed launches, want none")
	assert.LessOrEqual(t, s.Events, events+2, "events after two failed launches (%d before), want the two timing events pooled", events)

	bad := []device.Arg{args[0], args[1], {Ptr: 0x10}, args[3]}
	err = q.Launch(fn, shape, bad)
	wantErr(t, "Launch with a pointer outside every allocation", err, device.CodeInvalidArgument, "argument 2 (x): 0x10")
	msg := err.Error()
	assert.EqualValues(t, 1, strings.Count(msg, "launch saxpy"), "launch error names the launch %d times: %s", strings.Count(msg, "launch saxpy"), msg)

	must(t, "Launch after failures", q.Launch(fn, shape, args))
	_, _, _, err = p.Last().Times()
	assert.NoError(t, err, "timing of the launch")
	must(t, "Sync", q.Sync())
	assert.EqualValues(t, 1, f.read().Launches-f.base.Launches, "launches reached the driver, want 1")
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(x.Ptr))
	must(t, "Free", d.Free(y.Ptr))
}

// TestFaultStagedCopy fails one driver call in the middle of copies large
// enough to be pipelined through the staging buffers (4 chunks, 3 buffers):
// the copy returns the error, the queue syncs without hanging, the staging
// buffers go back to the pool, and the next copies are right.
func TestFaultStagedCopy(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	const n = 3*stagingChunk + 12345
	buf, err := d.Alloc(n)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	src := pattern(n, 6)
	roundTrip(t, q, buf.Ptr, src)
	for _, c := range []struct {
		spec string
		in   bool // fail CopyIn, else CopyOut
		code device.Code
	}{
		{"cuMemcpyHtoDAsync_v2:2:999", true, device.CodeUnknown},
		{"cuMemcpyHtoDAsync_v2:4:1", true, device.CodeInvalidArgument},
		{"cuEventRecord:3:999", true, device.CodeUnknown},
		{"cuEventSynchronize:1:101", true, device.CodeInvalidDevice}, // the wait for chunk 3's buffer
		{"cuMemcpyDtoHAsync_v2:2:999", false, device.CodeUnknown},
		{"cuMemcpyDtoHAsync_v2:4:999", false, device.CodeUnknown}, // in the refill of the ring
		{"cuEventRecord:4:999", false, device.CodeUnknown},
		{"cuEventSynchronize:3:101", false, device.CodeInvalidDevice},
	} {
		t.Run(c.spec, func(t *testing.T) {
			f.arm(c.spec)
			if c.in {
				err = q.CopyIn(buf.Ptr, src)
				wantErr(t, "CopyIn", err, c.code, "copy to device")
			} else {
				err = q.CopyOut(make([]byte, n), buf.Ptr)
				wantErr(t, "CopyOut", err, c.code, "copy from device")
			}
			name := c.spec[:strings.IndexByte(c.spec, ':')]
			assert.Contains(t, err.Error(), name, "error %q does not name", err)
			require.NotZero(t, f.injected(), "no failure injected: the copy did not reach the armed call")
			f.base.Injected = f.read().Injected
			f.arm("")
			must(t, "Sync after a failed copy", q.Sync())
			roundTrip(t, q, buf.Ptr, src)
			s := f.read()
			assert.EqualValues(t, stagingDepth, s.HostAllocs, "staging buffers after the failure and a round trip (want the same ones)")
			assert.Equal(t, f.base.Misuse, s.Misuse, "misuses after the failure and a round trip")
		})
	}

	// CopyOut fails to record the event after chunk 0's copy is enqueued:
	// the copy still writes into its staging buffer, so the buffer must not
	// go to another queue's CopyIn until the copy has run. (The fake runs a
	// stream's copies when it is waited for: q's after q2 has filled the
	// buffer.)
	t.Run("reuse after a failed record", func(t *testing.T) {
		other, err := d.Alloc(n)
		must(t, "Alloc", err)
		q2, err := d.NewQueue()
		must(t, "NewQueue", err)
		f.arm("cuEventRecord:1")
		wantErr(t, "CopyOut", q.CopyOut(make([]byte, n), buf.Ptr), device.CodeUnknown, "cuEventRecord")
		f.arm("")
		src2 := pattern(n, 13)
		must(t, "CopyIn on another queue", q2.CopyIn(other.Ptr, src2))
		must(t, "Sync", q.Sync())
		must(t, "Sync", q2.Sync())
		got := make([]byte, n)
		must(t, "CopyOut", q2.CopyOut(got, other.Ptr))
		must(t, "Sync", q2.Sync())
		i := firstDiff(got, src2)
		assert.Negative(t, i, "CopyIn on another queue wrote wrong data from byte %d (chunk %d): its staging buffer was overwritten by the failed CopyOut's copy",
			i, i/stagingChunk)
		must(t, "Release", q2.Release())
		must(t, "Free", d.Free(other.Ptr))
	})
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(buf.Ptr))
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestFaultNoPinnedMemory fails the page-locked allocations (or the events)
// of the staging buffers: large copies then go with fewer buffers, or
// straight from the program's memory, and stay right. (The plugin never
// registers host memory with cuMemHostRegister: see plan.go.)
func TestFaultNoPinnedMemory(t *testing.T) {
	f := fakeDriverIn(t)
	for _, c := range []struct {
		spec    string
		buffers int64 // staging buffers made
	}{
		{"cuMemAllocHost_v2:1:2:0", 0},
		{"cuEventCreate:1:2:0", 0},
		{"cuMemAllocHost_v2:2:2:0", 1},
		{"cuMemAllocHost_v2:3:2:0", 2},
	} {
		t.Run(c.spec, func(t *testing.T) {
			d := f.open(t)[0]
			const n = 2*stagingChunk + 4321
			buf, err := d.Alloc(n)
			must(t, "Alloc", err)
			q, err := d.NewQueue()
			must(t, "NewQueue", err)
			f.arm(c.spec)
			roundTrip(t, q, buf.Ptr, pattern(n, 7))
			roundTrip(t, q, buf.Ptr, pattern(n, 8))
			assert.NotZero(t, f.injected(), "no failure injected")
			assert.Equal(t, c.buffers, f.read().HostAllocs, "staging buffers")
			f.arm("")
			must(t, "Release", q.Release())
			must(t, "Free", d.Free(buf.Ptr))
		})
	}
}

// TestFaultSync fails the synchronisations: stream and event waits return
// the driver's error once, and release still destroys what it should.
func TestFaultSync(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	buf, err := d.Alloc(1 << 20)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	must(t, "CopyIn", q.CopyIn(buf.Ptr, pattern(1000, 9)))

	f.arm("cuStreamSynchronize:1:999")
	wantErr(t, "Sync", q.Sync(), device.CodeUnknown, "sync", "cuStreamSynchronize: CUDA_ERROR_UNKNOWN")
	must(t, "Sync after the failure", q.Sync())

	// Event waits.
	e, err := q.Record()
	must(t, "Record", err)
	f.arm("cuEventSynchronize:1:999")
	wantErr(t, "Wait", e.Wait(), device.CodeUnknown, "wait", "cuEventSynchronize: CUDA_ERROR_UNKNOWN")
	wantErr(t, "second Wait", e.Wait(), device.CodeUnknown, "cuEventSynchronize")
	_, err = e.Time()
	assert.Error(t, err, "Time of a failed event succeeded")
	f.arm("cuEventRecord:1")
	_, err = q.Record()
	wantErr(t, "Record with cuEventRecord failing", err, device.CodeUnknown, "record", "cuEventRecord")

	// A profiled copy whose end event fails.
	p := q.(device.Profiler)
	p.Profile(true)
	f.arm("")
	must(t, "CopyIn", q.CopyIn(buf.Ptr, pattern(1000, 10)))
	f.arm("cuEventSynchronize:1:999")
	if _, _, _, err := p.Last().Times(); assert.Error(t, err, "Times with cuEventSynchronize failing") {
		assert.Contains(t, err.Error(), "cuEventSynchronize", "Times with cuEventSynchronize failing: %v", err)
	}
	f.arm("")
	must(t, "Sync", q.Sync())

	// A Sync with nothing enqueued since the last one makes no driver
	// call; one after a copy does.
	f.arm("cuStreamSynchronize:1:999")
	must(t, "Sync of an idle queue", q.Sync())
	must(t, "CopyIn", q.CopyIn(buf.Ptr, pattern(10, 11)))
	wantErr(t, "Sync after a copy", q.Sync(), device.CodeUnknown, "cuStreamSynchronize")
	f.arm("")

	// Release whose sync fails still destroys the stream, once.
	f.arm("cuStreamCreate:1")
	_, err = d.NewQueue()
	wantErr(t, "NewQueue with cuStreamCreate failing", err, device.CodeUnknown, "new queue", "cuStreamCreate")
	streams := f.read().Streams
	must(t, "CopyIn", q.CopyIn(buf.Ptr, pattern(10, 12))) // something for Release to wait for
	f.arm("cuStreamSynchronize:1:999")
	wantErr(t, "Release", q.Release(), device.CodeUnknown, "cuStreamSynchronize")
	assert.Equal(t, streams-1, f.read().Streams, "streams after a Release whose sync failed")
	must(t, "second Release", q.Release())
	wantErr(t, "CopyIn on a released queue", q.CopyIn(buf.Ptr, []byte{1}), device.CodeInvalidArgument, "released")
	assert.EqualValues(t, 7, f.injected(), "failures injected, want 7")
	must(t, "Free", d.Free(buf.Ptr))
}

// TestFaultConcurrent runs staged round trips on several queues at once
// while a copy and an event record fail somewhere among them: the copies
// that fail say so, and every round trip that succeeds is right.
func TestFaultConcurrent(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	const workers, rounds, n = 3, 3, 2*stagingChunk + 1000
	f.arm("cuEventRecord:7:999,cuMemcpyDtoHAsync_v2:5:999")
	var failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := d.Alloc(n)
			if !assert.NoError(t, err) {
				return
			}
			defer d.Free(buf.Ptr)
			q, err := d.NewQueue()
			if !assert.NoError(t, err) {
				return
			}
			defer q.Release()
			got := make([]byte, n)
			for r := range rounds {
				src := pattern(n, 16*w+r)
				err := q.CopyIn(buf.Ptr, src)
				if err == nil {
					err = q.CopyOut(got, buf.Ptr)
				}
				if err = errors.Join(err, q.Sync()); err != nil {
					failed.Add(1)
					continue
				}
				assert.Negative(t, firstDiff(got, src), "worker %d round %d: wrong data from byte", w, r)
			}
		}()
	}
	wg.Wait()
	if n := f.injected(); assert.EqualValues(t, 2, n, "%d failures injected, %d round trips failed; want 2 and 2", n, failed.Load()) {
		assert.Equal(t, n, failed.Load(), "%d failures injected, %d round trips failed; want 2 and 2", n, failed.Load())
	}
}

// TestFaultRaw fails the driver under the raw baselines of
// device/cuda/curaw: they return the error and release what they made.
func TestFaultRaw(t *testing.T) {
	f := fakeDriverIn(t)
	d := f.open(t)[0]
	_, err := curaw.Copy(d, 1<<20, true, 3)
	must(t, "CUDACopy", err)
	// The empty kernel is loaded for the call and unloaded after it.
	before := f.read().live()
	_, err = curaw.EmptyLaunchSync(d, 3)
	must(t, "CUDAEmptyLaunchSync", err)
	after := f.read().live()
	assert.Equal(t, before, after, "CUDAEmptyLaunchSync left %+v (before: %+v)", after, before)
	// Each load is unloaded: nothing stays.
	for _, unique := range []bool{false, true} {
		before := f.read()
		_, err := curaw.Load(d, curaw.EmptyPTX, unique, 5)
		must(t, "CUDALoad", err)
		after := f.read()
		assert.Equal(t, before.live(), after.live(), "CUDALoad (unique %v) left %+v (before: %+v)", unique, after.live(), before.live())
	}
	if _, err := curaw.Load(d, curaw.EmptyPTX, false, 0); assert.Error(t, err, "CUDALoad of 0 iterations") {
		assert.Contains(t, err.Error(), "iters 0", "CUDALoad of 0 iterations: %v", err)
	}
	if _, err := curaw.Copy(nil, 1, true, 1); assert.Error(t, err, "CUDACopy on no device") {
		assert.Contains(t, err.Error(), "not a device of the cuda plugin", "CUDACopy on no device: %v", err)
	}
	for _, c := range []struct {
		spec string
		raw  func() error
	}{
		{"cuMemcpyHtoD_v2:2", func() error { _, err := curaw.Copy(d, 1<<20, true, 3); return err }},
		{"cuMemcpyDtoH_v2:3", func() error { _, err := curaw.Copy(d, 1<<20, false, 3); return err }},
		{"cuMemAlloc_v2:1", func() error { _, err := curaw.Copy(d, 1<<20, false, 3); return err }},
		{"cuModuleGetFunction:1", func() error { _, err := curaw.EmptyLaunchSync(d, 3); return err }},
		{"cuLaunchKernel:2", func() error { _, err := curaw.EmptyLaunchSync(d, 3); return err }},
		{"cuStreamSynchronize:3:999", func() error { _, err := curaw.EmptyLaunchSync(d, 3); return err }},
		{"cuModuleLoadDataEx:2", func() error { _, err := curaw.Load(d, curaw.EmptyPTX, true, 3); return err }},
	} {
		before := f.read().live()
		f.arm(c.spec)
		if err := c.raw(); assert.Error(t, err, "raw baseline with %s failing", c.spec) {
			assert.Contains(t, err.Error(), c.spec[:strings.IndexByte(c.spec, ':')], "raw baseline with %s failing: %v", c.spec, err)
		}
		after := f.read().live()
		assert.Equal(t, before, after, "with %s failing, the raw baseline left %+v (before: %+v)", c.spec, after, before)
	}
}

// TestFaultClose closes devices in use, and a device whose driver fails
// while it closes.
func TestFaultClose(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_DEVICES", "2")
	// use leaves in use on d a module, a live and a cached allocation,
	// staging buffers, two queues (one profiling, with work not waited
	// for) and an event not waited for, which it returns.
	use := func(d device.Device) device.Event {
		t.Helper()
		_, err := d.Load(kernels.Saxpy)
		must(t, "Load", err)
		big, err := d.Alloc(2*stagingChunk + 1)
		must(t, "Alloc", err)
		cached, err := d.Alloc(1 << 20)
		must(t, "Alloc", err)
		must(t, "Free", d.Free(cached.Ptr))
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		roundTrip(t, q, big.Ptr, pattern(2*stagingChunk+1, 11))
		e, err := q.Record()
		must(t, "Record", err)
		must(t, "Wait", e.Wait())
		q2, err := d.NewQueue() // left open, profiling, with an operation not synchronised
		must(t, "NewQueue", err)
		q2.(device.Profiler).Profile(true)
		must(t, "CopyIn", q2.CopyIn(big.Ptr, pattern(100, 12)))
		e, err = q2.Record()
		must(t, "Record", err)
		return e // big, q, q2 and e are left for Close.
	}

	devs := f.open(t)
	var events []device.Event
	for _, d := range devs {
		events = append(events, use(d))
	}
	// Per device: the staging buffers, and q2's bounce ring.
	if s := f.read(); assert.EqualValues(t, 2, s.Modules, "devices in use hold %+v", s.live()) && assert.EqualValues(t, 2*(stagingDepth+1), s.HostAllocs, "devices in use hold %+v", s.live()) && assert.EqualValues(t, 6, s.Streams, "devices in use hold %+v", s.live()) {
		assert.EqualValues(t, 4, s.Allocs, "devices in use hold %+v", s.live())
	}
	for _, d := range devs {
		must(t, "Close", d.(device.Closer).Close())
		must(t, "second Close", d.(device.Closer).Close())
		_, err := d.Alloc(1)
		wantErr(t, "Alloc after Close", err, device.CodeInvalidDevice, "closed")
		_, err = d.NewQueue()
		wantErr(t, "NewQueue after Close", err, device.CodeInvalidDevice, "closed")
		_, err = d.Load(kernels.Fill)
		wantErr(t, "Load after Close", err, device.CodeInvalidDevice, "closed")
	}
	for _, e := range events {
		wantErr(t, "Wait for an event after Close", e.Wait(), device.CodeInvalidDevice, "closed")
	}
	f.checkClean(t, 0)

	// cuMemFree fails while a device closes: Close says so and still
	// releases everything else and the context; the driver frees the
	// memory with the context.
	f.rebase()
	devs, err := newPlugin("").Devices()
	must(t, "Devices", err)
	for _, d := range devs {
		use(d)
	}
	f.arm("cuMemFree_v2:1:999:0")
	for _, d := range devs {
		err := d.(device.Closer).Close()
		wantErr(t, "Close with cuMemFree failing", err, device.CodeUnknown, "cuMemFree_v2")
	}
	f.arm("")
	f.checkClean(t, 4) // per device: the live allocation and the cached one
	f.rebase()         // for the check when the test ends
}

// TestFaultSticky ends a device's context as a faulting kernel does on a
// GPU (checkStickyFault), then as a driver call that returns a sticky
// result does: the fake then fails every call in the context with that
// result, as the driver does, until the context's last release.
func TestFaultSticky(t *testing.T) {
	f := fakeDriverIn(t)
	// lostClean checks the fake after the Close of devices with lost
	// contexts: what the plugin could not release went with the context.
	lostClean := func(t *testing.T) {
		t.Helper()
		s := f.read()
		assert.Equal(t, (fakeState{}), s.live(), "the fake driver still holds")
		assert.Zero(t, s.Misuse-f.base.Misuse, "driver calls misused the driver")
		l, b := cu.LiveObjects(), f.bindBase
		assert.Equal(t, b, l, "the binding counts %v live driver objects, %v at the start", l, b)
		f.rebase()
	}
	t.Run("kernel", func(t *testing.T) {
		d := f.open(t)[0]
		checkStickyFault(t, d)
		lostClean(t)
	})
	for _, c := range []struct{ spec, want string }{
		{"cuStreamSynchronize:1:719", "CUDA_ERROR_LAUNCH_FAILED"},
		{"cuMemcpyHtoDAsync_v2:1:716", "CUDA_ERROR_MISALIGNED_ADDRESS"},
		{"cuLaunchKernel:1:715", "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
		{"cuEventSynchronize:1:702", "CUDA_ERROR_LAUNCH_TIMEOUT"},
	} {
		t.Run(c.spec, func(t *testing.T) {
			d := f.open(t)[0]
			g := d.(*gpu)
			buf, err := d.Alloc(1 << 20)
			must(t, "Alloc", err)
			q, err := d.NewQueue()
			must(t, "NewQueue", err)
			q.(device.Profiler).Profile(true)
			fn, err := d.Load(kernels.Fill)
			must(t, "Load", err)
			f.arm(c.spec)
			err = q.CopyIn(buf.Ptr, pattern(1000, 1))
			if err == nil {
				err = q.Launch(fn, device.Shape{Size: [3]int{10, 1, 1}}, []device.Arg{{Bits: 10}, {Bits: 7}, {Ptr: buf.Ptr}})
			}
			if err == nil {
				var e device.Event
				if e, err = q.Record(); err == nil {
					err = e.Wait()
				}
			}
			if err == nil {
				err = q.Sync()
			}
			wantErr(t, "the failing call", err, device.CodeInvalidDevice, c.want)
			assert.NotErrorIs(t, err, ErrContextLost, "the first error wraps ErrContextLost")
			f.arm("")
			// The fake is sticky: a call the plugin does not guard fails too.
			if _, _, err := cu.MemGetInfo(g.ctx); assert.Error(t, err, "cuMemGetInfo after %s: %v, want %s", c.spec, err, c.want) {
				assert.Contains(t, err.Error(), c.want, "cuMemGetInfo after %s", c.spec)
			}
			_, err = d.Alloc(10)
			wantErr(t, "Alloc", err, device.CodeInvalidDevice, "must be restarted", c.want)
			wantErr(t, "CopyOut", q.CopyOut(make([]byte, 10), buf.Ptr), device.CodeInvalidDevice, "must be restarted", c.want)
			assert.ErrorIs(t, d.Free(buf.Ptr), ErrContextLost, "Free on a lost device does not say so")
			must(t, "Release", q.Release())
			must(t, "Close", d.(device.Closer).Close())
			lostClean(t)
		})
	}
	// The context's last release ends the fault: the device opens afresh.
	d := f.open(t)[0]
	buf, err := d.Alloc(100)
	must(t, "Alloc after reopening", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	roundTrip(t, q, buf.Ptr, pattern(100, 2))
	must(t, "Release", q.Release())
	must(t, "Free", d.Free(buf.Ptr))
}

// sleepKernel does nothing; on the fake driver it runs for 300 ms.
var sleepKernel = &device.Kernel{
	Name: "gompt_test_sleep",
	Images: []device.Image{{Kind: ImagePTX, Source: `.version 6.3
.target sm_75
.address_size 64
// FAKECUDA_SLEEP_US 300000
.visible .entry gompt_test_sleep()
{
	ret;
}
`}},
}

// TestFaultReuse frees a block while a queue's work still reads it, as
// target.FreeMem after a nowait region does, and allocates its size class
// again for another queue that writes it at once: the reader must still
// see its data. With FAKECUDA_ASYNC each stream of the fake runs on its
// own worker, so the writer's copy runs while the reader's queue is busy
// with a slow kernel.
func TestFaultReuse(t *testing.T) {
	f := fakeDriverIn(t)
	t.Setenv("FAKECUDA_ASYNC", "1")
	d := f.open(t)[0]
	sleep, err := d.Load(sleepKernel)
	must(t, "Load", err)
	const n = 64 << 10
	a, err := d.Alloc(n)
	must(t, "Alloc", err)
	y, err := d.Alloc(n)
	must(t, "Alloc", err)
	q1, q2 := twoQueues(t, d)
	src := pattern(n, 1)
	must(t, "CopyIn", q1.CopyIn(a.Ptr, src))
	must(t, "Launch", q1.Launch(sleep, device.Shape{Size: [3]int{1, 1, 1}}, nil))
	must(t, "Copy", q1.Copy(y.Ptr, a.Ptr, n)) // reads a after the kernel
	must(t, "Free", d.Free(a.Ptr))            // without waiting for q1
	b, err := d.Alloc(n)
	must(t, "Alloc", err)
	must(t, "CopyIn on another queue", q2.CopyIn(b.Ptr, pattern(n, 2)))
	must(t, "Sync", q2.Sync())
	must(t, "Sync", q1.Sync())
	got := make([]byte, n)
	must(t, "CopyOut", q1.CopyOut(got, y.Ptr))
	must(t, "Sync", q1.Sync())
	i := firstDiff(got, src)
	assert.Negative(t, i, "the copy from a freed block read other data from byte %d: the block was handed to another queue before the work using it was done", i)
	// Once the work is done, the cache hands the blocks out again.
	must(t, "Free", d.Free(b.Ptr))
	allocs := f.read().Allocs
	c, err := d.Alloc(n)
	must(t, "Alloc", err)
	c2, err := d.Alloc(n)
	must(t, "Alloc", err)
	assert.Equal(t, allocs, f.read().Allocs, "driver allocations after two Allocs with two blocks of their class freed and idle, want %d (both reused)", allocs)
	for _, p := range []device.DevicePtr{c.Ptr, c2.Ptr, y.Ptr} {
		must(t, "Free", d.Free(p))
	}
	must(t, "Release", q1.Release())
	must(t, "Release", q2.Release())
}

// TestFaultClock runs a simulated hour on a fake GPU whose timer runs 200
// ppm fast or slow against the host's clock, is offset from it, and jumps
// 3 ms ahead after half an hour. The clock resynchronises once a simulated
// second (as its timer would), and an event recorded at a random moment of
// each second must translate to within 1 us of the host time it was
// recorded at. Exempt: the first 10 s (the rate is not yet known) and the
// second after the jump (until the next reference sees it).
func TestFaultClock(t *testing.T) {
	f := fakeDriverIn(t)
	const (
		start  = int64(1000e9)
		hour   = int64(3600e9)
		jumpAt = start + hour/2 + 123456789
	)
	for _, ppm := range []string{"200", "-200", "3.5"} {
		t.Run(ppm+"ppm", func(t *testing.T) {
			t.Setenv("FAKECUDA_CLOCK_MANUAL", "1")
			t.Setenv("FAKECUDA_CLOCK_PPM", ppm)
			t.Setenv("FAKECUDA_CLOCK_OFFSET", "-987654321012")
			t.Setenv("FAKECUDA_CLOCK_JUMP", "3000000")
			t.Setenv("FAKECUDA_CLOCK_JUMP_AT", strconv.FormatInt(jumpAt, 10))
			setHost := func(ns int64) { atomic.StoreInt64(f.hostNS, ns) }
			setHost(start)
			hostClock = func() int64 { return atomic.LoadInt64(f.hostNS) }
			defer func() { hostClock = hostNow }()
			d := f.open(t)[0]
			g := d.(*gpu)
			s, err := cu.StreamCreate(g.ctx, cu.STREAM_NON_BLOCKING)
			must(t, "StreamCreate", err)
			defer cu.StreamDestroy(g.ctx, s)
			e, err := cu.EventCreate(g.ctx, cu.EVENT_DEFAULT)
			must(t, "EventCreate", err)
			defer cu.EventDestroy(g.ctx, e)
			rng := rand.New(rand.NewPCG(1, uint64(len(ppm))))
			var worst int64
			bad := 0
			for sec := int64(1); sec <= 3600; sec++ {
				now := start + sec*1e9
				setHost(now)
				must(t, "resync", g.clock.resync(g.ctx, resyncWait))
				at := now + rng.Int64N(1e9)
				setHost(at)
				must(t, "EventRecord", cu.EventRecord(g.ctx, e, s))
				must(t, "EventSynchronize", cu.EventSynchronize(g.ctx, e))
				setHost(at + rng.Int64N(1e9)) // read a little later
				got, err := g.clock.translate(g.ctx, e, at)
				must(t, "translate", err)
				if sec < 10 || at >= jumpAt && at < jumpAt+2e9 {
					continue
				}
				diff := abs(got - at)
				worst = max(worst, diff)
				if diff > 1000 && bad < 5 {
					bad++
					assert.LessOrEqual(t, diff, int64(1000), "after %d s: an event recorded at %d ns translates to %d ns, %d ns off", sec, at, got, got-at)
				}
			}
			t.Logf("worst error %d ns", worst)
		})
	}
}

// TestFaultClockTimer turns the clock's timer on: references accumulate
// without any time being read, and an event translates between its record
// and its read.
func TestFaultClockTimer(t *testing.T) {
	f := fakeDriverIn(t)
	clockTimer = 5 * time.Millisecond
	d := f.open(t)[0]
	g := d.(*gpu)
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.clock.mu.Lock()
		n := len(g.clock.refs)
		g.clock.mu.Unlock()
		if n == refsKept {
			break
		}
		require.False(t, time.Now().After(deadline), "%d references after 10 s with a 5 ms timer, want %d", n, refsKept)
		time.Sleep(time.Millisecond)
	}
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	t0, _ := d.Now()
	e, err := q.Record()
	must(t, "Record", err)
	te, err := e.Time()
	must(t, "Time", err)
	t1, _ := d.Now()
	assert.GreaterOrEqual(t, te, t0, "event time %d outside [%d, %d]", te, t0, t1)
	assert.LessOrEqual(t, te, t1, "event time %d outside [%d, %d]", te, t0, t1)
	must(t, "Release", q.Release())
}

// TestFaultSched checks the scheduling flags the plugin gives the primary
// context: blocking sync by default, as LLVM's plugin does, or what
// GOMPT_CUDA_SCHED says; and none when the primary context is already
// active (something else in the process retained it first).
func TestFaultSched(t *testing.T) {
	f := fakeDriverIn(t)
	waiting := func(d device.Device) string {
		for _, a := range d.Info().Extra {
			if a.Key == "waiting" {
				return a.Value
			}
		}
		return ""
	}
	for _, c := range []struct {
		env   string
		flags uint
		say   string
	}{
		{"", cu.CTX_SCHED_BLOCKING_SYNC, "blocking (default"},
		{"spin", cu.CTX_SCHED_SPIN, "spin (GOMPT_CUDA_SCHED)"},
		{"yield", cu.CTX_SCHED_YIELD, "yield (GOMPT_CUDA_SCHED)"},
		{"auto", cu.CTX_SCHED_AUTO, "auto (GOMPT_CUDA_SCHED)"},
		{"blocking", cu.CTX_SCHED_BLOCKING_SYNC, "blocking (GOMPT_CUDA_SCHED)"},
		{"busy", cu.CTX_SCHED_BLOCKING_SYNC, "blocking (default"}, // warned about
	} {
		t.Run("GOMPT_CUDA_SCHED="+c.env, func(t *testing.T) {
			t.Setenv(EnvSched, c.env)
			d := f.open(t)[0]
			flags, active, err := cu.DevicePrimaryCtxGetState(d.(*gpu).dev)
			must(t, "cuDevicePrimaryCtxGetState", err)
			assert.True(t, active, "primary context flags %#x (active %v), Info says %q; want %#x, %q", flags, active, waiting(d), c.flags, c.say)
			assert.Equal(t, c.flags, flags&cu.CTX_SCHED_MASK, "primary context flags %#x (active %v), Info says, %q", flags, active, c.say)
			assert.True(t, strings.HasPrefix(waiting(d), c.say), "primary context flags %#x (active %v), Info says %q; want %#x, %q", flags, active, waiting(d), c.flags, c.say)
		})
	}
	t.Run("already active", func(t *testing.T) {
		dev, err := cu.DeviceGet(0)
		must(t, "cuDeviceGet", err)
		must(t, "cuDevicePrimaryCtxSetFlags", cu.DevicePrimaryCtxSetFlags(dev, cu.CTX_SCHED_SPIN))
		_, err = cu.DevicePrimaryCtxRetain(dev)
		must(t, "cuDevicePrimaryCtxRetain", err)
		d := f.open(t)[0]
		t.Cleanup(func() { cu.DevicePrimaryCtxRelease(dev) }) // before open's check
		flags, _, err := cu.DevicePrimaryCtxGetState(dev)
		must(t, "cuDevicePrimaryCtxGetState", err)
		assert.EqualValues(t, cu.CTX_SCHED_SPIN, flags&cu.CTX_SCHED_MASK, "flags %#x, Info says %q; want the active context's spin left alone, and said", flags, waiting(d))
		assert.Contains(t, waiting(d), "spin (the primary context was already active", "flags %#x, Info says %q; want the active context's spin left alone, and said", flags, waiting(d))
	})
}
