// fill: x[i] = v for i in [0, n), grid-stride.
__kernel void fill(long n, float v, __global float *x) {
  for (long i = (long)get_global_id(0); i < n; i += (long)get_global_size(0)) {
    x[i] = v;
  }
}
