// A tool whose initializer returns 0; it records each call in $MARK_FILE.
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static void mark(const char *what) {
	const char *m = getenv("MARK_FILE");
	FILE *f = m ? fopen(m, "a") : NULL;
	if (f) {
		fprintf(f, "init0 %s\n", what);
		fclose(f);
	}
}

static void on_target(ompt_target_t k, ompt_scope_endpoint_t e, int d, ompt_data_t *t, ompt_id_t id, const void *c) {
	(void)k; (void)e; (void)d; (void)t; (void)id; (void)c;
	mark("target event");
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)initial_device_num; (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_target, (ompt_callback_t)on_target);
	mark("initialize");
	return 0;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	mark("finalize");
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version; (void)runtime_version;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	mark("start_tool");
	return &r;
}
