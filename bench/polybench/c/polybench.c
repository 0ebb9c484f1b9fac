// The 15 PolyBench/C 4.2 kernels of bench/polybench in C with OpenMP: the
// same loops as the Go kernels (kernels.go), one "#pragma omp parallel
// for" over the outer loop where the Go has one //gompt:kernel, the same
// inner loops and the same order of operations, so that built with
// -ffp-contract=off every result has the Go reference's bits.
//
//	polybench KERNEL P1 [P2 ...]
//
// initialises the arrays as PolyBench does for parameters P1... (in the
// order bench/polybench's Bench.Params gives them), runs the kernel once
// and prints two fields: the seconds spent in its parallel regions
// (omp_get_wtime around the loop nests, the time steps' host loop
// included; not the initialisation nor the start of OpenMP's threads,
// which a parallel region before the timer does), and the FNV-1a 64-bit hash of the
// live-out arrays' bytes, in hex.
//
// cmd/polybench builds it with clang-19 -O3 -march=native
// -ffp-contract=off -fopenmp (libomp).

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef double *restrict vec;

static double *alloc(long n) {
  double *p = calloc(n > 0 ? n : 1, sizeof(double));
  if (!p) {
    fprintf(stderr, "polybench: out of memory\n");
    exit(2);
  }
  return p;
}

static uint64_t hash = 14695981039346656037ull;

static void hash_array(const double *a, long n) {
  for (long i = 0; i < n; i++) {
    uint64_t b;
    memcpy(&b, &a[i], 8);
    for (int k = 0; k < 8; k++) {
      hash ^= (b >> (8 * k)) & 0xff;
      hash *= 1099511628211ull;
    }
  }
}

static double fdiv(long a, long b) { return (double)a / (double)b; }

static double t0, t1;
#define START() (t0 = omp_get_wtime())
#define STOP() (t1 = omp_get_wtime())

static void gemm(int ni, int nj, int nk) {
  double alpha = 1.5, beta = 1.2;
  vec C = alloc((long)ni * nj);
  vec A = alloc((long)ni * nk);
  vec B = alloc((long)nk * nj);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) C[i * nj + j] = fdiv((i * j + 1) % ni, ni);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i * nk + j] = fdiv(i * (j + 1) % nk, nk);
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i * nj + j] = fdiv(i * (j + 2) % nj, nj);
  START();
#pragma omp parallel for
  for (int i = 0; i < ni; i++) {
    double *restrict c = &C[(long)i * nj];
    for (int j = 0; j < nj; j++) c[j] *= beta;
    for (int k = 0; k < nk; k++) {
      double a = alpha * A[(long)i * nk + k];
      const double *restrict b = &B[(long)k * nj];
      for (int j = 0; j < nj; j++) c[j] += a * b[j];
    }
  }
  STOP();
  hash_array(C, (long)ni * nj);
}

static void twomm(int ni, int nj, int nk, int nl) {
  double alpha = 1.5, beta = 1.2;
  vec tmp = alloc((long)ni * nj);
  vec A = alloc((long)ni * nk);
  vec B = alloc((long)nk * nj);
  vec C = alloc((long)nj * nl);
  vec D = alloc((long)ni * nl);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i * nk + j] = fdiv((i * j + 1) % ni, ni);
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i * nj + j] = fdiv(i * (j + 1) % nj, nj);
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nl; j++) C[i * nl + j] = fdiv((i * (j + 3) + 1) % nl, nl);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) D[i * nl + j] = fdiv(i * (j + 2) % nk, nk);
  START();
#pragma omp parallel for
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      double s = 0;
      for (int k = 0; k < nk; k++) s += alpha * A[(long)i * nk + k] * B[(long)k * nj + j];
      tmp[(long)i * nj + j] = s;
    }
#pragma omp parallel for
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nl; j++) {
      double d = D[(long)i * nl + j] * beta;
      for (int k = 0; k < nj; k++) d += tmp[(long)i * nj + k] * C[(long)k * nl + j];
      D[(long)i * nl + j] = d;
    }
  STOP();
  hash_array(D, (long)ni * nl);
}

