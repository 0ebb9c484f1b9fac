package corpus

// Conv is a row convolution whose loop over the weights does not depend
// on the point: its Go image runs the points of a row in lockstep (a
// local declared in the loop, a conditional update, a return every point
// takes, an element read at a lane's offset).
//
//gompt:kernel dims=n,m len(w)=k
func Conv(j, i int, m, n, k int, w []float32, in, out []float32) {
	if k <= 0 {
		return
	}
	var acc, peak float32
	for p := 0; p < k; p++ {
		t := w[p] * in[i*n+(j+p)%n]
		acc += t
		if t > peak {
			peak = t
		}
	}
	out[i*n+j] = acc - peak + in[i*n+j]
}

// UniformStore stores at elements whose index is the same for every
// point, inside loops that do not depend on the point (its Go image runs
// the points in lockstep, the ifs below as leaves, one point after
// another), and reads one back; one point stores into b, another into c.
// The Go image hoisted such an element out of the leaf as a value, and
// stored into that copy.
//
//gompt:kernel dims=n len(b)=m len(c)=m
func UniformStore(i int, n int, m int, b, c []int32, out []int32) {
	for j := 0; j < m; j++ {
		if i == 0 {
			b[j] = int32(j*7 + 5)
			out[i] += b[j]
		}
		out[i] += int32(j)
	}
	for j := 0; j < m; j++ {
		if i == n-1 {
			c[m-1-j], out[i] = int32(j), out[i]+int32(j)
		}
	}
}

// ColumnStats walks column j of an m x n matrix: on a CPU OpenCL device
// a work-item runs four neighbouring columns together (plan.Wide), each
// statement once per column, inside the loop they share. Each column
// keeps Go's order: a float32 sum of squares, an int32 count that wraps,
// a condition that differs from column to column, and an early break of
// the shared loop that every column takes.
//
//gompt:kernel dims=n len(a)=m*n len(sum)=n len(count)=n
func ColumnStats(j int, n, m, stop int, lim float32, a, sum []float32, count []int32) {
	var s float32
	c := int32(j)
	for i := 0; i < m; i++ {
		if i == stop {
			break
		}
		v := a[i*n+j]
		s += v * v
		if v > lim {
			c = c*3 + 0x7fff_0000
		} else {
			s -= v / 3
		}
	}
	if c < 0 {
		s = -s
	}
	sum[j] = s
	count[j] = c
}

// Jammed runs loops that do not depend on the point around statements
// that store only into the point's locals: its Go image runs four turns
// of such a loop together, each point through its four turns in order
// (emitgo's jam). Each point keeps Go's order: a float32 sum of products
// through a local declared in the turn, an int32 that wraps, and a
// float64 over a counter that may start near the largest int, with
// bounds that are no multiple of four.
//
//gompt:kernel dims=n len(a)=k*n len(w)=k len(sum)=n len(hash)=n len(far)=n
func Jammed(j int, n, k, lo, hi int, a, w, sum []float32, hash []int32, far []float64) {
	var s float32
	h := int32(j)
	for p := 0; p < k; p++ {
		t := w[p] * a[p*n+j]
		s += t
		h = h*31 + int32(p) ^ int32(j)
	}
	c := float64(j) / 3
	for q := lo; q < hi; q++ {
		c = c*0.75 + float64(hi-q)
	}
	sum[j], hash[j], far[j] = s, h, c
}

// RowProducts updates row i of c with the rows of b weighted by a's row
// (gemm's loop, written as C does it): its Go image runs four turns of
// the loop over k together, each element of the row through its four
// updates in order, when c's buffer overlaps none of those the loop
// reads (emitgo's point jam); when one slice is passed as both c and b,
// the loop as written.
//
//gompt:kernel dims=m len(c)=m*n len(a)=m*nk len(b)=nk*n
func RowProducts(i int, m, n, nk int, s float64, c, a, b []float64) {
	row := c[i*n : (i+1)*n]
	for k := 0; k < nk; k++ {
		w := s * a[i*nk+k]
		bk := b[k*n : (k+1)*n]
		for j := range row {
			row[j] -= w * bk[j]
		}
	}
}
