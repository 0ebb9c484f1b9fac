// A C tool compiled into the Go program (see main.go).
#include <omp-tools.h>
#include <stdio.h>

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)tool_data;
	printf("linked initialize initial=%d lookup=%d\n", initial_device_num, lookup("ompt_set_callback") != NULL);
	fflush(stdout);
	return 1;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	printf("linked finalize\n");
	fflush(stdout);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	printf("linked ompt_start_tool %u %s\n", omp_version, runtime_version);
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
