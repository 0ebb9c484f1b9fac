// vecadd: c[i] = a[i] + b[i] for i in [0, n).
// One work-item per element when the NDRange covers [0, n), a grid-stride
// loop otherwise; 32-bit indices when n and the NDRange fit in them.
__kernel void vecadd(long n, __global const float *a, __global const float *b, __global float *c) {
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
        c[i] = a[i] + b[i];
      } else if (i < m) {
        c[i] = a[i] + b[i];
      }
      return;
    }
    for (; i < m; i += (uint)g) {
      c[i] = a[i] + b[i];
    }
    return;
  }
  for (long i = (long)get_global_id(0); i < n; i += (long)g) {
    c[i] = a[i] + b[i];
  }
}
