// nativetool: a C OMPT tool that traces every device's native records and
// writes each one, read through ompt_get_record_native and
// ompt_get_record_abstract, as a "native ..." line to $NATIVE_OUTPUT. It
// reads the record as the test plugin's layout (testplugin.Record); the
// Go test checks the fields against the abstract record and the plugin.
#include <omp-tools.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

// testplugin.Record
struct testplugin_record {
	int64_t start, end;
	uint32_t seq, op;
	uint64_t magic;
};

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ompt_set_trace_native_t set_trace_native;
static ompt_start_trace_t start_trace;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_type_t get_type;
static ompt_get_record_native_t get_native;
static ompt_get_record_abstract_t get_abstract;

static void on_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
	(void)dev;
	*bytes = 1 << 16;
	*buffer = malloc(*bytes);
	if (*buffer == NULL) *bytes = 0;
}

static void on_complete(int dev, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	ompt_buffer_cursor_t cur = begin;
	int more = bytes > 0;
	while (more) {
		if (get_type(buffer, cur) == ompt_record_native) {
			ompt_id_t hop = 0;
			struct testplugin_record *r = get_native(buffer, cur, &hop);
			ompt_record_abstract_t *a = r ? get_abstract(r) : NULL;
			pthread_mutex_lock(&mu);
			if (a == NULL) {
				fprintf(out, "error dev=%d: no native or abstract record\n", dev);
			} else {
				fprintf(out, "native dev=%d class=%d type=\"%s\" start=%" PRIu64 " end=%" PRIu64 " hwid=%" PRIu64
					" rec_start=%" PRId64 " rec_end=%" PRId64 " seq=%" PRIu32 " op=%" PRIu32 " magic=0x%" PRIx64 " host_op_id=%" PRIu64 "\n",
					dev, (int)a->rclass, a->type, a->start_time, a->end_time, a->hwid,
					r->start, r->end, r->seq, r->op, r->magic, hop);
			}
			pthread_mutex_unlock(&mu);
		}
		more = advance(NULL, buffer, bytes, cur, &cur);
	}
	if (owned) free(buffer);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *d, ompt_function_lookup_t lookup, const char *doc) {
	(void)doc;
	set_trace_native = (ompt_set_trace_native_t)lookup("ompt_set_trace_native");
	start_trace = (ompt_start_trace_t)lookup("ompt_start_trace");
	advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	get_type = (ompt_get_record_type_t)lookup("ompt_get_record_type");
	get_native = (ompt_get_record_native_t)lookup("ompt_get_record_native");
	get_abstract = (ompt_get_record_abstract_t)lookup("ompt_get_record_abstract");
	if (!set_trace_native || !start_trace || !advance || !get_type || !get_native || !get_abstract) {
		fprintf(out, "error dev=%d: a tracing entry point is missing\n", dev);
		return;
	}
	int native = set_trace_native(d, 1, ompt_native_data_motion_explicit | ompt_native_kernel_execution);
	int started = start_trace(d, on_request, on_complete);
	pthread_mutex_lock(&mu);
	fprintf(out, "device dev=%d type=\"%s\" set_trace_native=%d start_trace=%d\n", dev, type, native, started);
	pthread_mutex_unlock(&mu);
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *data) {
	(void)initial_device_num;
	(void)data;
	const char *path = getenv("NATIVE_OUTPUT");
	out = path ? fopen(path, "w") : NULL;
	if (out == NULL) return 0;
	ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	set_callback(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
	return 1;
}

static void finalize(ompt_data_t *data) {
	(void)data;
	pthread_mutex_lock(&mu);
	fprintf(out, "final\n");
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&mu);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version;
	(void)runtime_version;
	static ompt_start_tool_result_t result = {initialize, finalize, {0}};
	return &result;
}
