package target

// Kernel.Extents as a user meets them: Regions written by hand for the
// library's generated kernels, with a Size below or above their points,
// and hand-written kernels that declare Extents, right and wrong. Every
// device (host:0, OpenCL via POCL, the initial device) runs all of a
// kernel's points, split alike among teams, and gives the same bits as the
// plain Go computation, or refuses with a clear error before any device
// work.

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/gompt/gompt/ompt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallShapes are launch shapes whose Size is below any extent used here
// (or uses 0 for the unused dimensions), with and without Teams/Threads.
var smallShapes = []Shape{
	N(1),
	{Size: [3]int{1, 0, 0}},
	{Size: [3]int{1, 1, 0}},
	{Size: [3]int{3, 1, 1}, Teams: 2},
	{Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1},
	{Size: [3]int{2, 1, 1}, Teams: 5, Threads: 16},
}

// Map kernels of the library (saxpy, fill, copy32, histogram) launched by
// hand with a Size below n, 0 in the unused dimensions, and Teams/Threads
// set, give the plain Go result on every device.
func TestExtentsSmallSizeMapKernelsMatchGo(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 1000
	for _, dev := range devs {
		for _, s := range smallShapes {
			what := fmt.Sprintf("%s, shape %+v", Describe(dev), s)

			x, y := vecs(n)
			want := make([]float32, n)
			for i := range want {
				want[i] = 1.5*x[i] + y[i]
			}
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: s,
				Args: []Arg{Int(n), Float32(1.5), Slice(x), Slice(y)}}), "saxpy: %s", what)
			require.Equal(t, want, y, "saxpy: %s", what)

			f := make([]float32, n+3)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: s,
				Args: []Arg{Int(n), Float32(7), Slice(f)}}), "fill: %s", what)
			for i := range f {
				w := float32(7)
				if i >= n {
					w = 0 // past n: untouched
				}
				require.Equal(t, w, f[i], "fill: %s: f[%d]", what, i)
			}

			src, dst := make([]int32, n), make([]int32, n)
			for i := range src {
				src[i] = int32(i*7919) ^ 0x5a5a
			}
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: s,
				Args: []Arg{Int(n), Slice(src), Slice(dst)}}), "copy32: %s", what)
			require.Equal(t, src, dst, "copy32: %s", what)

			v := make([]uint8, n)
			wantH := make([]uint32, 256)
			for i := range v {
				v[i] = uint8(i * 31 % 251)
				wantH[v[i]]++
			}
			h := make([]uint32, 256)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Histogram, Shape: s,
				Args: []Arg{Int(n), Slice(v), Slice(h)}}), "histogram: %s", what)
			require.Equal(t, wantH, h, "histogram: %s", what)
		}
	}
}

// The 2-D kernels (Jacobi over nx x ny, Matmul over n x m: Extents {1, 0})
// with a Size below their extents in one or both dimensions, or 0 in the
// second, give the plain Go result bit for bit on every device.
func TestExtentsSmallSize2DKernelsMatchGo(t *testing.T) {
	_, devs := everyDevice(t)
	const nx, ny = 13, 7
	in := make([]float32, nx*ny)
	for i := range in {
		in[i] = float32(i*i%97) / 7
	}
	wantJ := make([]float32, nx*ny)
	for y := range ny {
		for x := range nx {
			i := y*nx + x
			if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
				wantJ[i] = in[i]
				continue
			}
			wantJ[i] = 0.25 * (in[i-nx] + in[i+nx] + in[i-1] + in[i+1])
		}
	}
	const m, n, k = 9, 11, 5
	A, B := make([]float32, m*k), make([]float32, k*n)
	for i := range A {
		A[i] = float32(i%13) / 3
	}
	for i := range B {
		B[i] = float32(i%11) / 7
	}
	wantC := matmulProduct(A, B, m, n, k)
	shapes := []Shape{N(1), {Size: [3]int{1, 0, 0}}, N2(1, 1), N2(nx, 1), N2(2, 0), N2(1, ny), N2(100, 2),
		{Size: [3]int{2, 3, 1}, Teams: 3, Threads: 4}, {Size: [3]int{1, 1, 1}, Teams: 1, Threads: 1}}
	for _, dev := range devs {
		for _, s := range shapes {
			what := fmt.Sprintf("%s, shape %+v", Describe(dev), s)
			out := make([]float32, nx*ny)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: s,
				Args: []Arg{Int(nx), Int(ny), Slice(in), Slice(out)}}), "jacobi: %s", what)
			require.Equal(t, wantJ, out, "jacobi: %s", what)

			C := make([]float32, m*n)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Matmul, Shape: s,
				Args: []Arg{Int(m), Int(n), Int(k), Slice(A), Slice(B), Slice(C)}}), "matmul: %s", what)
			require.Equal(t, wantC, C, "matmul: %s", what)
		}
	}
}

