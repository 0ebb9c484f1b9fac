// saxpy: y[i] = a*x[i] + y[i] for i in [0, n), grid-stride.
__kernel void saxpy(long n, float a, __global const float *x, __global float *y) {
  for (long i = (long)get_global_id(0); i < n; i += (long)get_global_size(0)) {
    y[i] = a * x[i] + y[i];
  }
}
