package corpus

// ProductLen writes (at point 0) every element of b, len(b)=m*k, through
// an index the generator proves below m*k (its loop's bound, which it
// reads from mul, len(mul)=k*m, too). b's length is m*k as Go computes
// it, two negative factors making a positive one, in the runtime's check,
// the OpenCL C and the Go image alike; it was 0 there while the loop ran
// m*k times, and a proven store wrote past a short buffer. Its buffer
// named mul takes no name of the OpenCL C's helpers.
//
//gompt:kernel dims=n len(b)=m*k len(mul)=k*m
func ProductLen(i int, n int, m, k int, mul []int64, b []int64) {
	if i == 0 {
		for j := range m * k {
			b[j] = int64(j)*100 + int64(len(b)) + mul[j]
		}
	}
}

// SpMV multiplies a sparse matrix in CSR form by x: row r's nonzeros are
// vals[rowPtr[r]:rowPtr[r+1]], in the columns cols[rowPtr[r]:rowPtr[r+1]].
// rowPtr holds rows+1 elements (len(rowPtr)=rows+1: a sum), the last read
// at rowPtr[r+1], which the generator proves in range. y holds the product,
// then each row's count of nonzeros but the last row's (len(y)=2*rows-1).
//
//gompt:kernel dims=rows len(rowPtr)=rows+1 len(cols)=nnz len(vals)=nnz len(x)=ncols len(y)=2*rows-1
func SpMV(r int, rows int, nnz, ncols int, rowPtr, cols []int32, vals, x, y []float32) {
	var sum float32
	for j := rowPtr[r]; j < rowPtr[r+1]; j++ {
		sum += vals[j] * x[cols[j]]
	}
	y[r] = sum
	if r+1 < rows {
		y[rows+r] = float32(rowPtr[r+1] - rowPtr[r])
	}
}
