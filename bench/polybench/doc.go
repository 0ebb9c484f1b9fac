// Package polybench is PolyBench/C 4.2's linear-algebra, data-mining and
// stencil kernels written for gompt as a Go programmer writes them, beside
// the same loops in C with OpenMP (c/polybench.c), for cmd/polybench to
// compare (issue 42):
//
//	go run ./cmd/polybench                      # LARGE, 5 rounds, every device
//	go run ./cmd/polybench -size SMALL -kernel 'mm$' -device host:0,initial -json
//
// # The kernels
//
// Each benchmark is written from PolyBench's definition, in float64, with
// PolyBench's initialisation formulas and its loop order. Each parallel
// loop nest is one //gompt:kernel (kernels.go) whose points are the
// nest's outer parallel loop, a row (or a column, where PolyBench's outer
// loop carries a sum and the parallel loop is the interchanged one), and
// whose inner loops are in its body; the C has one "#pragma omp parallel
// for" over the same loop with the same body. A benchmark of several
// launches runs them in one target data region (the arrays mapped once,
// temporaries target.Alloc'd); a time-stepped stencil is a host loop of
// launches inside it.
//
//	gemm         C = alpha*A*B + beta*C                Gemm (row i: the k-j loops of PolyBench's i-k-j order)
//	2mm          D = alpha*A*B*C + beta*D              TwoMM1 (tmp = alpha*A*B), TwoMM2 (D = tmp*C + beta*D)
//	3mm          G = (A*B)*(C*D)                       MatMul, launched three times (E, F, G)
//	atax         y = A^T*(A*x)                         AtaxTmp (rows), AtaxY (columns: y[j] sums over i in order)
//	bicg         s = A^T*r, q = A*p                    BicgS (columns), BicgQ (rows)
//	mvt          x1 += A*y1, x2 += A^T*y2              MvtX1, MvtX2
//	gesummv      y = alpha*A*x + beta*B*x              Gesummv
//	syrk         C = alpha*A*A^T + beta*C (lower)      Syrk (row i, j <= i)
//	syr2k        C = alpha*(A*B^T + B*A^T) + beta*C    Syr2k
//	gemver       A += u1*v1^T + u2*v2^T, x = beta*A^T*y + z, w = alpha*A*x
//	                                                   GemverA, GemverX, GemverZ, GemverW
//	jacobi-2d    5-point average, A->B, B->A per step  Jacobi2D (row i), 2 launches a step
//	fdtd-2d      ey, ex, hz field updates per step     FdtdEy (row 0: the source), FdtdEx, FdtdHz
//	heat-3d      7-point heat step, A->B, B->A         Heat3D (plane i), 2 launches a step
//	covariance   column means, centring, m x m cov     ColMean, CovCenter, Cov (row i from the diagonal, mirrored)
//	correlation  means, std devs, centring, corr       ColMean, CorrStddev, CorrCenter, Corr
//
// The plain-Go references (ref.go) are PolyBench's sequential loop nests.
// Every kernel keeps, for every element, the reference's order of
// operations (a sum over k runs in k's order whatever the loop order
// around it), so every device gives the reference's bits; and so does the
// C, built with -ffp-contract=off: the tests compare the hashes of its
// outputs with Go's for every benchmark, and cmd/polybench checks every
// run's outputs against the C's.
//
// # Datasets
//
// PolyBench's MINI, SMALL, MEDIUM and LARGE parameters (Bench.Sizes); LARGE:
//
//	gemm        NI=1000 NJ=1100 NK=1200
//	2mm         NI=800 NJ=900 NK=1100 NL=1200
//	3mm         NI=800 NJ=900 NK=1000 NL=1100 NM=1200
//	atax, bicg  M=1900 N=2100
//	mvt         N=2000
//	gesummv     N=1300
//	syrk, syr2k M=1000 N=1200
//	gemver      N=2000
//	jacobi-2d   TSTEPS=500 N=1300
//	fdtd-2d     TMAX=500 NX=1000 NY=1200
//	heat-3d     TSTEPS=500 N=120
//	covariance, correlation  M=1200 N=1400
//
// # Timing
//
// cmd/polybench times C's parallel regions (omp_get_wtime around the loop
// nests, and around a stencil's loop of time steps; OpenMP's threads are
// started before), and gompt's whole launcher calls: the maps, the
// kernels and the copies back (for several launches, the target data
// region around them). Neither includes the initialisation. It reports
// the low end of the rounds, which interleave the two: each round runs,
// kernel by kernel, the C program and then the kernels on each device.
//
// Mesa's rusticl (RUSTICL_ENABLE=swrast) has no cl_khr_fp64, and refuses
// every kernel at load, as it must; the table says so.
package polybench
