package cuda

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/curaw"
	"github.com/gompt/gompt/device/cuda/internal/cu"
	"github.com/gompt/gompt/device/devicetest"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gpus returns the devices of the registered plugin, or skips the test with
// the plugin's reason; with GOMPT_REQUIRE_GPU=1 (ci/gpu/run.sh sets it) no
// device is a failure instead.
func gpus(t testing.TB) []device.Device {
	t.Helper()
	p, ok := device.Lookup("cuda")
	require.True(t, ok, `plugin "cuda" is not registered`)
	devs, err := p.Devices()
	if len(devs) == 0 {
		require.NotEqual(t, "1", os.Getenv("GOMPT_REQUIRE_GPU"), "GOMPT_REQUIRE_GPU=1 and no CUDA device: %v", err)
		t.Skipf("no CUDA device: %v", err)
	}
	return devs
}

func must(t testing.TB, what string, err error) {
	t.Helper()
	require.NoError(t, err, "%s", what)
}

func wantCode(t testing.TB, what string, err error, code device.Code) {
	t.Helper()
	require.Error(t, err, "%s succeeded, want a %v error", what, code)
	require.Equal(t, code, device.CodeOf(err), "%s: %v (code %v), want code", what, err, device.CodeOf(err))
}

// TestDevicetest runs the conformance suite with every library kernel on
// every GPU.
func TestDevicetest(t *testing.T) {
	for _, d := range gpus(t) {
		t.Run(d.Info().Name, func(t *testing.T) {
			t.Logf("%+v", d.Info())
			devicetest.TestDevice(t, d, kernels.Conformance()...)
		})
	}
}

func TestInfo(t *testing.T) {
	for _, d := range gpus(t) {
		info := d.Info()
		assert.Equal(t, "cuda", info.Backend, "implausible info %+v", info)
		assert.Equal(t, "gpu", info.Type, "implausible info %+v", info)
		assert.NotZero(t, info.GlobalMem, "implausible info %+v", info)
		assert.NotZero(t, info.ComputeUnits, "implausible info %+v", info)
		assert.GreaterOrEqual(t, info.MaxThreadsPerTeam, 32, "implausible info %+v", info)
		assert.GreaterOrEqual(t, info.MaxTeams, 65535, "implausible info %+v", info)
		assert.NotEmpty(t, info.DriverVersion, "implausible info %+v", info)
		keys := map[string]string{}
		for _, a := range info.Extra {
			keys[a.Key] = a.Value
		}
		for _, k := range []string{"UUID", "PCI bus id", "compute capability", "L2 cache", "free memory"} {
			assert.NotEmpty(t, keys[k], "Info.Extra lacks %q: %v", k, info.Extra)
		}
		assert.True(t, strings.HasPrefix(keys["UUID"], "GPU-"), "UUID %q is not in nvidia-smi's form", keys["UUID"])
	}
}

// TestOutOfMemory allocates more than the device has: the error is
// CodeOutOfResources, nothing leaks, and the device keeps working.
func TestOutOfMemory(t *testing.T) {
	for _, d := range gpus(t) {
		mi := d.(device.MemInfo)
		b0, n0 := mi.MemInUse()
		live0 := cu.LiveObjects()
		// Fill the cache a little so the out-of-memory path has something to return.
		small, err := d.Alloc(3 << 20)
		must(t, "Alloc", err)
		must(t, "Free", d.Free(small.Ptr))
		huge := int(d.Info().GlobalMem - 1<<20)
		_, err = d.Alloc(huge)
		wantCode(t, "Alloc of nearly all memory", err, device.CodeOutOfResources)
		assert.Contains(t, err.Error(), "bytes free", "out-of-memory error %q does not say how much is free", err)
		if b, n := mi.MemInUse(); assert.Equal(t, b0, b, "MemInUse after a failed Alloc = %d in %d, want %d in %d", b, n, b0, n0) {
			assert.Equal(t, n0, n, "MemInUse after a failed Alloc = %d in %d, want %d in %d", b, n, b0, n0)
		}
		assert.LessOrEqual(t, cu.LiveObjects().Allocs, live0.Allocs, "driver allocations after the failure, before")
		buf, err := d.Alloc(1 << 20)
		must(t, "Alloc after out of memory", err)
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		src := bytes.Repeat([]byte{7}, 1<<20)
		got := make([]byte, 1<<20)
		must(t, "CopyIn", q.CopyIn(buf.Ptr, src))
		must(t, "CopyOut", q.CopyOut(got, buf.Ptr))
		must(t, "Sync", q.Sync())
		must(t, "Release", q.Release())
		must(t, "Free", d.Free(buf.Ptr))
		assert.True(t, bytes.Equal(got, src), "copy after out of memory gave wrong bytes")
	}
}

