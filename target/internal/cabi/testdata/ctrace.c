// ctrace: a test tool for device tracing through the C face. It traces
// every device through the standard entry points, keeps account of every
// buffer it hands out (ownership), checks bad input at each entry point,
// and writes "ctrace ..." lines to $TRACE_OUTPUT: "cb ..." for callbacks
// and "rec dev=D ..." for records, with the same fields, so the Go test
// can join records to callbacks by their ids. Problems are written as
// "ctrace error ..." lines.
//
// The codeptr_ra of a construct tells the tool what to do at its end
// (the "trace" scenario of child_test.go uses these values):
//   0xf100  flush device 0 from a thread the tool creates, then report
//   0xf200  stop tracing on device 1, try stop/pause/flush again, restart
//   0xf300  pause tracing at the target begin, resume at the end
//
// TRACE_BUFFER_BYTES is the size of the buffers buffer_request returns
// (default 1024; 0: buffer_request returns NULL).
#include <omp-tools.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CODE_FLUSH 0xf100
#define CODE_STOP 0xf200
#define CODE_PAUSE 0xf300
#define A "0x%" PRIxPTR
#define P(x) ((uintptr_t)(x))
#define MAXDEV 4

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int errors;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&mu);
	if (out) {
		fputs("ctrace ", out);
		vfprintf(out, fmt, ap);
		fputc('\n', out);
		fflush(out);
	}
	pthread_mutex_unlock(&mu);
	va_end(ap);
}

#define ERR(...) do { __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST); say("error " __VA_ARGS__); } while (0)

static ompt_set_trace_ompt_t set_trace_ompt;
static ompt_set_trace_native_t set_trace_native;
static ompt_start_trace_t start_trace;
static ompt_pause_trace_t pause_trace;
static ompt_flush_trace_t flush_trace;
static ompt_stop_trace_t stop_trace;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_type_t get_type;
static ompt_get_record_ompt_t get_ompt;
static ompt_get_record_native_t get_native;
static ompt_get_record_abstract_t get_abstract;

static ompt_device_t *devs[MAXDEV];
static size_t buf_bytes = 1024;
static char bogus_device[64]; // not a device gompt handed out
static char foreign[4096] __attribute__((aligned(64))); // not a trace buffer

// Buffers handed out; a freed one's slot is reused.
#define NBUF 1024
static struct { void *p; size_t n; int dev; } bufs[NBUF];
static long requested[MAXDEV], returned[MAXDEV], parts[MAXDEV], recs[MAXDEV], natives[MAXDEV];
static int checked;

// The native record of gompt's host device (device.HostRecord).
struct host_native { int64_t start, end; uint64_t queue; };

static const char *op_name(int op) {
	static const char *n[] = {"?", "alloc", "to", "from", "delete", "associate", "disassociate", "?", "memset", "alloc_async", "to_async", "from_async", "delete_async"};
	return op >= 0 && op < 13 ? n[op] : "?";
}

static const char *ep_name(int e) { return e == ompt_scope_begin ? "begin" : e == ompt_scope_end ? "end" : "beginend"; }

// ---- buffers -------------------------------------------------------------

static void on_request(int dev, ompt_buffer_t **buffer, size_t *bytes) {
	if (buf_bytes == 0) {
		*buffer = NULL;
		*bytes = 0;
		return;
	}
	void *p = malloc(buf_bytes);
	pthread_mutex_lock(&mu);
	int slot = -1;
	for (int i = 0; i < NBUF && slot < 0; i++) {
		if (bufs[i].p == NULL) slot = i;
	}
	if (p != NULL && slot >= 0 && dev >= 0 && dev < MAXDEV) {
		bufs[slot].p = p;
		bufs[slot].n = buf_bytes;
		bufs[slot].dev = dev;
		requested[dev]++;
	} else {
		free(p);
		p = NULL;
	}
	pthread_mutex_unlock(&mu);
	*buffer = p;
	*bytes = p ? buf_bytes : 0;
}

// find returns the slot of a buffer the tool handed out and has not got
// back, or -1. mu must be held.
static int find(void *p) {
	for (int i = 0; i < NBUF; i++) {
		if (bufs[i].p == p) return i;
	}
	return -1;
}

