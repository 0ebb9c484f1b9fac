package kernels_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/gompt/gompt/device"
	"github.com/gompt/gompt/kernels"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAllAndByName(t *testing.T) {
	want := []string{"empty", "saxpy", "vecadd", "dot_partial", "matmul", "jacobi", "fill", "copy32", "saxpy_cuda"}
	all := kernels.All()
	var got []string
	for _, k := range all {
		got = append(got, k.Name)
	}
	require.Equal(t, want, got, "All()'s names")
	vars := []*device.Kernel{kernels.Empty, kernels.Saxpy, kernels.VecAdd, kernels.Dot,
		kernels.Matmul, kernels.Jacobi, kernels.Fill, kernels.Copy32, kernels.SaxpyCUDA}
	for i, k := range all {
		assert.Same(t, vars[i], k, "All()[%d] is the exported variable for %s", i, k.Name)
		byName, ok := kernels.ByName(k.Name)
		assert.True(t, ok, "ByName(%q) found", k.Name)
		assert.Same(t, k, byName, "ByName(%q)", k.Name)
	}
	k, ok := kernels.ByName("nope")
	assert.False(t, ok, `ByName("nope") found`)
	assert.Nil(t, k, `ByName("nope")`)
	all[0] = nil
	assert.Same(t, kernels.Empty, kernels.All()[0], "All() returns a slice shared between calls")
}

func TestImages(t *testing.T) {
	for _, k := range kernels.All() {
		want := []device.ImageKind{device.ImageHost, device.ImageOpenCL, device.ImagePTX}
		if k == kernels.SaxpyCUDA {
			want = []device.ImageKind{device.ImageHost, device.ImagePTX}
		}
		var got []device.ImageKind
		for _, img := range k.Images {
			got = append(got, img.Kind)
			assert.Equal(t, k.Name, img.Entry, "%s: %v image entry", k.Name, img.Kind)
			switch img.Kind {
			case device.ImageHost:
				assert.NotNil(t, img.Host, "%s: host image without a function", k.Name)
			default:
				assert.NotEmpty(t, img.Source, "%s: %v image without source", k.Name, img.Kind)
			}
		}
		assert.Equal(t, want, got, "%s: image kinds", k.Name)
		assert.NotNil(t, k.Host(), "%s: Host()", k.Name)
		assert.NotNil(t, k.Sample, "%s: Sample", k.Name)
		for _, p := range k.Params {
			assert.Equal(t, p.Kind == device.ParamBuffer, p.Elem != 0, "%s: param %s: kind %v with element %v", k.Name, p.Name, p.Kind, p.Elem)
		}
	}
	if kernels.Dot.MaxThreads != kernels.DotMaxThreads || kernels.DotMaxThreads != 256 {
		assert.Equal(t, 256, kernels.DotMaxThreads, "DotMaxThreads")
		assert.Equal(t, kernels.DotMaxThreads, kernels.Dot.MaxThreads, "Dot.MaxThreads")
	}
}

// Every kernel declares what the runtime checks before a launch: the
// dimensions it iterates over, and how long each buffer must be.
func TestDeclarations(t *testing.T) {
	dims := map[string]int{"matmul": 2, "jacobi": 2}
	for _, k := range kernels.All() {
		assert.NoError(t, k.Check(), k.Name)
		assert.Equal(t, max(dims[k.Name], 1), k.Dims, "%s: Dims", k.Name)
		for _, p := range k.Params {
			if p.Kind == device.ParamBuffer {
				assert.NotEmpty(t, p.Len, "%s: buffer %s declares no Len", k.Name, p.Name)
				assert.NotZero(t, p.Elem, "%s: buffer %s declares no Elem", k.Name, p.Name)
			}
		}
	}
}

// The Go images run on buffers cut to exactly their Len: a Len that
// declares fewer elements than the code touches makes them panic here.
func TestLenIsEnough(t *testing.T) {
	for _, k := range kernels.All() {
		for _, n := range []int{1, 7, 1000} {
			s := k.Sample(n, 4)
			for i, p := range k.Params {
				if p.Kind != device.ParamBuffer {
					continue
				}
				need, err := k.NeedLen(i, s.Shape, func(j int) uint64 { return s.Args[j].Bits })
				require.NoError(t, err, "%s: %s", k.Name, p.Name)
				require.LessOrEqual(t, need*p.ElemSize(), len(s.Bufs[i]), "%s: Sample(%d): %s's bytes against Len %q (%d elements)", k.Name, n, p.Name, p.Len, need)
				s.Bufs[i] = s.Bufs[i][: need*p.ElemSize() : need*p.ElemSize()]
			}
			teams := 3
			if s.Shape.Teams > 0 {
				teams = s.Shape.Teams
			}
			outer := s.Shape.Dims() - 1
			a := &device.HostArgs{Bufs: s.Bufs, Args: s.Args, Kernel: k}
			for team := range teams { // in turn, so that a panic is this goroutine's
				func() {
					defer func() {
						assert.Nil(t, recover(), "%s: Sample(%d) with buffers cut to their Len: the Go image panicked in team %d", k.Name, n, team)
					}()
					var r device.Range
					for d := range 3 {
						r.Hi[d] = max(s.Shape.Size[d], 1)
					}
					r.Lo[outer], r.Hi[outer] = kernels.Chunk(s.Shape.Size[outer], teams, team)
					k.Host()(a, r, team, teams)
				}()
			}
		}
	}
}

