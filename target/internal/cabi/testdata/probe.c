// probe: a test tool that exercises the C entry points and checks the data
// slots it gets; it writes "probe ..." lines to $PROBE_OUTPUT, which
// cabi's tests read.
#include <omp-tools.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&mu);
	if (out) {
		fputs("probe ", out);
		vfprintf(out, fmt, ap);
		fputc('\n', out);
		fflush(out);
	}
	pthread_mutex_unlock(&mu);
	va_end(ap);
}

static ompt_start_tool_result_t result;

static ompt_set_callback_t set_callback;
static ompt_get_callback_t get_callback;
static ompt_get_unique_id_t get_unique_id;
static ompt_get_target_info_t get_target_info;
static ompt_get_state_t get_state;
static ompt_get_task_info_t get_task_info;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_num_devices_t get_num_devices;
static ompt_data_t *task_data_slot; // from get_task_info(0)

static const char *names[] = {
	"ompt_enumerate_states", "ompt_enumerate_mutex_impls", "ompt_set_callback", "ompt_get_callback",
	"ompt_get_thread_data", "ompt_get_num_places", "ompt_get_place_proc_ids", "ompt_get_place_num",
	"ompt_get_partition_place_nums", "ompt_get_proc_id", "ompt_get_state", "ompt_get_parallel_info",
	"ompt_get_task_info", "ompt_get_task_memory", "ompt_get_num_devices", "ompt_get_num_procs",
	"ompt_get_target_info", "ompt_get_unique_id", "ompt_finalize_tool",
	"ompt_get_device_num_procs", "ompt_get_device_time", "ompt_translate_time", "ompt_set_trace_ompt",
	"ompt_set_trace_native", "ompt_start_trace", "ompt_pause_trace", "ompt_flush_trace", "ompt_stop_trace",
	"ompt_advance_buffer_cursor", "ompt_get_record_type", "ompt_get_record_ompt", "ompt_get_record_native",
	"ompt_get_record_abstract", "ompt_no_such_entry", "", "OMPT_SET_CALLBACK",
};
#define NNAMES (sizeof names / sizeof names[0])

// ---- slot checks -----------------------------------------------------------

// Slots seen at a begin event and what the tool wrote into them; the end
// event must find the same pointer holding the same value.
#define NSLOTS 4096
static struct { void *p; uint64_t v; } slots[NSLOTS];
static int slot_ok, slot_bad, state_bad, info_bad, task_bad, events;

static void slot_put(void *p, uint64_t v) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < NSLOTS; i++) {
		if (slots[i].p == NULL) {
			slots[i].p = p;
			slots[i].v = v;
			break;
		}
	}
	pthread_mutex_unlock(&mu);
}

static void slot_check(void *p, uint64_t v, int remove) {
	pthread_mutex_lock(&mu);
	int found = 0;
	for (int i = 0; i < NSLOTS; i++) {
		if (slots[i].p == p) {
			found = slots[i].v == v;
			if (remove) slots[i].p = NULL;
			break;
		}
	}
	if (found) slot_ok++; else slot_bad++;
	pthread_mutex_unlock(&mu);
}

// slot_drop forgets p (a device memory routine's slot, reused by the next).
static void slot_drop(void *p) {
	pthread_mutex_lock(&mu);
	for (int i = 0; i < NSLOTS; i++) {
		if (slots[i].p == p) slots[i].p = NULL;
	}
	pthread_mutex_unlock(&mu);
}

static void count(int *c) {
	pthread_mutex_lock(&mu);
	(*c)++;
	pthread_mutex_unlock(&mu);
}

// ---- callbacks ----------------------------------------------------------------

static void never(void) {}