// check_bad runs the bad-input checks on one delivered part that holds at
// least two OMPT records, the first at begin; last is its last entry.
static void check_bad(int dev, ompt_buffer_t *b, size_t bytes, ompt_buffer_cursor_t begin, ompt_buffer_cursor_t last, size_t size) {
	ompt_device_t *d = devs[dev], *other = devs[dev ^ 1];
	ompt_buffer_cursor_t next = 12345;
	int n = 0;
#define CHECK(cond, what) do { n++; if (!(cond)) ERR("check %s", what); } while (0)
	CHECK(advance(d, b, bytes, begin, &next) == 1 && next > begin, "advance from the first record");
	CHECK(advance(NULL, b, bytes, begin, &next) == 1, "advance with a NULL device");
	next = 777;
	CHECK(advance(d, b, bytes, last, &next) == 0 && next == 777, "advance from the last record refused, next untouched");
	CHECK(advance(d, b, bytes, bytes + 800, &next) == 0, "advance past the end");
	CHECK(advance(d, b, bytes, begin + 3, &next) == 0, "advance from a misaligned cursor");
	CHECK(advance(d, b, (size_t)1 << 62, last, &next) == 0, "advance with a huge size stops at the delivered part");
	CHECK(other == NULL || advance(other, b, bytes, begin, &next) == 0, "advance with another device on this buffer");
	CHECK(advance((ompt_device_t *)bogus_device, b, bytes, begin, &next) == 0, "advance with a bogus device");
	CHECK(advance(d, foreign, sizeof foreign, 0, &next) == 0, "advance in a foreign buffer");
	CHECK(advance(d, (char *)b + 8, bytes, 0, &next) == 0, "advance in a pointer inside the buffer");
	CHECK(advance(d, NULL, bytes, 0, NULL) == 0, "advance in NULL");
	CHECK(get_type(b, begin) == ompt_record_ompt, "type of the first record");
	CHECK(get_type(b, bytes) == ompt_record_invalid, "type at the end of the part");
	CHECK(get_type(b, size + 8) == ompt_record_invalid, "type past the buffer");
	CHECK(get_type(b, begin + 5) == ompt_record_invalid, "type of a misaligned cursor");
	CHECK(get_type(b, UINT64_MAX - 7) == ompt_record_invalid, "type at cursor 2^64-8");
	CHECK(get_type(foreign, 0) == ompt_record_invalid, "type in a foreign buffer");
	CHECK(get_type(NULL, 0) == ompt_record_invalid, "type in NULL");
	CHECK(get_ompt(b, begin) == (ompt_record_ompt_t *)((char *)b + begin), "get_record_ompt points into the buffer");
	CHECK(get_ompt(b, bytes) == NULL, "get_record_ompt at the end of the part");
	CHECK(get_ompt(foreign, 0) == NULL, "get_record_ompt in a foreign buffer");
	ompt_id_t hop = 99;
	CHECK(get_native(b, begin, &hop) == NULL && hop == 99, "get_record_native of an OMPT record");
	CHECK(get_native(foreign, 0, &hop) == NULL, "get_record_native in a foreign buffer");
	CHECK(get_abstract(NULL) == NULL, "get_record_abstract(NULL)");
	CHECK(get_abstract(foreign + 64) == NULL, "get_record_abstract of a foreign pointer");
	CHECK(get_abstract((char *)b + begin + 64) == NULL, "get_record_abstract inside an OMPT record");
	CHECK(get_abstract((char *)b + 8) == NULL, "get_record_abstract with no room for a header");
	CHECK(flush_trace(d) == 0, "flush_trace inside buffer_complete refused");
	CHECK(stop_trace(d) == 0, "stop_trace inside buffer_complete refused");
#undef CHECK
	say("checks dev=%d n=%d", dev, n);
}

