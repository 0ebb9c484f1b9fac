// ctool: an OMPT tool in plain C against omp-tools.h, as one would write
// it for any OpenMP runtime. It registers every target and device
// callback and prints one line per event:
//
//   ompt device_initialize dev=0 type="host gompt host device"
//   ompt device_load dev=0 file="" bytes=1234 module=1
//   ompt target begin kind=target dev=0 target_id=2 code=0x4a1b2c
//   ompt target_data_op target_id=2 host_op_id=3 op=alloc src=0x1000/-1 dest=0xd000/0 bytes=64 code=0x4a1b2c
//   ompt target_map target_id=2 n=1 host=0x1000 dev=0xd000 bytes=64 flags=to|from
//   ompt target_submit target_id=2 host_op_id=5 teams=4
//   ompt target end kind=target dev=0 target_id=2 code=0x4a1b2c
//   ompt device_unload dev=0 module=1
//   ompt device_finalize dev=0
//
// The lines are the same whichever callback forms are used: a data op is
// printed once, when it is done (at the EMI end), a submit once, before
// the launch (at the EMI begin); EMI forms take target_id from the
// target_data slot the tool filled at the construct's begin (from
// ompt_get_target_info), so a broken slot shows up as a wrong id.
// Problems the tool detects are printed as "ompt error ..." lines.
//
// Environment:
//   CTOOL_OUTPUT  file to write the lines to (default stdout)
//   CTOOL_FORM    "both" (default: register the EMI and non-EMI forms, so
//                 only EMI callbacks run), "emi", or "plain" (non-EMI only)
//   CTOOL_TRACE   device tracing, where the runtime provides it
//                 (ompt_start_trace resolves in device_initialize):
//                 unset or empty (default): trace every device (all OMPT
//                 record types, 64-record malloc'd buffers) and read every
//                 record, but print only problems ("ompt error ..."), so
//                 the event lines are the same as without tracing;
//                 "0": no tracing; "1": also print one line per OMPT
//                 record; "all": also enable native records (explicit
//                 data motion, kernel execution) and print them.
//
// Record lines (CTOOL_TRACE=1 or all) carry the ids of the callbacks of
// the same operation, and whether the thread id and the times look right
// (non-zero, end >= begin) rather than the times themselves:
//
//   ompt record type=target dev=0 target_id=2 kind=target endpoint=begin code=0x4a1b2c thread_ok=1 time_ok=1
//   ompt record type=target_data_op dev=0 target_id=2 host_op_id=3 op=alloc src=0x1000/-1 dest=0xd000/0 bytes=64 code=0x4a1b2c thread_ok=1 time_ok=1
//   ompt record type=target_submit dev=0 target_id=2 host_op_id=5 requested_teams=4 granted_teams=4 thread_ok=1 time_ok=1
//   ompt record type=native dev=0 host_op_id=3 class=event name="host copy" hwid=1 time_ok=1
//
// They come from the runtime's delivery thread, so they interleave with
// the event lines in no fixed order; per device they are in record order.

// Build: clang-19 -shared -fPIC -o libctool.so ctool.c (with gcc, put only
//        omp-tools.h on the include path: see README.md)
// Run:   OMP_TOOL_LIBRARIES=./libctool.so ./program

#include <inttypes.h>
#include <omp-tools.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Addresses print as 0x..., 0 as 0x0 (as Go's %#x).
#define A "0x%" PRIxPTR
#define P(x) ((uintptr_t)(x))

static FILE *out;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static ompt_set_callback_t set_callback;
static ompt_get_target_info_t get_target_info;

static ompt_start_trace_t start_trace;
static ompt_set_trace_ompt_t set_trace_ompt;
static ompt_set_trace_native_t set_trace_native;
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance_cursor;
static ompt_get_record_type_t get_record_type;
static ompt_get_record_ompt_t get_record_ompt;
static ompt_get_record_native_t get_record_native;
static ompt_get_record_abstract_t get_record_abstract;