static void on_target_emi(ompt_target_t kind, ompt_scope_endpoint_t ep, int dev, ompt_data_t *task, ompt_data_t *ttd, ompt_data_t *td, const void *code) {
	(void)code;
	count(&events);
	// task_data is the calling thread's initial task (get_task_info(0) here)
	ompt_data_t *cur_task = NULL;
	if (get_task_info(0, NULL, &cur_task, NULL, NULL, NULL) != 2 || task != cur_task || task_data_slot == NULL) count(&task_bad);
	int nowait = kind >= ompt_target_nowait;
	if ((ttd != NULL) != nowait) count(&task_bad);
	uint64_t idev;
	ompt_id_t tid, hop;
	if (!get_target_info(&idev, &tid, &hop) || (int)idev != dev || tid == 0) count(&info_bad);
	ompt_wait_id_t w = 1;
	int st = get_state(&w);
	int want = kind == ompt_target || kind == ompt_target_nowait ? ompt_state_wait_target
	         : kind == ompt_target_update || kind == ompt_target_update_nowait ? ompt_state_wait_target_update
	         : ompt_state_wait_target_map;
	if (st != want || w != 0) count(&state_bad);
	if (ep == ompt_scope_begin) {
		// a construct's slots start as ompt_data_none, however often
		// the runtime reuses their memory
		if (td->value != 0 || (ttd != NULL && ttd->value != 0)) count(&slot_bad);
		td->value = get_unique_id();
		slot_put(td, td->value);
		if (ttd) {
			ttd->value = td->value + 1;
			slot_put(ttd, ttd->value);
		}
	} else {
		slot_check(td, td->value, 1);
		if (ttd) slot_check(ttd, ttd->value, 1);
	}
}

static void on_data_op_emi(ompt_scope_endpoint_t ep, ompt_data_t *ttd, ompt_data_t *td, ompt_id_t *hop, ompt_target_data_op_t op, void *src, int sdev, void *dst, int ddev, size_t bytes, const void *code) {
	(void)ttd; (void)op; (void)src; (void)sdev; (void)dst; (void)ddev; (void)bytes; (void)code;
	count(&events);
	uint64_t idev;
	ompt_id_t tid, id;
	if (td == NULL) {
		count(&slot_bad); // never NULL, also for a device memory routine
	} else if (get_target_info(&idev, &tid, &id)) {
		slot_check(td, td->value, 0); // the construct's slot, as its begin left it
		ompt_wait_id_t w;
		if (get_state(&w) != ompt_state_wait_target_map && get_state(&w) != ompt_state_wait_target_update) count(&state_bad);
		// the ids are the tool's: what its slots hold now
		if (id != *hop || tid != td->value) count(&info_bad);
	} else if (ep == ompt_scope_begin && td->value == 0) {
		// a device memory routine's own slot: zeroed at its begin
		slot_drop(td);
		td->value = get_unique_id();
		slot_put(td, td->value);
	} else {
		slot_check(td, td->value, 0); // the routine's slot, as its first op left it
	}
	if (ep == ompt_scope_begin) {
		if (*hop == 0) count(&slot_bad);
		*hop |= 1ull << 62; // the tool may set host_op_id; it must be there at end
		slot_put(hop, *hop);
	} else {
		slot_check(hop, *hop, 1);
	}
}

static void on_submit_emi(ompt_scope_endpoint_t ep, ompt_data_t *td, ompt_id_t *hop, unsigned int teams) {
	(void)teams;
	count(&events);
	slot_check(td, td->value, 0);
	if (ep == ompt_scope_begin) {
		*hop |= 1ull << 62;
		uint64_t idev;
		ompt_id_t tid, id;
		// what the tool just wrote is what get_target_info answers it
		if (!get_target_info(&idev, &tid, &id) || id != *hop || tid != td->value) count(&info_bad);
		slot_put(hop, *hop);
	} else {
		slot_check(hop, *hop, 1);
	}
}

static void on_map_emi(ompt_data_t *td, unsigned int n, void **host, void **dev, size_t *bytes, unsigned int *flags, const void *code) {
	(void)n; (void)host; (void)dev; (void)bytes; (void)flags; (void)code;
	count(&events);
	slot_check(td, td->value, 0);
}

