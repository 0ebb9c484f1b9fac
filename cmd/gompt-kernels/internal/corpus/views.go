package corpus

// Views (v := buf[lo:hi]) and range over slices, as a Go programmer
// writes them: each is a local slice of a buffer whose own length is
// checked, ranged over with the index, the value or both.

// MatVec is y = A x by rows: each point takes its row of A as a view and
// ranges over it, index and value.
//
//gompt:kernel dims=m len(A)=m*n len(x)=n
func MatVec(i int, m, n int, A, x, y []float32) {
	row := A[i*n : (i+1)*n]
	var s float32
	for j, a := range row {
		s += a * x[j]
	}
	y[i] = s
}

// CSR multiplies a sparse matrix in CSR form by x, row r's nonzeros the
// views vals[lo:hi] and cols[lo:hi]. The bounds are clamped into [0, nnz]
// (random rowPtr in the Samples), so that no point fails; cols' values
// wrap into x.
//
//gompt:kernel dims=rows len(rowPtr)=rows+1 len(cols)=nnz len(vals)=nnz len(x)=ncols
func CSR(r int, rows int, nnz, ncols int, rowPtr, cols []int32, vals, x, y []float32) {
	lo := min(max(int(rowPtr[r]), 0), nnz)
	hi := min(max(int(rowPtr[r+1]), lo), nnz)
	rv, rc := vals[lo:hi], cols[lo:hi]
	var sum float32
	for k, v := range rv {
		c := int(rc[k]) % ncols
		if c < 0 {
			c += ncols
		}
		sum += v * x[c]
	}
	y[r] = sum
}

// DotRange is a dot product by range over a slice parameter: value only
// of x, x's index into y.
//
//gompt:kernel dims=n reduce=+ len(x)=n*k len(y)=n*k
func DotRange(i int, n, k int, x, y []int64) int64 {
	var s int64
	for j, v := range x[i*k : (i+1)*k] {
		s += v * y[i*k+j]
	}
	return s
}

// RangeForms ranges over a buffer, views, views of views and three-index
// slices in every form Go has (index only, value only, both, blanks,
// assigned variables), assigns the range variables in the body (which
// changes neither the iterations nor the next value), writes through a
// view and passes one to a helper, and reads the element each iteration
// starts at after the loop changed it (the value is read then, not
// before the loop).
//
//gompt:kernel dims=n len(a)=n*8 len(out)=n*8
func RangeForms(i int, n int, a []int32, out []int64) {
	in := a[i*8 : i*8+8]
	rest := out[i*8:]
	o := rest[:8:8]
	var s int64
	for j := range in {
		s += int64(j) * int64(in[j])
	}
	for _, v := range in {
		s = s*3 + int64(v)
	}
	for j, v := range in[2:] {
		s ^= int64(j) << 8 * int64(v)
		j = 100 // the next iteration's j is its own
		v = -1
		_, _ = j, v
	}
	for range in {
		s++
	}
	var j int
	var v int32
	for j, v = range in[:5] {
		s += int64(v) - int64(j)
	}
	s += int64(j)*1000 + int64(v)
	head := in[1:4:6]
	ext := head[:5] // past head's length, within its capacity
	for k := range len(ext) {
		o[k] = int64(ext[k])
	}
	for k, w := range o[:4] {
		if k+1 < len(o) {
			o[k+1] += w // the next iteration's w sees it
		}
	}
	o[5] = total(in) + s
	tail := o[6:]
	fill(tail, int64(len(head))*10+int64(len(ext)))
	n0 := 0
	for k, x := range a {
		if k >= i%3*8 {
			break
		}
		if x > 3 {
			n0++
			continue
		}
	}
	o[7] += int64(n0)
}

//gompt:func
func total(v []int32) int64 {
	var t int64
	for _, x := range v {
		t += int64(x)
	}
	return t
}

//gompt:func
func fill(v []int64, x int64) {
	for k := range v {
		v[k] = x + int64(k)
	}
}
