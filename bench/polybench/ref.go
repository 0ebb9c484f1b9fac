package polybench

import "math"

// The plain-Go references: PolyBench/C 4.2's sequential loop nests, in its
// loop order, on one goroutine, with no gompt. The tests compare every
// device's results with these, bit for bit.

func refGemm(ni, nj, nk int, alpha, beta float64, C, A, B []float64) {
	for i := 0; i < ni; i++ {
		for j := 0; j < nj; j++ {
			C[i*nj+j] *= beta
		}
		for k := 0; k < nk; k++ {
			for j := 0; j < nj; j++ {
				C[i*nj+j] += alpha * A[i*nk+k] * B[k*nj+j]
			}
		}
	}
}

func ref2mm(ni, nj, nk, nl int, alpha, beta float64, tmp, A, B, C, D []float64) {
	for i := 0; i < ni; i++ {
		for j := 0; j < nj; j++ {
			tmp[i*nj+j] = 0
			for k := 0; k < nk; k++ {
				tmp[i*nj+j] += alpha * A[i*nk+k] * B[k*nj+j]
			}
		}
	}
	for i := 0; i < ni; i++ {
		for j := 0; j < nl; j++ {
			D[i*nl+j] *= beta
			for k := 0; k < nj; k++ {
				D[i*nl+j] += tmp[i*nj+k] * C[k*nl+j]
			}
		}
	}
}

func refMatMul(ni, nj, nk int, X, P, Q []float64) {
	for i := 0; i < ni; i++ {
		for j := 0; j < nj; j++ {
			X[i*nj+j] = 0
			for k := 0; k < nk; k++ {
				X[i*nj+j] += P[i*nk+k] * Q[k*nj+j]
			}
		}
	}
}

func ref3mm(ni, nj, nk, nl, nm int, E, A, B, F, C, D, G []float64) {
	refMatMul(ni, nj, nk, E, A, B)
	refMatMul(nj, nl, nm, F, C, D)
	refMatMul(ni, nl, nj, G, E, F)
}

func refAtax(m, n int, A, x, y, tmp []float64) {
	for i := 0; i < n; i++ {
		y[i] = 0
	}
	for i := 0; i < m; i++ {
		tmp[i] = 0
		for j := 0; j < n; j++ {
			tmp[i] = tmp[i] + A[i*n+j]*x[j]
		}
		for j := 0; j < n; j++ {
			y[j] = y[j] + A[i*n+j]*tmp[i]
		}
	}
}

func refBicg(m, n int, A, s, q, p, r []float64) {
	for i := 0; i < m; i++ {
		s[i] = 0
	}
	for i := 0; i < n; i++ {
		q[i] = 0
		for j := 0; j < m; j++ {
			s[j] = s[j] + r[i]*A[i*m+j]
			q[i] = q[i] + A[i*m+j]*p[j]
		}
	}
}

func refMvt(n int, x1, x2, y1, y2, A []float64) {
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x1[i] = x1[i] + A[i*n+j]*y1[j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x2[i] = x2[i] + A[j*n+i]*y2[j]
		}
	}
}

func refGesummv(n int, alpha, beta float64, A, B, tmp, x, y []float64) {
	for i := 0; i < n; i++ {
		tmp[i] = 0
		y[i] = 0
		for j := 0; j < n; j++ {
			tmp[i] = A[i*n+j]*x[j] + tmp[i]
			y[i] = B[i*n+j]*x[j] + y[i]
		}
		y[i] = alpha*tmp[i] + beta*y[i]
	}
}

func refSyrk(n, m int, alpha, beta float64, C, A []float64) {
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			C[i*n+j] *= beta
		}
		for k := 0; k < m; k++ {
			for j := 0; j <= i; j++ {
				C[i*n+j] += alpha * A[i*m+k] * A[j*m+k]
			}
		}
	}
}

func refSyr2k(n, m int, alpha, beta float64, C, A, B []float64) {
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			C[i*n+j] *= beta
		}
		for k := 0; k < m; k++ {
			for j := 0; j <= i; j++ {
				C[i*n+j] += A[j*m+k]*alpha*B[i*m+k] + B[j*m+k]*alpha*A[i*m+k]
			}
		}
	}
}

func refGemver(n int, alpha, beta float64, A, u1, v1, u2, v2, w, x, y, z []float64) {
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			A[i*n+j] = A[i*n+j] + u1[i]*v1[j] + u2[i]*v2[j]
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x[i] = x[i] + beta*A[j*n+i]*y[j]
		}
	}
	for i := 0; i < n; i++ {
		x[i] = x[i] + z[i]
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			w[i] = w[i] + alpha*A[i*n+j]*x[j]
		}
	}
}