static void on_device_initialize(int dev, const char *type, ompt_device_t *device, ompt_function_lookup_t lookup, const char *doc) {
	(void)type;
	say("device_initialize dev=%d device_nonnull=%d lookup_nonnull=%d doc_nonnull=%d", dev, device != NULL, lookup != NULL, doc != NULL);
	for (size_t i = 0; i < NNAMES; i++) {
		say("lookup device %s=%d", names[i], lookup(names[i]) != NULL);
	}
	ompt_get_device_num_procs_t procs = (ompt_get_device_num_procs_t)lookup("ompt_get_device_num_procs");
	ompt_get_device_time_t now = (ompt_get_device_time_t)lookup("ompt_get_device_time");
	ompt_translate_time_t tr = (ompt_translate_time_t)lookup("ompt_translate_time");
	if (!procs || !now || !tr) return;
	ompt_device_time_t t1 = now(device), t2 = now(device);
	say("device dev=%d num_procs=%d time_positive=%d time_monotonic=%d translate_positive=%d", dev, procs(device), t1 > 0, t2 >= t1, tr(device, t1) > 0);
	int local;
	say("device dev=%d bogus=%d,%d,%d,%d", dev, procs((ompt_device_t *)&local), procs(NULL), (int)now((ompt_device_t *)&local), tr(NULL, t1) != 0);
}

static void on_device_finalize(int dev) { say("device_finalize dev=%d", dev); }

// ---- start-up ----------------------------------------------------------------

static void *thread_main(void *arg) {
	(void)arg;
	uint64_t a = get_unique_id(), b = get_unique_id();
	ompt_data_t *td = get_thread_data();
	say("thread num_devices=%d unique_increasing=%d thread_data_nonnull=%d", get_num_devices(), b > a && a > 0, td != NULL);
	return NULL;
}