// matmulProduct is the m x n product of A (m x k) and B (k x n), summed in
// Matmul's Go order.
func matmulProduct(A, B []float32, m, n, k int) []float32 {
	c := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc float32
			for p := range k {
				acc += A[i*k+p] * B[p*n+j]
			}
			c[i*n+j] = acc
		}
	}
	return c
}

// MatmulTiled, a team kernel whose extent is its teams parameter, launched
// with Size 1 (one point) and Shape.Teams 1, computes every tile on every
// device, bit for bit as Matmul's Go function.
func TestExtentsMatmulTiledSizeOneComputesEveryTile(t *testing.T) {
	_, devs := everyDevice(t)
	const m, n, k = 70, 130, 3 // 2 x 3 tiles
	A, B := make([]float32, m*k), make([]float32, k*n)
	for i := range A {
		A[i] = float32(i%17) / 5
	}
	for i := range B {
		B[i] = float32(i%19) / 3
	}
	want := matmulProduct(A, B, m, n, k)
	teams := kernels.MatmulTiledTeams(m, n)
	require.Equal(t, 6, teams)
	for _, dev := range devs {
		for _, s := range []Shape{N(1), {Size: [3]int{1, 1, 1}, Teams: 1, Threads: 256}, {Size: [3]int{2, 0, 0}, Teams: 2}} {
			C := make([]float32, m*n)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.MatmulTiled, Shape: s,
				Args: []Arg{Int(teams), Int(m), Int(n), Int(k), Slice(A), Slice(B), Slice(C)}}), "%s, shape %+v", Describe(dev), s)
			require.Equal(t, want, C, "%s, shape %+v", Describe(dev), s)
		}
	}
}

// Dot, a reduction with a partial buffer of Shape.Teams elements, launched
// with Size 1 and Teams set (more teams than points too) writes every
// partial, and the partials add up to the exact dot product, on every
// device. The values are small integers, so every order of summation is
// exact.
func TestExtentsDotSmallSizeWithTeamsSumsEveryPoint(t *testing.T) {
	_, devs := everyDevice(t)
	for _, c := range []struct{ n, teams, threads int }{{1000, 4, 64}, {1000, 1, 1}, {3, 8, 4}, {257, 3, 256}} {
		x, y := make([]float32, c.n), make([]float32, c.n)
		var want float64
		for i := range x {
			x[i], y[i] = float32(i%5), float32(i%3+1)
			want += float64(x[i]) * float64(y[i])
		}
		for _, dev := range devs {
			for _, size := range []int{1, 2} {
				s := Shape{Size: [3]int{size, 1, 1}, Teams: c.teams, Threads: c.threads}
				what := fmt.Sprintf("%s, n %d, shape %+v", Describe(dev), c.n, s)
				partial := make([]float32, c.teams)
				for i := range partial {
					partial[i] = float32(math.NaN()) // a partial not written stays NaN
				}
				require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Dot, Shape: s,
					Args: []Arg{Int(c.n), Slice(x), Slice(y), Slice(partial)}}), what)
				for i, p := range partial {
					require.False(t, math.IsNaN(float64(p)), "%s: partial[%d] was not written", what, i)
				}
				require.Equal(t, want, kernels.SumPartials(partial), what)
			}
		}
	}
}

// A small Size in a TargetNowait chain with depend items (fill, then
// saxpy on the filled vector, then copy32 out of it) runs all the points
// of each, in order, on every device.
func TestExtentsNowaitDependChainWithSmallSizes(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 777
	for _, dev := range devs {
		x, y := vecs(n)
		t1 := TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: N(1),
			Maps: []Map{DependOut(y)}, Args: []Arg{Int(n), Float32(2), Slice(y)}})
		t2 := TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: Shape{Size: [3]int{1, 0, 0}, Teams: 1},
			Maps: []Map{DependIn(x), DependInOut(y)}, Args: []Arg{Int(n), Float32(3), Slice(x), Slice(y)}})
		yi, out := make([]int32, n), make([]int32, n)
		t3 := TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(2),
			Maps: []Map{DependIn(y), DependOn(t2)}, Args: []Arg{Int(n), Slice(yi), Slice(out)}})
		require.NoError(t, t1.Wait(), Describe(dev))
		require.NoError(t, t2.Wait(), Describe(dev))
		require.NoError(t, t3.Wait(), Describe(dev))
		for i := range y {
			require.Equal(t, 3*x[i]+2, y[i], "%s: y[%d]", Describe(dev), i)
		}
	}
}

