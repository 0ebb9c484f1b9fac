// fakecuda.c is a fault-injection fake of the CUDA driver library, built by
// fault_test.go into a shared object and loaded by the cuda plugin through
// GOMPT_CUDA_LIBRARY. It exists only to drive the plugin's fault paths
// (out of memory, JIT failures, failed launches, copies and synchronisations,
// failures while a device opens) and to check that the plugin gives back
// every driver object it made. It is not a GPU and not a substitute for the
// GPU tests: it runs no kernel code (cuLaunchKernel checks its arguments;
// only the marked test kernels below take time, wait or write memory).
//
// It exports every entry point the binding in device/cuda/internal/cu resolves, under
// the names the binding prefers (cuMemAlloc_v2, cuStreamDestroy_v2, ...),
// with the driver's signatures written with plain C types; built with
// -DFAKECUDA_NO_STREAM_WAIT it lacks the optional cuStreamWaitEvent.
//
// With FAKECUDA_ASYNC=1 each stream instead has a worker thread that runs its
// operations in order as soon as they are enqueued, as a GPU runs streams
// side by side: work on one stream does not wait for another, and queries
// turn ready without anything waiting. The kernels of a module whose image
// contains the marker FAKECUDA_SLEEP_US followed by a number run for that
// many microseconds (in either mode), so a test can keep a stream busy; those
// of a module whose image contains FAKECUDA_GATE run until the test sets
// fakecuda_gate to a non-zero value, so a test can tell by order alone
// whether a call waited for a kernel; those of a module whose image
// contains FAKECUDA_FILL take (a pointer p, a 64-bit length n, a byte v)
// and write v over [p, p+n) when their stream runs them, so a test can see
// whether a copy on another stream came after the kernel. Those of a
// module whose image contains FAKECUDA_CHECKFAIL followed by five numbers
// (a parameter slot, then four 64-bit words) write the words into the
// 32 bytes the pointer in that slot points to when their stream runs them:
// a generated kernel's failed run-time check (device.Kernel.Faults).
// cuStreamWaitEvent really holds its stream until the event's record has
// run (the recording stream runs up to there, or its worker gets there).
//
// Pageable memory. As NVIDIA's "API synchronization behavior" allows, an
// asynchronous copy between the device and host memory that is neither
// page-locked (cuMemAllocHost) nor registered (cuMemHostRegister) waits for
// the work enqueued before it on its stream and runs at the call, in either
// mode: a host-to-device copy from pageable memory is staged by the driver
// only once the stream is idle, and a device-to-host copy into pageable
// memory returns when the data is there. Copies to and from page-locked
// memory are asynchronous.
//
// The simulated devices live in host memory: device memory is malloc'd and a
// CUdeviceptr is its host address; page-locked memory is malloc'd.
// Asynchronous copies and event records wait in their stream until something
// waits for them (cuStreamSynchronize, cuEventSynchronize of a later event,
// cuStreamDestroy, a free of memory, the context's release), as a GPU's would
// until it ran them, so a plugin that reads a buffer before waiting for the
// copy, or reuses one that a copy still uses, gets wrong data; cuStreamQuery
// and cuEventQuery say CUDA_ERROR_NOT_READY meanwhile. An event takes its
// time from the device clock (FAKECUDA_CLOCK_*) when its record runs; a
// record on an idle stream runs at once. Copies on the NULL stream
// and the synchronous copies run at once. Every handle the fake
// gives out is checked when it comes back, and so is every device range a
// copy touches: a call with a stale or foreign handle, a range outside a live
// allocation, or no live current context fails with the driver's error and
// is counted in fakecuda_state.misuse (the first one is described in
// fakecuda_misuse_msg), so a test can assert that the plugin never misused
// the driver.
//
// Configuration, read from the environment by every cuInit:
//
//	FAKECUDA_DEVICES=N          number of devices (default 1, at most 8; 0: cuInit fails with CUDA_ERROR_NO_DEVICE)
//	FAKECUDA_MEM_LIMIT=BYTES    device memory per device (default 256 MiB), also cuDeviceTotalMem
//	FAKECUDA_DRIVER_VERSION=V   cuDriverGetVersion (default 12080)
//	FAKECUDA_CC=MAJOR.MINOR     compute capability (default 9.0)
//	FAKECUDA_FAIL=SPEC          faults to inject, as below (counted from this cuInit)
//	FAKECUDA_SYNC=1             run asynchronous copies and records at once
//	FAKECUDA_ASYNC=1            run each stream's work on a worker thread of its own as soon as it is enqueued
//	FAKECUDA_CLOCK_PPM=P        the device clock (event times) runs P parts per million fast (negative: slow) ...
//	FAKECUDA_CLOCK_OFFSET=NS    ... is NS ahead of the host's CLOCK_MONOTONIC ...
//	FAKECUDA_CLOCK_JUMP=NS      ... and jumps NS further ahead ...
//	FAKECUDA_CLOCK_JUMP_AT=NS   ... when host time reaches NS
//	FAKECUDA_CLOCK_MANUAL=1     host time is fakecuda_host_ns, set by the test, instead of CLOCK_MONOTONIC
//	FAKECUDA_KERNEL_US=US       every kernel runs US microseconds more (for ompt-bench's CUDA cases on the fake)
//	FAKECUDA_TRACE=1            print each call to stderr
//
// Fault injection. SPEC is a comma-separated list of NAME:N[:RESULT[:COUNT]]:
// the Nth call (from the arming) of entry point NAME ("cuMemAlloc_v2", or
// "cuMemAlloc" for the same) and the COUNT-1 calls after it (COUNT 1 by
// default; 0 for every call from the Nth on) fail with CUresult RESULT
// without doing anything. RESULT defaults to CUDA_ERROR_OUT_OF_MEMORY for the
// allocations, CUDA_ERROR_INVALID_PTX for cuModuleLoadDataEx (with a JIT log
// saying so), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES for cuLaunchKernel,
// CUDA_ERROR_LAUNCH_FAILED for the synchronisations and CUDA_ERROR_UNKNOWN
// otherwise. A test that has the library open re-arms at any time by writing
// SPEC into fakecuda_fail_spec and then adding one to fakecuda_fail_gen
// (atomically); the fake reads it at its next call.
//
// Module loads fail with CUDA_ERROR_INVALID_PTX and a JIT error log when the
// image contains the marker FAKECUDA_BAD_PTX; cuModuleGetFunction finds
// exactly the names that follow ".entry" in the image.
//
// Sticky errors. A result NVIDIA documents as leaving the context unusable
// (CUDA_ERROR_ILLEGAL_ADDRESS 700, LAUNCH_TIMEOUT 702, ASSERT 710, 714-719
// such as LAUNCH_FAILED, CONTAINED 226), whether injected or the end of a
// faulting kernel, poisons the current device's context as the driver's
// does: the work waiting in its streams never runs, and every later call
// that needs the context (frees and destroys included) returns that result,
// until the primary context is released for the last time. The kernels of a
// module whose image contains the marker FAKECUDA_FAULT (optionally
// followed by a CUresult, 700 by default) end with that result when their
// stream runs them; cuLaunchKernel itself succeeds.
//
// Live objects are counted in fakecuda_state. When a device's primary
// context is released for the last time, the objects still live in it are
// freed (as the driver does) and counted in leaked_at_release.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	OK = 0,
	E_INVALID_VALUE = 1,
	E_OUT_OF_MEMORY = 2,
	E_NOT_INITIALIZED = 3,
	E_NO_DEVICE = 100,
	E_INVALID_DEVICE = 101,
	E_INVALID_CONTEXT = 201,
	E_INVALID_PTX = 218,
	E_INVALID_HANDLE = 400,
	E_NOT_FOUND = 500,
	E_NOT_READY = 600,
	E_LAUNCH_OUT_OF_RESOURCES = 701,
	E_PEER_ACCESS_ALREADY_ENABLED = 704,
	E_CONTEXT_IS_DESTROYED = 709,
	E_HOST_MEMORY_ALREADY_REGISTERED = 712,
	E_HOST_MEMORY_NOT_REGISTERED = 713,
	E_LAUNCH_FAILED = 719,
	E_ILLEGAL_ADDRESS = 700,
	E_UNKNOWN = 999,
};

