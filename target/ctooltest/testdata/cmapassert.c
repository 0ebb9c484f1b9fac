// cmapassert: a C tool for the tests of package ctooltest that registers
// target_map and target_map_emi as LLVM's omptest does, and, like it,
// asserts (abort) when either is called: LLVM's runtime never dispatches
// them. It writes "ma ..." lines to $CT_OUTPUT: what set_callback
// answered, and at finalize the target regions it saw.
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *out;
static long targets;

static void on_map_emi(ompt_data_t *td, unsigned int n, void **h, void **d, size_t *b, unsigned int *f, const void *c) {
	(void)td; (void)n; (void)h; (void)d; (void)b; (void)f; (void)c;
	fprintf(stderr, "cmapassert: target_map_emi called, which LLVM never dispatches\n");
	abort();
}

static void on_map(ompt_id_t t, unsigned int n, void **h, void **d, size_t *b, unsigned int *f, const void *c) {
	(void)t; (void)n; (void)h; (void)d; (void)b; (void)f; (void)c;
	fprintf(stderr, "cmapassert: target_map called, which LLVM never dispatches\n");
	abort();
}

static void on_target_emi(ompt_target_t k, ompt_scope_endpoint_t e, int dev, ompt_data_t *task, ompt_data_t *ttd,
                          ompt_data_t *td, const void *code) {
	(void)k; (void)dev; (void)task; (void)ttd; (void)td; (void)code;
	if (e == ompt_scope_end) __atomic_add_fetch(&targets, 1, __ATOMIC_SEQ_CST);
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)initial_device_num; (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	ompt_get_callback_t get = (ompt_get_callback_t)lookup("ompt_get_callback");
	int r1 = set(ompt_callback_target_map_emi, (ompt_callback_t)on_map_emi);
	int r2 = set(ompt_callback_target_map, (ompt_callback_t)on_map);
	set(ompt_callback_target_emi, (ompt_callback_t)on_target_emi);
	ompt_callback_t cb = NULL;
	int g = get(ompt_callback_target_map_emi, &cb);
	fprintf(out, "ma set_callback target_map_emi=%d target_map=%d get_callback=%d\n", r1, r2, g);
	fflush(out);
	return 1;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	fprintf(out, "ma finalize targets=%ld\n", __atomic_load_n(&targets, __ATOMIC_SEQ_CST));
	fflush(out);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version; (void)runtime_version;
	const char *f = getenv("CT_OUTPUT");
	out = f ? fopen(f, "a") : stdout;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