func TestInvalidPTX(t *testing.T) {
	for _, d := range gpus(t) {
		k := &device.Kernel{Name: "broken", Images: []device.Image{{Kind: ImagePTX,
			Source: ".version 6.3\n.target sm_75\n.address_size 64\n.visible .entry broken() { this is not ptx; }\n"}}}
		_, err := d.Load(k)
		wantCode(t, "Load of invalid PTX", err, device.CodeInvalidBinary)
		assert.Contains(t, err.Error(), "JIT log", "invalid PTX error lacks the JIT log: %v", err)
		t.Logf("invalid PTX: %v", err)
	}
}

func TestMissingKernelName(t *testing.T) {
	for _, d := range gpus(t) {
		img, _ := kernels.Saxpy.Image(ImagePTX)
		k := &device.Kernel{Name: "nosuch", Params: kernels.Saxpy.Params,
			Images: []device.Image{{Kind: ImagePTX, Entry: "nosuch", Source: img.Source}}}
		_, err := d.Load(k)
		wantCode(t, "Load of a missing entry", err, device.CodeNotFound)
		assert.Contains(t, err.Error(), `"nosuch"`, "missing entry error should name it and the module's entries: %v", err)
		assert.Contains(t, err.Error(), "saxpy", "missing entry error should name it and the module's entries: %v", err)
	}
}

func TestNoPTXImage(t *testing.T) {
	for _, d := range gpus(t) {
		k := &device.Kernel{Name: "clonly", Images: []device.Image{{Kind: "opencl-c", Source: "__kernel void clonly() {}"}}}
		_, err := d.Load(k)
		wantCode(t, "Load of a kernel without PTX", err, device.CodeInvalidBinary)
		assert.Contains(t, err.Error(), "opencl-c", "error should list the images the kernel has: %v", err)
	}
}

// saxpyRun runs saxpy over n elements with shape and returns y.
func saxpyRun(t *testing.T, d device.Device, n int, shape device.Shape) ([]float32, error) {
	f, err := d.Load(kernels.Saxpy)
	must(t, "Load", err)
	f2, _ := d.Load(kernels.Saxpy)
	assert.Same(t, f, f2, "second Load returned a different function")
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	bx, err := d.Alloc(4 * n)
	must(t, "Alloc", err)
	defer d.Free(bx.Ptr)
	by, err := d.Alloc(4 * n)
	must(t, "Alloc", err)
	defer d.Free(by.Ptr)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	defer q.Release()
	must(t, "CopyIn", q.CopyIn(bx.Ptr, device.Bytes(x)))
	must(t, "CopyIn", q.CopyIn(by.Ptr, device.Bytes(y)))
	args := []device.Arg{{Bits: uint64(n)}, {Bits: uint64(math.Float32bits(2))}, {Ptr: bx.Ptr}, {Ptr: by.Ptr}}
	if err := q.Launch(f, shape, args); err != nil {
		must(t, "Sync after a refused launch", q.Sync())
		return nil, err
	}
	must(t, "CopyOut", q.CopyOut(device.Bytes(y), by.Ptr))
	must(t, "Sync", q.Sync())
	return y, nil
}