// fakecuda_state counts what the fake holds and what happened. Fields are
// updated under the fake's lock with atomic stores, and read by tests with
// atomic loads; fault_test.go mirrors the layout.
struct fakecuda_state {
	long long allocs;            // live cuMemAlloc allocations
	long long alloc_bytes;       // their bytes
	long long host_allocs;       // live cuMemAllocHost allocations
	long long host_regs;         // live cuMemHostRegister registrations
	long long streams;           // live streams
	long long events;            // live events
	long long modules;           // live modules
	long long ctx_refs;          // primary context references held, all devices
	long long injected;          // injected failures so far
	long long misuse;            // calls rejected for a bad handle, range or context
	long long leaked_at_release; // objects still live when their context was released for the last time
	long long launches;          // successful cuLaunchKernel calls
	long long pageable_waits;    // asynchronous copies of pageable memory that waited for their stream
	long long stream_waits;      // successful cuStreamWaitEvent calls
};

EXPORT struct fakecuda_state fakecuda_state;
EXPORT char fakecuda_misuse_msg[512];
EXPORT char fakecuda_fail_spec[1024];
EXPORT int fakecuda_fail_gen;
EXPORT int fakecuda_gate; // the FAKECUDA_GATE kernels run until it is non-zero

#define ADD(field, n) __atomic_store_n(&fakecuda_state.field, fakecuda_state.field + (n), __ATOMIC_SEQ_CST)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

#define MAX_DEVICES 8

static int initialized;
static int ndev = 1;
static long long mem_limit = 256LL << 20;
static int driver_version = 12080;
static int cc_major = 9, cc_minor = 0;
static int trace;
static int at_once; // FAKECUDA_SYNC
static int async_mode; // FAKECUDA_ASYNC: a worker thread per stream
static long long kernel_ns; // FAKECUDA_KERNEL_US
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; // broadcast when an operation has run

// Contexts: one primary context per device; the handle is the address of
// its entry, the same across retain cycles as the driver's is.
struct ctx {
	int dev;
	int refs;
	long long used; // device memory bytes allocated
	int peer[MAX_DEVICES];
	int sticky; // a CUresult that has made the context unusable, or 0
	unsigned flags; // cuDevicePrimaryCtxSetFlags
};
static struct ctx ctxs[MAX_DEVICES];
static __thread struct ctx *current;

enum kind { K_ALLOC, K_HOST, K_REG, K_STREAM, K_EVENT, K_MODULE, K_FUNC, K_COUNT };
static const char *kind_names[K_COUNT] = {"allocation", "page-locked allocation", "host registration", "stream", "event", "module", "function"};

struct op;

struct obj {
	struct obj *next;
	enum kind kind;
	int dev;
	// K_ALLOC, K_HOST, K_REG: the memory.
	char *p;
	size_t n;
	// K_STREAM: the operations not yet run, in order; with FAKECUDA_ASYNC
	// the stream's worker, whether it is running one, and its stop flag.
	struct op *head, *tail;
	pthread_t worker;
	int has_worker, busy, stop;
	// K_EVENT (flags also K_STREAM)
	unsigned flags;
	int recorded;      // recorded at least once
	int done;          // the latest record has run
	long long gen;     // records so far
	long long ran;     // the number of the latest record that has run
	struct obj *rec_stream; // the stream of the latest record, when it was enqueued
	int oprefs;        // operations waiting in streams that refer to the event
	int gone;          // destroyed: freed when oprefs drops to 0
	long long t;       // when the latest record ran, on the device's clock (gpu_now)
	// K_MODULE: the image, and how long its kernels run (FAKECUDA_SLEEP_US);
	// K_FUNC: its module and name.
	char *text;
	long long sleep_ns;
	int gate; // K_MODULE: its kernels wait for fakecuda_gate (FAKECUDA_GATE)
	int fill; // K_MODULE: its kernels fill memory (FAKECUDA_FILL)
	int check_slot;          // K_MODULE: FAKECUDA_CHECKFAIL's slot, or -1
	long long check_rec[4];  // and the record its kernels write
	struct obj *mod;
	char name[128];
};
static struct obj *objs[K_COUNT];

// op is an asynchronous copy, event record or wait for an event
// (cuStreamWaitEvent) waiting in a stream.
struct op {
	struct op *next;
	int is_record;
	int is_wait;    // a wait: for record number gen of ev, enqueued on stream ws
	struct obj *ws;
	char *dst; // a copy
	const char *src;
	size_t n;
	struct obj *ev; // an event record or wait: the event (kept while the op refers to it)
	long long gen;  // the record's number among the event's records
	int is_kernel;
	int fault;      // a kernel: the sticky CUresult it ends with, or 0
	int dev;        // a kernel: its device
	long long sleep_ns; // a kernel: how long it runs
	int gate;           // a kernel: runs until fakecuda_gate is set
	int fill;           // a kernel: writes byte val over [dst, +n)
	unsigned char val;
	int check;          // a kernel: writes rec into [dst, +32)
	long long rec[4];
};

static void poison(int d, int r);

// The device clock (FAKECUDA_CLOCK_*): host time, from CLOCK_MONOTONIC or
// from fakecuda_host_ns, running clock_ppm parts per million fast (slow
// when negative), clock_offset ns ahead, and clock_jump_ns further ahead
// from host time clock_jump_at on.
EXPORT long long fakecuda_host_ns;
static int clock_manual;
static double clock_ppm;
static long long clock_offset, clock_jump_at = -1, clock_jump_ns;