static void on_complete(int dev, ompt_buffer_t *b, size_t bytes, ompt_buffer_cursor_t begin, int owned) {
	pthread_mutex_lock(&mu);
	int slot = find(b);
	size_t size = slot >= 0 ? bufs[slot].n : 0;
	int bdev = slot >= 0 ? bufs[slot].dev : -1;
	pthread_mutex_unlock(&mu);
	if (slot < 0) {
		ERR("complete dev=%d: buffer %p was not handed out or was given back already", dev, b);
		return;
	}
	if (bdev != dev) ERR("complete dev=%d: buffer of device %d", dev, bdev);
	if (bytes > size || (bytes == 0 && begin != 0) || (bytes > 0 && begin >= bytes)) {
		ERR("complete dev=%d: part [%" PRIu64 ", %zu) of a %zu-byte buffer", dev, (uint64_t)begin, bytes, size);
	}
	ompt_device_t *d = devs[dev];
	int nrec = 0, nnat = 0;
	ompt_buffer_cursor_t cur = begin, last = begin;
	for (int more = bytes > 0; more; more = advance(d, b, bytes, cur, &cur) == 1) {
		last = cur;
		int k = get_type(b, cur);
		if (k == ompt_record_ompt) {
			ompt_record_ompt_t *r = get_ompt(b, cur);
			nrec++;
			if (r == NULL) {
				ERR("rec dev=%d: get_record_ompt NULL", dev);
				continue;
			}
			if (r->thread_id == 0) ERR("rec dev=%d: thread_id 0", dev);
			if (r->time == 0) ERR("rec dev=%d: time 0", dev);
			switch (r->type) {
			case ompt_callback_target: {
				ompt_record_target_t *t = &r->record.target;
				if (t->target_id != r->target_id) ERR("rec dev=%d: target_id %" PRIu64 " in the body, %" PRIu64 " in the record", dev, t->target_id, r->target_id);
				say("rec dev=%d target %s kind=%d dev=%d target_id=%" PRIu64 " code=" A, dev, ep_name(t->endpoint), t->kind, t->device_num, r->target_id, P(t->codeptr_ra));
				break;
			}
			case ompt_callback_target_data_op: {
				ompt_record_target_data_op_t *o = &r->record.target_data_op;
				if (o->end_time < r->time) ERR("rec dev=%d: end_time before time", dev);
				say("rec dev=%d data_op target_id=%" PRIu64 " host_op_id=%" PRIu64 " op=%s src=" A "/%d dest=" A "/%d bytes=%zu code=" A,
				    dev, r->target_id, o->host_op_id, op_name(o->optype), P(o->src_addr), o->src_device_num, P(o->dest_addr), o->dest_device_num, o->bytes, P(o->codeptr_ra));
				break;
			}
			case ompt_callback_target_submit: {
				ompt_record_target_kernel_t *k = &r->record.target_kernel;
				if (k->end_time < r->time) ERR("rec dev=%d: end_time before time", dev);
				say("rec dev=%d submit target_id=%" PRIu64 " host_op_id=%" PRIu64 " teams=%u granted=%u", dev, r->target_id, k->host_op_id, k->requested_num_teams, k->granted_num_teams);
				break;
			}
			default:
				ERR("rec dev=%d: type %d", dev, (int)r->type);
			}
		} else if (k == ompt_record_native) {
			ompt_id_t hop = 0;
			char *p = get_native(b, cur, &hop);
			nnat++;
			if (p == NULL) {
				ERR("native dev=%d: get_record_native NULL", dev);
				continue;
			}
			if (p != (char *)b + cur + 48) ERR("native dev=%d: record at %+td from its entry", dev, p - ((char *)b + cur));
			ompt_record_abstract_t *a = get_abstract(p);
			if (a == NULL) {
				ERR("native dev=%d: get_record_abstract NULL", dev);
				continue;
			}
			struct host_native *hn = (struct host_native *)p;
			int same = get_abstract(p) == a;
			int times = a->start_time == (uint64_t)hn->start && a->end_time == (uint64_t)hn->end && a->start_time != 0 && a->end_time >= a->start_time;
			say("rec dev=%d native host_op_id=%" PRIu64 " class=%d type=\"%s\" hwid=%" PRIu64 " queue=%" PRIu64 " times=%d same=%d",
			    dev, hop, (int)a->rclass, a->type ? a->type : "(null)", (uint64_t)a->hwid, hn->queue, times, same);
		} else {
			ERR("complete dev=%d: invalid entry at %" PRIu64 " in [%" PRIu64 ", %zu)", dev, (uint64_t)cur, (uint64_t)begin, bytes);
			break;
		}
	}
	int check = 0;
	pthread_mutex_lock(&mu);
	parts[dev]++;
	recs[dev] += nrec;
	natives[dev] += nnat;
	if (!checked && dev == 0 && nrec >= 2 && get_type(b, begin) == ompt_record_ompt) {
		checked = check = 1;
	}
	pthread_mutex_unlock(&mu);
	if (check) check_bad(dev, b, bytes, begin, last, size);
	if (owned) {
		pthread_mutex_lock(&mu);
		bufs[slot].p = NULL;
		returned[dev]++;
		pthread_mutex_unlock(&mu);
		free(b);
	}
}

