// cthreadlife: a C tool for the tests of package ctooltest that keeps
// per-thread state the way Archer and sampling profilers do: in a
// thread-local variable made at thread_begin and freed at thread_end,
// and in thread_data. It records pthread_self() at every begin and end
// of a thread and of its implicit task, and checks, in the callback
// itself, that
//   - thread_end comes on the thread that got thread_begin (its
//     thread_data's and its thread-local state's),
//   - implicit_task end comes on the thread of its begin, once per begin,
//     after it and before its thread's thread_end,
//   - every target event comes on a thread inside its life (after
//     thread_begin on that thread, before its thread_end),
//   - no callback comes after finalize.
// It writes "lt ..." lines to $CT_OUTPUT; problems are "lt error ..."
// lines, written when they happen (also after finalize).
#include <omp-tools.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int finalized;
static long thread_begins, thread_ends, implicit_begins, implicit_ends, targets;
static long cross_thread_ends, cross_implicit_ends, errors;
static ompt_get_thread_data_t get_thread_data;

// the distinct OS threads that got thread_begin (up to MAXTID)
#define MAXTID 4096
static uint64_t tids[MAXTID];
static int ntids;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&mu);
	if (out) {
		fputs("lt ", out);
		vfprintf(out, fmt, ap);
		fputc('\n', out);
		fflush(out);
	}
	pthread_mutex_unlock(&mu);
	va_end(ap);
}

#define ADD(x) __atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ERR(...) (ADD(errors), say("error " __VA_ARGS__))

static uint64_t tid(void) { return (uint64_t)syscall(SYS_gettid); }

// The state of one OpenMP thread, as a tool keeps it.
struct thr {
	pthread_t self;
	uint64_t tid;
	int implicit_open; // implicit_task begun and not ended
};

// The implicit task: where it began.
struct task {
	pthread_t self;
	uint64_t tid;
	struct thr *thread;
};

static __thread struct thr *mine; // this thread's state, between its begin and end

static void alive(const char *what) {
	if (LOAD(finalized)) ERR("%s callback after finalize on thread %" PRIu64, what, tid());
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
	alive("thread_begin");
	ADD(thread_begins);
	if (type != ompt_thread_initial) ERR("thread_begin type %d", (int)type);
	if (thread_data->ptr != NULL) ERR("thread_begin: thread_data is not ompt_data_none on thread %" PRIu64, tid());
	if (mine != NULL) ERR("thread_begin on thread %" PRIu64 ", which is inside a life already", tid());
	struct thr *t = calloc(1, sizeof *t);
	t->self = pthread_self();
	t->tid = tid();
	thread_data->ptr = t;
	mine = t;
	pthread_mutex_lock(&mu);
	int seen = 0;
	for (int i = 0; i < ntids; i++) seen |= tids[i] == t->tid;
	if (!seen && ntids < MAXTID) tids[ntids++] = t->tid;
	pthread_mutex_unlock(&mu);
	if (get_thread_data() != thread_data) ERR("thread_begin: get_thread_data is not the thread's slot");
}

static void on_thread_end(ompt_data_t *thread_data) {
	alive("thread_end");
	ADD(thread_ends);
	struct thr *t = thread_data->ptr;
	if (t == NULL) {
		ERR("thread_end without thread_begin on thread %" PRIu64, tid());
		return;
	}
	if (!pthread_equal(t->self, pthread_self())) {
		ADD(cross_thread_ends);
		ERR("thread_end of thread %" PRIu64 " on thread %" PRIu64, t->tid, tid());
	} else if (mine != t) {
		ERR("thread_end on thread %" PRIu64 ": its thread-local state is not its thread_data's", tid());
	}
	if (t->implicit_open) ERR("thread_end of thread %" PRIu64 " before its implicit task ended", t->tid);
	if (pthread_equal(t->self, pthread_self())) mine = NULL;
	thread_data->ptr = NULL;
	free(t);
}

