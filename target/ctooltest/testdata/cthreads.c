// cthreads: a C tool for the tests of package ctooltest. It is written as
// a tool for LLVM's libomp would be: it registers every callback it can,
// keeps per-thread state in thread_data, traces every device, and checks
// what OpenMP promises. It writes "ct ..." lines to $CT_OUTPUT; problems
// are "ct error ..." lines. $CT_MODE picks what it does besides:
//   crossflush       each device's buffer_complete flushes every other device
//   finalize_target  ompt_finalize_tool from the 20th target end callback
//   finalize_buffer  ompt_finalize_tool from a buffer_complete
//   (anything else)  nothing more
#include <omp-tools.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXDEV 64

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *mode = "";
static int check_threads; // $CT_THREADS=1: check items of per-thread state (thread_data, task_data)
static int finalized;      // finalize ran: no callback may come after it
static int *state;         // freed in finalize, as a tool frees its state
static long targets_ended, flushes_ok, flushes_refused, buffers, records, bad_tid_records;
static long thread_begins, thread_ends, implicit_begins, implicit_ends, task_creates, task_schedules;
static int dev_init[MAXDEV], dev_fini[MAXDEV];

static ompt_get_thread_data_t get_thread_data;
static ompt_get_task_info_t get_task_info;
static ompt_finalize_tool_t finalize_tool;
static ompt_set_callback_t set_callback;
static ompt_start_trace_t start_trace[MAXDEV];
static ompt_flush_trace_t flush_trace;
static ompt_set_trace_ompt_t set_trace_ompt;
static ompt_advance_buffer_cursor_t advance;
static ompt_get_record_ompt_t get_ompt;
static ompt_device_t *devs[MAXDEV];
static int ndev;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&mu);
	if (out) {
		fputs("ct ", out);
		vfprintf(out, fmt, ap);
		fputc('\n', out);
		fflush(out);
	}
	pthread_mutex_unlock(&mu);
	va_end(ap);
}

#define ERR(...) say("error " __VA_ARGS__)
#define ADD(x) __atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)

static uint64_t tid(void) { return (uint64_t)syscall(SYS_gettid); }

// Per-thread state, hung on thread_data: the thread it was made for and a
// shadow stack of target regions (a tool's usual per-thread state).
struct thr {
	uint64_t tid;
	int depth;
	int initial_task_seen;
};

static void alive(const char *what) {
	if (LOAD(finalized)) ERR("%s callback after finalize", what);
}

static struct thr *me(const char *what) {
	if (!check_threads) return NULL;
	ompt_data_t *d = get_thread_data();
	if (d == NULL || d->ptr == NULL) {
		ERR("%s: no thread_data on thread %" PRIu64, what, tid());
		return NULL;
	}
	struct thr *t = d->ptr;
	if (t->tid != tid()) ERR("%s: thread_data of thread %" PRIu64 " on thread %" PRIu64, what, t->tid, tid());
	return t;
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
	alive("thread_begin");
	ADD(thread_begins);
	if (type != ompt_thread_initial) ERR("thread_begin type %d", (int)type);
	if (thread_data->value != 0) ERR("thread_begin: thread_data not ompt_data_none");
	struct thr *t = calloc(1, sizeof *t);
	t->tid = tid();
	thread_data->ptr = t;
	if (get_thread_data() != thread_data) ERR("thread_begin: get_thread_data is not the thread's slot");
}

static void on_thread_end(ompt_data_t *thread_data) {
	alive("thread_end");
	ADD(thread_ends);
	struct thr *t = thread_data->ptr;
	if (t == NULL) { ERR("thread_end without thread_begin"); return; }
	if (t->depth != 0) ERR("thread_end of thread %" PRIu64 " inside %d target regions", t->tid, t->depth);
	thread_data->ptr = NULL;
	free(t);
}

static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel_data, ompt_data_t *task_data,
                             unsigned int n, unsigned int index, int flags) {
	alive("implicit_task");
	(void)parallel_data;
	if (!(flags & ompt_task_initial)) ERR("implicit_task flags %#x", flags);
	if (ep == ompt_scope_begin) {
		ADD(implicit_begins);
		struct thr *t = me("implicit_task");
		if (t) t->initial_task_seen = 1;
		if (n != 1 || index != 1) ERR("implicit_task begin n=%u index=%u", n, index);
		task_data->value = tid(); // the task's id: the thread's
		int f = 0;
		ompt_data_t *td = NULL;
		if (get_task_info(0, &f, &td, NULL, NULL, NULL) != 2 || td != task_data || !(f & ompt_task_initial))
			ERR("implicit_task: get_task_info(0) does not answer this task");
	} else {
		ADD(implicit_ends);
	}
}

