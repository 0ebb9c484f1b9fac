// A tool whose ompt_start_tool declines (returns NULL); it records that it
// was asked in $MARK_FILE.
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	const char *m = getenv("MARK_FILE");
	FILE *f = m ? fopen(m, "a") : NULL;
	if (f) {
		fprintf(f, "nullstart asked omp_version=%u runtime_version=%s\n", omp_version, runtime_version);
		fclose(f);
	}
	return NULL;
}