func refJacobi2D(tsteps, n int, A, B []float64) {
	step := func(in, out []float64) {
		for i := 1; i < n-1; i++ {
			for j := 1; j < n-1; j++ {
				out[i*n+j] = 0.2 * (in[i*n+j] + in[i*n+j-1] + in[i*n+j+1] + in[(i+1)*n+j] + in[(i-1)*n+j])
			}
		}
	}
	for t := 0; t < tsteps; t++ {
		step(A, B)
		step(B, A)
	}
}

func refFdtd2D(tmax, nx, ny int, ex, ey, hz, fict []float64) {
	for t := 0; t < tmax; t++ {
		for j := 0; j < ny; j++ {
			ey[j] = fict[t]
		}
		for i := 1; i < nx; i++ {
			for j := 0; j < ny; j++ {
				ey[i*ny+j] = ey[i*ny+j] - 0.5*(hz[i*ny+j]-hz[(i-1)*ny+j])
			}
		}
		for i := 0; i < nx; i++ {
			for j := 1; j < ny; j++ {
				ex[i*ny+j] = ex[i*ny+j] - 0.5*(hz[i*ny+j]-hz[i*ny+j-1])
			}
		}
		for i := 0; i < nx-1; i++ {
			for j := 0; j < ny-1; j++ {
				hz[i*ny+j] = hz[i*ny+j] - 0.7*(ex[i*ny+j+1]-ex[i*ny+j]+ey[(i+1)*ny+j]-ey[i*ny+j])
			}
		}
	}
}

func refHeat3D(tsteps, n int, A, B []float64) {
	at := func(i, j, k int) int { return (i*n+j)*n + k }
	step := func(in, out []float64) {
		for i := 1; i < n-1; i++ {
			for j := 1; j < n-1; j++ {
				for k := 1; k < n-1; k++ {
					out[at(i, j, k)] = 0.125*(in[at(i+1, j, k)]-2.0*in[at(i, j, k)]+in[at(i-1, j, k)]) +
						0.125*(in[at(i, j+1, k)]-2.0*in[at(i, j, k)]+in[at(i, j-1, k)]) +
						0.125*(in[at(i, j, k+1)]-2.0*in[at(i, j, k)]+in[at(i, j, k-1)]) +
						in[at(i, j, k)]
				}
			}
		}
	}
	for t := 1; t <= tsteps; t++ {
		step(A, B)
		step(B, A)
	}
}

func refCovariance(m, n int, fn float64, data, cov, mean []float64) {
	for j := 0; j < m; j++ {
		mean[j] = 0
		for i := 0; i < n; i++ {
			mean[j] += data[i*m+j]
		}
		mean[j] /= fn
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			data[i*m+j] -= mean[j]
		}
	}
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			cov[i*m+j] = 0
			for k := 0; k < n; k++ {
				cov[i*m+j] += data[k*m+i] * data[k*m+j]
			}
			cov[i*m+j] /= fn - 1.0
			cov[j*m+i] = cov[i*m+j]
		}
	}
}

func refCorrelation(m, n int, fn float64, data, corr, mean, stddev []float64) {
	const eps = 0.1
	for j := 0; j < m; j++ {
		mean[j] = 0
		for i := 0; i < n; i++ {
			mean[j] += data[i*m+j]
		}
		mean[j] /= fn
	}
	for j := 0; j < m; j++ {
		stddev[j] = 0
		for i := 0; i < n; i++ {
			stddev[j] += (data[i*m+j] - mean[j]) * (data[i*m+j] - mean[j])
		}
		stddev[j] /= fn
		stddev[j] = math.Sqrt(stddev[j])
		if stddev[j] <= eps {
			stddev[j] = 1.0
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			data[i*m+j] -= mean[j]
			data[i*m+j] /= math.Sqrt(fn) * stddev[j]
		}
	}
	for i := 0; i < m-1; i++ {
		corr[i*m+i] = 1.0
		for j := i + 1; j < m; j++ {
			corr[i*m+j] = 0
			for k := 0; k < n; k++ {
				corr[i*m+j] += data[k*m+i] * data[k*m+j]
			}
			corr[j*m+i] = corr[i*m+j]
		}
	}
	corr[(m-1)*m+m-1] = 1.0
}