// matmul is 3mm's product X = P*Q, P ni x nk, Q nk x nj.
static void matmul(int ni, int nj, int nk, vec X, const double *restrict P, const double *restrict Q) {
#pragma omp parallel for
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      double s = 0;
      for (int k = 0; k < nk; k++) s += P[(long)i * nk + k] * Q[(long)k * nj + j];
      X[(long)i * nj + j] = s;
    }
}

static void threemm(int ni, int nj, int nk, int nl, int nm) {
  vec E = alloc((long)ni * nj);
  vec F = alloc((long)nj * nl);
  vec G = alloc((long)ni * nl);
  vec A = alloc((long)ni * nk);
  vec B = alloc((long)nk * nj);
  vec C = alloc((long)nj * nm);
  vec D = alloc((long)nm * nl);
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nk; j++) A[i * nk + j] = fdiv((i * j + 1) % ni, 5 * ni);
  for (int i = 0; i < nk; i++)
    for (int j = 0; j < nj; j++) B[i * nj + j] = fdiv((i * (j + 1) + 2) % nj, 5 * nj);
  for (int i = 0; i < nj; i++)
    for (int j = 0; j < nm; j++) C[i * nm + j] = fdiv(i * (j + 3) % nl, 5 * nl);
  for (int i = 0; i < nm; i++)
    for (int j = 0; j < nl; j++) D[i * nl + j] = fdiv((i * (j + 2) + 2) % nk, 5 * nk);
  START();
  matmul(ni, nj, nk, E, A, B);
  matmul(nj, nl, nm, F, C, D);
  matmul(ni, nl, nj, G, E, F);
  STOP();
  hash_array(G, (long)ni * nl);
}

static void atax(int m, int n) {
  vec A = alloc((long)m * n);
  vec x = alloc(n);
  vec y = alloc(n);
  vec tmp = alloc(m);
  double fn = n;
  for (int i = 0; i < n; i++) x[i] = 1 + i / fn;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) A[i * n + j] = fdiv((i + j) % n, 5 * m);
  START();
#pragma omp parallel for
  for (int i = 0; i < m; i++) {
    double t = 0;
    for (int j = 0; j < n; j++) t = t + A[(long)i * n + j] * x[j];
    tmp[i] = t;
  }
#pragma omp parallel for
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s = s + A[(long)i * n + j] * tmp[i];
    y[j] = s;
  }
  STOP();
  hash_array(y, n);
}

static void bicg(int m, int n) {
  vec A = alloc((long)n * m);
  vec s = alloc(m);
  vec q = alloc(n);
  vec p = alloc(m);
  vec r = alloc(n);
  for (int i = 0; i < m; i++) p[i] = fdiv(i % m, m);
  for (int i = 0; i < n; i++) {
    r[i] = fdiv(i % n, n);
    for (int j = 0; j < m; j++) A[i * m + j] = fdiv(i * (j + 1) % n, n);
  }
  START();
#pragma omp parallel for
  for (int j = 0; j < m; j++) {
    double t = 0;
    for (int i = 0; i < n; i++) t = t + r[i] * A[(long)i * m + j];
    s[j] = t;
  }
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int j = 0; j < m; j++) t = t + A[(long)i * m + j] * p[j];
    q[i] = t;
  }
  STOP();
  hash_array(s, m);
  hash_array(q, n);
}

static void mvt(int n) {
  vec A = alloc((long)n * n);
  vec x1 = alloc(n);
  vec x2 = alloc(n);
  vec y1 = alloc(n);
  vec y2 = alloc(n);
  for (int i = 0; i < n; i++) {
    x1[i] = fdiv(i % n, n);
    x2[i] = fdiv((i + 1) % n, n);
    y1[i] = fdiv((i + 3) % n, n);
    y2[i] = fdiv((i + 4) % n, n);
    for (int j = 0; j < n; j++) A[i * n + j] = fdiv(i * j % n, n);
  }
  START();
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double x = x1[i];
    for (int j = 0; j < n; j++) x = x + A[(long)i * n + j] * y1[j];
    x1[i] = x;
  }
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double x = x2[i];
    for (int j = 0; j < n; j++) x = x + A[(long)j * n + i] * y2[j];
    x2[i] = x;
  }
  STOP();
  hash_array(x1, n);
  hash_array(x2, n);
}

