package corpus

import (
	"sync/atomic"

	"github.com/gompt/gompt/kernelrt"
)

// The kernels of the run-time checks' tests (checks_test.go): indices
// the generator cannot prove in range, and divisors that may be 0, in a
// map kernel, a helper, a reduction, and with check=off.

// Gather reads src at the indices idx holds: an index outside src fails
// the launch with Go's message on every device.
//
//gompt:kernel dims=n len(src)=m
func Gather(i int, n, m int, idx []int, src, dst []float32) {
	dst[i] = src[idx[i]]
}

// GatherUnchecked is Gather with check=off: no run-time check on the
// device and no bounds test in the Go image.
//
//gompt:kernel dims=n len(src)=m check=off
func GatherUnchecked(i int, n, m int, idx []int, src, dst []float32) {
	dst[i] = src[idx[i]]
}

// Scatter writes through a helper at the indices idx holds.
//
//gompt:kernel dims=n len(dst)=m
func Scatter(i int, n, m int, idx []int, src, dst []float32) {
	put(dst, idx[i], src[i])
}

//gompt:func
func put(dst []float32, j int, v float32) {
	dst[j] = v
}

// Quotient divides elementwise: a zero divisor fails the launch.
//
//gompt:kernel dims=n
func Quotient(i int, n int, a, b, q []int32) {
	q[i] = a[i] / b[i]
}

// GatherSum is the sum of src at the indices idx holds.
//
//gompt:kernel dims=n len(src)=m reduce=+
func GatherSum(i int, n, m int, idx []int, src []float32) float32 {
	return src[idx[i]]
}

// Seek walks from idx[i] until it finds a zero in src: with no zero
// before the end it reads past it, and the loop must stop there rather
// than run on reading zeros.
//
//gompt:kernel dims=n len(src)=m
func Seek(i int, n, m int, idx []int, src []int32, pos []int) {
	j := idx[i]
	for src[j] != 0 {
		j++
	}
	pos[i] = j
}

// AtomicCount counts the indices idx holds, atomically: an index outside
// h fails as any element access does.
//
//gompt:kernel dims=n len(h)=m
func AtomicCount(i int, n, m int, idx []int, h []uint32) {
	atomic.AddUint32(&h[idx[i]], 1)
}

// TeamGather reads src at the indices idx holds, through a team array
// that each thread then reads at the index at holds: a bad index into the
// buffer or into the team array fails the launch, in a team kernel too.
//
//gompt:kernel team=64 dims=teams len(idx)=teams*64 len(at)=teams*64 len(src)=m len(out)=teams*64
func TeamGather(t, th int, teams int, m int, idx, at []int, src []float32, out []float32) {
	var buf [64]float32
	buf[th] = src[idx[t*64+th]]
	kernelrt.Barrier()
	out[t*64+th] = buf[at[t*64+th]]
}

// ViewIndex reads row r of a, a view of w elements, at the index at
// holds: an index past the view's length fails as Go's does, though the
// buffer holds the element.
//
//gompt:kernel dims=rows len(a)=rows*w len(at)=rows
func ViewIndex(r int, rows, w int, a []float32, at []int, out []float32) {
	row := a[r*w : (r+1)*w]
	out[r] = row[at[r]]
}

// ViewBounds sums a[lo[r]:hi[r]], and then the view's three-index
// reslice [1:2:c[r]]: bounds out of range fail with Go's words for each
// of Go's checks.
//
//gompt:kernel dims=rows len(lo)=rows len(hi)=rows len(c)=rows len(a)=m
func ViewBounds(r int, rows, m int, lo, hi, c []int, a, out []float32) {
	var s float32
	for _, v := range a[lo[r]:hi[r]] {
		s += v
	}
	v := a[lo[r]:hi[r]]
	w := v[1:2:c[r]]
	out[r] = s + w[0]
}

// TeamView reads its team's part of in through a view, and each thread
// sums the view from lo's index to hi's, after the barrier, through a
// view declared before it (one per thread in the Go image), and then the
// team array's elements before its own: a bad bound fails in a team
// kernel too.
//
//gompt:kernel team=64 dims=teams len(in)=teams*64 len(lo)=teams*64 len(hi)=teams*64 len(out)=teams*64
func TeamView(t, th int, teams int, in []float32, lo, hi []int, out []float32) {
	var tile [64]float32
	part := in[t*64 : t*64+64]
	from := part[lo[t*64+th]:]
	tile[th] = part[th]
	kernelrt.Barrier()
	var s float32
	for _, v := range from[:hi[t*64+th]] {
		s += v
	}
	for j, x := range tile {
		if j < th {
			s += x
		}
	}
	out[t*64+th] = s
}

// Bins counts the values of v, each a bin index of h: an array reduction
// whose index may fall outside h.
//
//gompt:kernel dims=n reduce(h)=+ len(h)=16
func Bins(i int, n int, v []int, h []uint32) {
	h[v[i]]++
}

