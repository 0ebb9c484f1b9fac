__kernel void scale(long n, float s, __global float *x) {
	for (long i = get_global_id(0); i < n; i += get_global_size(0))
		x[i] *= s;
}
