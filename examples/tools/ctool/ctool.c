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
//
// Where the runtime provides device tracing (ompt_start_trace resolves),
// the tool also starts tracing on each device and prints one line per
// record: "ompt record <type> dev=N target_id=T ...".
//
// Build: gcc -shared -fPIC -I/usr/lib/llvm-19/lib/clang/19/include -o libctool.so ctool.c
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
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance_cursor;
static ompt_get_record_type_t get_record_type;
static ompt_get_record_ompt_t get_record_ompt;

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

// ---- device events -------------------------------------------------------

static void on_buffer_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
	(void)dev;
	*bytes = 64 * sizeof(ompt_record_ompt_t);
	*buffer = malloc(*bytes);
	if (*buffer == NULL) *bytes = 0;
}

static void on_buffer_complete(int dev, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	ompt_device_t *d = dev >= 0 && dev < MAX_DEVICES ? devices[dev] : NULL;
	ompt_buffer_cursor_t cur = begin;
	while (bytes > 0 && d != NULL) {
		if (get_record_type(buffer, cur) == ompt_record_ompt) {
			ompt_record_ompt_t *r = get_record_ompt(buffer, cur);
			switch (r->type) {
			case ompt_callback_target:
			case ompt_callback_target_emi:
				emit("ompt record target dev=%d target_id=%" PRIu64 " kind=%s endpoint=%s",
				     dev, r->target_id, kind_name(r->record.target.kind), endpoint_name(r->record.target.endpoint));
				break;
			case ompt_callback_target_data_op:
			case ompt_callback_target_data_op_emi:
				emit("ompt record target_data_op dev=%d target_id=%" PRIu64 " host_op_id=%" PRIu64 " op=%s bytes=%zu",
				     dev, r->target_id, r->record.target_data_op.host_op_id, op_name(r->record.target_data_op.optype),
				     r->record.target_data_op.bytes);
				break;
			case ompt_callback_target_submit:
			case ompt_callback_target_submit_emi:
				emit("ompt record target_submit dev=%d target_id=%" PRIu64 " host_op_id=%" PRIu64 " teams=%u",
				     dev, r->target_id, r->record.target_kernel.host_op_id, r->record.target_kernel.requested_num_teams);
				break;
			default:
				emit("ompt record type=%d dev=%d target_id=%" PRIu64, (int)r->type, dev, r->target_id);
			}
		}
		ompt_buffer_cursor_t next;
		if (advance_cursor(d, buffer, bytes, cur, &next) != 1) break;
		cur = next;
	}
	if (owned) free(buffer);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *doc) {
	(void)doc;
	emit("ompt device_initialize dev=%d type=\"%s\"", dev, type ? type : "");
	if (device == NULL || lookup == NULL) {
		emit("ompt error device_initialize dev=%d: NULL device or lookup", dev);
		return;
	}
	if (dev >= 0 && dev < MAX_DEVICES) devices[dev] = device;
	start_trace = (ompt_start_trace_t)lookup("ompt_start_trace");
	set_trace_ompt = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	stop_trace = (ompt_stop_trace_t)lookup("ompt_stop_trace");
	advance_cursor = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	get_record_type = (ompt_get_record_type_t)lookup("ompt_get_record_type");
	get_record_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	if (start_trace && set_trace_ompt && advance_cursor && get_record_type && get_record_ompt) {
		set_trace_ompt(device, 1, 0);
		if (!start_trace(device, on_buffer_request, on_buffer_complete)) {
			emit("ompt error device_initialize dev=%d: ompt_start_trace failed", dev);
		}
	}
}

static void on_device_finalize(int dev) {
	if (stop_trace && dev >= 0 && dev < MAX_DEVICES && devices[dev]) {
		stop_trace(devices[dev]); // delivers what is left, before the device goes
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
	(void)task; (void)target_task;
	uint64_t idev = 0;
	ompt_id_t tid = 0, hop = 0;
	if (!get_target_info(&idev, &tid, &hop)) {
		emit("ompt error target_emi: ompt_get_target_info found no construct");
	}
	if (ep == ompt_scope_begin) {
		target_data->value = tid;
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
	const char *form = getenv("CTOOL_FORM");
	int emi = !form || !*form || !strcmp(form, "both") || !strcmp(form, "emi");
	int plain = !form || !*form || !strcmp(form, "both") || !strcmp(form, "plain");
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