#define MAX_DEVICES 64
static ompt_device_t *devices[MAX_DEVICES];

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&out_mu);
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	fflush(out);
	pthread_mutex_unlock(&out_mu);
	va_end(ap);
}

static const char *kind_name(int k) {
	switch (k) {
	case ompt_target: return "target";
	case ompt_target_enter_data: return "target_enter_data";
	case ompt_target_exit_data: return "target_exit_data";
	case ompt_target_update: return "target_update";
	case ompt_target_nowait: return "target_nowait";
	case ompt_target_enter_data_nowait: return "target_enter_data_nowait";
	case ompt_target_exit_data_nowait: return "target_exit_data_nowait";
	case ompt_target_update_nowait: return "target_update_nowait";
	}
	return "unknown";
}

static const char *op_name(int op) {
	switch (op) {
	case ompt_target_data_alloc: return "alloc";
	case ompt_target_data_transfer_to_device: return "transfer_to_device";
	case ompt_target_data_transfer_from_device: return "transfer_from_device";
	case ompt_target_data_delete: return "delete";
	case ompt_target_data_associate: return "associate";
	case ompt_target_data_disassociate: return "disassociate";
	case 8: return "memset"; // ompt_target_data_memset (OpenMP 6.0; not in the 5.1 header)
	case ompt_target_data_alloc_async: return "alloc_async";
	case ompt_target_data_transfer_to_device_async: return "transfer_to_device_async";
	case ompt_target_data_transfer_from_device_async: return "transfer_from_device_async";
	case ompt_target_data_delete_async: return "delete_async";
	}
	return "unknown";
}

static const char *endpoint_name(int e) {
	return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend";
}

// flags_name writes the map flags as "to|from|..." ("none" for 0).
static void flags_name(unsigned int f, char *buf, size_t n) {
	static const char *names[] = {"to", "from", "alloc", "release", "delete", "implicit"};
	buf[0] = 0;
	for (int i = 0; i < 6; i++) {
		if (f & (1u << i)) {
			if (buf[0]) strncat(buf, "|", n - strlen(buf) - 1);
			strncat(buf, names[i], n - strlen(buf) - 1);
		}
	}
	if (!buf[0]) snprintf(buf, n, "none");
}

// ---- device tracing ------------------------------------------------------

// trace_mode: CTOOL_TRACE. 0: no tracing; 1 (default): trace every device
// quietly (records are read and checked, only problems are printed);
// 2: also print one line per OMPT record; 3: also enable native records
// and print them.
static int trace_mode = 1;

#define BUFFER_RECORDS 64

static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;
static long outstanding[MAX_DEVICES]; // buffers handed out and not yet given back (owned)

static int time_ok(ompt_device_time_t begin, ompt_device_time_t end) {
	return begin != 0 && end >= begin;
}

static void on_buffer_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
	*bytes = BUFFER_RECORDS * sizeof(ompt_record_ompt_t);
	*buffer = malloc(*bytes);
	if (*buffer == NULL) {
		*bytes = 0;
		return;
	}
	if (dev >= 0 && dev < MAX_DEVICES) {
		pthread_mutex_lock(&trace_mu);
		outstanding[dev]++;
		pthread_mutex_unlock(&trace_mu);
	}
}

