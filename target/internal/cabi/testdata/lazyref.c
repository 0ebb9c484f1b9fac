// A tool that calls a function no library defines, on a path it never
// takes: LLVM's libomp opens tools with RTLD_LAZY, so it loads (and its
// ompt_start_tool, which declines, runs); with RTLD_NOW it would not.
#include <omp-tools.h>
#include <stdlib.h>

extern void gompt_test_never_defined(void);

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version;
	(void)runtime_version;
	if (getenv("LAZYREF_NEVER_SET_THIS") != NULL) {
		gompt_test_never_defined();
	}
	return NULL;
}