static void on_task_create(ompt_data_t *encountering, const ompt_frame_t *frame, ompt_data_t *new_task, int flags,
                           int has_dependences, const void *codeptr) {
	alive("task_create");
	(void)frame; (void)has_dependences; (void)codeptr; (void)encountering;
	ADD(task_creates);
	if (!(flags & ompt_task_target)) ERR("task_create flags %#x", flags);
	if (new_task == NULL) ERR("task_create: NULL new_task_data");
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
	alive("task_schedule");
	(void)prior; (void)next; (void)status;
	ADD(task_schedules);
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int device_num, ompt_data_t *task_data,
                          ompt_data_t *target_task_data, ompt_data_t *target_data, const void *codeptr) {
	alive("target_emi");
	(void)kind; (void)device_num; (void)target_task_data; (void)codeptr;
	if (LOAD(finalized)) return;
	if (state == NULL) { ERR("target_emi: state freed"); return; }
	struct thr *t = me("target_emi");
	int f = 0;
	ompt_data_t *td = NULL;
	if (!check_threads) {
	} else if (get_task_info(0, &f, &td, NULL, NULL, NULL) != 2 || td != task_data)
		ERR("target_emi: task_data is not get_task_info(0)'s on thread %" PRIu64, tid());
	else if (task_data->value != tid())
		ERR("target_emi: task_data of thread %" PRIu64 " on thread %" PRIu64, task_data->value, tid());
	if (ep == ompt_scope_begin) {
		target_data->value = tid(); // where it began: records check it
		if (t) t->depth++;
		return;
	}
	if (t) {
		if (t->depth <= 0) ERR("target end without begin on thread %" PRIu64, tid());
		t->depth--;
	}
	long n = ADD(targets_ended);
	if (strcmp(mode, "finalize_target") == 0 && n == 20) {
		say("finalize_tool from target end");
		finalize_tool();
		say("finalize_tool returned");
	}
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task_data, ompt_data_t *target_data,
                           ompt_id_t *host_op_id, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev,
                           size_t bytes, const void *codeptr) {
	alive("target_data_op_emi");
	(void)target_task_data; (void)target_data; (void)op; (void)src; (void)sdev;
	(void)dst; (void)ddev; (void)bytes; (void)codeptr;
	if (!LOAD(finalized)) me("target_data_op_emi");
	if (ep == ompt_scope_end) *host_op_id = tid(); // the operation's record must carry this thread
}

static void on_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_data, ompt_id_t *host_op_id,
                          unsigned int teams) {
	alive("target_submit_emi");
	(void)target_data; (void)teams;
	if (!LOAD(finalized)) me("target_submit_emi");
	if (ep == ompt_scope_end) *host_op_id = tid();
}

static ompt_buffer_t *req_buf;

static void buffer_request(int device_num, ompt_buffer_t **buffer, size_t *bytes) {
	alive("buffer_request");
	(void)device_num;
	*bytes = 4096;
	*buffer = malloc(*bytes);
	(void)req_buf;
}

static void buffer_complete(int device_num, ompt_buffer_t *buffer, size_t bytes, ompt_buffer_cursor_t begin,
                            int buffer_owned) {
	alive("buffer_complete");
	// this call's number, from the increment itself: two devices' buffers
	// may complete at once, and a later load could see neither as the 5th
	long nth = ADD(buffers);
	if (bytes > 0) {
		ompt_buffer_cursor_t c = begin;
		for (;;) {
			ompt_record_ompt_t *r = get_ompt(buffer, c);
			if (r == NULL) break;
			ADD(records);
			if (r->type == ompt_callback_target) {
				// a target record's thread is the thread of its callbacks,
				// whose id the tool wrote into target_data (its target_id)
				if (r->record.target.endpoint == ompt_scope_begin && r->thread_id != r->target_id) {
					ADD(bad_tid_records);
				}
				if (check_threads && r->record.target.task_id == 0) ERR("target record with task_id 0");
			}
			if (r->type == ompt_callback_target_data_op && r->record.target_data_op.host_op_id != r->thread_id) ADD(bad_tid_records);
			if (r->type == ompt_callback_target_submit && r->record.target_kernel.host_op_id != r->thread_id) ADD(bad_tid_records);
			if (!advance(devs[device_num], buffer, bytes, c, &c)) break;
		}
	}
	if (strcmp(mode, "crossflush") == 0 && !LOAD(finalized)) {
		for (int i = 0; i < ndev; i++) {
			if (i == device_num || devs[i] == NULL) continue;
			if (flush_trace(devs[i])) ADD(flushes_ok);
			else ADD(flushes_refused);
		}
	}
	if (strcmp(mode, "finalize_buffer") == 0 && nth == 5 && !LOAD(finalized)) {
		say("finalize_tool from buffer_complete");
		finalize_tool();
		say("finalize_tool returned");
	}
	if (buffer_owned) free(buffer);
}