static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *parallel_data, ompt_data_t *task_data,
                             unsigned int n, unsigned int index, int flags) {
	alive("implicit_task");
	(void)parallel_data; (void)n; (void)index;
	if (!(flags & ompt_task_initial)) ERR("implicit_task flags %#x", flags);
	if (ep == ompt_scope_begin) {
		ADD(implicit_begins);
		if (task_data->ptr != NULL) ERR("implicit_task begin: task_data is not ompt_data_none");
		if (mine == NULL) ERR("implicit_task begin on thread %" PRIu64 " before its thread_begin", tid());
		else mine->implicit_open = 1;
		struct task *k = calloc(1, sizeof *k);
		k->self = pthread_self();
		k->tid = tid();
		k->thread = mine;
		task_data->ptr = k;
		return;
	}
	ADD(implicit_ends);
	struct task *k = task_data->ptr;
	if (k == NULL) {
		ERR("implicit_task end without begin on thread %" PRIu64, tid());
		return;
	}
	if (!pthread_equal(k->self, pthread_self())) {
		ADD(cross_implicit_ends);
		ERR("implicit_task end of a task begun on thread %" PRIu64 " on thread %" PRIu64, k->tid, tid());
	} else if (k->thread != mine || mine == NULL) {
		ERR("implicit_task end on thread %" PRIu64 ": not the task of its thread's life", tid());
	} else {
		mine->implicit_open = 0;
	}
	task_data->ptr = NULL;
	free(k);
}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int device_num, ompt_data_t *task_data,
                          ompt_data_t *target_task_data, ompt_data_t *target_data, const void *codeptr) {
	alive("target_emi");
	(void)kind; (void)device_num; (void)target_task_data; (void)target_data; (void)codeptr;
	if (ep == ompt_scope_end) ADD(targets);
	if (mine == NULL) {
		ERR("target event on thread %" PRIu64 " outside its life (no thread_begin on it)", tid());
		return;
	}
	ompt_data_t *d = get_thread_data();
	if (d == NULL || d->ptr != mine) ERR("target event on thread %" PRIu64 ": get_thread_data is not its thread's", tid());
	struct task *k = task_data ? task_data->ptr : NULL;
	if (k == NULL || !pthread_equal(k->self, pthread_self())) ERR("target event on thread %" PRIu64 ": task_data is not its implicit task's", tid());
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *target_task_data, ompt_data_t *target_data,
                           ompt_id_t *host_op_id, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev,
                           size_t bytes, const void *codeptr) {
	alive("target_data_op_emi");
	(void)ep; (void)target_task_data; (void)target_data; (void)host_op_id; (void)op; (void)src; (void)sdev;
	(void)dst; (void)ddev; (void)bytes; (void)codeptr;
	if (mine == NULL) ERR("data op on thread %" PRIu64 " outside its life", tid());
}

static void on_device_initialize(int device_num, const char *type, ompt_device_t *device,
                                 ompt_function_lookup_t lookup, const char *doc) {
	alive("device_initialize");
	(void)device_num; (void)type; (void)device; (void)lookup; (void)doc;
	if (mine == NULL) ERR("device_initialize on thread %" PRIu64 " outside its life", tid());
}

static void on_device_finalize(int device_num) {
	alive("device_finalize");
	(void)device_num;
	if (mine == NULL) ERR("device_finalize on thread %" PRIu64 " outside its life", tid());
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	(void)initial_device_num; (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
	set(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
	set(ompt_callback_thread_end, (ompt_callback_t)on_thread_end);
	set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
	set(ompt_callback_target_emi, (ompt_callback_t)on_target_emi);
	set(ompt_callback_target_data_op_emi, (ompt_callback_t)on_data_op_emi);
	set(ompt_callback_device_initialize, (ompt_callback_t)on_device_initialize);
	set(ompt_callback_device_finalize, (ompt_callback_t)on_device_finalize);
	say("initialize");
	return 1;
}

static void finalize(ompt_data_t *tool_data) {
	(void)tool_data;
	alive("finalize");
	pthread_mutex_lock(&mu);
	int n = ntids;
	pthread_mutex_unlock(&mu);
	say("finalize os_threads=%d begin=%ld end=%ld implicit_begin=%ld implicit_end=%ld targets=%ld cross_thread_ends=%ld cross_implicit_ends=%ld errors=%ld",
	    n, LOAD(thread_begins), LOAD(thread_ends), LOAD(implicit_begins), LOAD(implicit_ends), LOAD(targets),
	    LOAD(cross_thread_ends), LOAD(cross_implicit_ends), LOAD(errors));
	__atomic_store_n(&finalized, 1, __ATOMIC_SEQ_CST);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	(void)omp_version; (void)runtime_version;
	const char *f = getenv("CT_OUTPUT");
	out = f ? fopen(f, "a") : stdout;
	static ompt_start_tool_result_t r = {initialize, finalize, {0}};
	return &r;
}