// ---- callbacks -------------------------------------------------------------

struct flush_result { int ret; long recs, natives; };

static void *flusher(void *arg) {
	struct flush_result *r = arg;
	r->ret = flush_trace(devs[0]);
	pthread_mutex_lock(&mu);
	r->recs = recs[0];
	r->natives = natives[0];
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task, ompt_id_t id, const void *code) {
	(void)task;
	say("cb target %s kind=%d dev=%d target_id=%" PRIu64 " code=" A, ep_name(ep), kind, dev, id, P(code));
	if (P(code) == CODE_PAUSE) {
		int r1 = pause_trace(devs[dev], ep == ompt_scope_begin);
		int r2 = pause_trace(devs[dev], ep == ompt_scope_begin); // already there: 1
		say("pause dev=%d %s=%d,%d", dev, ep == ompt_scope_begin ? "begin" : "resume", r1, r2);
	}
	if (ep != ompt_scope_end) return;
	if (P(code) == CODE_FLUSH) {
		struct flush_result r = {0};
		pthread_t th;
		pthread_create(&th, NULL, flusher, &r);
		pthread_join(th, NULL);
		say("flush dev=0 ret=%d records=%ld natives=%ld", r.ret, r.recs, r.natives);
	}
	if (P(code) == CODE_STOP) {
		ompt_device_t *d = devs[dev];
		int stop = stop_trace(d);
		pthread_mutex_lock(&mu);
		long n = recs[dev], req = requested[dev], ret = returned[dev];
		pthread_mutex_unlock(&mu);
		int again = stop_trace(d), pause = pause_trace(d, 1), flush = flush_trace(d);
		int restart = start_trace(d, on_request, on_complete);
		int twice = start_trace(d, on_request, on_complete);
		say("stop dev=%d ret=%d records=%ld given_back=%d again=%d pause=%d flush=%d restart=%d twice=%d",
		    dev, stop, n, req == ret, again, pause, flush, restart, twice);
	}
}

static void on_data_op(ompt_id_t tid, ompt_id_t hop, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev, size_t bytes, const void *code) {
	say("cb data_op target_id=%" PRIu64 " host_op_id=%" PRIu64 " op=%s src=" A "/%d dest=" A "/%d bytes=%zu code=" A,
	    tid, hop, op_name(op), P(src), sdev, P(dst), ddev, bytes, P(code));
}

