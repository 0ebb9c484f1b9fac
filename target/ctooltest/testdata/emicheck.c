// emicheck is gompt's test of what tools written for LLVM's runtime rely
// on: an EMI tool that registers target_emi, target_data_op_emi,
// target_submit_emi and target_map_emi, dereferences every EMI slot it is
// given (target_data and host_op_id always, task_data always,
// target_task_data where not NULL), writes its own ids into them at the
// begin events (from 0x8000000000000001, as LLVM's tests do), checks that
// ompt_get_target_info answers with those ids inside the callbacks and
// that the slots still hold them at the end events, traces every device
// it is told of, and joins every trace record to its callbacks by its own
// ids. It is built by ctooltest's tests against omp-tools.h.
//
// Output (to $EMICHECK_OUTPUT, else stderr): "emicheck error: ..." for
// each failed check (at most 50), then at finalize one line
// "emicheck summary constructs=N ops=N submits=N routine_ops=N
// target_records=N op_records=N kernel_records=N joined=N unjoined=N
// ids_written=N".
#include <inttypes.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_ID ((uint64_t)0x8000000000000001ULL)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static int nerrors;
static uint64_t next_id = FIRST_ID;
static ompt_get_target_info_t get_target_info;
static ompt_function_lookup_t lookup0;

// What the callbacks saw, by the ids the tool wrote.
struct construct {
	uint64_t id;
	int kind, device, ended, records;
};
struct op {
	uint64_t id, target; // target: the target_data value at begin (0 for a device memory routine)
	int kind;            // ompt_target_data_op_t, or -1 for a submit
	size_t bytes;
	int src_dev, dst_dev, ended, records;
};
static struct construct *cons;
static size_t ncons, capcons;
static struct op *ops;
static size_t nops, capops;
static int target_records, op_records, kernel_records, unjoined;

static void fail(const char *fmt, ...) {
	va_list ap;
	if (++nerrors > 50) return;
	fprintf(out, "emicheck error: ");
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fprintf(out, "\n");
	fflush(out);
}

static struct construct *find_construct(uint64_t id) {
	for (size_t i = ncons; i-- > 0;)
		if (cons[i].id == id) return &cons[i];
	return NULL;
}

static struct op *find_op(uint64_t id) {
	for (size_t i = nops; i-- > 0;)
		if (ops[i].id == id) return &ops[i];
	return NULL;
}

static uint64_t fresh_id(void) { return next_id++; }

static int initial_device = -2; // initial_device_num, from initialize