static void print_record(int dev, ompt_record_ompt_t *r) {
	switch (r->type) {
	case ompt_callback_target:
	case ompt_callback_target_emi: {
		ompt_record_target_t *t = &r->record.target;
		if (t->device_num != dev) {
			emit("ompt error record target: device_num %d in a buffer of device %d", t->device_num, dev);
		}
		if (trace_mode >= 2) {
			emit("ompt record type=target dev=%d target_id=%" PRIu64 " kind=%s endpoint=%s code=" A " thread_ok=%d time_ok=%d",
			     dev, r->target_id, kind_name(t->kind), endpoint_name(t->endpoint), P(t->codeptr_ra), r->thread_id != 0, r->time != 0);
		}
		break;
	}
	case ompt_callback_target_data_op:
	case ompt_callback_target_data_op_emi: {
		ompt_record_target_data_op_t *d = &r->record.target_data_op;
		if (trace_mode >= 2) {
			emit("ompt record type=target_data_op dev=%d target_id=%" PRIu64 " host_op_id=%" PRIu64 " op=%s src=" A "/%d dest=" A "/%d bytes=%zu code=" A " thread_ok=%d time_ok=%d",
			     dev, r->target_id, d->host_op_id, op_name(d->optype), P(d->src_addr), d->src_device_num, P(d->dest_addr), d->dest_device_num,
			     d->bytes, P(d->codeptr_ra), r->thread_id != 0, time_ok(r->time, d->end_time));
		}
		break;
	}
	case ompt_callback_target_submit:
	case ompt_callback_target_submit_emi: {
		ompt_record_target_kernel_t *k = &r->record.target_kernel;
		if (trace_mode >= 2) {
			emit("ompt record type=target_submit dev=%d target_id=%" PRIu64 " host_op_id=%" PRIu64 " requested_teams=%u granted_teams=%u thread_ok=%d time_ok=%d",
			     dev, r->target_id, k->host_op_id, k->requested_num_teams, k->granted_num_teams, r->thread_id != 0, time_ok(r->time, k->end_time));
		}
		break;
	}
	default:
		emit("ompt error record: unexpected type %d on device %d", (int)r->type, dev);
	}
}

static void print_native(int dev, ompt_buffer_t *buffer, ompt_buffer_cursor_t cur) {
	ompt_id_t hop = 0;
	void *n = get_record_native ? get_record_native(buffer, cur, &hop) : NULL;
	ompt_record_abstract_t *a = n && get_record_abstract ? get_record_abstract(n) : NULL;
	if (a == NULL) {
		emit("ompt error record: native entry on device %d without a native or abstract record", dev);
		return;
	}
	if (trace_mode >= 3) {
		emit("ompt record type=native dev=%d host_op_id=%" PRIu64 " class=%s name=\"%s\" hwid=%" PRIu64 " time_ok=%d",
		     dev, hop, a->rclass == ompt_record_native_event ? "event" : "info", a->type ? a->type : "",
		     (uint64_t)a->hwid, time_ok(a->start_time, a->end_time));
	}
}

// on_buffer_complete walks the part [begin, bytes) with the standard entry
// points and frees the buffer when it is the tool's again.
static void on_buffer_complete(int dev, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	ompt_device_t *d = dev >= 0 && dev < MAX_DEVICES ? devices[dev] : NULL;
	ompt_buffer_cursor_t cur = begin;
	int more = bytes > 0;
	while (more) {
		switch (get_record_type(buffer, cur)) {
		case ompt_record_ompt: {
			ompt_record_ompt_t *r = get_record_ompt(buffer, cur);
			if (r == NULL) {
				emit("ompt error record: get_record_ompt is NULL for an OMPT entry on device %d", dev);
			} else {
				print_record(dev, r);
			}
			break;
		}
		case ompt_record_native:
			print_native(dev, buffer, cur);
			break;
		default:
			emit("ompt error record: invalid entry at %" PRIu64 " of %zu on device %d", (uint64_t)cur, bytes, dev);
			more = 0;
			continue;
		}
		more = advance_cursor(d, buffer, bytes, cur, &cur) == 1;
	}
	if (owned) {
		free(buffer);
		if (dev >= 0 && dev < MAX_DEVICES) {
			pthread_mutex_lock(&trace_mu);
			outstanding[dev]--;
			pthread_mutex_unlock(&trace_mu);
		}
	}
}

// ---- device events -------------------------------------------------------

