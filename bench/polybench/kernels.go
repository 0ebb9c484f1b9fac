package polybench

import "math"

// The kernels: one //gompt:kernel per parallel loop nest of PolyBench/C
// 4.2, written from its definitions. Each kernel's points are the nest's
// outer parallel loop (a row, or a column where the loop was interchanged
// to make it parallel); its inner loops are in the body, in PolyBench's
// order, so that every element sees its operations in the order the
// sequential reference (ref.go) and the C (c/polybench.c) give them.
// Arrays are row-major; a PolyBench A[i][j] of a rows x cols array is
// A[i*cols+j].
//go:generate go run github.com/gompt/gompt/cmd/gompt-kernels

// Gemm is gemm's row i: C = alpha*A*B + beta*C, A ni x nk, B nk x nj, C ni x nj.
//
//gompt:kernel dims=ni len(C)=ni*nj len(A)=ni*nk len(B)=nk*nj
func Gemm(i int, ni, nj, nk int, alpha, beta float64, C, A, B []float64) {
	c := C[i*nj : (i+1)*nj]
	for j := range c {
		c[j] *= beta
	}
	for k := 0; k < nk; k++ {
		a := alpha * A[i*nk+k]
		b := B[k*nj : (k+1)*nj]
		for j := range c {
			c[j] += a * b[j]
		}
	}
}

// TwoMM1 is 2mm's first product, row i: tmp = alpha*A*B, A ni x nk, B nk x nj.
//
//gompt:kernel dims=ni len(tmp)=ni*nj len(A)=ni*nk len(B)=nk*nj
func TwoMM1(i int, ni, nj, nk int, alpha float64, tmp, A, B []float64) {
	for j := 0; j < nj; j++ {
		var s float64
		for k := 0; k < nk; k++ {
			s += alpha * A[i*nk+k] * B[k*nj+j]
		}
		tmp[i*nj+j] = s
	}
}

// TwoMM2 is 2mm's second product, row i: D = tmp*C + beta*D, tmp ni x nj, C nj x nl.
//
//gompt:kernel dims=ni len(tmp)=ni*nj len(C)=nj*nl len(D)=ni*nl
func TwoMM2(i int, ni, nj, nl int, beta float64, tmp, C, D []float64) {
	for j := 0; j < nl; j++ {
		d := D[i*nl+j] * beta
		for k := 0; k < nj; k++ {
			d += tmp[i*nj+k] * C[k*nl+j]
		}
		D[i*nl+j] = d
	}
}

// MatMul is 3mm's product, row i: X = P*Q, P ni x nk, Q nk x nj (3mm
// runs it three times: E = A*B, F = C*D, G = E*F).
//
//gompt:kernel dims=ni len(X)=ni*nj len(P)=ni*nk len(Q)=nk*nj
func MatMul(i int, ni, nj, nk int, X, P, Q []float64) {
	for j := 0; j < nj; j++ {
		var s float64
		for k := 0; k < nk; k++ {
			s += P[i*nk+k] * Q[k*nj+j]
		}
		X[i*nj+j] = s
	}
}

// AtaxTmp is atax's tmp = A*x, row i; A is m x n.
//
//gompt:kernel dims=m len(A)=m*n len(x)=n
func AtaxTmp(i int, m, n int, A, x, tmp []float64) {
	var t float64
	for j := 0; j < n; j++ {
		t = t + A[i*n+j]*x[j]
	}
	tmp[i] = t
}

// AtaxY is atax's y = A^T*tmp, element j (PolyBench's i loop interchanged
// to make j the parallel one; each y[j] still sums over i in order).
//
//gompt:kernel dims=n len(A)=m*n len(tmp)=m
func AtaxY(j int, n, m int, A, tmp, y []float64) {
	var s float64
	for i := 0; i < m; i++ {
		s = s + A[i*n+j]*tmp[i]
	}
	y[j] = s
}

// BicgS is bicg's s = A^T*r, element j; A is n x m (interchanged as AtaxY).
//
//gompt:kernel dims=m len(A)=n*m len(r)=n
func BicgS(j int, m, n int, A, r, s []float64) {
	var t float64
	for i := 0; i < n; i++ {
		t = t + r[i]*A[i*m+j]
	}
	s[j] = t
}

// BicgQ is bicg's q = A*p, row i.
//
//gompt:kernel dims=n len(A)=n*m len(p)=m
func BicgQ(i int, n, m int, A, p, q []float64) {
	var t float64
	for j := 0; j < m; j++ {
		t = t + A[i*m+j]*p[j]
	}
	q[i] = t
}