// check_info checks ompt_get_target_info inside a construct's callback:
// it must answer the tool's own target id and, during an operation, the
// tool's own host_op_id.
static void check_info(const char *what, int device, uint64_t target, const uint64_t *host_op) {
	uint64_t dev = 0;
	ompt_id_t tid = 0, hop = 0;
	if (!get_target_info(&dev, &tid, &hop)) {
		fail("%s: ompt_get_target_info answers 0 inside a construct", what);
		return;
	}
	if ((int)dev != device || tid != target) fail("%s: ompt_get_target_info device %" PRIu64 " target_id 0x%" PRIx64 ", the tool's are %d and 0x%" PRIx64, what, dev, tid, device, target);
	if (host_op != NULL && hop != *host_op) fail("%s: ompt_get_target_info host_op_id 0x%" PRIx64 ", the tool wrote 0x%" PRIx64, what, hop, *host_op);
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int device, ompt_data_t *task_data,
			  ompt_data_t *target_task_data, ompt_data_t *target_data, const void *code) {
	pthread_mutex_lock(&mu);
	// Every slot is dereferenced, as LLVM's tools do.
	volatile uint64_t v = task_data->value + target_data->value;
	if (target_task_data != NULL) v += target_task_data->value;
	(void)v;
	if (code == NULL) fail("target %d: codeptr_ra is NULL", kind);
	if (ep == ompt_scope_begin) {
		if (target_data->value != 0) fail("target begin: target_data holds 0x%" PRIx64 ", want 0 (a fresh slot)", target_data->value);
		target_data->value = fresh_id();
		if (ncons == capcons) {
			capcons = capcons ? 2 * capcons : 64;
			cons = realloc(cons, capcons * sizeof *cons);
		}
		cons[ncons++] = (struct construct){.id = target_data->value, .kind = kind, .device = device};
		check_info("target begin", device, target_data->value, NULL);
	} else {
		struct construct *c = find_construct(target_data->value);
		if (c == NULL) fail("target end: target_data holds 0x%" PRIx64 ", which the tool never wrote", target_data->value);
		else c->ended++;
		check_info("target end", device, target_data->value, NULL);
	}
	pthread_mutex_unlock(&mu);
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task_data, ompt_data_t *target_data,
			   ompt_id_t *host_op_id, ompt_target_data_op_t optype, void *src, int src_dev, void *dst,
			   int dst_dev, size_t bytes, const void *code) {
	pthread_mutex_lock(&mu);
	volatile uint64_t v = target_data->value + *host_op_id;
	if (target_task_data != NULL) v += target_task_data->value;
	(void)v;
	(void)src;
	(void)dst;
	if (code == NULL) fail("data op %d: codeptr_ra is NULL", optype);
	int routine = target_data->value == 0 || find_construct(target_data->value) == NULL;
	if (ep == ompt_scope_begin) {
		*host_op_id = fresh_id();
		if (nops == capops) {
			capops = capops ? 2 * capops : 256;
			ops = realloc(ops, capops * sizeof *ops);
		}
		ops[nops++] = (struct op){.id = *host_op_id, .target = routine ? 0 : target_data->value, .kind = optype,
					  .bytes = bytes, .src_dev = src_dev, .dst_dev = dst_dev};
		if (!routine) {
			// the host is initial_device_num, or omp_initial_device (-1),
			// which GOMPT_TOOL_PROFILE=llvm gives data ops, as LLVM does
			int dev = src_dev != initial_device && src_dev >= 0 ? src_dev : dst_dev;
			check_info("data op begin", dev, target_data->value, host_op_id);
		}
	} else {
		struct op *o = find_op(*host_op_id);
		if (o == NULL || o->kind != (int)optype) fail("data op %d end: host_op_id slot holds 0x%" PRIx64 ", not the id the tool wrote at its begin", optype, *host_op_id);
		else o->ended++;
		if (o != NULL && o->target != (routine ? 0 : target_data->value)) fail("data op end: target_data changed from 0x%" PRIx64 " to 0x%" PRIx64, o->target, target_data->value);
	}
	pthread_mutex_unlock(&mu);
}

static void on_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_data, ompt_id_t *host_op_id, unsigned int teams) {
	pthread_mutex_lock(&mu);
	volatile uint64_t v = target_data->value + *host_op_id;
	(void)v;
	(void)teams;
	struct construct *c = find_construct(target_data->value);
	if (c == NULL) fail("submit: target_data holds 0x%" PRIx64 ", which the tool never wrote", target_data->value);
	if (ep == ompt_scope_begin) {
		*host_op_id = fresh_id();
		if (nops == capops) {
			capops = capops ? 2 * capops : 256;
			ops = realloc(ops, capops * sizeof *ops);
		}
		ops[nops++] = (struct op){.id = *host_op_id, .target = target_data->value, .kind = -1};
		if (c != NULL) check_info("submit begin", c->device, target_data->value, host_op_id);
	} else {
		struct op *o = find_op(*host_op_id);
		if (o == NULL || o->kind != -1) fail("submit end: host_op_id slot holds 0x%" PRIx64 ", not the id the tool wrote", *host_op_id);
		else o->ended++;
	}
	pthread_mutex_unlock(&mu);
}

static void on_map_emi(ompt_data_t *target_data, unsigned int n, void **host, void **dev, size_t *bytes, unsigned int *flags, const void *code) {
	pthread_mutex_lock(&mu);
	if (find_construct(target_data->value) == NULL) fail("target_map: target_data holds 0x%" PRIx64 ", which the tool never wrote", target_data->value);
	for (unsigned int i = 0; i < n; i++)
		if (host[i] == NULL || bytes[i] == 0 || flags[i] == 0) fail("target_map: item %u: host %p bytes %zu flags %u", i, host[i], bytes[i], flags[i]);
	(void)dev;
	(void)code;
	pthread_mutex_unlock(&mu);
}

