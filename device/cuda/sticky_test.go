package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/cuda/curaw"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultPTX stores to the address it is given. Given 0, it ends the context
// with CUDA_ERROR_ILLEGAL_ADDRESS on a GPU; the fake driver, which runs no
// kernel, ends it so for every kernel of a module with the marker below.
const faultPTX = `.version 6.3
.target sm_75
.address_size 64
// FAKECUDA_FAULT 700
.visible .entry gompt_test_fault(.param .u64 addr)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [addr];
	mov.u32 %r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}
`

// faultKernel takes the address as an integer, so that the plugin's
// pointer checks let it through to the device.
var faultKernel = &device.Kernel{
	Name:   "gompt_test_fault",
	Params: []device.Param{{Name: "addr", Kind: device.ParamInt64}},
	Images: []device.Image{{Kind: ImagePTX, Source: faultPTX}},
}

// checkStickyFault makes d's context unusable with a kernel that writes to
// address 0, and checks that the plugin says so once, with the driver's
// error, then fails every operation at once with ErrContextLost naming that
// error, and that releasing the queues and closing the device are quiet.
// It ends d: call it on a device nothing else uses, in a process of its own
// on a GPU.
func checkStickyFault(t *testing.T, d device.Device) {
	t.Helper()
	buf, err := d.Alloc(4096)
	must(t, "Alloc", err)
	q, err := d.NewQueue()
	must(t, "NewQueue", err)
	q2, err := d.NewQueue()
	must(t, "NewQueue", err)
	q2.(device.Profiler).Profile(true)
	must(t, "CopyIn", q2.CopyIn(buf.Ptr, make([]byte, 4096)))
	must(t, "Sync", q2.Sync())
	fn, err := d.Load(faultKernel)
	must(t, "Load", err)

	// The launch itself is asynchronous: the fault shows at the wait.
	err = q.Launch(fn, device.Shape{Size: [3]int{1, 1, 1}}, []device.Arg{{Bits: 0}})
	if err == nil {
		err = q.Sync()
	}
	require.Error(t, err, "a kernel writing to address 0 completed without an error")
	require.Contains(t, err.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS", "the faulting kernel: %v (code %v), want CUDA_ERROR_ILLEGAL_ADDRESS with CodeInvalidDevice", err, device.CodeOf(err))
	require.Equal(t, device.CodeInvalidDevice, device.CodeOf(err), "the faulting kernel: %v (code %v), want CUDA_ERROR_ILLEGAL_ADDRESS with CodeInvalidDevice", err, device.CodeOf(err))
	assert.NotErrorIs(t, err, ErrContextLost, "the first error already wraps ErrContextLost")

	lost := func(what string, err error) {
		t.Helper()
		if !assert.Error(t, err, "%s on a device with a lost context succeeded", what) {
			return
		}
		msg := fmt.Sprintf("%s: %v (code %v), want CodeInvalidDevice wrapping ErrContextLost and naming the first error", what, err, device.CodeOf(err))
		if assert.ErrorIs(t, err, ErrContextLost, msg) {
			assert.Equal(t, device.CodeInvalidDevice, device.CodeOf(err), msg)
			assert.Contains(t, err.Error(), "must be restarted", msg)
			assert.Contains(t, err.Error(), "CUDA_ERROR_ILLEGAL_ADDRESS", msg)
		}
	}
	_, err = d.Alloc(100)
	lost("Alloc", err)
	_, err = d.NewQueue()
	lost("NewQueue", err)
	_, err = d.Load(kernels.Fill)
	lost("Load", err)
	lost("CopyIn", q2.CopyIn(buf.Ptr, []byte{1}))
	lost("CopyOut", q2.CopyOut(make([]byte, 10), buf.Ptr))
	lost("Launch", q.Launch(fn, device.Shape{Size: [3]int{1, 1, 1}}, []device.Arg{{Bits: 0}}))
	_, err = q.Record()
	lost("Record", err)
	lost("Sync", q.Sync())
	lost("Sync of the other queue", q2.Sync())
	_, err = curaw.Copy(d, 4096, true, 1)
	lost("RawCopy", err)
	lost("Free", d.Free(buf.Ptr))
	if b, n := d.(device.MemInfo).MemInUse(); assert.Zero(t, b, "MemInUse after Free on a lost device: %d bytes in %d, want none", b, n) {
		assert.Zero(t, n, "MemInUse after Free on a lost device: %d bytes in %d, want none", b, n)
	}
	must(t, "Release after the fault", q.Release())
	must(t, "Release after the fault", q2.Release())
	must(t, "Close after the fault", d.(device.Closer).Close())
}

// faultChildEnv marks the child process of TestDeviceFault.
const faultChildEnv = "GOMPT_CUDA_FAULT_CHILD"

// TestDeviceFault runs checkStickyFault on the first GPU in a child
// process: the fault ends the context for the whole process, which the
// other GPU tests could then not use.
func TestDeviceFault(t *testing.T) {
	if os.Getenv(faultChildEnv) != "" {
		checkStickyFault(t, gpus(t)[0])
		return
	}
	gpus(t) // skips without a GPU
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeviceFault$", "-test.v", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), faultChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the device fault test failed in its child process (%v):\n%s", err, out)
	require.Contains(t, string(out), "--- PASS: TestDeviceFault", "the device fault test failed in its child process (%v):\n%s", err, out)
	t.Logf("child:\n%s", out)
}