static void on_device_initialize(int dev, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *doc) {
	(void)doc;
	emit("ompt device_initialize dev=%d type=\"%s\"", dev, type ? type : "");
	if (device == NULL || lookup == NULL) {
		emit("ompt error device_initialize dev=%d: NULL device or lookup", dev);
		return;
	}
	if (dev >= 0 && dev < MAX_DEVICES) devices[dev] = device;
	if (trace_mode == 0) return;
	start_trace = (ompt_start_trace_t)lookup("ompt_start_trace");
	set_trace_ompt = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	set_trace_native = (ompt_set_trace_native_t)lookup("ompt_set_trace_native");
	stop_trace = (ompt_stop_trace_t)lookup("ompt_stop_trace");
	advance_cursor = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	get_record_type = (ompt_get_record_type_t)lookup("ompt_get_record_type");
	get_record_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	get_record_native = (ompt_get_record_native_t)lookup("ompt_get_record_native");
	get_record_abstract = (ompt_get_record_abstract_t)lookup("ompt_get_record_abstract");
	if (!start_trace || !set_trace_ompt || !stop_trace || !advance_cursor || !get_record_type || !get_record_ompt) {
		return; // the runtime has no device tracing: events only
	}
	if (set_trace_ompt(device, 1, 0) == ompt_set_error) {
		emit("ompt error device_initialize dev=%d: ompt_set_trace_ompt(all) failed", dev);
	}
	if (trace_mode >= 3 && set_trace_native) {
		set_trace_native(device, 1, ompt_native_data_motion_explicit | ompt_native_kernel_execution);
	}
	if (!start_trace(device, on_buffer_request, on_buffer_complete)) {
		emit("ompt error device_initialize dev=%d: ompt_start_trace failed", dev);
	}
}

static void on_device_finalize(int dev) {
	if (stop_trace && dev >= 0 && dev < MAX_DEVICES && devices[dev]) {
		stop_trace(devices[dev]); // delivers what is left (the runtime may have done so already: then 0)
	}
	if (dev >= 0 && dev < MAX_DEVICES) {
		pthread_mutex_lock(&trace_mu);
		long n = outstanding[dev];
		pthread_mutex_unlock(&trace_mu);
		if (n != 0) {
			emit("ompt error device_finalize dev=%d: %ld trace buffers not given back", dev, n);
		}
	}
	emit("ompt device_finalize dev=%d", dev);
}

static void on_device_load(int dev, const char *file, int64_t off, void *vma, size_t bytes, void *host, void *daddr, uint64_t module) {
	(void)off; (void)vma; (void)host; (void)daddr;
	emit("ompt device_load dev=%d file=\"%s\" bytes=%zu module=%" PRIu64, dev, file ? file : "", bytes, module);
}

static void on_device_unload(int dev, uint64_t module) {
	emit("ompt device_unload dev=%d module=%" PRIu64, dev, module);
}

// ---- target events, non-EMI ----------------------------------------------

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task, ompt_id_t target_id, const void *code) {
	(void)task;
	emit("ompt target %s kind=%s dev=%d target_id=%" PRIu64 " code=" A, endpoint_name(ep), kind_name(kind), dev, target_id, P(code));
}

static void print_data_op(ompt_id_t target_id, ompt_id_t host_op_id, int op, void *src, int sdev, void *dst, int ddev, size_t bytes, const void *code) {
	emit("ompt target_data_op target_id=%" PRIu64 " host_op_id=%" PRIu64 " op=%s src=" A "/%d dest=" A "/%d bytes=%zu code=" A,
	     target_id, host_op_id, op_name(op), P(src), sdev, P(dst), ddev, bytes, P(code));
}

static void on_target_data_op(ompt_id_t target_id, ompt_id_t host_op_id, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev, size_t bytes, const void *code) {
	print_data_op(target_id, host_op_id, op, src, sdev, dst, ddev, bytes, code);
}

