// cversion prints what a C tool sees of each data operation, in the line
// format of versiontest's Go tool (child_test.go), to stdout: omp_version,
// initial_device_num, whether the device lookup resolves OpenMP 6.0's
// ompt_get_buffer_limits and what it answers, target_emi and
// target_data_op_emi events (a transfer_rect's sides read through
// ompt_subvolume_t), and every data-op trace record.
#include <inttypes.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// OpenMP 6.0's, which LLVM 19's omp-tools.h lacks.
typedef struct {
	const void *base;
	uint64_t size;
	uint64_t num_dims;
	const uint64_t *volume;
	const uint64_t *offsets;
	const uint64_t *dimensions;
} subvolume_60;
typedef int (*get_buffer_limits_60)(ompt_device_t *, int *, size_t *);
enum { transfer_rect_60 = 9, transfer_rect_async_60 = 25 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ompt_get_record_ompt_t get_record_ompt;
static ompt_advance_buffer_cursor_t advance;

static void list(char *b, size_t n, const uint64_t *v, uint64_t k) {
	size_t o = snprintf(b, n, "[");
	for (uint64_t i = 0; i < k && o < n; i++) o += snprintf(b + o, n - o, i ? " %" PRIu64 : "%" PRIu64, v[i]);
	if (o < n) snprintf(b + o, n - o, "]");
}

static void side(char *b, size_t n, const char *name, const void *p) {
	const subvolume_60 *s = p;
	char vol[64], off[64], dims[64];
	list(vol, sizeof vol, s->volume, s->num_dims);
	list(off, sizeof off, s->offsets, s->num_dims);
	list(dims, sizeof dims, s->dimensions, s->num_dims);
	snprintf(b, n, " %s base=%#" PRIxPTR " size=%" PRIu64 " ndims=%" PRIu64 " vol=%s off=%s dims=%s", name, (uintptr_t)s->base,
		s->size, s->num_dims, vol, off, dims);
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task, ompt_data_t *ttd,
	ompt_data_t *td, const void *code) {
	pthread_mutex_lock(&mu);
	printf("target %s kind=%d dev=%d\n", ep == ompt_scope_begin ? "begin" : "end", kind, dev);
	fflush(stdout);
	pthread_mutex_unlock(&mu);
}

static void on_data_op(ompt_scope_endpoint_t ep, ompt_data_t *ttd, ompt_data_t *td, ompt_id_t *hop, ompt_target_data_op_t op,
	void *src, int src_dev, void *dst, int dst_dev, size_t bytes, const void *code) {
	char a[256] = "", b[256] = "";
	if ((int)op == transfer_rect_60 || (int)op == transfer_rect_async_60) {
		side(a, sizeof a, "src", src);
		side(b, sizeof b, "dest", dst);
	}
	pthread_mutex_lock(&mu);
	printf("op %s kind=%d src_dev=%d dest_dev=%d bytes=%zu%s%s\n", ep == ompt_scope_begin ? "begin" : "end", op, src_dev, dst_dev,
		bytes, a, b);
	fflush(stdout);
	pthread_mutex_unlock(&mu);
}

static void request(int dev, ompt_buffer_t **buf, size_t *bytes) {
	*bytes = 1 << 16;
	*buf = malloc(*bytes);
}

static void complete(int dev, ompt_buffer_t *buf, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	ompt_buffer_cursor_t cur = begin;
	pthread_mutex_lock(&mu);
	while (bytes > 0) {
		ompt_record_ompt_t *r = get_record_ompt(buf, cur);
		if (r != NULL && r->type == ompt_callback_target_data_op) {
			ompt_record_target_data_op_t *d = &r->record.target_data_op;
			printf("rec kind=%d src_dev=%d dest_dev=%d bytes=%zu src=%#" PRIxPTR " dest=%#" PRIxPTR "\n", d->optype, d->src_device_num,
				d->dest_device_num, d->bytes, (uintptr_t)d->src_addr, (uintptr_t)d->dest_addr);
		}
		if (!advance(NULL, buf, bytes, cur, &cur)) break;
	}
	fflush(stdout);
	pthread_mutex_unlock(&mu);
	if (owned) free(buf);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *doc) {
	get_buffer_limits_60 limits = (get_buffer_limits_60)lookup("ompt_get_buffer_limits");
	pthread_mutex_lock(&mu);
	if (limits != NULL) {
		int max = -7;
		size_t rec = 7;
		int ok = limits(device, &max, &rec);
		printf("buffer_limits dev=%d resolved=1 max=%d bytes=%zu ok=%s\n", dev, max, rec, ok ? "true" : "false");
	} else {
		printf("buffer_limits dev=%d resolved=0\n", dev);
	}
	fflush(stdout);
	pthread_mutex_unlock(&mu);
	get_record_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	((ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt"))(device, 1, 0);
	((ompt_start_trace_t)lookup("ompt_start_trace"))(device, request, complete);
}

static int initialize(ompt_function_lookup_t lookup, int initial, ompt_data_t *data) {
	printf("init initial_device_num=%d\n", initial);
	fflush(stdout);
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_target_emi, (ompt_callback_t)on_target);
	set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op);
	set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
	return 1;
}

static void finalize(ompt_data_t *data) {}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	printf("start omp_version=%u\n", version);
	fflush(stdout);
	return &r;
}