static void gesummv(int n) {
  double alpha = 1.5, beta = 1.2;
  vec A = alloc((long)n * n);
  vec B = alloc((long)n * n);
  vec tmp = alloc(n);
  vec x = alloc(n);
  vec y = alloc(n);
  for (int i = 0; i < n; i++) {
    x[i] = fdiv(i % n, n);
    for (int j = 0; j < n; j++) {
      A[i * n + j] = fdiv((i * j + 1) % n, n);
      B[i * n + j] = fdiv((i * j + 2) % n, n);
    }
  }
  START();
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double t = 0, s = 0;
    for (int j = 0; j < n; j++) {
      t = A[(long)i * n + j] * x[j] + t;
      s = B[(long)i * n + j] * x[j] + s;
    }
    tmp[i] = t;
    y[i] = alpha * t + beta * s;
  }
  STOP();
  hash_array(y, n);
}

static void syrk(int m, int n) {
  double alpha = 1.5, beta = 1.2;
  vec C = alloc((long)n * n);
  vec A = alloc((long)n * m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) A[i * m + j] = fdiv((i * j + 1) % n, n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[i * n + j] = fdiv((i * j + 2) % m, m);
  START();
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[(long)i * n + j] *= beta;
    for (int k = 0; k < m; k++) {
      double a = alpha * A[(long)i * m + k];
      for (int j = 0; j <= i; j++) C[(long)i * n + j] += a * A[(long)j * m + k];
    }
  }
  STOP();
  hash_array(C, (long)n * n);
}

static void syr2k(int m, int n) {
  double alpha = 1.5, beta = 1.2;
  vec C = alloc((long)n * n);
  vec A = alloc((long)n * m);
  vec B = alloc((long)n * m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      A[i * m + j] = fdiv((i * j + 1) % n, n);
      B[i * m + j] = fdiv((i * j + 2) % m, m);
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[i * n + j] = fdiv((i * j + 3) % n, m);
  START();
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[(long)i * n + j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[(long)i * n + j] += A[(long)j * m + k] * alpha * B[(long)i * m + k] + B[(long)j * m + k] * alpha * A[(long)i * m + k];
  }
  STOP();
  hash_array(C, (long)n * n);
}

static void gemver(int n) {
  double alpha = 1.5, beta = 1.2, fn = n;
  vec A = alloc((long)n * n);
  vec u1 = alloc(n), v1 = alloc(n), u2 = alloc(n), v2 = alloc(n);
  vec w = alloc(n), x = alloc(n), y = alloc(n), z = alloc(n);
  for (int i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    for (int j = 0; j < n; j++) A[i * n + j] = fdiv(i * j % n, n);
  }
  START();
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[(long)i * n + j] = A[(long)i * n + j] + u1[i] * v1[j] + u2[i] * v2[j];
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double s = x[i];
    for (int j = 0; j < n; j++) s = s + beta * A[(long)j * n + i] * y[j];
    x[i] = s;
  }
#pragma omp parallel for
  for (int i = 0; i < n; i++) x[i] = x[i] + z[i];
#pragma omp parallel for
  for (int i = 0; i < n; i++) {
    double s = w[i];
    for (int j = 0; j < n; j++) s = s + alpha * A[(long)i * n + j] * x[j];
    w[i] = s;
  }
  STOP();
  hash_array(w, n);
}

static void jacobi_step(int n, const double *restrict in, double *restrict out) {
#pragma omp parallel for
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) {
      long c = (long)i * n + j;
      out[c] = 0.2 * (in[c] + in[c - 1] + in[c + 1] + in[c + n] + in[c - n]);
    }
}