// Inside a data region (Data, and EnterData/ExitData with device
// pointers from AllocMem), a small Size still runs all the points, and
// the mapped data comes back whole.
func TestExtentsDataRegionsAroundSmallSizes(t *testing.T) {
	_, devs := everyDevice(t)
	const n = 600
	for _, dev := range devs {
		x, y := vecs(n)
		err := Data(dev, []Map{To(x), ToFrom(y)}, func() error {
			if err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(1),
				Args: []Arg{Int(n), Float32(2), Slice(x), Slice(y)}}); err != nil {
				return err
			}
			return TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: Shape{Size: [3]int{1, 0, 0}, Teams: 3},
				Args: []Arg{Int(n), Float32(1), Slice(x), Slice(y)}}).Wait()
		})
		require.NoError(t, err, Describe(dev))
		for i := range y {
			require.Equal(t, 3*x[i]+float32(2*i), y[i], "%s: y[%d]", Describe(dev), i)
		}

		f := make([]float32, n)
		require.NoError(t, EnterData(dev, Alloc(f)), Describe(dev))
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Fill, Shape: N(1),
			Args: []Arg{Int(n), Float32(-4), Slice(f)}}), Describe(dev))
		require.NoError(t, ExitData(dev, From(f)), Describe(dev))
		for i := range f {
			require.Equal(t, float32(-4), f[i], "%s: f[%d]", Describe(dev), i)
		}

		p, err := AllocMem(4*n, dev)
		require.NoError(t, err, Describe(dev))
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(3 * i)
		}
		back := make([]int32, n)
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(1),
			Args: []Arg{Int(n), Slice(src), Ptr(p)}}), Describe(dev))
		require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(1),
			Args: []Arg{Int(n), Ptr(p), Slice(back)}}), Describe(dev))
		require.Equal(t, src, back, Describe(dev))
		// a device pointer shorter than n is refused even though Size is 1
		err = Target(Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(1),
			Args: []Arg{Int(n + 1), Ptr(p), Slice(make([]int32, n+1))}})
		require.Error(t, err, Describe(dev))
		assert.ErrorContains(t, err, "needs 601", Describe(dev))
		require.NoError(t, FreeMem(p, dev), Describe(dev))
	}
}

// Goroutines launching the same Region value (Size below n; Empty, which
// touches no memory, so the launches share nothing but the value) at once,
// beside goroutines copying with Copy32 and a Size below n, all succeed
// and run every point (race-free under -race), and the caller's Region
// keeps the Size it wrote: the runtime sets its own copy's.
func TestExtentsConcurrentSameRegionValue(t *testing.T) {
	_, devs := everyDevice(t)
	const n, g = 500, 6
	for _, dev := range devs {
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(i*i) - 77
		}
		dsts := make([][]int32, g)
		for i := range dsts {
			dsts[i] = make([]int32, n)
		}
		r := Region{Device: Dev(dev), Kernel: kernels.Empty, Shape: N(1), Args: []Arg{Int(1 << 20)}}
		var wg sync.WaitGroup
		errs := make([]error, 3*g)
		for i := range g {
			wg.Add(3)
			go func() {
				defer wg.Done()
				errs[i] = Target(r)
			}()
			go func() {
				defer wg.Done()
				errs[g+i] = TargetNowait(r).Wait()
			}()
			go func() {
				defer wg.Done()
				rr := Region{Device: Dev(dev), Kernel: kernels.Copy32, Shape: N(1), Args: []Arg{Int(n), Slice(src), Slice(dsts[i])}}
				errs[2*g+i] = TargetNowait(rr).Wait()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "%s: goroutine %d", Describe(dev), i)
		}
		assert.Equal(t, N(1), r.Shape, "%s: the caller's Region was changed", Describe(dev))
		for i := range dsts {
			require.Equal(t, src, dsts[i], "%s: dst %d", Describe(dev), i)
		}
	}
}

// Huge extents with tiny buffers are refused with a clear length error on
// every device, before any device work, whatever the (small) Size.
func TestExtentsHugeExtentsTinyBuffersRefusedByLen(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		x, y := vecs(8)
		for _, s := range []Shape{N(8), N(1), {Size: [3]int{1, 0, 0}, Teams: 2}} {
			err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: s,
				Args: []Arg{Int(1 << 40), Float32(1), Slice(x), Slice(y)}})
			wantErr(t, dev, fmt.Sprintf("saxpy n=2^40, shape %+v", s), err, "argument 2 (x)", "8 float32 elements", "needs 1099511627776")
			err = TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: s,
				Args: []Arg{Int(math.MaxInt64), Float32(1), Slice(x), Slice(y)}}).Wait()
			wantErr(t, dev, fmt.Sprintf("saxpy n=MaxInt64 nowait, shape %+v", s), err, "argument 2 (x)", "needs 9223372036854775807")
		}
		require.Equal(t, []float32{0, 2, 4, 6, 8, 10, 12, 14}, y, Describe(dev))

		// Jacobi 2^20 x 2^20: the fitted Size fits an int, the buffer does not
		in, out := make([]float32, 4), make([]float32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: N2(2, 2),
			Args: []Arg{Int(1 << 20), Int(1 << 20), Slice(in), Slice(out)}})
		wantErr(t, dev, "jacobi 2^20 x 2^20", err, "argument 2 (in)", "4 float32 elements", "needs 1099511627776", `Len "nx*ny"`)
	}
}