// Tracing.
static ompt_get_record_ompt_t get_record_ompt;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_type_t get_record_type;

static void buffer_request(int dev, ompt_buffer_t **buf, size_t *bytes) {
	(void)dev;
	*bytes = 1 << 16;
	*buf = malloc(*bytes);
	if (*buf == NULL) *bytes = 0;
}

static void join(const ompt_record_ompt_t *r) {
	switch (r->type) {
	case ompt_callback_target:
	case ompt_callback_target_emi: {
		target_records++;
		struct construct *c = find_construct(r->target_id);
		if (c == NULL) {
			unjoined++;
			fail("target record: target_id 0x%" PRIx64 " is not an id the tool wrote", r->target_id);
		} else {
			c->records++;
			if (r->record.target.device_num != c->device || (int)r->record.target.kind != c->kind) fail("target record 0x%" PRIx64 ": device %d kind %d, the callbacks said %d and %d", r->target_id, r->record.target.device_num, r->record.target.kind, c->device, c->kind);
		}
		break;
	}
	case ompt_callback_target_data_op:
	case ompt_callback_target_data_op_emi: {
		op_records++;
		const ompt_record_target_data_op_t *d = &r->record.target_data_op;
		struct op *o = find_op(d->host_op_id);
		if (o == NULL || o->kind < 0) {
			unjoined++;
			fail("data-op record: host_op_id 0x%" PRIx64 " is not a data op id the tool wrote", d->host_op_id);
			break;
		}
		o->records++;
		if (o->target != 0 && r->target_id != o->target) fail("data-op record 0x%" PRIx64 ": target_id 0x%" PRIx64 ", the callbacks' construct is 0x%" PRIx64, d->host_op_id, r->target_id, o->target);
		if ((int)d->optype != o->kind || d->bytes != o->bytes || d->src_device_num != o->src_dev || d->dest_device_num != o->dst_dev)
			fail("data-op record 0x%" PRIx64 ": optype %d bytes %zu devices %d->%d, the callbacks said %d %zu %d->%d", d->host_op_id, d->optype, d->bytes, d->src_device_num, d->dest_device_num, o->kind, o->bytes, o->src_dev, o->dst_dev);
		if (d->end_time < r->time) fail("data-op record 0x%" PRIx64 ": ends before it begins", d->host_op_id);
		break;
	}
	case ompt_callback_target_submit:
	case ompt_callback_target_submit_emi: {
		kernel_records++;
		const ompt_record_target_kernel_t *k = &r->record.target_kernel;
		struct op *o = find_op(k->host_op_id);
		if (o == NULL || o->kind != -1) {
			unjoined++;
			fail("kernel record: host_op_id 0x%" PRIx64 " is not a submit id the tool wrote", k->host_op_id);
			break;
		}
		o->records++;
		if (r->target_id != o->target) fail("kernel record 0x%" PRIx64 ": target_id 0x%" PRIx64 ", the callbacks' construct is 0x%" PRIx64, k->host_op_id, r->target_id, o->target);
		if (k->granted_num_teams == 0) fail("kernel record 0x%" PRIx64 ": 0 granted teams", k->host_op_id);
		break;
	}
	default:
		break;
	}
}

static void buffer_complete(int dev, ompt_buffer_t *buf, size_t bytes, ompt_buffer_cursor_t cur, int owned) {
	(void)dev;
	pthread_mutex_lock(&mu);
	while (bytes > 0) {
		if (get_record_type(buf, cur) == ompt_record_ompt) join(get_record_ompt(buf, cur));
		ompt_buffer_cursor_t next;
		if (!advance(NULL, buf, bytes, cur, &next)) break;
		cur = next;
	}
	pthread_mutex_unlock(&mu);
	if (owned) free(buf);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *doc) {
	(void)type;
	(void)doc;
	ompt_set_trace_ompt_t set_trace = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	ompt_start_trace_t start = (ompt_start_trace_t)lookup("ompt_start_trace");
	get_record_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	get_record_type = (ompt_get_record_type_t)lookup("ompt_get_record_type");
	advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	if (!set_trace || !start || !get_record_ompt || !get_record_type || !advance) {
		fail("device %d: a tracing entry point is missing", dev);
		return;
	}
	set_trace(device, 1, ompt_callback_target_emi);
	set_trace(device, 1, ompt_callback_target_data_op_emi);
	set_trace(device, 1, ompt_callback_target_submit_emi);
	if (start(device, buffer_request, buffer_complete) != 1) fail("device %d: ompt_start_trace failed", dev);
}

