// saxpy_cuda: saxpy written in CUDA C, the example of a kernel whose PTX
// comes from CUDA rather than OpenCL C. y[i] = a*x[i] + y[i], grid-stride.
#include "cuda_sreg.cuh"

extern "C" __global__ void saxpy_cuda(long long n, float a, const float *x, float *y) {
  long long stride = (long long)blockDim.x * gridDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = a * x[i] + y[i];
  }
}
