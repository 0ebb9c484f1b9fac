// copy32: dst[i] = src[i] for i in [0, n), 32-bit words, grid-stride.
__kernel void copy32(long n, __global const int *src, __global int *dst) {
  for (long i = (long)get_global_id(0); i < n; i += (long)get_global_size(0)) {
    dst[i] = src[i];
  }
}