// Extents whose product leaves an int (Jacobi 2^32 x 2^32, buffers of 4)
// are refused before any device work, on every device, and the message
// names the kernel's extents, its arguments nx and ny (before, it was
// about "size [4294967296 4294967296 1]", a Size the user never wrote).
func TestExtentsOverflowingExtentsErrorNamesTheArguments(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		in, out := make([]float32, 4), make([]float32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Jacobi, Shape: N2(2, 2),
			Args: []Arg{Int(1 << 32), Int(1 << 32), Slice(in), Slice(out)}})
		require.Error(t, err, Describe(dev))
		t.Logf("%s: %v", Describe(dev), err)
		// Either the Len check (nx*ny past an int64) or a shape error that
		// names the extents; a bare "size [4294967296 4294967296 1]" is
		// about a Size the Region does not have.
		msg := err.Error()
		assert.True(t, strings.Contains(msg, "nx*ny") || strings.Contains(msg, "xtent"),
			"%s: the error does not say the Size came from the kernel's extents: %v", Describe(dev), err)
	}
}

// countKernel is a hand-written kernel with a Go image only: out[i] += 1
// for each point i in [0, n) it runs (Extents {0}), n of the given integer
// kind. A point run twice or not at all shows in out.
func countKernel(name string, kind device.ParamKind) *Kernel {
	return &Kernel{
		Name:    name,
		Params:  []device.Param{device.ScalarParam("n", kind), device.BufferParam("out", device.ParamInt32, "n")},
		Dims:    1,
		Extents: []int{0},
		Images:  []device.Image{{Kind: device.ImageHost, Host: countPoints(0, 1)}},
	}
}

// countPoints is the Go image of a one-dimensional kernel that adds 1 to
// element i of its int32 buffer parameter buf at each point i it runs,
// over [0, the value of its integer parameter ext).
func countPoints(ext, buf int) device.HostFunc {
	return func(a *device.HostArgs, r device.Range, _, _ int) {
		out := a.I32(buf)
		lo, hi := r.Clamp(0, device.Value[int](a, a.Kernel.Params[ext].Name))
		for i := lo; i < hi; i++ {
			out[i]++
		}
	}
}

var (
	countI32 = countKernel("ext_count_i32", device.ParamInt32)
	countU32 = countKernel("ext_count_u32", device.ParamUint32)
	countI64 = countKernel("ext_count_i64", device.ParamInt64)
)

// hostDevs are host:0 and the initial device, the devices that run a
// kernel with a Go image only.
func hostDevs(t *testing.T) []int {
	hostRuntime(t)
	return []int{0, InitialDevice}
}

// A hand-written kernel whose extent is an int32, uint32 or int64
// parameter runs each of its points exactly once with a Size below it (or
// above it), on host:0 and the initial device; an extent of 0 or less runs
// nothing and is no error.
func TestExtentsIntegerKindsOfExtentRunEachPointOnce(t *testing.T) {
	devs := hostDevs(t)
	for _, dev := range devs {
		for _, k := range []*Kernel{countI32, countU32, countI64} {
			for _, n := range []int{1, 5, 1000} {
				for _, s := range []Shape{N(1), N(n), N(n + 7), {Size: [3]int{1, 0, 0}, Teams: 3, Threads: 2}} {
					out := make([]int32, n+2)
					require.NoError(t, Target(Region{Device: Dev(dev), Kernel: k, Shape: s, Args: []Arg{Int(n), Slice(out)}}),
						"%s %s n %d shape %+v", Describe(dev), k.Name, n, s)
					for i := range out {
						w := int32(1)
						if i >= n {
							w = 0
						}
						require.Equal(t, w, out[i], "%s %s n %d shape %+v: out[%d]", Describe(dev), k.Name, n, s, i)
					}
				}
			}
			for _, n := range []int{0, -1, -5} {
				if k == countU32 && n < 0 {
					continue
				}
				out := make([]int32, 3)
				require.NoError(t, Target(Region{Device: Dev(dev), Kernel: k, Shape: N(3), Args: []Arg{Int(n), Slice(out)}}),
					"%s %s n %d", Describe(dev), k.Name, n)
				require.Equal(t, []int32{0, 0, 0}, out, "%s %s n %d", Describe(dev), k.Name, n)
			}
		}
	}
}