// BinMin keeps the least w of each bin of lo, v the bins: an array
// reduction with min (a compare-and-swap loop on a device) whose index
// may fall outside lo.
//
//gompt:kernel dims=n reduce(lo)=min len(lo)=16
func BinMin(i int, n int, v []int, w []float32, lo []float32) {
	lo[v[i]] = min(w[i], lo[v[i]])
}

// LanesGather sums k elements of src from idx[i] on. Its loop over p does
// not depend on the point, so its Go image runs the points in lanes, and
// the reads, a declaration and a definition of a local that depends on
// the point, are leaves: a bad index names their lines there too.
//
//gompt:kernel dims=n len(src)=m
func LanesGather(i int, n, m, k int, idx []int, src, dst []float32) {
	var acc = src[idx[i]]
	for p := 1; p < k; p++ {
		v := src[idx[i]+p]
		acc += v
	}
	dst[i] = acc
}

// TeamDefine defines a per-thread local from a read at an index the
// generator cannot prove, in a team kernel: its Go image runs the
// definition as a leaf over the team's threads.
//
//gompt:kernel team=64 dims=teams len(idx)=teams*64 len(src)=m len(out)=teams*64
func TeamDefine(t, th int, teams int, m int, idx []int, src, out []float32) {
	var buf [64]float32
	v := src[idx[t*64+th]]
	buf[th] = v
	kernelrt.Barrier()
	out[t*64+th] = buf[63-th]
}

// SplitEdge copies row 0, column 0 and a border of width nx/r, and shifts
// the rest. A boundary test of a stencil's form, but Go computes nx/r only
// at the points where the tests before it fail: a divisor r of 0 fails
// there (at the test's line), and nowhere when every point has x == 0.
//
//gompt:kernel dims=nx,ny len(in)=nx*ny len(out)=nx*ny
func SplitEdge(x, y int, nx, ny, r int, in, out []float32) {
	i := y*nx + x
	if y == 0 || x == 0 || x < nx/r {
		out[i] = in[i]
		return
	}
	out[i] = in[i-1]
}

// RowShift is RowProducts (lockstep.go) with the rows of b taken shift
// elements in: a shift past the end of b fails the point at the row's
// slice expression, in the Go image's jammed loop too (its turns' rows
// are taken before the turns' updates).
//
//gompt:kernel dims=m len(c)=m*n len(a)=m*nk len(b)=nk*n
func RowShift(i int, m, n, nk, shift int, c, a, b []float32) {
	row := c[i*n : (i+1)*n]
	for k := 0; k < nk; k++ {
		w := a[i*nk+k]
		bk := b[k*n+shift : (k+1)*n+shift]
		for j := range row {
			row[j] += w * bk[j]
		}
	}
}

// UnsignedIndex indexes a with an unsigned 64-bit index, and takes a view
// between unsigned bounds: Go names such a value unsigned in its message
// (index 1<<63 is [9223372036854775808], with the length), on every
// device.
//
//gompt:kernel dims=n len(a)=m len(lo)=n len(hi)=n
func UnsignedIndex(i int, n, m int, p, lo, hi []uint64, a, out []int32) {
	v := a[lo[i]:hi[i]]
	out[i] = a[p[i]] + int32(len(v))
}

// NearMax runs j from near the largest int up to c+i (j <= c+i): where
// c+i is the largest int the loop never ends, j wraps to the smallest,
// and j-c reaches past a's end. Its bound may wrap, so nothing is proven:
// a's element keeps Go's check, and point 2 of 3 fails there.
//
//gompt:kernel dims=n len(a)=n len(out)=n
func NearMax(i int, n int, a, out []float64) {
	var s float64
	for j := 9223372036854775805; j <= 9223372036854775805+i; j++ {
		v := a[j-9223372036854775805]
		if v < 0 {
			break
		}
		s += v
	}
	out[i] = s
}

// WrapBound runs j below n-1, which for an int n at the smallest int
// wraps to the largest: the loop would then run past a's end (n
// elements, none at all for a negative n). a[j+1] is proven in range for
// every n where n-1 fits an int, and the kernel's Bounds make the
// runtime refuse a launch where it does not.
//
//gompt:kernel dims=m len(a)=n len(out)=m
func WrapBound(i int, m, n int, a, out []float64) {
	var s float64
	for j := 0; j < n-1; j++ {
		v := a[j+1]
		if v < 0 {
			break
		}
		s += v
	}
	out[i] = s
}

// TriangleTo runs row i from the diagonal to k (j <= k), which nothing
// bounds: it keeps Go's check, and k past the last column fails the
// point at the element.
//
//gompt:kernel dims=n len(out)=n*n
func TriangleTo(i int, n, k int, out []float64) {
	for j := i; j <= k; j++ {
		out[i*n+j] += 1
	}
}
