// fill: x[i] = v for i in [0, n).
// One work-item per element when the NDRange covers [0, n), a grid-stride
// loop otherwise; 32-bit indices when n and the NDRange fit in them.
__kernel void fill(long n, float v, __global float *x) {
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
        x[i] = v;
      } else if (i < m) {
        x[i] = v;
      }
      return;
    }
    for (; i < m; i += (uint)g) {
      x[i] = v;
    }
    return;
  }
  for (long i = (long)get_global_id(0); i < n; i += (long)g) {
    x[i] = v;
  }
}