// An int32 or uint32 extent out of its kind's range is refused as an
// argument, with the range, before any device work (the Size is not set to it,
// nor wrapped).
func TestExtentsInt32ExtentOutOfRangeRefused(t *testing.T) {
	devs := hostDevs(t)
	for _, dev := range devs {
		out := make([]int32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: countI32, Shape: N(1), Args: []Arg{Int(1<<31 + 3), Slice(out)}})
		require.Error(t, err)
		assert.ErrorContains(t, err, "does not fit the int32 parameter")
		err = Target(Region{Device: Dev(dev), Kernel: countU32, Shape: N(1), Args: []Arg{Int(-1), Slice(out)}})
		require.Error(t, err)
		assert.ErrorContains(t, err, "does not fit the uint32 parameter")
		err = Target(Region{Device: Dev(dev), Kernel: countU32, Shape: N(1), Args: []Arg{Int(1 << 32), Slice(out)}})
		require.Error(t, err)
		assert.ErrorContains(t, err, "does not fit the uint32 parameter")
		assert.Equal(t, []int32{0, 0, 0, 0}, out)
	}
}

// A uint32 extent above 2^31 (so the Size is set past an int32) with a
// tiny buffer is refused by its Len, not wrapped.
func TestExtentsLargeUint32ExtentRefusedByLen(t *testing.T) {
	devs := hostDevs(t)
	for _, dev := range devs {
		out := make([]int32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: countU32, Shape: N(1), Args: []Arg{Int(math.MaxUint32), Slice(out)}})
		require.Error(t, err, Describe(dev))
		assert.ErrorContains(t, err, "needs 4294967295", Describe(dev))
	}
}

// count3D is a hand-written 3-D kernel (Go image only): out[(z*ny+y)*nx+x]
// += 1 for each point it runs, Extents {0, 1, 2} = nx, ny, nz.
var count3D = &Kernel{
	Name: "ext_count_3d",
	Params: []device.Param{device.ScalarParam("nx", device.ParamInt64), device.ScalarParam("ny", device.ParamInt64),
		device.ScalarParam("nz", device.ParamInt64), device.BufferParam("out", device.ParamInt32, "nx*ny*nz")},
	Dims:    3,
	Extents: []int{0, 1, 2},
	Images: []device.Image{{Kind: device.ImageHost, Host: func(a *device.HostArgs, r device.Range, _, _ int) {
		nx, ny, nz := a.Int(0), a.Int(1), a.Int(2)
		out := a.I32(3)
		x0, x1 := r.Clamp(0, nx)
		y0, y1 := r.Clamp(1, ny)
		z0, z1 := r.Clamp(2, nz)
		for z := z0; z < z1; z++ {
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					out[(z*ny+y)*nx+x]++
				}
			}
		}
	}}},
}

// A 3-D kernel with a Size below its extents in any dimension (0 in the
// unused ones included) runs each of its nx*ny*nz points once on host:0
// and the initial device.
func TestExtents3DSmallSizesRunEachPointOnce(t *testing.T) {
	devs := hostDevs(t)
	const nx, ny, nz = 5, 4, 3
	for _, dev := range devs {
		for _, s := range []Shape{N(1), {Size: [3]int{1, 0, 0}}, {Size: [3]int{1, 1, 0}}, N2(2, 2), {Size: [3]int{1, 1, 2}},
			{Size: [3]int{9, 9, 9}}, {Size: [3]int{1, 1, 1}, Teams: 7, Threads: 3}, {Size: [3]int{5, 1, 1}, Teams: 2}} {
			out := make([]int32, nx*ny*nz)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: count3D, Shape: s, Args: []Arg{Int(nx), Int(ny), Int(nz), Slice(out)}}),
				"%s shape %+v", Describe(dev), s)
			for i := range out {
				require.Equal(t, int32(1), out[i], "%s shape %+v: out[%d]", Describe(dev), s, i)
			}
		}
	}
}

