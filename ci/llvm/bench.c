// The same cases as ompt-bench's empty_target and target_tofrom_4KiB,
// through LLVM's libomptarget and its host (x86_64) offload plugin, for a
// side-by-side comparison. Built and run by ci/llvm/bench.sh.
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static float x[1024];

static void empty_target(void) {
#pragma omp target
	{
	}
}

static void tofrom_4k(void) {
#pragma omp target map(tofrom : x[0:1024])
	{
		x[0] += 1;
	}
}

static void run(const char *name, const char *dev, void (*f)(void), double seconds) {
	for (int i = 0; i < 1000; i++) f(); /* warm up: plugin and image load */
	long n = 1000;
	double t0, t;
	for (;;) {
		t0 = now();
		for (long i = 0; i < n; i++) f();
		t = now() - t0;
		if (t >= seconds * 1e9) break;
		n *= 2;
	}
	printf("{\"name\":\"%s\",\"device\":\"%s\",\"ns_per_op\":%.1f,\"iterations\":%ld}\n", name, dev, t / n, n);
}

int main(int argc, char **argv) {
	const char *dev = argc > 1 ? argv[1] : "llvm";
	if (omp_get_num_devices() < 1) {
		fprintf(stderr, "bench: libomptarget found no offload device\n");
		return 1;
	}
	run("empty_target", dev, empty_target, 1.0);
	run("target_tofrom_4KiB", dev, tofrom_4k, 1.0);
	return 0;
}
