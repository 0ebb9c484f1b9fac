// A tool registered for every target callback (both forms) and every
// device callback, each returning at once: the cost of the C face.
#include <omp-tools.h>
#include <stddef.h>

static void target_emi(ompt_target_t k, ompt_scope_endpoint_t e, int d, ompt_data_t *t, ompt_data_t *tt, ompt_data_t *td, const void *c) {}
static void target(ompt_target_t k, ompt_scope_endpoint_t e, int d, ompt_data_t *t, ompt_id_t id, const void *c) {}
static void data_op_emi(ompt_scope_endpoint_t e, ompt_data_t *tt, ompt_data_t *td, ompt_id_t *h, ompt_target_data_op_t o, void *s, int sd, void *d, int dd, size_t b, const void *c) {}
static void data_op(ompt_id_t t, ompt_id_t h, ompt_target_data_op_t o, void *s, int sd, void *d, int dd, size_t b, const void *c) {}
static void submit_emi(ompt_scope_endpoint_t e, ompt_data_t *td, ompt_id_t *h, unsigned int n) {}
static void submit(ompt_id_t t, ompt_id_t h, unsigned int n) {}
static void map_emi(ompt_data_t *td, unsigned int n, void **h, void **d, size_t *b, unsigned int *f, const void *c) {}
static void map(ompt_id_t t, unsigned int n, void **h, void **d, size_t *b, unsigned int *f, const void *c) {}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_target_emi, (ompt_callback_t)target_emi);
	set(ompt_callback_target, (ompt_callback_t)target);
	set(ompt_callback_target_data_op_emi, (ompt_callback_t)data_op_emi);
	set(ompt_callback_target_data_op, (ompt_callback_t)data_op);
	set(ompt_callback_target_submit_emi, (ompt_callback_t)submit_emi);
	set(ompt_callback_target_submit, (ompt_callback_t)submit);
	set(ompt_callback_target_map_emi, (ompt_callback_t)map_emi);
	set(ompt_callback_target_map, (ompt_callback_t)map);
	return 1;
}

static void finalize(ompt_data_t *tool_data) {}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