static long long host_now(void) {
	if (clock_manual) return __atomic_load_n(&fakecuda_host_ns, __ATOMIC_SEQ_CST);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long gpu_now(void) {
	long long h = host_now();
	long long g = h + (long long)((double)h * clock_ppm * 1e-6) + clock_offset;
	if (clock_jump_at >= 0 && h >= clock_jump_at) g += clock_jump_ns;
	return g;
}

static void run(struct op *o) {
	if (o->is_kernel) {
		if (o->fill) memset(o->dst, o->val, o->n);
		if (o->check) memcpy(o->dst, o->rec, sizeof o->rec);
		if (o->fault != 0) poison(o->dev, o->fault);
	} else if (o->is_wait) {
		// nothing: wait_record held the stream until the record ran
	} else if (!o->is_record) {
		memmove(o->dst, o->src, o->n);
	} else if (o->ev != NULL) {
		if (o->gen > o->ev->ran) o->ev->ran = o->gen;
		if (o->ev->gen == o->gen) {
			o->ev->t = gpu_now();
			o->ev->done = 1;
		}
	}
}

// free_op frees an operation taken from a stream, and its event once
// nothing refers to a destroyed one.
static void free_op(struct op *o) {
	struct obj *e = o->ev;
	if (e != NULL && --e->oprefs == 0 && e->gone) free(e);
	free(o);
}

static void wait_record(struct obj *s, struct op *o);
static struct obj *obj_find(int k, const void *h);

// sleep_unlocked sleeps ns nanoseconds without the lock.
static void sleep_unlocked(long long ns) {
	struct timespec d = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
	pthread_mutex_unlock(&mu);
	while (nanosleep(&d, &d) != 0) {}
	pthread_mutex_lock(&mu);
}

// wait_gate waits without the lock until the test opens the gate.
static void wait_gate(void) {
	while (!__atomic_load_n(&fakecuda_gate, __ATOMIC_SEQ_CST)) sleep_unlocked(100000);
}

// worker runs the operations of stream s in order, as a GPU would, until
// the stream is destroyed (FAKECUDA_ASYNC). A kernel sleeps for its run
// time without the lock.
static void *worker(void *arg) {
	struct obj *s = arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!s->stop && s->head == NULL) pthread_cond_wait(&cv, &mu);
		if (s->head == NULL) break;
		struct op *o = s->head;
		s->head = o->next;
		if (s->head == NULL) s->tail = NULL;
		s->busy = 1;
		if (o->sleep_ns > 0) sleep_unlocked(o->sleep_ns);
		if (o->gate) wait_gate();
		if (o->is_wait) wait_record(s, o);
		if (!ctxs[s->dev].sticky) run(o);
		free_op(o);
		s->busy = 0;
		pthread_cond_broadcast(&cv);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

// stop_worker ends the worker of stream s, which is no longer in the list
// of streams. Called under the lock, which it lets go while it waits.
static void stop_worker(struct obj *s) {
	if (!s->has_worker) return;
	s->stop = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(s->worker, NULL);
	pthread_mutex_lock(&mu);
	s->has_worker = 0;
}

// enqueue runs o at once on the NULL stream (or with FAKECUDA_SYNC), else
// appends it to stream s.
static void enqueue(struct obj *s, struct op o) {
	if (s == NULL || at_once) {
		if (o.sleep_ns > 0) sleep_unlocked(o.sleep_ns);
		if (o.gate) wait_gate();
		run(&o);
		return;
	}
	struct op *p = malloc(sizeof *p);
	if (p == NULL) {
		run(&o);
		return;
	}
	*p = o;
	p->next = NULL;
	if (p->ev != NULL) p->ev->oprefs++;
	if (s->tail != NULL) s->tail->next = p;
	else s->head = p;
	s->tail = p;
	pthread_cond_broadcast(&cv);
}

// flush runs the operations of stream s in order, all of them or until
// record number gen of event ev has run.
static void flush(struct obj *s, struct obj *ev, long long gen) {
	if (s->has_worker) { // wait for the worker instead
		while ((s->head != NULL || s->busy) && (ev == NULL || ev->ran < gen) && !ctxs[s->dev].sticky) pthread_cond_wait(&cv, &mu);
		return;
	}
	while (s->head != NULL && (ev == NULL || ev->ran < gen) && !ctxs[s->dev].sticky) {
		struct op *o = s->head;
		s->head = o->next;
		if (s->head == NULL) s->tail = NULL;
		if (o->sleep_ns > 0) sleep_unlocked(o->sleep_ns);
		if (o->gate) wait_gate();
		if (o->is_wait) wait_record(s, o);
		if (!ctxs[s->dev].sticky || o->fault) run(o);
		free_op(o);
	}
}

// wait_record holds wait o of stream s (NULL: the legacy stream) until
// the record it waits for has run, as a GPU holds a stream at
// cuStreamWaitEvent: it runs the recording stream up to there, or waits
// for that stream's worker. It gives up when a sticky error has dropped
// the record, the recording stream is gone without running it, or s's
// worker is stopping. Called under the lock.
static void wait_record(struct obj *s, struct op *o) {
	struct obj *e = o->ev;
	while (e->ran < o->gen && !ctxs[e->dev].sticky && (s == NULL || (!ctxs[s->dev].sticky && !s->stop))) {
		struct obj *rs = obj_find(K_STREAM, o->ws);
		if (rs == NULL) return;
		if (rs->has_worker) {
			pthread_cond_wait(&cv, &mu);
			continue;
		}
		flush(rs, e, o->gen);
		return;
	}
}

// flush_dev runs everything pending on device d.
static void flush_dev(int d) {
	for (struct obj *s = objs[K_STREAM]; s != NULL; s = s->next)
		if (s->dev == d) flush(s, NULL, 0);
}

// is_sticky reports whether r is one of the results NVIDIA documents as
// leaving the context unusable: every later call in it returns the same
// result, until the primary context is released for the last time.
static int is_sticky(int r) {
	return r == 700 || r == 702 || r == 710 || (r >= 714 && r <= 719) || r == 226;
}

// drop_ops frees the operations waiting in stream s without running them.
static void drop_ops(struct obj *s) {
	while (s->head != NULL) {
		struct op *o = s->head;
		s->head = o->next;
		free_op(o);
	}
	s->tail = NULL;
}

// poison makes device d's context unusable with result r (the first one
// sticks): the work waiting in its streams never runs.
static void poison(int d, int r) {
	if (ctxs[d].sticky == 0) ctxs[d].sticky = r;
	for (struct obj *s = objs[K_STREAM]; s != NULL; s = s->next)
		if (s->dev == d) drop_ops(s);
	pthread_cond_broadcast(&cv);
}

// Faults.
#define MAX_FAULTS 16
struct fault {
	char name[64];
	long long nth, count, calls;
	int result; // 0: the entry point's default
};
static struct fault faults[MAX_FAULTS];
static int nfaults;
static int seen_gen = -1;

static void misuse(const char *fn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void misuse(const char *fn, const char *fmt, ...) {
	if (fakecuda_state.misuse == 0) {
		int k = snprintf(fakecuda_misuse_msg, sizeof fakecuda_misuse_msg, "%s: ", fn);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(fakecuda_misuse_msg + k, sizeof fakecuda_misuse_msg - k, fmt, ap);
		va_end(ap);
	}
	ADD(misuse, 1);
	if (trace) fprintf(stderr, "fakecuda: MISUSE %s\n", fakecuda_misuse_msg);
}

static void parse_faults(const char *spec) {
	nfaults = 0;
	if (spec == NULL) return;
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", spec);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok != NULL && nfaults < MAX_FAULTS; tok = strtok_r(NULL, ", \t\n", &save)) {
		struct fault f = {.nth = 1, .count = 1};
		char *c1 = strchr(tok, ':');
		if (c1 != NULL) {
			*c1 = 0;
			char *end;
			f.nth = strtoll(c1 + 1, &end, 10);
			if (*end == ':') {
				f.result = (int)strtol(end + 1, &end, 10);
				if (*end == ':') f.count = strtoll(end + 1, &end, 10);
			}
		}
		snprintf(f.name, sizeof f.name, "%s", tok);
		if (f.nth < 1) f.nth = 1;
		faults[nfaults++] = f;
	}
}

static int default_result(const char *fn) {
	if (strncmp(fn, "cuMemAlloc", 10) == 0 || strncmp(fn, "cuMemHostRegister", 17) == 0) return E_OUT_OF_MEMORY;
	if (strcmp(fn, "cuModuleLoadDataEx") == 0) return E_INVALID_PTX;
	if (strcmp(fn, "cuLaunchKernel") == 0) return E_LAUNCH_OUT_OF_RESOURCES;
	if (strstr(fn, "Synchronize") != NULL) return E_LAUNCH_FAILED;
	return E_UNKNOWN;
}

// same reports whether the fault name a names entry point fn: the same, or
// fn without its version suffix.
static int same(const char *a, const char *fn) {
	if (strcmp(a, fn) == 0) return 1;
	const char *v = strstr(fn, "_v");
	return v != NULL && (size_t)(v - fn) == strlen(a) && strncmp(a, fn, v - fn) == 0;
}

// rearm picks up a re-arming by a test. Called under the lock.
static void rearm(void) {
	int gen = __atomic_load_n(&fakecuda_fail_gen, __ATOMIC_ACQUIRE);
	if (gen != seen_gen) {
		seen_gen = gen;
		parse_faults(fakecuda_fail_spec);
	}
}

// count counts a call of fn against the armed faults and returns the
// result of an injected failure, or OK. Called under the lock.
static int count(const char *fn) {
	if (trace) fprintf(stderr, "fakecuda: %s\n", fn);
	int r = OK;
	for (int i = 0; i < nfaults; i++) {
		struct fault *f = &faults[i];
		if (!same(f->name, fn)) continue;
		f->calls++;
		if (r == OK && f->calls >= f->nth && (f->count == 0 || f->calls < f->nth + f->count)) {
			r = f->result != 0 ? f->result : default_result(fn);
			ADD(injected, 1);
			if (trace) fprintf(stderr, "fakecuda: %s fails with %d (injected)\n", fn, r);
		}
	}
	return r;
}

// enter is called under the lock at the start of every entry point except
// cuGetErrorName and cuGetErrorString.
static int enter(const char *fn) {
	rearm();
	return count(fn);
}

#define LOCK() pthread_mutex_lock(&mu)
#define UNLOCK() pthread_mutex_unlock(&mu)

// BEGIN starts an entry point that needs cuInit: it takes the lock, and
// returns an injected failure or CUDA_ERROR_NOT_INITIALIZED.
#define BEGIN(fn) \
	LOCK(); \
	int r_ = enter(fn); \
	if (r_ == OK && !initialized) r_ = E_NOT_INITIALIZED; \
	if (r_ != OK) { UNLOCK(); return r_; }

#define RETURN(r) do { int rr_ = (r); UNLOCK(); return rr_; } while (0)

// BEGIN_CTX is BEGIN for an entry point that needs a live current context;
// the device is then cur.
#define BEGIN_CTX(fn) \
	LOCK(); \
	int r_ = enter(fn); \
	if (r_ == OK && !initialized) r_ = E_NOT_INITIALIZED; \
	if (r_ != OK && is_sticky(r_) && current != NULL && current->refs > 0) poison(current->dev, r_); \
	if (r_ != OK) { UNLOCK(); return r_; } \
	if (current == NULL) { misuse(fn, "no current context"); RETURN(E_INVALID_CONTEXT); } \
	if (current->refs == 0) { misuse(fn, "the current context (device %d) has been released", current->dev); RETURN(E_CONTEXT_IS_DESTROYED); } \
	if (current->sticky) RETURN(current->sticky); \
	int cur = current->dev; (void)cur;

static void obj_add(struct obj *o) {
	o->next = objs[o->kind];
	objs[o->kind] = o;
}

static struct obj *obj_find(int k, const void *h) {
	for (struct obj *o = objs[k]; o != NULL; o = o->next)
		if (o == h) return o;
	return NULL;
}

static void obj_remove(struct obj *o) {
	for (struct obj **pp = &objs[o->kind]; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return;
		}
	}
}