// A 3-D kernel with an empty middle dimension (ny 0 or negative: no
// points) runs nothing and reports no error whatever the Size the user
// wrote, Size {1, 0, 0} (0 for the unused dimensions) as Size {1, 1, 1}.
// (Before, the runtime raised Size[2] to nz, left Size[1] at 0, and then
// refused the shape it had made itself: "size [5 0 3]: dimension 1 is 0
// while dimension 2 is in use".)
func TestExtents3DEmptyMiddleDimensionIsNoError(t *testing.T) {
	devs := hostDevs(t)
	for _, dev := range devs {
		for _, ny := range []int{0, -2} {
			for _, s := range []Shape{N(1), {Size: [3]int{1, 0, 0}}, {Size: [3]int{1, 0, 1}}} {
				out := make([]int32, 4)
				err := Target(Region{Device: Dev(dev), Kernel: count3D, Shape: s, Args: []Arg{Int(5), Int(ny), Int(3), Slice(out)}})
				assert.NoError(t, err, "%s ny %d shape %+v", Describe(dev), ny, s)
				assert.Equal(t, []int32{0, 0, 0, 0}, out, "%s ny %d shape %+v", Describe(dev), ny, s)
			}
		}
	}
}

// A hand-written kernel whose Len reads Shape.Size[0] is checked against
// the fitted Size: a buffer that covers the Size the user wrote but not
// the kernel's points is refused.
func TestExtentsLenOfShapeSizeUsesTheFittedSize(t *testing.T) {
	devs := hostDevs(t)
	k := &Kernel{
		Name:    "ext_size_len",
		Params:  []device.Param{device.ScalarParam("n", device.ParamInt64), device.BufferParam("out", device.ParamInt32, "Shape.Size[0]")},
		Extents: []int{0},
		Images:  []device.Image{{Kind: device.ImageHost, Host: countPoints(0, 1)}},
	}
	for _, dev := range devs {
		out := make([]int32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: k, Shape: N(4), Args: []Arg{Int(100), Slice(out)}})
		require.Error(t, err, Describe(dev))
		assert.ErrorContains(t, err, "needs 100", Describe(dev))
		assert.Equal(t, []int32{0, 0, 0, 0}, out, Describe(dev))
	}
}

// Extents that do not name one integer scalar parameter per dimension are
// refused by the kernel's Check with a message naming Extents, at the
// construct, before any device work, on every device (and again at every
// use).
func TestExtentsBadDeclarationsRefusedBeforeDeviceWork(t *testing.T) {
	_, devs := everyDevice(t)
	host := func(a *device.HostArgs, r device.Range, _, _ int) {
		out := a.F32(2)
		for i := range out {
			out[i] = 42
		}
	}
	params := []device.Param{device.ScalarParam("n", device.ParamInt64), device.ScalarParam("v", device.ParamFloat32),
		device.BufferParam("out", device.ParamFloat32, "n")}
	cases := []struct {
		name    string
		extents []int
		dims    int
		want    []string
	}{
		{"float extent", []int{1}, 1, []string{"Extents[0] is parameter 1 (v), a float32", "integer scalar parameter"}},
		{"buffer extent", []int{2}, 1, []string{"Extents[0] is parameter 2 (out), a buffer"}},
		{"index past the parameters", []int{3}, 1, []string{"Extents[0] is 3", "index of a parameter (0 to 2)"}},
		{"negative index", []int{-1}, 1, []string{"Extents[0] is -1"}},
		{"two extents for one dimension", []int{0, 0}, 1, []string{"2 Extents for 1 dimensions"}},
		{"one extent for two dimensions", []int{0}, 2, []string{"1 Extents for 2 dimensions"}},
		{"empty, not nil", []int{}, 0, []string{"0 Extents for 1 dimensions"}},
		{"second extent a float", []int{0, 1}, 2, []string{"Extents[1] is parameter 1 (v), a float32"}},
	}
	for i, c := range cases {
		k := &Kernel{Name: fmt.Sprintf("ext_bad_extents_%d", i), Params: params, Dims: c.dims, Extents: c.extents,
			Images: []device.Image{{Kind: device.ImageHost, Host: host}, {Kind: "opencl-c", Source: "this is not OpenCL C"}}}
		require.Error(t, k.Check(), c.name)
		for _, dev := range devs {
			out := make([]float32, 4)
			for try := range 2 {
				err := Target(Region{Device: Dev(dev), Kernel: k, Shape: N(4), Args: []Arg{Int(4), Float32(1), Slice(out)}})
				require.Error(t, err, "%s: %s try %d", Describe(dev), c.name, try)
				for _, w := range c.want {
					assert.ErrorContains(t, err, w, "%s: %s", Describe(dev), c.name)
				}
				assert.ErrorContains(t, err, "ext_bad_extents", "%s: %s", Describe(dev), c.name)
				err = TargetNowait(Region{Device: Dev(dev), Kernel: k, Shape: N(4), Args: []Arg{Int(4), Float32(1), Slice(out)}}).Wait()
				require.Error(t, err, "%s: %s nowait", Describe(dev), c.name)
				assert.ErrorContains(t, err, c.want[0], "%s: %s nowait", Describe(dev), c.name)
			}
			assert.Equal(t, []float32{0, 0, 0, 0}, out, "%s: %s: the kernel ran", Describe(dev), c.name)
		}
	}
}