func TestChunk(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1023, 4096} {
		for _, teams := range []int{1, 2, 3, 7, 64, 5000} {
			next := 0
			for team := range teams {
				lo, hi := kernels.Chunk(n, teams, team)
				if n > 0 {
					require.Equal(t, next, lo, "Chunk(%d, %d, %d) = [%d, %d): its start", n, teams, team, lo, hi)
					require.True(t, hi >= lo && hi-lo <= (n+teams-1)/teams, "Chunk(%d, %d, %d) = [%d, %d): want at most ceil(n/teams)", n, teams, team, lo, hi)
				}
				next = hi
			}
			require.Equal(t, n, next, "Chunk(%d, %d, ...): where the chunks end", n, teams)
			lo, hi := kernels.Chunk(n, teams, teams)
			assert.Equal(t, lo, hi, "Chunk(%d, %d, %d): a team out of range gets nothing", n, teams, teams)
		}
	}
}

func TestSamples(t *testing.T) {
	for _, k := range kernels.All() {
		for _, n := range []int{-3, 0, 1, 5, 1000, 1 << 16} {
			s := k.Sample(n, 1)
			assert.NoError(t, s.Shape.Check(), "%s: Sample(%d, 1)", k.Name, n)
			require.Len(t, s.Bufs, len(k.Params), "%s: Sample(%d, 1)'s buffers", k.Name, n)
			require.Len(t, s.Args, len(k.Params), "%s: Sample(%d, 1)'s args", k.Name, n)
			assert.NoError(t, k.CheckArgs(fakePtrs(k, s.Args)), k.Name)
			for i, p := range k.Params {
				assert.Equal(t, p.Kind == device.ParamBuffer, s.Bufs[i] != nil, "%s: Sample(%d, 1) param %s (%v) has a buffer", k.Name, n, p.Name, p.Kind)
				assert.Zero(t, len(s.Bufs[i])%4, "%s: param %s: buffer of %d bytes is not float32s", k.Name, p.Name, len(s.Bufs[i]))
			}
			if n >= 1000 {
				it := s.Shape.Iterations()
				assert.True(t, it >= n/2 && it <= 2*n, "%s: Sample(%d, 1) has %d iterations, want about %d", k.Name, n, it, n)
			}
			again := k.Sample(n, 1)
			assert.True(t, sampleEqual(s, again), "%s: Sample(%d, 1) differs between calls", k.Name, n)
			if k != kernels.Empty {
				assert.False(t, sampleEqual(s, k.Sample(n, 2)), "%s: Sample(%d, 1) and Sample(%d, 2) are the same", k.Name, n, n)
			}
		}
	}
}

func fakePtrs(k *device.Kernel, args []device.Arg) []device.Arg {
	out := slices.Clone(args)
	for i, p := range k.Params {
		if p.Kind == device.ParamBuffer {
			out[i].Ptr = device.DevicePtr(0x1000 * (i + 1))
		}
	}
	return out
}

func sampleEqual(a, b device.Sample) bool {
	if a.Shape != b.Shape || a.Tol != b.Tol || !slices.Equal(a.Args, b.Args) || len(a.Bufs) != len(b.Bufs) {
		return false
	}
	for i := range a.Bufs {
		if !bytes.Equal(a.Bufs[i], b.Bufs[i]) {
			return false
		}
	}
	return true
}

// runHost runs k's Go image on a copy of s's buffers, splitting the
// outermost dimension of s's iteration space among teams goroutines as a
// host device does, and returns the buffers.
func runHost(k *device.Kernel, s device.Sample, teams int, size [3]int) [][]byte {
	a := &device.HostArgs{Args: s.Args, Kernel: k}
	for _, b := range s.Bufs {
		if b == nil {
			a.Bufs = append(a.Bufs, nil)
		} else {
			a.Bufs = append(a.Bufs, bytes.Clone(b))
		}
	}
	outer := 0
	for d := range 3 {
		if size[d] > 1 {
			outer = d
		}
	}
	var wg sync.WaitGroup
	for team := range teams {
		var r device.Range
		for d := range 3 {
			r.Hi[d] = max(size[d], 1)
		}
		r.Lo[outer], r.Hi[outer] = kernels.Chunk(size[outer], teams, team)
		wg.Go(func() { k.Host()(a, r, team, teams) })
	}
	wg.Wait()
	return a.Bufs
}

