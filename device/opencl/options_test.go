//go:build cgo

package opencl_test

import (
	"encoding/binary"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An OpenCL image's Options reach clBuildProgram: a macro defined only
// there decides what the kernel writes, and an option the compiler refuses
// fails the load with the build log.
func TestImageOptions(t *testing.T) {
	const src = `__kernel void opt(__global int *out) {
#ifdef GOMPT_OPT
  out[0] = GOMPT_OPT;
#else
  out[0] = -1;
#endif
}`
	kernel := func(options string) *device.Kernel {
		return &device.Kernel{
			Name:   "opt",
			Params: []device.Param{{Name: "out", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "1"}},
			Images: []device.Image{{Kind: opencl.ImageC, Entry: "opt", Source: src, Options: options}},
		}
	}
	for _, d := range devices(t) {
		q, err := d.NewQueue()
		require.NoError(t, err)
		for _, c := range []struct {
			options string
			want    int32
		}{{"", -1}, {"-DGOMPT_OPT=7", 7}, {"-cl-fp32-correctly-rounded-divide-sqrt -DGOMPT_OPT=9", 9}} {
			f, err := d.Load(kernel(c.options))
			require.NoError(t, err, "options %q", c.options)
			out := run(t, d, q, f, device.Shape{Size: [3]int{1, 1, 1}}, [][]byte{make([]byte, 4)}, []device.Arg{{}})
			assert.Equal(t, c.want, int32(binary.LittleEndian.Uint32(out[0])), "options %q", c.options)
		}
		_, err = d.Load(kernel("-no-such-option-gompt"))
		if assert.Error(t, err, "an option the compiler refuses") {
			assert.Equal(t, device.CodeInvalidBinary, device.CodeOf(err), "%v", err)
		}
		require.NoError(t, q.Release())
	}
}