static void print_map(ompt_id_t target_id, unsigned int n, void **host, void **daddr, size_t *bytes, unsigned int *flags) {
	char line[4096], f[64];
	int k = snprintf(line, sizeof line, "ompt target_map target_id=%" PRIu64 " n=%u host=", target_id, n);
	for (unsigned int i = 0; i < n && k < (int)sizeof line; i++) k += snprintf(line + k, sizeof line - k, "%s" A, i ? "," : "", P(host[i]));
	if (k < (int)sizeof line) k += snprintf(line + k, sizeof line - k, " dev=");
	for (unsigned int i = 0; i < n && k < (int)sizeof line; i++) k += snprintf(line + k, sizeof line - k, "%s" A, i ? "," : "", P(daddr[i]));
	if (k < (int)sizeof line) k += snprintf(line + k, sizeof line - k, " bytes=");
	for (unsigned int i = 0; i < n && k < (int)sizeof line; i++) k += snprintf(line + k, sizeof line - k, "%s%zu", i ? "," : "", bytes[i]);
	if (k < (int)sizeof line) k += snprintf(line + k, sizeof line - k, " flags=");
	for (unsigned int i = 0; i < n && k < (int)sizeof line; i++) {
		flags_name(flags[i], f, sizeof f);
		k += snprintf(line + k, sizeof line - k, "%s%s", i ? "," : "", f);
	}
	emit("%s", line);
}

static void on_target_map(ompt_id_t target_id, unsigned int n, void **host, void **daddr, size_t *bytes, unsigned int *flags, const void *code) {
	(void)code;
	print_map(target_id, n, host, daddr, bytes, flags);
}

static void on_target_submit(ompt_id_t target_id, ompt_id_t host_op_id, unsigned int teams) {
	emit("ompt target_submit target_id=%" PRIu64 " host_op_id=%" PRIu64 " teams=%u", target_id, host_op_id, teams);
}

// ---- target events, EMI -----------------------------------------------------

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task, ompt_data_t *target_task, ompt_data_t *target_data, const void *code) {
	(void)task;
	uint64_t idev = 0;
	ompt_id_t tid = 0, hop = 0;
	if (!get_target_info(&idev, &tid, &hop)) {
		emit("ompt error target_emi: ompt_get_target_info found no construct");
	}
	if (ep == ompt_scope_begin) {
		target_data->value = tid;
		if (target_task != NULL) {
			target_task->value = tid; // read back by on_dependences
		}
	} else if (target_data->value != tid) {
		emit("ompt error target_emi end: target_data holds %" PRIu64 ", construct is %" PRIu64, target_data->value, tid);
	}
	if ((int)idev != dev) {
		emit("ompt error target_emi: ompt_get_target_info device %d, callback device %d", (int)idev, dev);
	}
	emit("ompt target %s kind=%s dev=%d target_id=%" PRIu64 " code=" A, endpoint_name(ep), kind_name(kind), dev, target_data->value, P(code));
}

static void on_target_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task, ompt_data_t *target_data, ompt_id_t *host_op_id, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev, size_t bytes, const void *code) {
	(void)target_task;
	if (ep == ompt_scope_begin) {
		return; // printed once, when done (as the non-EMI form)
	}
	print_data_op(target_data ? target_data->value : 0, *host_op_id, op, src, sdev, dst, ddev, bytes, code);
}

static void on_target_map_emi(ompt_data_t *target_data, unsigned int n, void **host, void **daddr, size_t *bytes, unsigned int *flags, const void *code) {
	(void)code;
	print_map(target_data->value, n, host, daddr, bytes, flags);
}

static void on_target_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_data, ompt_id_t *host_op_id, unsigned int teams) {
	if (ep == ompt_scope_begin) { // printed once, before the launch (as the non-EMI form)
		emit("ompt target_submit target_id=%" PRIu64 " host_op_id=%" PRIu64 " teams=%u", target_data->value, *host_op_id, teams);
	}
}

// ---- dependences ----------------------------------------------------------------

static int emi_form; // target_emi is registered: it marks the target task's data

static const char *dependence_name(ompt_dependence_type_t t) {
	switch ((int)t) {
	case ompt_dependence_type_in: return "in";
	case ompt_dependence_type_out: return "out";
	case ompt_dependence_type_inout: return "inout";
	case ompt_dependence_type_mutexinoutset: return "mutexinoutset";
	case ompt_dependence_type_source: return "source";
	case ompt_dependence_type_sink: return "sink";
	case ompt_dependence_type_inoutset: return "inoutset";
	}
	return "?";
}