static void jacobi2d(int tsteps, int n) {
  vec A = alloc((long)n * n);
  vec B = alloc((long)n * n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i * n + j] = ((double)i * (j + 2) + 2) / n;
      B[i * n + j] = ((double)i * (j + 3) + 3) / n;
    }
  START();
  for (int t = 0; t < tsteps; t++) {
    jacobi_step(n, A, B);
    jacobi_step(n, B, A);
  }
  STOP();
  hash_array(A, (long)n * n);
}

static void fdtd2d(int tmax, int nx, int ny) {
  vec ex = alloc((long)nx * ny);
  vec ey = alloc((long)nx * ny);
  vec hz = alloc((long)nx * ny);
  vec fict = alloc(tmax);
  for (int i = 0; i < tmax; i++) fict[i] = i;
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      ex[i * ny + j] = ((double)i * (j + 1)) / nx;
      ey[i * ny + j] = ((double)i * (j + 2)) / ny;
      hz[i * ny + j] = ((double)i * (j + 3)) / nx;
    }
  START();
  for (int t = 0; t < tmax; t++) {
    double f = fict[t];
#pragma omp parallel for
    for (int i = 0; i < nx; i++) {
      if (i == 0) {
        for (int j = 0; j < ny; j++) ey[j] = f;
        continue;
      }
      for (int j = 0; j < ny; j++)
        ey[(long)i * ny + j] = ey[(long)i * ny + j] - 0.5 * (hz[(long)i * ny + j] - hz[(long)(i - 1) * ny + j]);
    }
#pragma omp parallel for
    for (int i = 0; i < nx; i++)
      for (int j = 1; j < ny; j++)
        ex[(long)i * ny + j] = ex[(long)i * ny + j] - 0.5 * (hz[(long)i * ny + j] - hz[(long)i * ny + j - 1]);
#pragma omp parallel for
    for (int i = 0; i < nx - 1; i++)
      for (int j = 0; j < ny - 1; j++)
        hz[(long)i * ny + j] = hz[(long)i * ny + j] - 0.7 * (ex[(long)i * ny + j + 1] - ex[(long)i * ny + j] +
                                                             ey[(long)(i + 1) * ny + j] - ey[(long)i * ny + j]);
  }
  STOP();
  hash_array(ex, (long)nx * ny);
  hash_array(ey, (long)nx * ny);
  hash_array(hz, (long)nx * ny);
}

static void heat_step(int n, const double *restrict in, double *restrict out) {
  long nn = (long)n * n;
#pragma omp parallel for
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      for (int k = 1; k < n - 1; k++) {
        long c = ((long)i * n + j) * n + k;
        out[c] = 0.125 * (in[c + nn] - 2.0 * in[c] + in[c - nn]) + 0.125 * (in[c + n] - 2.0 * in[c] + in[c - n]) +
                 0.125 * (in[c + 1] - 2.0 * in[c] + in[c - 1]) + in[c];
      }
}

static void heat3d(int tsteps, int n) {
  long nnn = (long)n * n * n;
  vec A = alloc(nnn);
  vec B = alloc(nnn);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) A[((long)i * n + j) * n + k] = B[((long)i * n + j) * n + k] = (double)(i + j + (n - k)) * 10 / n;
  START();
  for (int t = 1; t <= tsteps; t++) {
    heat_step(n, A, B);
    heat_step(n, B, A);
  }
  STOP();
  hash_array(A, nnn);
}

static void col_mean(int m, int n, double fn, const double *restrict data, double *restrict mean) {
#pragma omp parallel for
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += data[(long)i * m + j];
    mean[j] = s / fn;
  }
}

static void covariance(int m, int n) {
  double fn = n;
  vec data = alloc((long)n * m);
  vec cov = alloc((long)m * m);
  vec mean = alloc(m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i * m + j] = ((double)i * j) / m;
  START();
  col_mean(m, n, fn, data, mean);
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[(long)i * m + j] -= mean[j];
#pragma omp parallel for
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double c = 0;
      for (int k = 0; k < n; k++) c += data[(long)k * m + i] * data[(long)k * m + j];
      c /= fn - 1.0;
      cov[(long)i * m + j] = c;
      cov[(long)j * m + i] = c;
    }
  STOP();
  hash_array(cov, (long)m * m);
}