func f32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	copy(device.Bytes(out), b)
	return out
}

// reference computes k's result on s's buffers with plain loops.
func reference(t *testing.T, k *device.Kernel, s device.Sample) [][]float32 {
	bufs := make([][]float32, len(s.Bufs))
	for i, b := range s.Bufs {
		bufs[i] = f32(b)
	}
	arg := func(i int) int { return int(int64(s.Args[i].Bits)) }
	switch k {
	case kernels.Empty:
	case kernels.Saxpy, kernels.SaxpyCUDA:
		a, x, y := s.Args[1].Float32(), bufs[2], bufs[3]
		for i := range arg(0) {
			y[i] = a*x[i] + y[i]
		}
	case kernels.VecAdd:
		for i := range arg(0) {
			bufs[3][i] = bufs[1][i] + bufs[2][i]
		}
	case kernels.Copy32:
		copy(bufs[2][:arg(0)], bufs[1][:arg(0)])
	case kernels.Fill:
		for i := range arg(0) {
			bufs[2][i] = s.Args[1].Float32()
		}
	case kernels.Dot:
		n, teams := arg(0), s.Shape.Teams
		for team := range teams {
			lo, hi := kernels.Chunk(n, teams, team)
			var sum float64
			for i := lo; i < hi; i++ {
				sum += float64(bufs[1][i]) * float64(bufs[2][i])
			}
			bufs[3][team] = float32(sum)
		}
	case kernels.Matmul:
		m, n, kk := arg(0), arg(1), arg(2)
		A, B, C := bufs[3], bufs[4], bufs[5]
		for i := range m {
			for j := range n {
				var sum float64
				for p := range kk {
					sum += float64(A[i*kk+p]) * float64(B[p*n+j])
				}
				C[i*n+j] = float32(sum)
			}
		}
	case kernels.Jacobi:
		nx, ny := arg(0), arg(1)
		in, out := bufs[2], bufs[3]
		for y := range ny {
			for x := range nx {
				i := y*nx + x
				if x == 0 || y == 0 || x == nx-1 || y == ny-1 {
					out[i] = in[i]
				} else {
					out[i] = 0.25 * (in[i-nx] + in[i+nx] + in[i-1] + in[i+1])
				}
			}
		}
	default:
		require.Failf(t, "no reference", "kernel %s", k.Name)
	}
	return bufs
}

func compare(t *testing.T, what string, got []byte, want []float32, tol float64) {
	t.Helper()
	g := f32(got)
	require.Len(t, g, len(want), "%s: elements", what)
	bad := 0
	for i := range g {
		x, y := float64(g[i]), float64(want[i])
		if math.Abs(x-y) > tol*max(math.Abs(x), math.Abs(y)) || math.IsNaN(x) != math.IsNaN(y) {
			if bad < 5 { // the first few, by value; then a count
				assert.Failf(t, "element differs", "%s[%d] = %v, want %v (tolerance %g)", what, i, g[i], want[i], tol)
			}
			bad++
		}
	}
	assert.Zero(t, bad, "%s: elements of %d that differ", what, len(g))
}

func TestHostMatchesReference(t *testing.T) {
	for _, k := range kernels.All() {
		for _, n := range []int{1, 7, 1000, 4099, 70000} {
			for _, seed := range []int64{1, 2} {
				s := k.Sample(n, seed)
				want := reference(t, k, s)
				teamCounts := []int{1, 2, 3, 8, 13}
				if k == kernels.Dot {
					teamCounts = []int{s.Shape.Teams} // partials are per team
				}
				for _, teams := range teamCounts {
					got := runHost(k, s, teams, s.Shape.Size)
					for i, p := range k.Params {
						if p.Kind == device.ParamBuffer {
							what := fmt.Sprintf("%s n=%d seed=%d teams=%d: %s", k.Name, n, seed, teams, p.Name)
							compare(t, what, got[i], want[i], max(s.Tol, 1e-7))
						}
					}
				}
			}
		}
	}
}

// TestHostStaysWithinN runs the Go images over an iteration space larger
// than the problem: as the device code, they must leave the extra
// iterations alone rather than index past the buffers.
func TestHostStaysWithinN(t *testing.T) {
	for _, k := range kernels.All() {
		s := k.Sample(500, 3)
		want := reference(t, k, s)
		size := s.Shape.Size
		size[0] += 17
		if size[1] > 1 {
			size[1] += 5
		}
		teams := 4
		if k == kernels.Dot {
			teams = s.Shape.Teams
			size[0] = s.Shape.Size[0] // the split decides the partials
		}
		got := runHost(k, s, teams, size)
		for i, p := range k.Params {
			if p.Kind == device.ParamBuffer {
				compare(t, k.Name+": "+p.Name, got[i], want[i], max(s.Tol, 1e-7))
			}
		}
	}
}

