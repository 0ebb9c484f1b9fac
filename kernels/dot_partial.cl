// dot_partial: partial[t] = sum of x[i]*y[i] over team t's share of [0, n).
//
// Team t (work-group t of get_num_groups(0)) owns the contiguous chunk
// [t*c, min(n, (t+1)*c)) with c = ceil(n / teams), the same split a host
// device makes of dimension 0, so every device writes the same partials.
// The team's threads stride over the chunk (one element each when the
// chunk is no longer than the team), then a tree reduction in local
// memory sums their values. Any team size up to DOT_MAX_THREADS works (a
// power of two is fastest); the caller sums the partials. Indices are
// 32-bit when n fits in them, 64-bit beyond.
#define DOT_MAX_THREADS 256

__kernel void dot_partial(long n, __global const float *x, __global const float *y, __global float *partial) {
  __local float scratch[DOT_MAX_THREADS];
  uint teams = (uint)get_num_groups(0);
  uint team = (uint)get_group_id(0);
  uint lid = (uint)get_local_id(0);
  uint lsz = (uint)get_local_size(0);

  float sum = 0.0f;
  if (n > 0 && n <= INT_MAX) {
    uint m = (uint)n;
    uint chunk = (m - 1) / teams + 1;
    uint lo = team * chunk; // below m + teams: no overflow
    uint hi = min(lo + chunk, m);
    if (chunk <= lsz) {
      uint i = lo + lid;
      if (i < hi) {
        sum += x[i] * y[i];
      }
    } else {
      for (uint i = lo + lid; i < hi; i += lsz) {
        sum += x[i] * y[i];
      }
    }
  } else if (n > 0) {
    long chunk = (n - 1) / (long)teams + 1;
    long lo = (long)team * chunk;
    long hi = lo + chunk < n ? lo + chunk : n;
    for (long i = lo + (long)lid; i < hi; i += (long)lsz) {
      sum += x[i] * y[i];
    }
  }
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);

  uint p = 1;
  while (p < lsz) {
    p <<= 1;
  }
  for (uint s = p >> 1; s > 0; s >>= 1) {
    if (lid < s && lid + s < lsz) {
      scratch[lid] += scratch[lid + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    partial[team] = scratch[0];
  }
}
