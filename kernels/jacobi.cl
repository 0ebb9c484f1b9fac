// jacobi: one 5-point Jacobi step on an nx x ny row-major grid.
// Interior points get the mean of their four neighbours; boundary points are
// copied. Dimension 0 is x (fastest), dimension 1 is y; grid-stride loops.
__kernel void jacobi(long nx, long ny, __global const float *in, __global float *out) {
  for (long y = (long)get_global_id(1); y < ny; y += (long)get_global_size(1)) {
    for (long x = (long)get_global_id(0); x < nx; x += (long)get_global_size(0)) {
      long i = y * nx + x;
      if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        out[i] = in[i];
      } else {
        out[i] = 0.25f * (in[i - nx] + in[i + nx] + in[i - 1] + in[i + 1]);
      }
    }
  }
}
