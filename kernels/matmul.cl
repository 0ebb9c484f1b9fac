// matmul: C = A*B, row-major float32; A is m x k, B is k x n, C is m x n.
// Dimension 0 is the column j of C (fastest), dimension 1 the row i.
// One work-item per element of C when the NDRange covers C (POCL then
// vectorizes across work-items), grid-stride loops otherwise; 32-bit
// indices when the matrices and the NDRange fit in them, 64-bit ones beyond.
#define MATMUL_POINT(T, i, j)                                                 \
  {                                                                           \
    float acc = 0.0f;                                                         \
    for (T p = 0; p < kk; p++) {                                              \
      acc += A[(i) * kk + p] * B[p * nn + (j)];                               \
    }                                                                         \
    C[(i) * nn + (j)] = acc;                                                  \
  }

__kernel void matmul(long m, long n, long k, __global const float *A, __global const float *B, __global float *C) {
  size_t gx = get_global_size(0), gy = get_global_size(1);
  if (m <= 0 || n <= 0 || k < 0) {
    return;
  }
  if (m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && m * k <= INT_MAX && k * n <= INT_MAX && m * n <= INT_MAX &&
      gx <= INT_MAX && gy <= INT_MAX) {
    uint mm = (uint)m, nn = (uint)n, kk = (uint)k;
    uint j0 = (uint)get_global_id(0), i0 = (uint)get_global_id(1);
    if (gx >= nn && gy >= mm) {
      uint jj = min(j0, nn - 1), ii = min(i0, mm - 1);
      float acc = 0.0f;
      for (uint p = 0; p < kk; p++) {
        acc += A[ii * kk + p] * B[p * nn + jj];
      }
      // The loop runs in every work-item (clamped indices), so POCL runs
      // it around the work-items and vectorizes; only the store is
      // guarded, and not at all in a work-group wholly inside C.
      uint ex = (uint)((get_group_id(0) + 1) * get_local_size(0));
      uint ey = (uint)((get_group_id(1) + 1) * get_local_size(1));
      if (ex <= nn && ey <= mm) {
        C[ii * nn + jj] = acc;
      } else if (j0 < nn && i0 < mm) {
        C[ii * nn + jj] = acc;
      }
      return;
    }
    for (uint i = i0; i < mm; i += (uint)gy) {
      for (uint j = j0; j < nn; j += (uint)gx) {
        MATMUL_POINT(uint, i, j)
      }
    }
    return;
  }
  long nn = n, kk = k;
  for (long i = (long)get_global_id(1); i < m; i += (long)gy) {
    for (long j = (long)get_global_id(0); j < nn; j += (long)gx) {
      MATMUL_POINT(long, i, j)
    }
  }
}
