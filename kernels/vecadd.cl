// vecadd: c[i] = a[i] + b[i] for i in [0, n), grid-stride.
__kernel void vecadd(long n, __global const float *a, __global const float *b, __global float *c) {
  for (long i = (long)get_global_id(0); i < n; i += (long)get_global_size(0)) {
    c[i] = a[i] + b[i];
  }
}