static void correlation(int m, int n) {
  double fn = n;
  vec data = alloc((long)n * m);
  vec corr = alloc((long)m * m);
  vec mean = alloc(m);
  vec stddev = alloc(m);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i * m + j] = (double)(i * j) / m + i;
  START();
  col_mean(m, n, fn, data, mean);
#pragma omp parallel for
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int i = 0; i < n; i++) {
      double d = data[(long)i * m + j] - mean[j];
      s += d * d;
    }
    s /= fn;
    s = sqrt(s);
    stddev[j] = s <= 0.1 ? 1.0 : s;
  }
#pragma omp parallel for
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      data[(long)i * m + j] -= mean[j];
      data[(long)i * m + j] /= sqrt(fn) * stddev[j];
    }
#pragma omp parallel for
  for (int i = 0; i < m; i++) {
    corr[(long)i * m + i] = 1.0;
    for (int j = i + 1; j < m; j++) {
      double c = 0;
      for (int k = 0; k < n; k++) c += data[(long)k * m + i] * data[(long)k * m + j];
      corr[(long)i * m + j] = c;
      corr[(long)j * m + i] = c;
    }
  }
  STOP();
  hash_array(corr, (long)m * m);
}

static int nargs(const char *name) {
  static const struct {
    const char *name;
    int n;
  } k[] = {{"gemm", 3},      {"2mm", 4},     {"3mm", 5},       {"atax", 2},      {"bicg", 2},
           {"mvt", 1},       {"gesummv", 1}, {"syrk", 2},      {"syr2k", 2},     {"gemver", 1},
           {"jacobi-2d", 2}, {"fdtd-2d", 3}, {"heat-3d", 2},   {"covariance", 2}, {"correlation", 2}};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
    if (strcmp(k[i].name, name) == 0) return k[i].n;
  return -1;
}

int main(int argc, char **argv) {
  if (argc < 2 || nargs(argv[1]) < 0 || argc != 2 + nargs(argv[1])) {
    fprintf(stderr, "usage: polybench KERNEL P1 [P2 ...] (the kernel's PolyBench parameters)\n");
    return 2;
  }
  const char *k = argv[1];
  int p[5] = {0};
  // Start the OpenMP threads before any timer: the first parallel region
  // creates them.
  int threads = 0;
#pragma omp parallel
  {
#pragma omp atomic
    threads++;
  }
  if (threads < 1) return 1;
  for (int i = 2; i < argc; i++) {
    p[i - 2] = atoi(argv[i]);
    if (p[i - 2] < 1) {
      fprintf(stderr, "polybench: parameter %s is not a positive integer\n", argv[i]);
      return 2;
    }
  }
  if (!strcmp(k, "gemm")) gemm(p[0], p[1], p[2]);
  else if (!strcmp(k, "2mm")) twomm(p[0], p[1], p[2], p[3]);
  else if (!strcmp(k, "3mm")) threemm(p[0], p[1], p[2], p[3], p[4]);
  else if (!strcmp(k, "atax")) atax(p[0], p[1]);
  else if (!strcmp(k, "bicg")) bicg(p[0], p[1]);
  else if (!strcmp(k, "mvt")) mvt(p[0]);
  else if (!strcmp(k, "gesummv")) gesummv(p[0]);
  else if (!strcmp(k, "syrk")) syrk(p[0], p[1]);
  else if (!strcmp(k, "syr2k")) syr2k(p[0], p[1]);
  else if (!strcmp(k, "gemver")) gemver(p[0]);
  else if (!strcmp(k, "jacobi-2d")) jacobi2d(p[0], p[1]);
  else if (!strcmp(k, "fdtd-2d")) fdtd2d(p[0], p[1], p[2]);
  else if (!strcmp(k, "heat-3d")) heat3d(p[0], p[1]);
  else if (!strcmp(k, "covariance")) covariance(p[0], p[1]);
  else if (!strcmp(k, "correlation")) correlation(p[0], p[1]);
  printf("%.9f %016llx\n", t1 - t0, (unsigned long long)hash);
  return 0;
}