// A declaration that passes Check but names the wrong parameter (Extents
// {1} = m, larger than the n the buffer holds, while the Go image trusts
// its extent) makes the Go image index past its buffer: the launch fails
// with an error on host:0 and the initial device; nothing panics.
func TestExtentsWrongButValidExtentFailsCleanly(t *testing.T) {
	devs := hostDevs(t)
	k := &Kernel{
		Name:    "ext_wrong_extent",
		Params:  []device.Param{device.ScalarParam("n", device.ParamInt64), device.ScalarParam("m", device.ParamInt64), device.BufferParam("out", device.ParamInt32, "n")},
		Extents: []int{1},
		Images:  []device.Image{{Kind: device.ImageHost, Host: countPoints(1, 2)}},
	}
	for _, dev := range devs {
		out := make([]int32, 4)
		err := Target(Region{Device: Dev(dev), Kernel: k, Shape: N(4), Args: []Arg{Int(4), Int(10), Slice(out)}})
		require.Error(t, err, Describe(dev))
		t.Logf("%s: %v", Describe(dev), err)
		assert.ErrorContains(t, err, "ext_wrong_extent", Describe(dev))
		assert.ErrorContains(t, err, "index out of range", Describe(dev))
	}
}

// clCountKernel is countKernel with OpenCL C device code too, striding
// over [0, n) whatever the launch's global size, n an int or uint.
func clCountKernel(name string, kind device.ParamKind, ctype string) *Kernel {
	k := countKernel(name, kind)
	k.Images = append(k.Images, device.Image{Kind: "opencl-c", Source: fmt.Sprintf(`
__kernel void %s(%s n, __global int *out) {
  for (long i = get_global_id(0); i < (long)n; i += get_global_size(0)) out[i] += 1;
}`, name, ctype)})
	return k
}

var (
	clCountI32 = clCountKernel("ext_cl_count_i32", device.ParamInt32, "int")
	clCountU32 = clCountKernel("ext_cl_count_u32", device.ParamUint32, "uint")
)

// A hand-written kernel with an int32 or uint32 extent and OpenCL device
// code that strides over it runs each point once on every device (host:0,
// OpenCL, the initial device) with a Size below the extent: the devices
// agree.
func TestExtentsHandWrittenInt32ExtentDevicesAgree(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		for _, k := range []*Kernel{clCountI32, clCountU32} {
			for _, s := range []Shape{N(1), {Size: [3]int{1, 0, 0}, Teams: 2, Threads: 3}, N(2000)} {
				const n = 1500
				out := make([]int32, n+1)
				require.NoError(t, Target(Region{Device: Dev(dev), Kernel: k, Shape: s, Args: []Arg{Int(n), Slice(out)}}),
					"%s %s shape %+v", Describe(dev), k.Name, s)
				for i := range out {
					w := int32(1)
					if i == n {
						w = 0
					}
					require.Equal(t, w, out[i], "%s %s shape %+v: out[%d]", Describe(dev), k.Name, s, i)
				}
			}
		}
	}
}

// In the child of TestExtentsToolSeesOrdinaryConstructs, a Go tool
// that records target constructs and their kernel submissions.
var extTool struct {
	mu     sync.Mutex
	events []string
}

func init() {
	if os.Getenv("GOMPT_TEST_EXTENTS_TOOL") != "1" {
		return
	}
	ompt.RegisterTool("extents", func(int, string) *ompt.StartResult {
		return &ompt.StartResult{Initialize: func(lookup ompt.LookupFunc, _ int, _ *ompt.Data) int {
			set := lookup("ompt_set_callback").(ompt.SetCallbackFunc)
			add := func(s string) {
				extTool.mu.Lock()
				extTool.events = append(extTool.events, s)
				extTool.mu.Unlock()
			}
			set(ompt.CallbackTargetEMI, ompt.TargetEMICallback(func(kind ompt.TargetKind, ep ompt.Endpoint, dev int, _, _, _ *ompt.Data, _ uintptr) {
				if kind == ompt.KindTarget || kind == ompt.KindTargetNowait {
					add(fmt.Sprintf("target %v %v dev=%d", kind, ep, dev))
				}
			}))
			set(ompt.CallbackTargetSubmitEMI, ompt.TargetSubmitEMICallback(func(ep ompt.Endpoint, _ *ompt.Data, _ *uint64, teams uint32) {
				add(fmt.Sprintf("submit %v teams=%d", ep, teams))
			}))
			return 1
		}}
	})
}

func extTake() []string {
	extTool.mu.Lock()
	defer extTool.mu.Unlock()
	e := extTool.events
	extTool.events = nil
	return e
}

