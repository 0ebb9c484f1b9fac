package launch_test

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/kernels/launch"
	"github.com/gompt/gompt/ompt"
	"github.com/gompt/gompt/target"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Scenarios that need a process of their own: one whose tool traces every
// launch (the tool must be registered before the runtime starts), and
// one that shuts the runtime down. The parent runs this test binary again
// with launchChild naming the scenario, and TestLaunchChild runs it.
const launchChild = "GOMPT_LAUNCH_CHILD"

func runChild(t *testing.T, scenario string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLaunchChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), launchChild+"="+scenario)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child %s:\n%s", scenario, out)
	require.Contains(t, string(out), "--- PASS: TestLaunchChild", "child %s:\n%s", scenario, out)
}

func TestLaunchChild(t *testing.T) {
	switch os.Getenv(launchChild) {
	case "":
		t.Skip("a child scenario; run by its parent test")
	case "variant":
		variantChild(t)
	case "shutdown":
		shutdownChild(t)
	default:
		t.Fatalf("unknown scenario %q", os.Getenv(launchChild))
	}
}

// kernelTool is a tool, registered only in the variant child, that traces
// every offload device's launches natively and keeps, per device, the
// type of each native kernel record: "PLUGIN kernel: NAME".
var kernelTool struct {
	mu      sync.Mutex
	kernels map[int][]string
	flush   map[int]func() int
}

func init() {
	if os.Getenv(launchChild) != "variant" {
		return
	}
	kernelTool.kernels = map[int][]string{}
	kernelTool.flush = map[int]func() int{}
	ompt.RegisterTool("launchtest", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			set(ompt.CallbackDeviceInitialize, ompt.DeviceInitializeCallback(traceKernels))
			return 1
		}}
	})
}

func traceKernels(dev int, _ string, h *ompt.DeviceHandle, lk ompt.LookupFunc, _ string) {
	advance := lk("ompt_advance_buffer_cursor").(ompt.AdvanceBufferCursorFunc)
	rtype := lk("ompt_get_record_type").(ompt.GetRecordTypeFunc)
	rnative := lk("ompt_get_record_native").(ompt.GetRecordNativeFunc)
	rabstract := lk("ompt_get_record_abstract").(ompt.GetRecordAbstractFunc)
	flush := lk("ompt_flush_trace").(ompt.FlushTraceFunc)
	lk("ompt_set_trace_native").(ompt.SetTraceNativeFunc)(h, true, ompt.NativeKernelExecution)
	lk("ompt_start_trace").(ompt.StartTraceFunc)(h, func(int) []byte { return make([]byte, 1<<16) },
		func(dev int, buf []byte, bytes, cur uint64, _ bool) {
			for more := bytes > cur; more; cur, more = advance(h, buf, bytes, cur) {
				if rtype(buf, cur) != ompt.RecordKindNative {
					continue
				}
				p, _ := rnative(buf, cur)
				if a := rabstract(p); a != nil && strings.Contains(a.Type, " kernel") {
					kernelTool.mu.Lock()
					kernelTool.kernels[dev] = append(kernelTool.kernels[dev], a.Type)
					kernelTool.mu.Unlock()
				}
			}
		})
	kernelTool.mu.Lock()
	kernelTool.flush[dev] = func() int { return flush(h) }
	kernelTool.mu.Unlock()
}

// Which kernel launch.RunMatmul runs is decided per device at run time,
// in one binary, and a tool sees it: the native record of each launch on
// an OpenCL (or CUDA) device names matmul_tiled, on the host device
// matmul; MatmulVariant says the same, and the initial device (which has
// no trace) gets Matmul. Both forms give the plain product, bit for bit.
func TestMatmulVariantPerDevice(t *testing.T) { runChild(t, "variant") }

func variantChild(t *testing.T) {
	const m, n, k = 70, 45, 33
	A := floats(m*k, func(i int) float32 { return float32(i%5) - 1.5 })
	B := floats(k*n, func(i int) float32 { return float32(i%7) * 0.25 })
	want := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc float32
			for p := range k {
				acc += A[i*k+p] * B[p*n+j]
			}
			want[i*n+j] = acc
		}
	}
	assert.Same(t, kernels.Matmul, launch.MatmulVariant(target.Dev(target.InitialDevice)), "the initial device")
	for _, dev := range devices() {
		what := target.Describe(dev.Num())
		C := make([]float32, m*n)
		require.NoError(t, launch.RunMatmul(dev, m, n, k, A, B, C), what)
		require.Equal(t, want, C, what)
		C = make([]float32, m*n)
		require.NoError(t, launch.RunMatmulNowait(dev, m, n, k, A, B, C, target.DependOut(C)).Wait(), what)
		require.Equal(t, want, C, what)
	}
	kernelTool.mu.Lock()
	flushes := kernelTool.flush
	kernelTool.mu.Unlock()
	for _, f := range flushes {
		require.Equal(t, 1, f(), "flush_trace")
	}
	kernelTool.mu.Lock()
	defer kernelTool.mu.Unlock()
	offload := 0
	for _, d := range target.Devices() {
		what := target.Describe(d.Num)
		wantKernel := kernels.Matmul
		if d.Backend == "opencl" || d.Backend == "cuda" {
			wantKernel = kernels.MatmulTiled
		}
		assert.Same(t, wantKernel, launch.MatmulVariant(target.Dev(d.Num)), what)
		rec := d.Backend + " kernel: " + wantKernel.Name
		assert.Equal(t, []string{rec, rec}, kernelTool.kernels[d.Num], "%s: the native records of RunMatmul and RunMatmulNowait", what)
		offload++
	}
	t.Logf("%d offload devices traced: %v", offload, kernelTool.kernels)
}

// Shutdown with nowait launches in flight, some still waiting for their
// depend items, waits for all of them: each task ends without an error and
// with its answer. A launch after Shutdown fails with ErrShutdown, through
// its task.
func TestShutdownWithNowaitLaunches(t *testing.T) { runChild(t, "shutdown") }

func shutdownChild(t *testing.T) {
	const n = 1 << 18
	type chain struct {
		what  string
		x, y  []float32
		tasks []*target.Task
		dot   *target.Result[float32]
	}
	var chains []*chain
	for _, dev := range devices() {
		c := &chain{what: target.Describe(dev.Num()), x: floats(n, func(i int) float32 { return 1 }), y: make([]float32, n)}
		for r := range 4 {
			c.tasks = append(c.tasks, launch.RunSaxpyNowait(dev, n, float32(r+1), c.x, c.y, target.DependIn(c.x), target.DependInOut(c.y)))
		}
		c.dot = launch.RunDotNowait(dev, n, c.x, c.y, target.DependIn(c.y))
		chains = append(chains, c)
	}
	require.NoError(t, target.Shutdown())
	for _, c := range chains {
		for i, tk := range c.tasks {
			select {
			case <-tk.Done():
			default:
				t.Errorf("%s: task %d still running after Shutdown returned", c.what, i)
			}
			assert.NoError(t, tk.Wait(), "%s: task %d", c.what, i)
		}
		d, err := c.dot.Wait()
		assert.NoError(t, err, c.what)
		assert.Equal(t, float32(10*n), d, "%s: dot", c.what)
		assert.True(t, !slices.ContainsFunc(c.y, func(v float32) bool { return v != 10 }), "%s: y is 10 everywhere", c.what)
	}
	late := launch.RunSaxpyNowait(target.Dev(target.InitialDevice), 4, 1, make([]float32, 4), make([]float32, 4))
	assert.ErrorIs(t, late.Wait(), target.ErrShutdown, "a launch after Shutdown")
	fmt.Println("shutdown child done")
}