static void on_device_initialize(int device_num, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
	alive("device_initialize");
	(void)type; (void)doc;
	if (device_num < 0 || device_num >= MAXDEV) return;
	pthread_mutex_lock(&mu);
	devs[device_num] = device;
	if (device_num + 1 > ndev) ndev = device_num + 1;
	dev_init[device_num]++;
	pthread_mutex_unlock(&mu);
	start_trace[device_num] = (ompt_start_trace_t)lookup("ompt_start_trace");
	flush_trace = (ompt_flush_trace_t)lookup("ompt_flush_trace");
	set_trace_ompt = (ompt_set_trace_ompt_t)lookup("ompt_set_trace_ompt");
	advance = (ompt_advance_buffer_cursor_t)lookup("ompt_advance_buffer_cursor");
	get_ompt = (ompt_get_record_ompt_t)lookup("ompt_get_record_ompt");
	ompt_translate_time_t translate = (ompt_translate_time_t)lookup("ompt_translate_time");
	ompt_get_device_time_t device_time = (ompt_get_device_time_t)lookup("ompt_get_device_time");
	double t0 = translate(device, 0), tn = translate(device, device_time(device)), tmax = translate(device, UINT64_MAX);
	if (t0 < 0 || tmax < 0 || t0 > tn || tn > tmax)
		ERR("device %d: translate_time(0) = %g, (now) = %g, (UINT64_MAX) = %g: negative or not monotonic", device_num, t0, tn, tmax);
	set_trace_ompt(device, 1, 0);
	if (!start_trace[device_num](device, buffer_request, buffer_complete)) ERR("start_trace on device %d", device_num);
}

static void on_device_finalize(int device_num) {
	alive("device_finalize");
	if (device_num >= 0 && device_num < MAXDEV) ADD(dev_fini[device_num]);
}

static int reg(ompt_callbacks_t ev, ompt_callback_t cb, const char *name) {
	int r = set_callback(ev, cb);
	say("set_callback %s = %d", name, r);
	return r;
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)initial_device_num; (void)tool_data;
	set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
	get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
	finalize_tool = (ompt_finalize_tool_t)lookup("ompt_finalize_tool");
	state = calloc(1, sizeof *state);
	reg(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin, "thread_begin");
	reg(ompt_callback_thread_end, (ompt_callback_t)on_thread_end, "thread_end");
	reg(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, "implicit_task");
	reg(ompt_callback_task_create, (ompt_callback_t)on_task_create, "task_create");
	reg(ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule, "task_schedule");
	reg(ompt_callback_parallel_begin, (ompt_callback_t)on_task_schedule, "parallel_begin");
	reg(ompt_callback_parallel_end, (ompt_callback_t)on_thread_end, "parallel_end");
	reg(ompt_callback_target_emi, (ompt_callback_t)on_target_emi, "target_emi");
	reg(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi, "target_data_op_emi");
	reg(ompt_callback_target_submit_emi, (ompt_callback_t)on_submit_emi, "target_submit_emi");
	reg(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize, "device_initialize");
	reg(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize, "device_finalize");
	// a thread the runtime never saw: this one, before any event on it,
	// unless the runtime's first event comes from here
	say("initialize");
	return 1;
}

static void *probe(void *arg) {
	(void)arg;
	if (get_thread_data() != NULL) ERR("get_thread_data on a thread the runtime never saw is not NULL");
	int f = 0;
	if (get_task_info(0, &f, NULL, NULL, NULL, NULL) != 0) ERR("get_task_info(0) on a thread the runtime never saw is not 0");
	return NULL;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	alive("finalize");
	if (check_threads) {
		pthread_t th;
		pthread_create(&th, NULL, probe, NULL);
		pthread_join(th, NULL);
	}
	int inits = 0, finis = 0;
	for (int i = 0; i < MAXDEV; i++) {
		if (dev_init[i] && LOAD(dev_fini[i]) != 1) ERR("device %d: %d device_finalize before finalize", i, LOAD(dev_fini[i]));
		inits += dev_init[i];
		finis += LOAD(dev_fini[i]);
	}
	say("finalize devices=%d device_finalize=%d targets=%ld buffers=%ld records=%ld bad_tid_records=%ld flushes_ok=%ld flushes_refused=%ld",
	    inits, finis, LOAD(targets_ended), LOAD(buffers), LOAD(records), LOAD(bad_tid_records), LOAD(flushes_ok), LOAD(flushes_refused));
	say("threads begin=%ld end=%ld implicit_begin=%ld implicit_end=%ld task_create=%ld task_schedule=%ld",
	    LOAD(thread_begins), LOAD(thread_ends), LOAD(implicit_begins), LOAD(implicit_ends), LOAD(task_creates), LOAD(task_schedules));
	free(state);
	state = NULL;
	__atomic_store_n(&finalized, 1, __ATOMIC_SEQ_CST);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version; (void)runtime_version;
	const char *f = getenv("CT_OUTPUT");
	out = f ? fopen(f, "a") : stdout;
	if (getenv("CT_MODE")) mode = getenv("CT_MODE");
	check_threads = getenv("CT_THREADS") && strcmp(getenv("CT_THREADS"), "1") == 0;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
