// matmul: C = A*B, row-major float32; A is m x k, B is k x n, C is m x n.
// Dimension 0 is the column j of C (fastest), dimension 1 the row i; both
// are grid-stride loops.
__kernel void matmul(long m, long n, long k, __global const float *A, __global const float *B, __global float *C) {
  for (long i = (long)get_global_id(1); i < m; i += (long)get_global_size(1)) {
    for (long j = (long)get_global_id(0); j < n; j += (long)get_global_size(0)) {
      float acc = 0.0f;
      for (long p = 0; p < k; p++) {
        acc += A[i * k + p] * B[p * n + j];
      }
      C[i * n + j] = acc;
    }
  }
}