// handle returns the live object h of kind k on device cur, or NULL after
// counting a misuse.
static struct obj *handle(const char *fn, enum kind k, const void *h, int cur) {
	struct obj *o = obj_find(k, h);
	if (o == NULL) {
		misuse(fn, "%p is not a live %s", h, kind_names[k]);
		return NULL;
	}
	if (o->dev != cur) {
		misuse(fn, "%s %p belongs to device %d, the current context is device %d's", kind_names[k], h, o->dev, cur);
		return NULL;
	}
	return o;
}

// stream_of checks a stream argument, NULL (the legacy default stream) or a
// live stream of the current device, and stores the stream in *out. It
// returns 0 after counting a misuse.
static int stream_of(const char *fn, const void *s, int cur, struct obj **out) {
	*out = NULL;
	return s == NULL || (*out = handle(fn, K_STREAM, s, cur)) != NULL;
}

// devrange returns the host address of [p, p+n) when it lies inside one live
// device allocation (of any device: addressing is unified), or NULL.
static char *devrange(const char *fn, CUdeviceptr p, size_t n) {
	for (struct obj *o = objs[K_ALLOC]; o != NULL; o = o->next) {
		uintptr_t base = (uintptr_t)o->p;
		if (p >= base && p < base + o->n) {
			if (p + n <= base + o->n) return (char *)(uintptr_t)p;
			misuse(fn, "[0x%llx, +%zu) extends past the allocation [%p, +%zu)", p, n, (void *)o->p, o->n);
			return NULL;
		}
	}
	misuse(fn, "0x%llx is not inside a live device allocation", p);
	return NULL;
}

static void free_obj(struct obj *o) {
	switch (o->kind) {
	case K_ALLOC:
		ctxs[o->dev].used -= o->n;
		ADD(allocs, -1);
		ADD(alloc_bytes, -(long long)o->n);
		free(o->p);
		break;
	case K_HOST:
		ADD(host_allocs, -1);
		free(o->p);
		break;
	case K_REG: ADD(host_regs, -1); break;
	case K_STREAM: ADD(streams, -1); break;
	case K_EVENT:
		ADD(events, -1);
		if (o->oprefs > 0) { // a record or wait still waits in a stream: free it after
			o->gone = 1;
			return;
		}
		break;
	case K_MODULE:
		ADD(modules, -1);
		free(o->text);
		break;
	default: break;
	}
	free(o);
}

static void unload_functions(struct obj *mod) {
	for (struct obj **pp = &objs[K_FUNC]; *pp != NULL;) {
		struct obj *f = *pp;
		if (f->mod == mod) {
			*pp = f->next;
			free(f);
		} else {
			pp = &f->next;
		}
	}
}

static long long envll(const char *name, long long def) {
	const char *s = getenv(name);
	if (s == NULL || *s == 0) return def;
	return strtoll(s, NULL, 0);
}

EXPORT CUresult cuInit(unsigned flags) {
	LOCK();
	rearm();
	trace = envll("FAKECUDA_TRACE", 0) != 0;
	at_once = envll("FAKECUDA_SYNC", 0) != 0;
	async_mode = envll("FAKECUDA_ASYNC", 0) != 0;
	kernel_ns = envll("FAKECUDA_KERNEL_US", 0) * 1000;
	clock_manual = envll("FAKECUDA_CLOCK_MANUAL", 0) != 0;
	clock_ppm = getenv("FAKECUDA_CLOCK_PPM") != NULL ? atof(getenv("FAKECUDA_CLOCK_PPM")) : 0;
	clock_offset = envll("FAKECUDA_CLOCK_OFFSET", 0);
	clock_jump_at = envll("FAKECUDA_CLOCK_JUMP_AT", -1);
	clock_jump_ns = envll("FAKECUDA_CLOCK_JUMP", 0);
	const char *spec = getenv("FAKECUDA_FAIL");
	if (spec != NULL && *spec != 0) parse_faults(spec);
	int r = count("cuInit");
	if (r != OK) RETURN(r);
	if (flags != 0) RETURN(E_INVALID_VALUE);
	int live = 0;
	for (int i = 0; i < MAX_DEVICES; i++) live += ctxs[i].refs;
	if (!live) { // the configuration holds while a context is retained
		ndev = (int)envll("FAKECUDA_DEVICES", 1);
		if (ndev < 0) ndev = 0;
		if (ndev > MAX_DEVICES) ndev = MAX_DEVICES;
		mem_limit = envll("FAKECUDA_MEM_LIMIT", 256LL << 20);
		driver_version = (int)envll("FAKECUDA_DRIVER_VERSION", 12080);
		const char *cc = getenv("FAKECUDA_CC");
		cc_major = 9, cc_minor = 0;
		if (cc != NULL && *cc != 0) sscanf(cc, "%d.%d", &cc_major, &cc_minor);
		for (int i = 0; i < MAX_DEVICES; i++) ctxs[i].dev = i;
	}
	if (ndev == 0) RETURN(E_NO_DEVICE);
	initialized = 1;
	RETURN(OK);
}

EXPORT CUresult cuDriverGetVersion(int *v) {
	LOCK();
	int r = enter("cuDriverGetVersion");
	if (r != OK) RETURN(r);
	if (v == NULL) RETURN(E_INVALID_VALUE);
	*v = driver_version;
	RETURN(OK);
}