static void on_submit(ompt_id_t tid, ompt_id_t hop, unsigned int teams) {
	say("cb submit target_id=%" PRIu64 " host_op_id=%" PRIu64 " teams=%u", tid, hop, teams);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *d, ompt_function_lookup_t lookup, const char *doc) {
	(void)type; (void)doc;
	if (dev < 0 || dev >= MAXDEV) return;
	devs[dev] = d;
	set_trace_ompt = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	set_trace_native = (ompt_set_trace_native_t)lookup("ompt_set_trace_native");
	start_trace = (ompt_start_trace_t)lookup("ompt_start_trace");
	pause_trace = (ompt_pause_trace_t)lookup("ompt_pause_trace");
	flush_trace = (ompt_flush_trace_t)lookup("ompt_flush_trace");
	stop_trace = (ompt_stop_trace_t)lookup("ompt_stop_trace");
	advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	get_type = (ompt_get_record_type_t)lookup("ompt_get_record_type");
	get_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	get_native = (ompt_get_record_native_t)lookup("ompt_get_record_native");
	get_abstract = (ompt_get_record_abstract_t)lookup("ompt_get_record_abstract");
	if (!set_trace_ompt || !set_trace_native || !start_trace || !pause_trace || !flush_trace || !stop_trace ||
	    !advance || !get_type || !get_ompt || !get_native || !get_abstract) {
		ERR("device_initialize dev=%d: a tracing entry point is NULL", dev);
		return;
	}
	ompt_device_t *bogus = (ompt_device_t *)bogus_device;
	int stop0 = stop_trace(d), pause0 = pause_trace(d, 1), flush0 = flush_trace(d);
	int bad = set_trace_ompt(d, 1, 999), never = set_trace_ompt(d, 1, ompt_callback_thread_begin),
	    map = set_trace_ompt(d, 1, ompt_callback_target_map), nul = set_trace_ompt(NULL, 1, 0), bog = set_trace_ompt(bogus, 1, 0);
	int all = set_trace_ompt(d, 1, 0), one = set_trace_ompt(d, 1, ompt_callback_target_data_op_emi);
	int native = set_trace_native(d, 1, ompt_native_data_motion_explicit | ompt_native_kernel_execution);
	int native_bad = set_trace_native(d, 1, 0x100), native_neg = set_trace_native(d, 1, -1), native_bog = set_trace_native(bogus, 1, 1);
	int start_null = start_trace(d, NULL, on_complete), start_nullc = start_trace(d, on_request, NULL);
	int start_bog = start_trace(bogus, on_request, on_complete), start_nuld = start_trace(NULL, on_request, on_complete);
	int start = start_trace(d, on_request, on_complete), twice = start_trace(d, on_request, on_complete);
	int fl = flush_trace(d), bogus_ops = stop_trace(bogus) + pause_trace(bogus, 1) + flush_trace(bogus) + flush_trace(NULL) + stop_trace(NULL);
	say("init dev=%d unstarted stop=%d pause=%d flush=%d set_trace_ompt 999=%d thread_begin=%d target_map=%d null=%d bogus=%d all=%d data_op_emi=%d",
	    dev, stop0, pause0, flush0, bad, never, map, nul, bog, all, one);
	say("init dev=%d set_trace_native=%d bad=%d neg=%d bogus=%d start null_request=%d null_complete=%d bogus=%d null=%d ok=%d twice=%d flush=%d bogus_ops=%d",
	    dev, native, native_bad, native_neg, native_bog, start_null, start_nullc, start_bog, start_nuld, start, twice, fl, bogus_ops);
}

static void on_device_finalize(int dev) {
	pthread_mutex_lock(&mu);
	long req = requested[dev], ret = returned[dev], p = parts[dev], n = recs[dev], nn = natives[dev];
	pthread_mutex_unlock(&mu);
	say("finalize dev=%d requested=%ld returned=%ld parts=%ld records=%ld natives=%ld", dev, req, ret, p, n, nn);
}

static int initialize(ompt_function_lookup_t lookup, int initial, ompt_data_t *data) {
	(void)initial; (void)data;
	const char *path = getenv("TRACE_OUTPUT");
	out = path && *path ? fopen(path, "w") : stdout;
	const char *bb = getenv("TRACE_BUFFER_BYTES");
	if (bb && *bb) buf_bytes = strtoul(bb, NULL, 10);
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
	set(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize);
	set(ompt_callback_target, (ompt_callback_t)on_target);
	set(ompt_callback_target_data_op, (ompt_callback_t)on_data_op);
	set(ompt_callback_target_submit, (ompt_callback_t)on_submit);
	return 1;
}

static void finalize(ompt_data_t *data) {
	(void)data;
	int live = 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < NBUF; i++) live += bufs[i].p != NULL;
	pthread_mutex_unlock(&mu);
	say("final live_buffers=%d errors=%d", live, errors);
	if (out && out != stdout) fclose(out);
	out = NULL;
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int v, const char *rt) {
	(void)v; (void)rt;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