func TestDotSum(t *testing.T) {
	for _, n := range []int{1, 1000, 1 << 20} {
		s := kernels.Dot.Sample(n, 5)
		require.GreaterOrEqual(t, s.Shape.Teams, 1, "Dot.Sample(%d): teams", n)
		require.Equal(t, kernels.DotMaxThreads, s.Shape.Threads, "Dot.Sample(%d): threads", n)
		require.Len(t, s.Bufs[3], 4*s.Shape.Teams, "Dot.Sample(%d): partial bytes", n)
		x, y := f32(s.Bufs[1]), f32(s.Bufs[2])
		var want float64
		for i := range x {
			want += float64(x[i]) * float64(y[i])
		}
		got := kernels.SumPartials(f32(runHost(kernels.Dot, s, s.Shape.Teams, s.Shape.Size)[3]))
		assert.InEpsilon(t, want, got, 1e-6, "n=%d: SumPartials", n)
	}
	assert.Equal(t, 3.0, kernels.SumPartials([]float32{1, 2.5, -0.5}), "SumPartials(1, 2.5, -0.5)")
	ds := kernels.DotShape(1<<20, 0)
	assert.Equal(t, 256, ds.Teams, "DotShape(1<<20, 0).Teams")
	assert.Equal(t, kernels.DotTeams(1<<20), ds.Teams, "DotShape(1<<20, 0).Teams against DotTeams")
	assert.Equal(t, 1<<20, ds.Size[0], "DotShape(1<<20, 0).Size[0]")
	assert.Equal(t, 1024, kernels.DotTeams(1<<30), "DotTeams(1<<30)")
	assert.Equal(t, 1, kernels.DotTeams(0), "DotTeams(0)")
}

func benchHost(b *testing.B, k *device.Kernel, n, bytesPerIter int) {
	s := k.Sample(n, 1)
	a := &device.HostArgs{Bufs: s.Bufs, Args: s.Args, Kernel: k}
	var r device.Range
	for d := range 3 {
		r.Hi[d] = max(s.Shape.Size[d], 1)
	}
	h := k.Host()
	b.SetBytes(int64(s.Shape.Iterations() * bytesPerIter))
	b.ReportAllocs()
	for b.Loop() {
		h(a, r, 0, 1)
	}
}

func BenchmarkSaxpyHost(b *testing.B) { benchHost(b, kernels.Saxpy, 1<<24, 12) }

func BenchmarkVecAddHost(b *testing.B) { benchHost(b, kernels.VecAdd, 1<<24, 12) }

func BenchmarkJacobiHost(b *testing.B) { benchHost(b, kernels.Jacobi, 1<<22, 8) }

func BenchmarkMatmulHost(b *testing.B) { benchHost(b, kernels.Matmul, 1<<16, 4) }

func BenchmarkDotHost(b *testing.B) {
	s := kernels.Dot.Sample(1<<24, 1)
	a := &device.HostArgs{Bufs: s.Bufs, Args: s.Args}
	r := device.Range{Hi: [3]int{s.Shape.Size[0], 1, 1}}
	b.SetBytes(int64(8 * s.Shape.Size[0]))
	b.ReportAllocs()
	for b.Loop() {
		kernels.Dot.Host()(a, r, 0, 1)
	}
}

// TestHostEmptyProblem runs each Go image with all its sizes 0 or negative
// over a non-empty range: like the device code, it must do nothing.
func TestHostEmptyProblem(t *testing.T) {
	for _, n := range []int{0, -5} {
		for _, k := range kernels.All() {
			s := k.Sample(100, 1)
			args := slices.Clone(s.Args)
			for i, p := range k.Params {
				if p.Kind == device.ParamInt64 {
					args[i].Bits = uint64(int64(n))
				}
			}
			s.Args = args
			teams := 3
			if k == kernels.Dot {
				teams = s.Shape.Teams // one partial per team
			}
			got := runHost(k, s, teams, s.Shape.Size)
			for i, p := range k.Params {
				if p.Kind == device.ParamBuffer && k != kernels.Dot {
					assert.True(t, bytes.Equal(got[i], s.Bufs[i]), "%s with sizes %d changed buffer %s", k.Name, n, p.Name)
				}
			}
			if k == kernels.Dot {
				compare(t, "dot with n=0: partial", got[3], make([]float32, s.Shape.Teams), 0)
			}
		}
	}
}