static const struct {
	int r;
	const char *name, *desc;
} results[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{600, "CUDA_ERROR_NOT_READY", "device not ready"},
	{226, "CUDA_ERROR_CONTAINED", "uncorrectable error contained by the GPU"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	{701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
	{702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"},
	{704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"},
	{709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
	{712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
	{710, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
	{713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
	{714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"},
	{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"},
	{716, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"},
	{717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "operation not supported on global/shared address space"},
	{718, "CUDA_ERROR_INVALID_PC", "invalid program counter"},
	{719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

#ifndef FAKECUDA_ONLY_USED
EXPORT CUresult cuGetErrorName(CUresult r, const char **s) {
	for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
		if (results[i].r == r) {
			*s = results[i].name;
			return OK;
		}
	}
	*s = NULL;
	return E_INVALID_VALUE;
}
#endif

EXPORT CUresult cuGetErrorString(CUresult r, const char **s) {
	for (size_t i = 0; i < sizeof results / sizeof results[0]; i++) {
		if (results[i].r == r) {
			*s = results[i].desc;
			return OK;
		}
	}
	*s = NULL;
	return E_INVALID_VALUE;
}

#define DEV_OK(fn, d) \
	if ((d) < 0 || (d) >= ndev) { misuse(fn, "device %d of %d", (d), ndev); RETURN(E_INVALID_DEVICE); }

EXPORT CUresult cuDeviceGetCount(int *n) {
	BEGIN("cuDeviceGetCount");
	*n = ndev;
	RETURN(OK);
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	BEGIN("cuDeviceGet");
	DEV_OK("cuDeviceGet", ordinal);
	*d = ordinal;
	RETURN(OK);
}

EXPORT CUresult cuDeviceGetName(char *s, int n, CUdevice d) {
	BEGIN("cuDeviceGetName");
	DEV_OK("cuDeviceGetName", d);
	if (s == NULL || n <= 0) RETURN(E_INVALID_VALUE);
	snprintf(s, n, "fakecuda %d (fault-injection fake, not a GPU)", d);
	RETURN(OK);
}

EXPORT CUresult cuDeviceGetUuid_v2(unsigned char *u, CUdevice d) {
	BEGIN("cuDeviceGetUuid_v2");
	DEV_OK("cuDeviceGetUuid_v2", d);
	for (int i = 0; i < 16; i++) u[i] = (unsigned char)(0xfa + i * 17 + d);
	RETURN(OK);
}

// Attributes of an H100 SXM, except the compute capability (FAKECUDA_CC).
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	BEGIN("cuDeviceGetAttribute");
	DEV_OK("cuDeviceGetAttribute", d);
	switch (attr) {
	case 1: *v = 1024; break;       // MAX_THREADS_PER_BLOCK
	case 2: *v = 1024; break;       // MAX_BLOCK_DIM_X
	case 3: *v = 1024; break;       // MAX_BLOCK_DIM_Y
	case 4: *v = 64; break;         // MAX_BLOCK_DIM_Z
	case 5: *v = 2147483647; break; // MAX_GRID_DIM_X
	case 6: *v = 65535; break;      // MAX_GRID_DIM_Y
	case 7: *v = 65535; break;      // MAX_GRID_DIM_Z
	case 8: *v = 49152; break;      // MAX_SHARED_MEMORY_PER_BLOCK
	case 10: *v = 32; break;        // WARP_SIZE
	case 13: *v = 1980000; break;   // CLOCK_RATE, kHz
	case 16: *v = 132; break;       // MULTIPROCESSOR_COUNT
	case 18: *v = 0; break;         // INTEGRATED
	case 33: *v = 0x18 + d; break;  // PCI_BUS_ID
	case 34: *v = 0; break;         // PCI_DEVICE_ID
	case 36: *v = 2619000; break;   // MEMORY_CLOCK_RATE, kHz
	case 37: *v = 5120; break;      // GLOBAL_MEMORY_BUS_WIDTH
	case 38: *v = 50 << 20; break;  // L2_CACHE_SIZE
	case 39: *v = 2048; break;      // MAX_THREADS_PER_MULTIPROCESSOR
	case 40: *v = 3; break;         // ASYNC_ENGINE_COUNT
	case 41: *v = 1; break;         // UNIFIED_ADDRESSING
	case 50: *v = 0; break;         // PCI_DOMAIN_ID
	case 75: *v = cc_major; break;  // COMPUTE_CAPABILITY_MAJOR
	case 76: *v = cc_minor; break;  // COMPUTE_CAPABILITY_MINOR
	case 83: *v = 1; break;         // MANAGED_MEMORY
	case 97: *v = 232448; break;    // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	default: RETURN(E_INVALID_VALUE);
	}
	RETURN(OK);
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
	BEGIN("cuDeviceTotalMem_v2");
	DEV_OK("cuDeviceTotalMem_v2", d);
	*b = (size_t)mem_limit;
	RETURN(OK);
}

EXPORT CUresult cuDevicePrimaryCtxRetain(struct ctx **c, CUdevice d) {
	BEGIN("cuDevicePrimaryCtxRetain");
	DEV_OK("cuDevicePrimaryCtxRetain", d);
	ctxs[d].refs++;
	ADD(ctx_refs, 1);
	*c = &ctxs[d];
	RETURN(OK);
}

// release_all frees what is still live on device d when its primary context
// goes away, as the driver does, counting it.
static void release_all(int d) {
	flush_dev(d);
	for (int again = 1; again;) { // streams first: their workers end without the lock
		again = 0;
		for (struct obj *s = objs[K_STREAM]; s != NULL; s = s->next) {
			if (s->dev != d) continue;
			obj_remove(s);
			drop_ops(s);
			stop_worker(s);
			ADD(leaked_at_release, 1);
			if (trace) fprintf(stderr, "fakecuda: stream %p still live when device %d's context is released\n", (void *)s, d);
			free_obj(s);
			again = 1;
			break;
		}
	}
	for (int k = 0; k < K_COUNT; k++) {
		for (struct obj **pp = &objs[k]; *pp != NULL;) {
			struct obj *o = *pp;
			if (o->dev != d) {
				pp = &o->next;
				continue;
			}
			*pp = o->next;
			if (k != K_FUNC) {
				ADD(leaked_at_release, 1);
				if (trace) fprintf(stderr, "fakecuda: %s %p still live when device %d's context is released\n", kind_names[k], (void *)o, d);
			}
			free_obj(o);
		}
	}
	memset(ctxs[d].peer, 0, sizeof ctxs[d].peer);
	ctxs[d].sticky = 0; // the next retain makes a fresh context
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	BEGIN("cuDevicePrimaryCtxRelease_v2");
	DEV_OK("cuDevicePrimaryCtxRelease_v2", d);
	if (ctxs[d].refs == 0) {
		misuse("cuDevicePrimaryCtxRelease_v2", "device %d's primary context is not retained", d);
		RETURN(E_INVALID_CONTEXT);
	}
	ctxs[d].refs--;
	ADD(ctx_refs, -1);
	if (ctxs[d].refs == 0) release_all(d);
	RETURN(OK);
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active) {
	BEGIN("cuDevicePrimaryCtxGetState");
	DEV_OK("cuDevicePrimaryCtxGetState", d);
	if (flags == NULL || active == NULL) RETURN(E_INVALID_VALUE);
	*flags = ctxs[d].flags;
	*active = ctxs[d].refs > 0;
	RETURN(OK);
}

// cuDevicePrimaryCtxSetFlags_v2 refuses an active context, as the first
// version did: the plugin should not try.
EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice d, unsigned flags) {
	BEGIN("cuDevicePrimaryCtxSetFlags_v2");
	DEV_OK("cuDevicePrimaryCtxSetFlags_v2", d);
	if (flags & ~0x1fu) RETURN(E_INVALID_VALUE);
	if (ctxs[d].refs > 0) {
		misuse("cuDevicePrimaryCtxSetFlags_v2", "device %d's primary context is active", d);
		RETURN(708); // CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE
	}
	ctxs[d].flags = flags;
	RETURN(OK);
}

EXPORT CUresult cuCtxSetCurrent(struct ctx *c) {
	BEGIN("cuCtxSetCurrent");
	if (c != NULL && (c < &ctxs[0] || c >= &ctxs[ndev])) {
		misuse("cuCtxSetCurrent", "%p is not a context", (void *)c);
		RETURN(E_INVALID_CONTEXT);
	}
	current = c;
	RETURN(OK);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *fr, size_t *tot) {
	BEGIN_CTX("cuMemGetInfo_v2");
	*fr = (size_t)(mem_limit - current->used);
	*tot = (size_t)mem_limit;
	RETURN(OK);
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	BEGIN_CTX("cuMemAlloc_v2");
	if (n == 0) RETURN(E_INVALID_VALUE);
	if ((long long)n > mem_limit - current->used) RETURN(E_OUT_OF_MEMORY);
	struct obj *o = calloc(1, sizeof *o);
	void *m = NULL;
	if (o == NULL || posix_memalign(&m, 256, (n + 255) & ~(size_t)255) != 0) {
		free(o);
		RETURN(E_OUT_OF_MEMORY);
	}
	o->kind = K_ALLOC, o->dev = cur, o->p = m, o->n = n;
	obj_add(o);
	current->used += n;
	ADD(allocs, 1);
	ADD(alloc_bytes, (long long)n);
	*p = (CUdeviceptr)(uintptr_t)m;
	RETURN(OK);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
	BEGIN_CTX("cuMemFree_v2");
	flush_dev(cur); // cuMemFree synchronises
	if (current->sticky) RETURN(current->sticky);
	for (struct obj *o = objs[K_ALLOC]; o != NULL; o = o->next) {
		if ((uintptr_t)o->p == p) {
			if (o->dev != cur) {
				misuse("cuMemFree_v2", "0x%llx belongs to device %d, the current context is device %d's", p, o->dev, cur);
				RETURN(E_INVALID_VALUE);
			}
			obj_remove(o);
			free_obj(o);
			RETURN(OK);
		}
	}
	misuse("cuMemFree_v2", "0x%llx is not a live allocation", p);
	RETURN(E_INVALID_VALUE);
}

EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n) {
	BEGIN_CTX("cuMemAllocHost_v2");
	if (n == 0) RETURN(E_INVALID_VALUE);
	struct obj *o = calloc(1, sizeof *o);
	void *m = NULL;
	if (o == NULL || posix_memalign(&m, 4096, n) != 0) {
		free(o);
		RETURN(E_OUT_OF_MEMORY);
	}
	o->kind = K_HOST, o->dev = cur, o->p = m, o->n = n;
	obj_add(o);
	ADD(host_allocs, 1);
	*p = m;
	RETURN(OK);
}

EXPORT CUresult cuMemFreeHost(void *p) {
	BEGIN_CTX("cuMemFreeHost");
	flush_dev(cur);
	if (current->sticky) RETURN(current->sticky);
	for (struct obj *o = objs[K_HOST]; o != NULL; o = o->next) {
		if (o->p == p) {
			obj_remove(o);
			free_obj(o);
			RETURN(OK);
		}
	}
	misuse("cuMemFreeHost", "%p is not live page-locked memory", p);
	RETURN(E_INVALID_VALUE);
}

// Entry points the binding does not resolve: a real driver has them, and
// with -DFAKECUDA_ONLY_USED the fake does not, which the binding must
// accept (TestDriverWithoutUnusedSymbols).
#ifndef FAKECUDA_ONLY_USED
EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
	BEGIN_CTX("cuMemHostRegister_v2");
	(void)flags;
	if (p == NULL || n == 0) RETURN(E_INVALID_VALUE);
	for (struct obj *o = objs[K_REG]; o != NULL; o = o->next)
		if ((char *)p < o->p + o->n && o->p < (char *)p + n) RETURN(E_HOST_MEMORY_ALREADY_REGISTERED);
	struct obj *o = calloc(1, sizeof *o);
	if (o == NULL) RETURN(E_OUT_OF_MEMORY);
	o->kind = K_REG, o->dev = cur, o->p = p, o->n = n;
	obj_add(o);
	ADD(host_regs, 1);
	RETURN(OK);
}

EXPORT CUresult cuMemHostUnregister(void *p) {
	BEGIN_CTX("cuMemHostUnregister");
	flush_dev(cur);
	if (current->sticky) RETURN(current->sticky);
	for (struct obj *o = objs[K_REG]; o != NULL; o = o->next) {
		if (o->p == p) {
			obj_remove(o);
			free_obj(o);
			RETURN(OK);
		}
	}
	misuse("cuMemHostUnregister", "%p is not registered", p);
	RETURN(E_HOST_MEMORY_NOT_REGISTERED);
}
#endif

// page_locked reports whether [p, p+n) lies in page-locked or registered
// host memory.
static int page_locked(const char *p, size_t n) {
	for (int k = K_HOST; k <= K_REG; k++)
		for (struct obj *o = objs[k]; o != NULL; o = o->next)
			if (p >= o->p && p + n <= o->p + o->n) return 1;
	return 0;
}

// copy enqueues a copy on stream s (NULL: runs it at once). host is the
// copy's host side, or NULL: a copy with pageable host memory waits for the
// stream's earlier work and runs at once.
static CUresult copy(const char *fn, void *dst, const void *src, size_t n, const void *s, int cur, const void *host) {
	struct obj *so;
	if (!stream_of(fn, s, cur, &so)) return E_INVALID_HANDLE;
	if (n > 0 && (dst == NULL || src == NULL)) {
		misuse(fn, "null pointer");
		return E_INVALID_VALUE;
	}
	if (n > 0 && so != NULL && host != NULL && !page_locked(host, n)) {
		flush(so, NULL, 0);
		if (current->sticky) return current->sticky;
		ADD(pageable_waits, 1);
		memmove(dst, src, n);
		return OK;
	}
	if (n > 0) enqueue(so, (struct op){.dst = dst, .src = src, .n = n});
	return OK;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	BEGIN_CTX("cuMemcpyHtoD_v2");
	char *d = devrange("cuMemcpyHtoD_v2", dst, n);
	if (d == NULL) RETURN(E_INVALID_VALUE);
	RETURN(copy("cuMemcpyHtoD_v2", d, src, n, NULL, cur, NULL));
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	BEGIN_CTX("cuMemcpyDtoH_v2");
	char *s = devrange("cuMemcpyDtoH_v2", src, n);
	if (s == NULL) RETURN(E_INVALID_VALUE);
	RETURN(copy("cuMemcpyDtoH_v2", dst, s, n, NULL, cur, NULL));
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *stream) {
	BEGIN_CTX("cuMemcpyHtoDAsync_v2");
	char *d = devrange("cuMemcpyHtoDAsync_v2", dst, n);
	if (d == NULL) RETURN(E_INVALID_VALUE);
	RETURN(copy("cuMemcpyHtoDAsync_v2", d, src, n, stream, cur, src));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *stream) {
	BEGIN_CTX("cuMemcpyDtoHAsync_v2");
	char *s = devrange("cuMemcpyDtoHAsync_v2", src, n);
	if (s == NULL) RETURN(E_INVALID_VALUE);
	RETURN(copy("cuMemcpyDtoHAsync_v2", dst, s, n, stream, cur, dst));
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *stream) {
	BEGIN_CTX("cuMemcpyDtoDAsync_v2");
	char *d = devrange("cuMemcpyDtoDAsync_v2", dst, n);
	char *s = devrange("cuMemcpyDtoDAsync_v2", src, n);
	if (d == NULL || s == NULL) RETURN(E_INVALID_VALUE);
	// CUDA leaves overlapping ranges undefined (its copies are memcpy's):
	// a plugin that passes them relies on what a GPU may not do.
	if (n > 0 && dst < src + n && src < dst + n) {
		misuse("cuMemcpyDtoDAsync_v2", "source [0x%llx, +%zu) and destination [0x%llx, +%zu) overlap", src, n, dst, n);
		RETURN(E_INVALID_VALUE);
	}
	RETURN(copy("cuMemcpyDtoDAsync_v2", d, s, n, stream, cur, NULL));
}

EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, struct ctx *dctx, CUdeviceptr src, struct ctx *sctx, size_t n, void *stream) {
	BEGIN_CTX("cuMemcpyPeerAsync");
	if (dctx < &ctxs[0] || dctx >= &ctxs[ndev] || sctx < &ctxs[0] || sctx >= &ctxs[ndev] || dctx->refs == 0 || sctx->refs == 0) {
		misuse("cuMemcpyPeerAsync", "contexts %p and %p are not both live", (void *)dctx, (void *)sctx);
		RETURN(E_INVALID_CONTEXT);
	}
	char *d = devrange("cuMemcpyPeerAsync", dst, n);
	char *s = devrange("cuMemcpyPeerAsync", src, n);
	if (d == NULL || s == NULL) RETURN(E_INVALID_VALUE);
	RETURN(copy("cuMemcpyPeerAsync", d, s, n, stream, cur, NULL));
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
	BEGIN("cuDeviceCanAccessPeer");
	DEV_OK("cuDeviceCanAccessPeer", d);
	DEV_OK("cuDeviceCanAccessPeer", peer);
	*can = d != peer;
	RETURN(OK);
}

EXPORT CUresult cuCtxEnablePeerAccess(struct ctx *peer, unsigned flags) {
	BEGIN_CTX("cuCtxEnablePeerAccess");
	if (flags != 0) RETURN(E_INVALID_VALUE);
	if (peer < &ctxs[0] || peer >= &ctxs[ndev] || peer->refs == 0 || peer == current) {
		misuse("cuCtxEnablePeerAccess", "%p is not another live context", (void *)peer);
		RETURN(E_INVALID_CONTEXT);
	}
	if (current->peer[peer->dev]) RETURN(E_PEER_ACCESS_ALREADY_ENABLED);
	current->peer[peer->dev] = 1;
	RETURN(OK);
}

EXPORT CUresult cuStreamCreate(void **s, unsigned flags) {
	BEGIN_CTX("cuStreamCreate");
	if (flags > 1) RETURN(E_INVALID_VALUE);
	struct obj *o = calloc(1, sizeof *o);
	if (o == NULL) RETURN(E_OUT_OF_MEMORY);
	o->kind = K_STREAM, o->dev = cur, o->flags = flags;
	if (async_mode && !at_once) {
		if (pthread_create(&o->worker, NULL, worker, o) != 0) {
			free(o);
			RETURN(E_OUT_OF_MEMORY);
		}
		o->has_worker = 1;
	}
	obj_add(o);
	ADD(streams, 1);
	*s = o;
	RETURN(OK);
}

EXPORT CUresult cuStreamDestroy_v2(void *s) {
	BEGIN_CTX("cuStreamDestroy_v2");
	struct obj *o = handle("cuStreamDestroy_v2", K_STREAM, s, cur);
	if (o == NULL) RETURN(E_INVALID_HANDLE);
	flush(o, NULL, 0); // the driver finishes the stream's work first
	if (current->sticky) RETURN(current->sticky);
	obj_remove(o);
	stop_worker(o);
	free_obj(o);
	RETURN(OK);
}

EXPORT CUresult cuStreamSynchronize(void *s) {
	BEGIN_CTX("cuStreamSynchronize");
	struct obj *so;
	if (!stream_of("cuStreamSynchronize", s, cur, &so)) RETURN(E_INVALID_HANDLE);
	if (so != NULL) flush(so, NULL, 0);
	else flush_dev(cur); // the legacy stream waits for the blocking streams; all, here
	RETURN(current->sticky);
}

EXPORT CUresult cuStreamQuery(void *s) {
	BEGIN_CTX("cuStreamQuery");
	struct obj *so;
	if (!stream_of("cuStreamQuery", s, cur, &so)) RETURN(E_INVALID_HANDLE);
	RETURN(so != NULL && (so->head != NULL || so->busy) ? E_NOT_READY : OK);
}

EXPORT CUresult cuEventCreate(void **e, unsigned flags) {
	BEGIN_CTX("cuEventCreate");
	if (flags & ~0xfu) RETURN(E_INVALID_VALUE);
	struct obj *o = calloc(1, sizeof *o);
	if (o == NULL) RETURN(E_OUT_OF_MEMORY);
	o->kind = K_EVENT, o->dev = cur, o->flags = flags;
	obj_add(o);
	ADD(events, 1);
	*e = o;
	RETURN(OK);
}

EXPORT CUresult cuEventRecord(void *e, void *s) {
	BEGIN_CTX("cuEventRecord");
	struct obj *o = handle("cuEventRecord", K_EVENT, e, cur);
	if (o == NULL) RETURN(E_INVALID_HANDLE);
	struct obj *so;
	if (!stream_of("cuEventRecord", s, cur, &so)) RETURN(E_INVALID_HANDLE);
	o->recorded = 1;
	o->done = 0;
	o->gen++;
	o->rec_stream = so;
	struct op rec = {.is_record = 1, .ev = o, .gen = o->gen};
	if (so != NULL && !so->has_worker && so->head == NULL) run(&rec); // an idle stream passes a record at once
	else enqueue(so, rec);
	RETURN(OK);
}

// cuStreamWaitEvent holds the work enqueued on the stream after the call
// until the work before the event's latest record at the call has run (a
// later record of the event does not move it), without the caller
// waiting; with FAKECUDA_ASYNC the stream's worker waits there. The event
// may be another device's, as the driver allows. An event never recorded,
// or whose record has run, needs no wait. Built with
// -DFAKECUDA_NO_STREAM_WAIT the library lacks the entry point, as a driver
// may lack an optional one.
#ifndef FAKECUDA_NO_STREAM_WAIT
EXPORT CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
	BEGIN_CTX("cuStreamWaitEvent");
	struct obj *so;
	if (!stream_of("cuStreamWaitEvent", s, cur, &so)) RETURN(E_INVALID_HANDLE);
	struct obj *eo = obj_find(K_EVENT, e);
	if (eo == NULL) {
		misuse("cuStreamWaitEvent", "%p is not a live event", e);
		RETURN(E_INVALID_HANDLE);
	}
	if (flags > 1) RETURN(E_INVALID_VALUE); // CU_EVENT_WAIT_DEFAULT or _EXTERNAL
	ADD(stream_waits, 1);
	if (eo->ran >= eo->gen) RETURN(OK);
	struct op w = {.is_wait = 1, .ev = eo, .gen = eo->gen, .ws = eo->rec_stream};
	if (so == NULL || at_once) wait_record(NULL, &w); // the legacy stream runs at the call
	else enqueue(so, w);
	RETURN(current->sticky);
}
#endif

EXPORT CUresult cuEventSynchronize(void *e) {
	BEGIN_CTX("cuEventSynchronize");
	struct obj *o = handle("cuEventSynchronize", K_EVENT, e, cur);
	if (o == NULL) RETURN(E_INVALID_HANDLE);
	if (async_mode && !at_once) {
		while (o->recorded && !o->done && !current->sticky) pthread_cond_wait(&cv, &mu);
		RETURN(current->sticky);
	}
	for (struct obj *s = objs[K_STREAM]; s != NULL && o->recorded && !o->done; s = s->next) flush(s, o, o->gen);
	RETURN(current->sticky);
}

EXPORT CUresult cuEventQuery(void *e) {
	BEGIN_CTX("cuEventQuery");
	struct obj *o = handle("cuEventQuery", K_EVENT, e, cur);
	if (o == NULL) RETURN(E_INVALID_HANDLE);
	RETURN(o->recorded && !o->done ? E_NOT_READY : OK);
}

EXPORT CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b) {
	BEGIN_CTX("cuEventElapsedTime_v2");
	struct obj *ea = handle("cuEventElapsedTime_v2", K_EVENT, a, cur);
	struct obj *eb = handle("cuEventElapsedTime_v2", K_EVENT, b, cur);
	if (ea == NULL || eb == NULL) RETURN(E_INVALID_HANDLE);
	if ((ea->flags | eb->flags) & 2) { // CU_EVENT_DISABLE_TIMING
		misuse("cuEventElapsedTime_v2", "an event was created with CU_EVENT_DISABLE_TIMING");
		RETURN(E_INVALID_HANDLE);
	}
	if (!ea->recorded || !eb->recorded) {
		misuse("cuEventElapsedTime_v2", "an event has not been recorded");
		RETURN(E_INVALID_HANDLE);
	}
	if (!ea->done || !eb->done) RETURN(E_NOT_READY);
	double ns = (double)(eb->t - ea->t);
	*ms = (float)(ns / 1e6);
	RETURN(OK);
}

EXPORT CUresult cuEventDestroy_v2(void *e) {
	BEGIN_CTX("cuEventDestroy_v2");
	struct obj *o = handle("cuEventDestroy_v2", K_EVENT, e, cur);
	if (o == NULL) RETURN(E_INVALID_HANDLE);
	obj_remove(o);
	free_obj(o);
	RETURN(OK);
}

// CUjit_option values.
enum { JIT_INFO_LOG_BUFFER = 3, JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4, JIT_ERROR_LOG_BUFFER = 5, JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };

// jitlog writes msg into the log buffer option buf of a cuModuleLoadDataEx
// call, as far as its size option allows, and stores the bytes written in
// the size option.
static void jitlog(unsigned nopt, const int *opts, void **vals, int buf, int size, const char *msg) {
	char *b = NULL;
	size_t n = 0;
	int si = -1;
	for (unsigned i = 0; i < nopt; i++) {
		if (opts[i] == buf) b = vals[i];
		if (opts[i] == size) n = (size_t)(uintptr_t)vals[i], si = (int)i;
	}
	if (b == NULL || n == 0) return;
	snprintf(b, n, "%s", msg);
	vals[si] = (void *)(uintptr_t)(strlen(b) + 1);
}

EXPORT CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned nopt, int *opts, void **vals) {
	LOCK();
	int r = enter("cuModuleLoadDataEx");
	if (r == OK && !initialized) r = E_NOT_INITIALIZED;
	if (r != OK && is_sticky(r) && current != NULL && current->refs > 0) poison(current->dev, r);
	if (r == OK && (current == NULL || current->refs == 0)) {
		misuse("cuModuleLoadDataEx", "no live current context");
		r = E_INVALID_CONTEXT;
	}
	if (r == OK && current->sticky) RETURN(current->sticky);
	if (r != OK) {
		char msg[128];
		snprintf(msg, sizeof msg, "fakecuda: injected failure of cuModuleLoadDataEx (CUresult %d)", r);
		jitlog(nopt, opts, vals, JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES, msg);
		RETURN(r);
	}
	if (image == NULL || m == NULL || (nopt > 0 && (opts == NULL || vals == NULL))) RETURN(E_INVALID_VALUE);
	const char *text = image;
	const char *bad = strstr(text, "FAKECUDA_BAD_PTX");
	if (bad != NULL) {
		int line = 1;
		for (const char *p = text; p < bad; p++) line += *p == '\n';
		char msg[256];
		snprintf(msg, sizeof msg, "ptxas application ptx input, line %d; error   : FAKECUDA_BAD_PTX: syntax error\nptxas fatal   : Ptx assembly aborted due to errors", line);
		jitlog(nopt, opts, vals, JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES, msg);
		RETURN(E_INVALID_PTX);
	}
	struct obj *o = calloc(1, sizeof *o);
	if (o == NULL || (o->text = strdup(text)) == NULL) {
		free(o);
		RETURN(E_OUT_OF_MEMORY);
	}
	o->kind = K_MODULE, o->dev = current->dev;
	const char *sl = strstr(text, "FAKECUDA_SLEEP_US");
	if (sl != NULL) o->sleep_ns = strtoll(sl + 17, NULL, 10) * 1000;
	o->gate = strstr(text, "FAKECUDA_GATE") != NULL;
	o->fill = strstr(text, "FAKECUDA_FILL") != NULL;
	o->check_slot = -1;
	const char *cf = strstr(text, "FAKECUDA_CHECKFAIL");
	if (cf != NULL) {
		char *e;
		o->check_slot = (int)strtol(cf + 18, &e, 10);
		for (int i = 0; i < 4; i++) o->check_rec[i] = strtoll(e, &e, 10);
	}
	const char *fault = strstr(text, "FAKECUDA_FAULT");
	if (fault != NULL) {
		o->flags = (unsigned)strtol(fault + 14, NULL, 10);
		if (o->flags == 0) o->flags = E_ILLEGAL_ADDRESS;
	}
	obj_add(o);
	ADD(modules, 1);
	char msg[128];
	snprintf(msg, sizeof msg, "fakecuda: loaded %zu bytes of PTX (not compiled)", strlen(text));
	jitlog(nopt, opts, vals, JIT_INFO_LOG_BUFFER, JIT_INFO_LOG_BUFFER_SIZE_BYTES, msg);
	*m = o;
	RETURN(OK);
}

static int ident(char c) {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// has_entry reports whether text declares ".entry name".
static int has_entry(const char *text, const char *name) {
	size_t n = strlen(name);
	for (const char *p = strstr(text, ".entry"); p != NULL; p = strstr(p + 1, ".entry")) {
		const char *q = p + 6;
		if (*q != ' ' && *q != '\t' && *q != '\n') continue;
		while (*q == ' ' || *q == '\t' || *q == '\n') q++;
		if (strncmp(q, name, n) == 0 && !ident(q[n])) return 1;
	}
	return 0;
}

EXPORT CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	BEGIN_CTX("cuModuleGetFunction");
	struct obj *mod = handle("cuModuleGetFunction", K_MODULE, m, cur);
	if (mod == NULL) RETURN(E_INVALID_HANDLE);
	if (name == NULL || *name == 0 || strlen(name) >= sizeof mod->name) RETURN(E_INVALID_VALUE);
	if (!has_entry(mod->text, name)) RETURN(E_NOT_FOUND);
	for (struct obj *o = objs[K_FUNC]; o != NULL; o = o->next) {
		if (o->mod == mod && strcmp(o->name, name) == 0) {
			*f = o;
			RETURN(OK);
		}
	}
	struct obj *o = calloc(1, sizeof *o);
	if (o == NULL) RETURN(E_OUT_OF_MEMORY);
	o->kind = K_FUNC, o->dev = cur, o->mod = mod;
	snprintf(o->name, sizeof o->name, "%s", name);
	obj_add(o);
	*f = o;
	RETURN(OK);
}

EXPORT CUresult cuModuleUnload(void *m) {
	BEGIN_CTX("cuModuleUnload");
	struct obj *mod = handle("cuModuleUnload", K_MODULE, m, cur);
	if (mod == NULL) RETURN(E_INVALID_HANDLE);
	unload_functions(mod);
	obj_remove(mod);
	free_obj(mod);
	RETURN(OK);
}

EXPORT CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
	BEGIN_CTX("cuFuncGetAttribute");
	if (handle("cuFuncGetAttribute", K_FUNC, f, cur) == NULL) RETURN(E_INVALID_HANDLE);
	switch (attr) {
	case 0: *v = 1024; break; // MAX_THREADS_PER_BLOCK
	case 1: *v = 0; break;    // SHARED_SIZE_BYTES: the fake runs no PTX
	default: RETURN(E_INVALID_VALUE);
	}
	RETURN(OK);
}

EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
	unsigned shmem, void *s, void **params, void **extra) {
	BEGIN_CTX("cuLaunchKernel");
	struct obj *fo = handle("cuLaunchKernel", K_FUNC, f, cur);
	if (fo == NULL) RETURN(E_INVALID_HANDLE);
	struct obj *so;
	if (!stream_of("cuLaunchKernel", s, cur, &so)) RETURN(E_INVALID_HANDLE);
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gx > 2147483647u || gy > 65535 || gz > 65535 ||
		bx > 1024 || by > 1024 || bz > 64 || (unsigned long long)bx * by * bz > 1024 || shmem > 49152 || extra != NULL) {
		misuse("cuLaunchKernel", "grid %ux%ux%u, block %ux%ux%u, shared %u, extra %p out of the device's limits", gx, gy, gz, bx, by, bz, shmem, (void *)extra);
		RETURN(E_INVALID_VALUE);
	}
	struct op k = {.is_kernel = 1, .fault = (int)fo->mod->flags, .dev = cur, .sleep_ns = fo->mod->sleep_ns + kernel_ns, .gate = fo->mod->gate};
	if (fo->mod->fill) { // (p, n, v): three 64-bit slots, as the binding passes them
		if (params == NULL || params[0] == NULL || params[1] == NULL || params[2] == NULL) {
			misuse("cuLaunchKernel", "a FAKECUDA_FILL kernel takes a pointer, a length and a byte");
			RETURN(E_INVALID_VALUE);
		}
		k.n = (size_t)*(uint64_t *)params[1];
		k.val = (unsigned char)*(uint64_t *)params[2];
		if ((k.dst = devrange("cuLaunchKernel", *(CUdeviceptr *)params[0], k.n)) == NULL) RETURN(E_INVALID_VALUE);
		k.fill = 1;
	}
	if (fo->mod->check_slot >= 0) {
		int sl = fo->mod->check_slot;
		if (params == NULL || params[sl] == NULL) {
			misuse("cuLaunchKernel", "a FAKECUDA_CHECKFAIL kernel takes its fault record in slot %d", sl);
			RETURN(E_INVALID_VALUE);
		}
		if ((k.dst = devrange("cuLaunchKernel", *(CUdeviceptr *)params[sl], 32)) == NULL) RETURN(E_INVALID_VALUE);
		memcpy(k.rec, fo->mod->check_rec, sizeof k.rec);
		k.check = 1;
	}
	ADD(launches, 1);
	if (k.fault != 0 || k.sleep_ns != 0 || k.gate || k.fill || k.check) enqueue(so, k);
	RETURN(OK);
}