// With a tool attached, a construct whose Size the runtime set is one
// ordinary target construct with one submission of the teams the user
// asked for (Shape.Teams), on host:0 and the initial device; a construct
// refused after its Size was set (a short buffer) reports nothing.
func TestExtentsToolSeesOrdinaryConstructs(t *testing.T) {
	if os.Getenv("GOMPT_TEST_EXTENTS_TOOL") == "1" {
		extentsToolChild()
		return
	}
	runToolChild(t, "TestExtentsToolSeesOrdinaryConstructs", "GOMPT_TEST_EXTENTS_TOOL", "extents-tool-ok")
}

func extentsToolChild() {
	fail := childFail
	host := InitialDeviceNum()
	extTake()
	for _, dev := range []int{0, InitialDevice} {
		num := dev
		if dev == InitialDevice {
			num = host
		}
		x, y := vecs(300)
		if err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: Shape{Size: [3]int{1, 0, 0}, Teams: 3},
			Args: []Arg{Int(300), Float32(2), Slice(x), Slice(y)}}); err != nil {
			fail("dev %d: Target: %v", dev, err)
		}
		if y[299] != 4*299 {
			fail("dev %d: y[299] = %g, want %d", dev, y[299], 4*299)
		}
		want := []string{
			fmt.Sprintf("target %v %v dev=%d", ompt.KindTarget, ompt.ScopeBegin, num),
			fmt.Sprintf("submit %v teams=3", ompt.ScopeBegin),
			fmt.Sprintf("submit %v teams=3", ompt.ScopeEnd),
			fmt.Sprintf("target %v %v dev=%d", ompt.KindTarget, ompt.ScopeEnd, num),
		}
		if got := extTake(); !slices.Equal(got, want) {
			fail("dev %d: Target: tool saw %q, want %q", dev, got, want)
		}
		if err := TargetNowait(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(1),
			Maps: []Map{DependInOut(y)}, Args: []Arg{Int(300), Float32(1), Slice(x), Slice(y)}}).Wait(); err != nil {
			fail("dev %d: TargetNowait: %v", dev, err)
		}
		if got := extTake(); len(got) != 4 || got[1] != fmt.Sprintf("submit %v teams=0", ompt.ScopeBegin) {
			fail("dev %d: TargetNowait: tool saw %q", dev, got)
		}
		short := make([]float32, 10)
		if err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Shape: N(10),
			Args: []Arg{Int(300), Float32(1), Slice(short), Slice(y)}}); err == nil {
			fail("dev %d: short buffer: no error", dev)
		}
		if got := extTake(); len(got) != 0 {
			fail("dev %d: refused construct: tool saw %q", dev, got)
		}
	}
	fmt.Println("extents-tool-ok")
}

// Dot's partials are the same on every device whatever the Size: a host
// device gives team t the share of dimension 0 it splits off, the same as
// OpenCL's Chunk(n, teams, t) when n is a multiple of teams, since the
// Size is n's. (Before, a Size above n was kept and the host devices split
// it, not n: n 1000 over 4 teams with Size 2000 gave partials [500 500 0
// 0] on host:0 and the initial device, [250 250 250 250] on OpenCL, and
// half the host teams idled.)
func TestExtentsDotPartialsAgreeWithSizeAboveN(t *testing.T) {
	_, devs := everyDevice(t)
	const n, teams = 1000, 4
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = 1, 1
	}
	want := []float32{250, 250, 250, 250} // Chunk(n, teams, t) of ones
	for _, dev := range devs {
		for _, size := range []int{1, n, 2 * n} {
			s := Shape{Size: [3]int{size, 1, 1}, Teams: teams, Threads: 8}
			p := make([]float32, teams)
			require.NoError(t, Target(Region{Device: Dev(dev), Kernel: kernels.Dot, Shape: s, Args: []Arg{Int(n), Slice(x), Slice(y), Slice(p)}}))
			assert.Equal(t, want, p, "%s, shape %+v", Describe(dev), s)
		}
	}
}

// A Shape left zero (Size [0 0 0]) is refused with a clear message even
// for a kernel with Extents, whose Size is otherwise only a hint: the
// shape is checked before its Size is set to the extents.
func TestExtentsZeroShapeRefusedClearly(t *testing.T) {
	_, devs := everyDevice(t)
	for _, dev := range devs {
		x, y := vecs(10)
		err := Target(Region{Device: Dev(dev), Kernel: kernels.Saxpy, Args: []Arg{Int(10), Float32(1), Slice(x), Slice(y)}})
		require.Error(t, err, Describe(dev))
		assert.ErrorContains(t, err, "dimension 0 must be at least 1", Describe(dev))
		assert.Equal(t, float32(18), y[9], Describe(dev))
	}
}