static void on_device_load(int dev, const char *file, int64_t off, void *vma, size_t bytes, void *host, void *daddr, uint64_t module) {
	(void)off;
	(void)vma;
	(void)host;
	(void)daddr;
	if (file == NULL || file[0] == 0 || bytes == 0) fail("device_load on %d: file %s, %zu bytes (module %" PRIu64 ")", dev, file ? file : "(null)", bytes, module);
}

static int initialize(ompt_function_lookup_t lookup, int initial, ompt_data_t *data) {
	initial_device = initial;
	(void)data;
	lookup0 = lookup;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	get_target_info = (ompt_get_target_info_t)lookup("ompt_get_target_info");
	if (set == NULL || get_target_info == NULL) {
		fail("ompt_set_callback or ompt_get_target_info missing");
		return 0;
	}
	struct {
		ompt_callbacks_t ev;
		ompt_callback_t f;
	} cbs[] = {
		{ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize},
		{ompt_callback_device_load, (ompt_callback_t)on_device_load},
		{ompt_callback_target_emi, (ompt_callback_t)on_target_emi},
		{ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi},
		{ompt_callback_target_submit_emi, (ompt_callback_t)on_submit_emi},
		{ompt_callback_target_map_emi, (ompt_callback_t)on_map_emi},
	};
	// target_map_emi may be ompt_set_never, as LLVM answers (and
	// gompt with GOMPT_TOOL_PROFILE=llvm, EMICHECK_MAP_NEVER=1)
	int map_never = getenv("EMICHECK_MAP_NEVER") != NULL;
	for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
		ompt_set_result_t want = map_never && cbs[i].ev == ompt_callback_target_map_emi ? ompt_set_never : ompt_set_always;
		if (set(cbs[i].ev, cbs[i].f) != want) fail("ompt_set_callback(%d) is not %d", cbs[i].ev, want);
	}
	return 1;
}

// finalize runs after every device is finalized: every record is in.
static void finalize(ompt_data_t *data) {
	(void)data;
	pthread_mutex_lock(&mu);
	int joined = 0, routine = 0;
	for (size_t i = 0; i < ncons; i++) {
		if (cons[i].ended != 1) fail("construct 0x%" PRIx64 ": %d end events", cons[i].id, cons[i].ended);
		if (cons[i].records == 0) fail("construct 0x%" PRIx64 " (kind %d, device %d): no target record", cons[i].id, cons[i].kind, cons[i].device);
	}
	for (size_t i = 0; i < nops; i++) {
		struct op *o = &ops[i];
		if (o->target == 0) routine++;
		if (o->ended != 1) fail("op 0x%" PRIx64 " (kind %d): %d end events", o->id, o->kind, o->ended);
		if (o->records != 1) fail("op 0x%" PRIx64 " (kind %d, %zu bytes, devices %d->%d): %d trace records, want 1", o->id, o->kind, o->bytes, o->src_dev, o->dst_dev, o->records);
		else joined++;
	}
	int submits = 0;
	for (size_t i = 0; i < nops; i++) submits += ops[i].kind == -1;
	fprintf(out, "emicheck summary constructs=%zu ops=%zu submits=%d routine_ops=%d target_records=%d op_records=%d kernel_records=%d joined=%d unjoined=%d ids_written=%" PRIu64 " errors=%d\n",
		ncons, nops - submits, submits, routine, target_records, op_records, kernel_records, joined, unjoined, next_id - FIRST_ID, nerrors);
	fflush(out);
	pthread_mutex_unlock(&mu);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int version, const char *runtime) {
	(void)version;
	(void)runtime;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	const char *path = getenv("EMICHECK_OUTPUT");
	out = path ? fopen(path, "w") : NULL;
	if (out == NULL) out = stderr;
	return &r;
}
