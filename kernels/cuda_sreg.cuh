// cuda_sreg.cuh: the few CUDA C names gompt's CUDA kernels use, for clang
// with -nocudainc (no CUDA toolkit): the __global__/__device__/__shared__
// qualifiers and threadIdx, blockIdx, blockDim, gridDim read from the PTX
// special registers through clang's __nvvm_read_ptx_sreg_* builtins.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))

#define GOMPT_SREG(T, NAME, R)                                                                \
  struct T {                                                                                  \
    __declspec(property(get = __get_x)) unsigned int x;                                       \
    __declspec(property(get = __get_y)) unsigned int y;                                       \
    __declspec(property(get = __get_z)) unsigned int z;                                       \
    static __device__ __forceinline__ unsigned int __get_x() { return __nvvm_read_ptx_sreg_##R##_x(); } \
    static __device__ __forceinline__ unsigned int __get_y() { return __nvvm_read_ptx_sreg_##R##_y(); } \
    static __device__ __forceinline__ unsigned int __get_z() { return __nvvm_read_ptx_sreg_##R##_z(); } \
  };                                                                                          \
  extern const __device__ T NAME;

GOMPT_SREG(gompt_threadIdx_t, threadIdx, tid)
GOMPT_SREG(gompt_blockIdx_t, blockIdx, ctaid)
GOMPT_SREG(gompt_blockDim_t, blockDim, ntid)
GOMPT_SREG(gompt_gridDim_t, gridDim, nctaid)
