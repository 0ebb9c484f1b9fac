// oclrun runs one OpenCL C kernel on the first OpenCL device and writes its
// buffers back: the kernels package's tests use it to check each kernel's
// OpenCL image against its Go image on whatever OpenCL implementation is
// installed (POCL on a CPU, say), without the OpenCL plugin.
//
// Usage: oclrun SOURCE.cl ENTRY JOB OUT [OPTIONS]: OPTIONS are the build
// options (an image's Options). JOB (little-endian) holds: dims
// (u32), global[3] and local[3] (u64 each), nargs (u32), then per argument
// a kind (u32: 4 or 8 for a scalar of that many bytes, 0 for a buffer) and
// either 8 bytes of scalar bits or a u64 length and the buffer's bytes. OUT
// receives every buffer's bytes after the launch, in argument order.
// Exit status 77 means no OpenCL platform or device (the test skips).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                         \
  do {                                                                   \
    cl_int err_ = (x);                                                   \
    if (err_ != CL_SUCCESS) {                                            \
      fprintf(stderr, "oclrun: %s: OpenCL error %d\n", #x, (int)err_);   \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  unsigned char *b = malloc((size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) {
    perror(path);
    exit(1);
  }
  b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

static const unsigned char *cur, *end;

static void take(void *dst, size_t n) {
  if ((size_t)(end - cur) < n) {
    fprintf(stderr, "oclrun: job file is truncated\n");
    exit(1);
  }
  memcpy(dst, cur, n);
  cur += n;
}

int main(int argc, char **argv) {
  if (argc != 5 && argc != 6) {
    fprintf(stderr, "usage: oclrun SOURCE.cl ENTRY JOB OUT [OPTIONS]\n");
    return 2;
  }
  size_t srclen, joblen;
  const char *src = (const char *)slurp(argv[1], &srclen);
  unsigned char *job = slurp(argv[3], &joblen);
  cur = job;
  end = job + joblen;

  cl_platform_id platform;
  cl_uint nplat = 0;
  if (clGetPlatformIDs(1, &platform, &nplat) != CL_SUCCESS || nplat == 0) {
    fprintf(stderr, "oclrun: no OpenCL platform\n");
    return 77;
  }
  cl_device_id dev;
  cl_uint ndev = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, &ndev) != CL_SUCCESS || ndev == 0) {
    fprintf(stderr, "oclrun: no OpenCL device\n");
    return 77;
  }
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, &srclen, &err);
  CHECK(err);
  char options[4096];
  snprintf(options, sizeof options, "-cl-std=CL1.2 %s", argc == 6 ? argv[5] : "");
  if (clBuildProgram(prog, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
    static char log[1 << 16];
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "oclrun: build failed:\n%s\n", log);
    return 1;
  }
  cl_kernel k = clCreateKernel(prog, argv[2], &err);
  CHECK(err);

  uint32_t dims, nargs;
  uint64_t global64[3], local64[3];
  take(&dims, 4);
  take(global64, 24);
  take(local64, 24);
  take(&nargs, 4);
  cl_mem *bufs = calloc(nargs, sizeof *bufs);
  size_t *lens = calloc(nargs, sizeof *lens);
  for (uint32_t i = 0; i < nargs; i++) {
    uint32_t kind;
    take(&kind, 4);
    if (kind == 0) {
      uint64_t n;
      take(&n, 8);
      if ((size_t)(end - cur) < n) {
        fprintf(stderr, "oclrun: job file is truncated\n");
        return 1;
      }
      bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n ? n : 4, n ? (void *)cur : (void *)&n, &err);
      CHECK(err);
      cur += n;
      lens[i] = n;
      CHECK(clSetKernelArg(k, i, sizeof(cl_mem), &bufs[i]));
    } else {
      uint64_t bits;
      take(&bits, 8);
      CHECK(clSetKernelArg(k, i, kind, &bits)); /* little-endian: low bytes first */
    }
  }
  size_t global[3], local[3];
  for (int d = 0; d < 3; d++) {
    global[d] = (size_t)global64[d];
    local[d] = (size_t)local64[d];
  }
  CHECK(clEnqueueNDRangeKernel(q, k, dims, NULL, global, local, 0, NULL, NULL));
  CHECK(clFinish(q));

  FILE *out = fopen(argv[4], "wb");
  if (!out) {
    perror(argv[4]);
    return 1;
  }
  for (uint32_t i = 0; i < nargs; i++) {
    if (!bufs[i] || lens[i] == 0) continue;
    void *h = malloc(lens[i]);
    CHECK(clEnqueueReadBuffer(q, bufs[i], CL_TRUE, 0, lens[i], h, 0, NULL, NULL));
    fwrite(h, 1, lens[i], out);
    free(h);
  }
  return fclose(out) == 0 ? 0 : 1;
}