// on_dependences prints a target task's depend items. For a synchronous
// construct it comes right after the construct's target begin, inside the
// construct; for a nowait one after task_create, before the task runs and
// its target begin (as LLVM reports a deferred target task), so there is
// no construct yet (target_id 0) and the task's data is still unset.
static void on_dependences(ompt_data_t *task_data, const ompt_dependence_t *deps, int n) {
	uint64_t idev = 0;
	ompt_id_t tid = 0, hop = 0;
	int inside = get_target_info(&idev, &tid, &hop);
	if (task_data == NULL) {
		emit("ompt error dependences: task_data is NULL");
	} else if (emi_form && inside && task_data->value != tid) {
		emit("ompt error dependences: task_data holds %" PRIu64 ", not the target task's mark %" PRIu64, task_data->value, tid);
	} else if (!inside && task_data->value != 0) {
		emit("ompt error dependences: a target task not yet begun has task_data %" PRIu64 ", want 0", task_data->value);
	}
	char line[1024];
	int k = snprintf(line, sizeof line, "ompt dependences target_id=%" PRIu64 " n=%d deps=", tid, n);
	for (int i = 0; i < n && k < (int)sizeof line; i++) {
		k += snprintf(line + k, sizeof line - k, "%s%s@" A, i ? "," : "", dependence_name(deps[i].dependence_type), P(deps[i].variable.ptr));
	}
	emit("%s", line);
}

// ---- start-up ------------------------------------------------------------------

static void reg(ompt_callbacks_t ev, ompt_callback_t cb, const char *name) {
	int r = set_callback(ev, cb);
	if (r != ompt_set_always) {
		emit("ompt error set_callback %s: %d, want ompt_set_always", name, r);
	}
}
#define REG(ev, fn) reg(ompt_callback_##ev, (ompt_callback_t)(fn), #ev)

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)initial_device_num; (void)tool_data;
	const char *path = getenv("CTOOL_OUTPUT");
	out = path && *path ? fopen(path, "w") : stdout;
	if (out == NULL) {
		fprintf(stderr, "ctool: cannot open CTOOL_OUTPUT=%s\n", path);
		return 0;
	}
	set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	get_target_info = (ompt_get_target_info_t)lookup("ompt_get_target_info");
	if (set_callback == NULL || get_target_info == NULL) {
		fprintf(stderr, "ctool: the runtime lacks ompt_set_callback or ompt_get_target_info\n");
		return 0;
	}
	const char *tr = getenv("CTOOL_TRACE");
	if (tr && *tr) {
		trace_mode = !strcmp(tr, "0") ? 0 : !strcmp(tr, "1") ? 2 : !strcmp(tr, "all") ? 3 : -1;
		if (trace_mode < 0) {
			fprintf(stderr, "ctool: CTOOL_TRACE=%s: want 0 (no tracing), 1 (print OMPT records) or all (also native records)\n", tr);
			return 0;
		}
	}
	const char *form = getenv("CTOOL_FORM");
	int emi = !form || !*form || !strcmp(form, "both") || !strcmp(form, "emi");
	int plain = !form || !*form || !strcmp(form, "both") || !strcmp(form, "plain");
	if (!emi && !plain) {
		fprintf(stderr, "ctool: CTOOL_FORM=%s: want both (the default), emi or plain\n", form);
		return 0;
	}
	REG(device_initialize, on_device_initialize);
	REG(device_finalize, on_device_finalize);
	REG(device_load, on_device_load);
	REG(device_unload, on_device_unload);
	if (plain) {
		REG(target, on_target);
		REG(target_data_op, on_target_data_op);
		REG(target_map, on_target_map);
		REG(target_submit, on_target_submit);
	}
	REG(dependences, on_dependences);
	emi_form = emi;
	if (emi) {
		REG(target_emi, on_target_emi);
		REG(target_data_op_emi, on_target_data_op_emi);
		REG(target_map_emi, on_target_map_emi);
		REG(target_submit_emi, on_target_submit_emi);
	}
	return 1;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	if (out != stdout) fclose(out);
	out = NULL;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version; (void)runtime_version;
	static ompt_start_tool_result_t result = {initialize, finalize, {0}};
	return &result;
}