static int initialize(ompt_function_lookup_t lookup, int initial_device_num, ompt_data_t *tool_data) {
	say("initialize initial_device_num=%d tool_data_by_ref=%d", initial_device_num, tool_data == &result.tool_data);
	tool_data->value = 42;
	for (size_t i = 0; i < NNAMES; i++) {
		say("lookup host %s=%d", names[i], lookup(names[i]) != NULL);
	}
	set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
	get_callback = (ompt_get_callback_t)lookup("ompt_get_callback");
	get_unique_id = (ompt_get_unique_id_t)lookup("ompt_get_unique_id");
	get_target_info = (ompt_get_target_info_t)lookup("ompt_get_target_info");
	get_state = (ompt_get_state_t)lookup("ompt_get_state");
	get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
	get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
	get_num_devices = (ompt_get_num_devices_t)lookup("ompt_get_num_devices");
	ompt_get_num_procs_t num_procs = (ompt_get_num_procs_t)lookup("ompt_get_num_procs");
	ompt_get_num_places_t num_places = (ompt_get_num_places_t)lookup("ompt_get_num_places");
	ompt_get_place_num_t place_num = (ompt_get_place_num_t)lookup("ompt_get_place_num");
	ompt_get_place_proc_ids_t place_proc_ids = (ompt_get_place_proc_ids_t)lookup("ompt_get_place_proc_ids");
	ompt_get_partition_place_nums_t partition = (ompt_get_partition_place_nums_t)lookup("ompt_get_partition_place_nums");
	ompt_get_proc_id_t proc_id = (ompt_get_proc_id_t)lookup("ompt_get_proc_id");
	ompt_get_parallel_info_t parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
	ompt_get_task_memory_t task_memory = (ompt_get_task_memory_t)lookup("ompt_get_task_memory");
	ompt_enumerate_states_t enum_states = (ompt_enumerate_states_t)lookup("ompt_enumerate_states");
	ompt_enumerate_mutex_impls_t enum_mutex = (ompt_enumerate_mutex_impls_t)lookup("ompt_enumerate_mutex_impls");
	if (!set_callback || !get_callback || !get_unique_id || !get_target_info || !get_state || !get_task_info ||
	    !get_thread_data || !get_num_devices || !num_procs || !num_places || !place_num || !place_proc_ids ||
	    !partition || !proc_id || !parallel_info || !task_memory || !enum_states || !enum_mutex) {
		say("initialize missing entry points");
		return 0;
	}

	// set_callback for every number, real callbacks for the target events
	for (int ev = -1; ev <= 40; ev++) {
		ompt_callback_t cb = (ompt_callback_t)never;
		switch (ev) {
		case ompt_callback_target_emi: cb = (ompt_callback_t)on_target_emi; break;
		case ompt_callback_target_data_op_emi: cb = (ompt_callback_t)on_data_op_emi; break;
		case ompt_callback_target_submit_emi: cb = (ompt_callback_t)on_submit_emi; break;
		case ompt_callback_target_map_emi: cb = (ompt_callback_t)on_map_emi; break;
		case ompt_callback_device_initialize: cb = (ompt_callback_t)on_device_initialize; break;
		case ompt_callback_device_finalize: cb = (ompt_callback_t)on_device_finalize; break;
		case ompt_callback_target: case ompt_callback_target_data_op: case ompt_callback_target_submit:
		case ompt_callback_target_map: case ompt_callback_device_load: case ompt_callback_device_unload:
			cb = NULL; // the EMI forms take these events; load/unload are not probed
			break;
		}
		if (cb) say("set %d=%d", ev, (int)set_callback((ompt_callbacks_t)ev, cb));
	}
	say("set 99=%d", (int)set_callback((ompt_callbacks_t)99, (ompt_callback_t)never));
	ompt_callback_t got = NULL;
	int r1 = get_callback(ompt_callback_target_emi, &got);
	say("get_callback target_emi=%d same=%d", r1, got == (ompt_callback_t)on_target_emi);
	got = NULL;
	say("get_callback thread_begin=%d target=%d bogus=%d", get_callback(ompt_callback_thread_begin, &got),
	    get_callback(ompt_callback_target, &got), get_callback((ompt_callbacks_t)99, &got));

	int flags = 0, thread_num = -1;
	ompt_data_t *pd = NULL;
	ompt_frame_t *frame = NULL;
	int ti = get_task_info(0, &flags, &task_data_slot, &frame, &pd, &thread_num);
	say("task_info 0=%d flags=%d task_data_nonnull=%d frame_nonnull=%d parallel_nonnull=%d thread_num=%d level1=%d",
	    ti, flags, task_data_slot != NULL, frame != NULL, pd != NULL, thread_num, get_task_info(1, NULL, NULL, NULL, NULL, NULL));
	ompt_data_t *pd2 = NULL;
	int team = 0;
	int pi = parallel_info(0, &pd2, &team);
	say("parallel_info 0=%d team=%d same_parallel_data=%d level1=%d", pi, team, pd2 == pd && pd != NULL, parallel_info(1, &pd2, &team));
	ompt_data_t *th1 = get_thread_data(), *th2 = get_thread_data();
	say("thread_data nonnull=%d same=%d", th1 != NULL, th1 == th2);
	ompt_wait_id_t w = 7;
	int st = get_state(&w);
	uint64_t idev = 99;
	ompt_id_t tid = 99, hop = 99;
	say("state=%d wait_id=%d target_info=%d", st, (int)w, get_target_info(&idev, &tid, &hop));
	int ids[4];
	void *addr;
	size_t size;
	say("num_devices=%d num_procs_positive=%d num_places=%d place_num=%d place_proc_ids=%d partition=%d proc_id_ok=%d task_memory=%d",
	    get_num_devices(), num_procs() > 0, num_places(), place_num(), place_proc_ids(0, 4, ids), partition(4, ids),
	    proc_id() >= -1, task_memory(&addr, &size, 0));
	char buf[512] = "";
	const char *name;
	int next;
	for (int s = ompt_state_undefined; enum_states(s, &next, &name); s = next) {
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%d", buf[0] ? "," : "", name, next);
	}
	say("states %s", buf);
	say("mutex_impls=%d", enum_mutex(ompt_mutex_impl_none, &next, &name));

	pthread_t th;
	pthread_create(&th, NULL, thread_main, NULL);
	pthread_join(th, NULL);
	return 1;
}

static void finalize(ompt_data_t *tool_data) {
	say("finalize tool_data=%llu events=%d slot_ok=%d slot_bad=%d state_bad=%d info_bad=%d task_bad=%d",
	    (unsigned long long)tool_data->value, events, slot_ok, slot_bad, state_bad, info_bad, task_bad);
	pthread_mutex_lock(&mu);
	if (out) fclose(out);
	out = NULL;
	pthread_mutex_unlock(&mu);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version, const char *runtime_version) {
	const char *p = getenv("PROBE_OUTPUT");
	out = p ? fopen(p, "a") : NULL;
	say("start_tool omp_version=%u runtime_version=%s", omp_version, runtime_version);
	result.initialize = initialize;
	result.finalize = finalize;
	return &result;
}
