// dot_partial: partial[t] = sum of x[i]*y[i] over team t's share of [0, n).
//
// Team t (work-group t of get_num_groups(0)) owns the contiguous chunk
// [t*c, min(n, (t+1)*c)) with c = ceil(n / teams), the same split a host
// device makes of dimension 0, so every device writes the same partials.
// The team's threads stride over the chunk, then a tree reduction in local
// memory sums their values. Any team size up to DOT_MAX_THREADS works (a
// power of two is fastest); the caller sums the partials.
#define DOT_MAX_THREADS 256

__kernel void dot_partial(long n, __global const float *x, __global const float *y, __global float *partial) {
  __local float scratch[DOT_MAX_THREADS];
  long teams = (long)get_num_groups(0);
  long team = (long)get_group_id(0);
  long lid = (long)get_local_id(0);
  long lsz = (long)get_local_size(0);
  long chunk = (n + teams - 1) / teams;
  long lo = team * chunk;
  long hi = lo + chunk < n ? lo + chunk : n;

  float sum = 0.0f;
  for (long i = lo + lid; i < hi; i += lsz) {
    sum += x[i] * y[i];
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);

  long p = 1;
  while (p < lsz) {
    p <<= 1;
  }
  for (long s = p >> 1; s > 0; s >>= 1) {
    if (lid < s && lid + s < lsz) {
      scratch[lid] += scratch[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    partial[team] = scratch[0];
  }
}