// MvtX1 is mvt's x1 += A*y1, row i; A is n x n.
//
//gompt:kernel dims=n len(A)=n*n
func MvtX1(i int, n int, A, y1, x1 []float64) {
	x := x1[i]
	for j := 0; j < n; j++ {
		x = x + A[i*n+j]*y1[j]
	}
	x1[i] = x
}

// MvtX2 is mvt's x2 += A^T*y2, element i.
//
//gompt:kernel dims=n len(A)=n*n
func MvtX2(i int, n int, A, y2, x2 []float64) {
	x := x2[i]
	for j := 0; j < n; j++ {
		x = x + A[j*n+i]*y2[j]
	}
	x2[i] = x
}

// Gesummv is gesummv's row i: y = alpha*A*x + beta*B*x.
//
//gompt:kernel dims=n len(A)=n*n len(B)=n*n
func Gesummv(i int, n int, alpha, beta float64, A, B, x, tmp, y []float64) {
	var t, s float64
	for j := 0; j < n; j++ {
		t = A[i*n+j]*x[j] + t
		s = B[i*n+j]*x[j] + s
	}
	tmp[i] = t
	y[i] = alpha*t + beta*s
}

// Syrk is syrk's row i of the lower triangle: C = alpha*A*A^T + beta*C, A n x m.
//
//gompt:kernel dims=n len(C)=n*n len(A)=n*m
func Syrk(i int, n, m int, alpha, beta float64, C, A []float64) {
	for j := 0; j <= i; j++ {
		C[i*n+j] *= beta
	}
	for k := 0; k < m; k++ {
		a := alpha * A[i*m+k]
		for j := 0; j <= i; j++ {
			C[i*n+j] += a * A[j*m+k]
		}
	}
}

// Syr2k is syr2k's row i of the lower triangle: C = alpha*A*B^T + alpha*B*A^T + beta*C.
//
//gompt:kernel dims=n len(C)=n*n len(A)=n*m len(B)=n*m
func Syr2k(i int, n, m int, alpha, beta float64, C, A, B []float64) {
	for j := 0; j <= i; j++ {
		C[i*n+j] *= beta
	}
	for k := 0; k < m; k++ {
		for j := 0; j <= i; j++ {
			C[i*n+j] += A[j*m+k]*alpha*B[i*m+k] + B[j*m+k]*alpha*A[i*m+k]
		}
	}
}

// GemverA is gemver's rank-2 update, row i: A += u1*v1^T + u2*v2^T.
//
//gompt:kernel dims=n len(A)=n*n
func GemverA(i int, n int, A, u1, v1, u2, v2 []float64) {
	for j := 0; j < n; j++ {
		A[i*n+j] = A[i*n+j] + u1[i]*v1[j] + u2[i]*v2[j]
	}
}

// GemverX is gemver's x += beta*A^T*y, element i.
//
//gompt:kernel dims=n len(A)=n*n
func GemverX(i int, n int, beta float64, A, y, x []float64) {
	s := x[i]
	for j := 0; j < n; j++ {
		s = s + beta*A[j*n+i]*y[j]
	}
	x[i] = s
}

// GemverZ is gemver's x += z.
//
//gompt:kernel dims=n
func GemverZ(i int, n int, z, x []float64) {
	x[i] = x[i] + z[i]
}

// GemverW is gemver's w += alpha*A*x, row i.
//
//gompt:kernel dims=n len(A)=n*n
func GemverW(i int, n int, alpha float64, A, x, w []float64) {
	s := w[i]
	for j := 0; j < n; j++ {
		s = s + alpha*A[i*n+j]*x[j]
	}
	w[i] = s
}

// Jacobi2D is one half step of jacobi-2d, row i of an n x n grid: out's
// interior gets the 5-point average of in (jacobi-2d runs it twice per
// step, A to B and B to A).
//
//gompt:kernel dims=n len(in)=n*n len(out)=n*n
func Jacobi2D(i int, n int, in, out []float64) {
	if i < 1 || i >= n-1 {
		return
	}
	for j := 1; j < n-1; j++ {
		c := i*n + j
		out[c] = 0.2 * (in[c] + in[c-1] + in[c+1] + in[c+n] + in[c-n])
	}
}

// FdtdEy is fdtd-2d's ey update at step t, row i of nx x ny: row 0 gets
// the source value f (PolyBench's _fict_[t]).
//
//gompt:kernel dims=nx len(ey)=nx*ny len(hz)=nx*ny
func FdtdEy(i int, nx, ny int, f float64, ey, hz []float64) {
	if i == 0 {
		for j := 0; j < ny; j++ {
			ey[j] = f
		}
		return
	}
	for j := 0; j < ny; j++ {
		ey[i*ny+j] = ey[i*ny+j] - 0.5*(hz[i*ny+j]-hz[(i-1)*ny+j])
	}
}