func TestLaunchBeyondLimits(t *testing.T) {
	for _, d := range gpus(t) {
		const n = 100000
		// Threads beyond the device's block limit: the largest legal block is used.
		y, err := saxpyRun(t, d, n, device.Shape{Size: [3]int{n, 1, 1}, Threads: 1 << 20})
		must(t, "launch with too many threads", err)
		for i, v := range y {
			require.Equal(t, 2*float32(i)+1, v, "y[%d]", i)
		}
		// Teams beyond the device's grid: refused, saying why.
		_, err = saxpyRun(t, d, n, device.Shape{Size: [3]int{n, 1, 1}, Teams: d.Info().MaxTeams + 1})
		wantCode(t, "launch with too many teams", err, device.CodeInvalidArgument)
		assert.Contains(t, err.Error(), "teams exceed", "error should say the teams exceed the grid: %v", err)
		// A stray buffer pointer is refused before it can fault the context.
		f, _ := d.Load(kernels.Saxpy)
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		err = q.Launch(f, device.Shape{Size: [3]int{n, 1, 1}}, []device.Arg{{Bits: n}, {}, {Ptr: 0x10}, {Ptr: 0x20}})
		wantCode(t, "launch with stray pointers", err, device.CodeInvalidArgument)
		must(t, "Release", q.Release())
	}
}

// TestLargeCopies exercises the staged path with several chunks and ragged
// ends, in both directions, and a device-to-device copy.
func TestLargeCopies(t *testing.T) {
	for _, d := range gpus(t) {
		const n = 3*stagingChunk + 12345
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(i*7 + i>>13)
		}
		a, err := d.Alloc(n)
		must(t, "Alloc", err)
		b, err := d.Alloc(n)
		must(t, "Alloc", err)
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		must(t, "CopyIn", q.CopyIn(a.Ptr, src))
		must(t, "Copy", q.Copy(b.Ptr, a.Ptr, n))
		got := make([]byte, n)
		must(t, "CopyOut", q.CopyOut(got, b.Ptr))
		must(t, "Sync", q.Sync())
		assert.True(t, bytes.Equal(got, src), "staged round trip changed the data")
		wantCode(t, "CopyIn past the end", q.CopyIn(a.Ptr+1, src), device.CodeInvalidArgument)
		must(t, "Release", q.Release())
		must(t, "Free", d.Free(a.Ptr))
		must(t, "Free", d.Free(b.Ptr))
	}
}

// TestCloseReleasesEverything opens the GPUs afresh, uses them, closes them
// and checks that every driver object made is gone.
func TestCloseReleasesEverything(t *testing.T) {
	gpus(t)
	before := cu.LiveObjects()
	devs, err := newPlugin("").Devices()
	must(t, "Devices", err)
	for _, d := range devs {
		f, err := d.Load(kernels.Saxpy)
		must(t, "Load", err)
		q, err := d.NewQueue()
		must(t, "NewQueue", err)
		buf, err := d.Alloc(16 << 20)
		must(t, "Alloc", err)
		must(t, "CopyIn", q.CopyIn(buf.Ptr, make([]byte, 16<<20)))
		args := []device.Arg{{Bits: 1 << 20}, {}, {Ptr: buf.Ptr}, {Ptr: buf.Ptr + 4<<20}}
		must(t, "Launch", q.Launch(f, device.Shape{Size: [3]int{1 << 20, 1, 1}}, args))
		e, err := q.Record()
		must(t, "Record", err)
		must(t, "Wait", e.Wait())
		kept, err := d.Alloc(1 << 20) // left live and a queue left open: Close frees them
		must(t, "Alloc", err)
		_ = kept
		must(t, "Free", d.Free(buf.Ptr))
		must(t, "Close", d.(device.Closer).Close())
		_, err = d.Alloc(1)
		wantCode(t, "Alloc after Close", err, device.CodeInvalidDevice)
	}
	after := cu.LiveObjects()
	after.Events -= before.Events // events given back to a closed pool are destroyed at once
	before.Events = 0
	assert.Equal(t, before, after, "driver objects after Close; before opening")
}

