// empty: no work. Launch overhead benchmarks use it.
__kernel void empty(long n) {
  (void)n;
}