// FdtdEx is fdtd-2d's ex update, row i.
//
//gompt:kernel dims=nx len(ex)=nx*ny len(hz)=nx*ny
func FdtdEx(i int, nx, ny int, ex, hz []float64) {
	for j := 1; j < ny; j++ {
		ex[i*ny+j] = ex[i*ny+j] - 0.5*(hz[i*ny+j]-hz[i*ny+j-1])
	}
}

// FdtdHz is fdtd-2d's hz update, row i (rows 0 to nx-2).
//
//gompt:kernel dims=nx len(ex)=nx*ny len(ey)=nx*ny len(hz)=nx*ny
func FdtdHz(i int, nx, ny int, ex, ey, hz []float64) {
	if i >= nx-1 {
		return
	}
	for j := 0; j < ny-1; j++ {
		hz[i*ny+j] = hz[i*ny+j] - 0.7*(ex[i*ny+j+1]-ex[i*ny+j]+ey[(i+1)*ny+j]-ey[i*ny+j])
	}
}

// Heat3D is one half step of heat-3d, plane i of an n x n x n grid
// (heat-3d runs it twice per step, A to B and B to A).
//
//gompt:kernel dims=n len(in)=n*n*n len(out)=n*n*n
func Heat3D(i int, n int, in, out []float64) {
	if i < 1 || i >= n-1 {
		return
	}
	for j := 1; j < n-1; j++ {
		for k := 1; k < n-1; k++ {
			c := (i*n+j)*n + k
			out[c] = 0.125*(in[c+n*n]-2.0*in[c]+in[c-n*n]) +
				0.125*(in[c+n]-2.0*in[c]+in[c-n]) +
				0.125*(in[c+1]-2.0*in[c]+in[c-1]) +
				in[c]
		}
	}
}

// ColMean is the mean of column j of the n x m data (covariance and
// correlation): the sum over the rows in order, divided by fn.
//
//gompt:kernel dims=m len(data)=n*m
func ColMean(j int, m, n int, fn float64, data, mean []float64) {
	var s float64
	for i := 0; i < n; i++ {
		s += data[i*m+j]
	}
	mean[j] = s / fn
}

// CovCenter subtracts the column means from row i of data (covariance).
//
//gompt:kernel dims=n len(data)=n*m len(mean)=m
func CovCenter(i int, n, m int, data, mean []float64) {
	for j := 0; j < m; j++ {
		data[i*m+j] -= mean[j]
	}
}

// Cov is covariance's row i of the symmetric m x m cov, from the diagonal
// on, mirrored into column i.
//
//gompt:kernel dims=m len(data)=n*m len(cov)=m*m
func Cov(i int, m, n int, fn float64, data, cov []float64) {
	for j := i; j < m; j++ {
		var c float64
		for k := 0; k < n; k++ {
			c += data[k*m+i] * data[k*m+j]
		}
		c /= fn - 1.0
		cov[i*m+j] = c
		cov[j*m+i] = c
	}
}

// CorrStddev is correlation's standard deviation of column j (1 where it
// is at most 0.1).
//
//gompt:kernel dims=m len(data)=n*m
func CorrStddev(j int, m, n int, fn float64, data, mean, stddev []float64) {
	var s float64
	for i := 0; i < n; i++ {
		d := data[i*m+j] - mean[j]
		s += d * d
	}
	s /= fn
	s = math.Sqrt(s)
	if s <= 0.1 {
		s = 1.0
	}
	stddev[j] = s
}

// CorrCenter centres and scales row i of data (correlation).
//
//gompt:kernel dims=n len(data)=n*m len(mean)=m len(stddev)=m
func CorrCenter(i int, n, m int, fn float64, data, mean, stddev []float64) {
	for j := 0; j < m; j++ {
		data[i*m+j] -= mean[j]
		data[i*m+j] /= math.Sqrt(fn) * stddev[j]
	}
}

// Corr is correlation's row i of the m x m corr above the diagonal,
// mirrored into column i, and its diagonal element 1.
//
//gompt:kernel dims=m len(data)=n*m len(corr)=m*m
func Corr(i int, m, n int, data, corr []float64) {
	corr[i*m+i] = 1.0
	for j := i + 1; j < m; j++ {
		var c float64
		for k := 0; k < n; k++ {
			c += data[k*m+i] * data[k*m+j]
		}
		corr[i*m+j] = c
		corr[j*m+i] = c
	}
}