func TestRawBaselines(t *testing.T) {
	for _, d := range gpus(t) {
		lat, err := curaw.EmptyLaunchSync(d, 20)
		must(t, "RawEmptyLaunchSync", err)
		h2d, err := curaw.Copy(d, 4<<20, true, 5)
		must(t, "RawCopy to device", err)
		d2h, err := curaw.Copy(d, 4<<20, false, 5)
		must(t, "RawCopy from device", err)
		assert.Positive(t, lat, "raw baselines %v %v %v: want positive durations", lat, h2d, d2h)
		assert.Positive(t, h2d, "raw baselines %v %v %v: want positive durations", lat, h2d, d2h)
		assert.Positive(t, d2h, "raw baselines %v %v %v: want positive durations", lat, h2d, d2h)
		t.Logf("%s: empty launch+sync %v, 4 MiB pinned h2d %v, d2h %v", d.Info().Name, lat, h2d, d2h)
	}
	_, err := curaw.EmptyLaunchSync(nil, 1)
	assert.Error(t, err, "curaw.EmptyLaunchSync(nil) succeeded")
}

func TestPeerCopy(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skip("one GPU: no peer to copy from")
	}
	const n = 1 << 20
	src := bytes.Repeat([]byte{1, 2, 3}, n/3+1)[:n]
	a, err := devs[1].Alloc(n)
	must(t, "Alloc", err)
	defer devs[1].Free(a.Ptr)
	b, err := devs[0].Alloc(n)
	must(t, "Alloc", err)
	defer devs[0].Free(b.Ptr)
	q1, _ := devs[1].NewQueue()
	must(t, "CopyIn", q1.CopyIn(a.Ptr, src))
	must(t, "Release", q1.Release())
	q0, _ := devs[0].NewQueue()
	defer q0.Release()
	pc, ok := q0.(device.PeerCopier)
	require.True(t, ok, "cuda queue is not a PeerCopier")
	must(t, "CopyPeer", pc.CopyPeer(b.Ptr, devs[1], a.Ptr, n))
	got := make([]byte, n)
	must(t, "CopyOut", q0.CopyOut(got, b.Ptr))
	must(t, "Sync", q0.Sync())
	assert.True(t, bytes.Equal(got, src), "peer copy changed the data")
}

var errSink error

func BenchmarkEmptyLaunchSync(b *testing.B) {
	d := gpus(b)[0]
	f, err := d.Load(kernels.Empty)
	must(b, "Load", err)
	q, err := d.NewQueue()
	must(b, "NewQueue", err)
	defer q.Release()
	shape := device.Shape{Size: [3]int{1, 1, 1}}
	args := []device.Arg{{Bits: 1}}
	for b.Loop() {
		require.NoError(b, q.Launch(f, shape, args))
		require.NoError(b, q.Sync())
	}
}

func BenchmarkRawEmptyLaunchSync(b *testing.B) {
	d := gpus(b)[0]
	var total float64
	for b.Loop() {
		lat, err := curaw.EmptyLaunchSync(d, 100)
		require.NoError(b, err)
		total += float64(lat)
	}
	b.ReportMetric(total/float64(b.N)/1e3, "us/launch")
}

func benchCopy(b *testing.B, toDevice bool) {
	d := gpus(b)[0]
	const n = 256 << 20
	host := make([]byte, n)
	buf, err := d.Alloc(n)
	must(b, "Alloc", err)
	defer d.Free(buf.Ptr)
	q, err := d.NewQueue()
	must(b, "NewQueue", err)
	defer q.Release()
	b.SetBytes(n)
	for b.Loop() {
		if toDevice {
			errSink = q.CopyIn(buf.Ptr, host)
		} else {
			errSink = q.CopyOut(host, buf.Ptr)
		}
		require.NoError(b, errors.Join(errSink, q.Sync()))
	}
}

func BenchmarkCopyIn256MiB(b *testing.B)  { benchCopy(b, true) }
func BenchmarkCopyOut256MiB(b *testing.B) { benchCopy(b, false) }

func benchRawCopy(b *testing.B, toDevice bool) {
	d := gpus(b)[0]
	const n = 256 << 20
	b.SetBytes(n)
	for b.Loop() {
		_, err := curaw.Copy(d, n, toDevice, 1)
		require.NoError(b, err)
	}
}

func BenchmarkRawCopyIn256MiB(b *testing.B)  { benchRawCopy(b, true) }
func BenchmarkRawCopyOut256MiB(b *testing.B) { benchRawCopy(b, false) }
