//go:build cgo

package opencl_test

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/device/opencl"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sextSource is the driver bug in a hand-written kernel, which gets no
// help from opencl.SextCompareDefine: a[i], an int, extended to a long
// and compared with constants.
const sextSource = `__kernel void sext(long n, __global const int *a, __global long *out) {
  long i = get_global_id(0);
  if (i >= n) return;
  long x = a[i];
  out[4 * i] = x < 0;
  out[4 * i + 1] = x > 5;
  out[4 * i + 2] = 5 > x;
  out[4 * i + 3] = 0 <= x;
}
`

// sextWrong runs sextSource on d over edge values and returns how many of
// its answers are wrong, and the first wrong one.
func sextWrong(t *testing.T, d device.Device) (int, string) {
	k := kernel("sext", sextSource,
		device.Param{Name: "n", Kind: device.ParamInt64},
		device.Param{Name: "a", Kind: device.ParamBuffer, Elem: device.ParamInt32, Len: "n"},
		device.Param{Name: "out", Kind: device.ParamBuffer, Elem: device.ParamInt64, Len: "4*n"})
	f, err := d.Load(k)
	require.NoError(t, err)
	q, err := d.NewQueue()
	require.NoError(t, err)
	defer func() { require.NoError(t, q.Release()) }()
	a := []int32{-1 << 31, -40, -6, -5, -1, 0, 1, 5, 6, 1<<31 - 1}
	in := make([]byte, 4*len(a))
	for i, x := range a {
		binary.LittleEndian.PutUint32(in[4*i:], uint32(x))
	}
	out := run(t, d, q, f, device.Shape{Size: [3]int{len(a), 1, 1}}, [][]byte{nil, in, make([]byte, 32*len(a))},
		[]device.Arg{{Bits: uint64(len(a))}, {}, {}})[2]
	wrong, first := 0, ""
	for i, x := range a {
		want := []bool{int64(x) < 0, int64(x) > 5, 5 > int64(x), 0 <= int64(x)}
		for j, w := range want {
			got := binary.LittleEndian.Uint64(out[8*(4*i+j):])
			if got != map[bool]uint64{false: 0, true: 1}[w] {
				if wrong == 0 {
					first = fmt.Sprintf("x = %d: %s gave %d", x, []string{"x < 0", "x > 5", "5 > x", "0 <= x"}[j], got)
				}
				wrong++
			}
		}
	}
	return wrong, first
}

// The sign-extension probe finds the bug exactly where a hand-written
// kernel shows it (Mesa's rusticl: (long)x < 0 false for x < 0), kernels
// are built with opencl.SextCompareDefine there and only there, and
// Describe says so (sext_compare). Skipped where no OpenCL device has the
// bug (run with RUSTICL_ENABLE=swrast where Mesa's rusticl is
// installed), once every device was checked.
func TestSextProbeFindsTheBug(t *testing.T) {
	seen := false
	for _, d := range devices(t) {
		name := d.Info().Name
		broken, why := opencl.SextBroken(d)
		wrong, first := sextWrong(t, d)
		t.Logf("%s: %d of 40 comparisons wrong (%s); probe: %s", name, wrong, first, why)
		assert.Equal(t, wrong > 0, broken, "%s: %d of 40 comparisons wrong (%s), but the probe says: %s", name, wrong, first, why)
		f, err := d.Load(kernels.Jacobi)
		require.NoError(t, err)
		assert.Equal(t, broken, opencl.SextCompared(f), "%s: jacobi built with %s: %v; probe: %s", name, opencl.SextCompareDefine, opencl.SextCompared(f), why)
		desc, err := d.(device.Describer).Describe()
		require.NoError(t, err)
		attr := ""
		for _, a := range desc.Extra {
			if a.Key == "sext_compare" {
				attr = a.Value
			}
		}
		assert.Equal(t, broken, strings.HasPrefix(attr, "kernels are built with "+opencl.SextCompareDefine+": "), "%s: Describe's sext_compare %q; probe: %s", name, attr, why)
		assert.Contains(t, attr, why, "%s: Describe's sext_compare", name)
		seen = seen || wrong > 0
	}
	if !seen {
		t.Skip("no OpenCL device gets comparisons of sign-extended values wrong (Mesa's rusticl: RUSTICL_ENABLE=swrast)")
	}
}

// With opencl.SextCompareDefine on (as on Mesa; here pretended), the
// library's kernels that order signed 64-bit values (through
// GOMPT_CMP64) compute what their Go images do, on their Samples'
// problems and on grid-stride launches; only the devices that need the
// define build with it (POCL does not).
func TestSextCompareKeepsResults(t *testing.T) {
	var ks []*device.Kernel
	for _, k := range kernels.Conformance() {
		for _, img := range k.Images {
			if img.Kind == opencl.ImageC && strings.Contains(img.Source, "GOMPT_CMP64(") {
				ks = append(ks, k)
			}
		}
	}
	require.NotEmpty(t, ks, "no library kernel orders signed 64-bit values")
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	t.Logf("library kernels with GOMPT_CMP64: %v", names)
	for _, real := range devices(t) {
		if broken, why := opencl.SextBroken(real); !broken {
			f, err := real.Load(kernels.Matmul)
			require.NoError(t, err)
			assert.False(t, opencl.SextCompared(f), "%s builds with %s though it needs none (%s)", real.Info().Name, opencl.SextCompareDefine, why)
		}
		d := opencl.PretendSextCompare(t, real)
		q, err := d.NewQueue()
		require.NoError(t, err)
		for _, k := range ks {
			f, err := d.Load(k)
			require.NoError(t, err)
			require.True(t, opencl.SextCompared(f), "%s: built without %s on the pretend device", k.Name, opencl.SextCompareDefine)
			for _, n := range []int{1, 37, 300} {
				s := k.Sample(n, int64(n))
				shapes := []device.Shape{s.Shape}
				if k.TeamSize() == 0 {
					shapes = append(shapes, device.Shape{Size: s.Shape.Size, Teams: 2, Threads: 5})
				}
				for _, shape := range shapes {
					got := run(t, d, q, f, shape, s.Bufs, s.Args)
					want := hostRun(k, shape.Size, 0, s.Bufs, s.Args)
					for i, b := range want {
						if k.Params[i].Kind != device.ParamBuffer {
							continue
						}
						what := fmt.Sprintf("%s Sample(%d) %+v (%s): %s", k.Name, n, shape, opencl.SextCompareDefine, k.Params[i].Name)
						if s.Tol == 0 {
							require.Equal(t, b, got[i], what)
						} else {
							sameFloats(t, what, got[i], b, s.Tol)
						}
					}
				}
			}
		}
		require.NoError(t, q.Release())
	}
}
