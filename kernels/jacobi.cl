// jacobi: one 5-point Jacobi step on an nx x ny row-major grid.
// Interior points get the mean of their four neighbours; boundary points are
// copied. Dimension 0 is x (fastest), dimension 1 is y.
// One work-item per point when the NDRange covers the grid (POCL then
// vectorizes across work-items), grid-stride loops otherwise; 32-bit
// indices when the grid and the NDRange fit in them, 64-bit ones beyond.
#define JACOBI_POINT(T, x, y)                                                 \
  {                                                                           \
    T i = (y) * w + (x);                                                      \
    if ((x) == 0 || (y) == 0 || (x) == w - 1 || (y) == h - 1) {               \
      out[i] = in[i];                                                         \
    } else {                                                                  \
      out[i] = 0.25f * (in[i - w] + in[i + w] + in[i - 1] + in[i + 1]);       \
    }                                                                         \
  }

__kernel void jacobi(long nx, long ny, __global const float *in, __global float *out) {
  size_t gx = get_global_size(0), gy = get_global_size(1);
  if (nx <= 0 || ny <= 0) {
    return;
  }
  if (nx <= INT_MAX && ny <= INT_MAX && nx * ny <= INT_MAX && gx <= INT_MAX && gy <= INT_MAX) {
    uint w = (uint)nx, h = (uint)ny;
    uint x0 = (uint)get_global_id(0), y0 = (uint)get_global_id(1);
    if (gx >= w && gy >= h) {
      if (x0 < w && y0 < h) {
        JACOBI_POINT(uint, x0, y0)
      }
      return;
    }
    for (uint y = y0; y < h; y += (uint)gy) {
      for (uint x = x0; x < w; x += (uint)gx) {
        JACOBI_POINT(uint, x, y)
      }
    }
    return;
  }
  long w = nx, h = ny;
  for (long y = (long)get_global_id(1); y < h; y += (long)gy) {
    for (long x = (long)get_global_id(0); x < w; x += (long)gx) {
      JACOBI_POINT(long, x, y)
    }
  }
}
