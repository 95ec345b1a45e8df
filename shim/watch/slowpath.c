/*
 * The slow path of a call: what the spy remembers (objects created, set,
 * destroyed), the records of traced calls and failures, and the failure
 * line on stderr. Runs only when spy_call_end() asks for it; errno is
 * saved and restored around it.
 */
#include "core.h"
#include "slowpath.h"
#include "algo.h"
#include "callrec.h"
#include "audit.h"
#include "backend.h"
#include "gpu.h"
#include "inject.h"
#include "objects.h"
#include "pyframes.h"
#include "recbin.h"
#include "sink.h"
#include "stack.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Counted here until the record file is mapped, then in its process state (spy_sink_probes), which outlives the process. */
static uint64_t probes[_SPY_FN_COUNT];
/* The graph API's functions, by id: told from the name once. */
static unsigned char backend_fn[_SPY_FN_COUNT];

uint64_t
spy_probes(unsigned id)
{
	uint64_t *mapped = spy_sink_probes();

	if (id >= _SPY_FN_COUNT)
		return 0;
	return __atomic_load_n(&probes[id], __ATOMIC_RELAXED) + (mapped ? __atomic_load_n(&mapped[id], __ATOMIC_RELAXED) : 0);
}

/* The Set kinds last: `>= STATE_SET` is any Set. */
enum state_kind { STATE_NONE, STATE_CREATE, STATE_DESTROY, STATE_FILL, STATE_SET, STATE_SET_PADDING };

/*
 * Functions that write descriptors the program passes them: from which
 * parameter on, or the one parameter (first == last).
 */
static const struct {
	const char *fn;
	int first, last;
} fills[] = {
	{ "cudnnDeriveBNTensorDescriptor", 0, 0 },
	{ "cudnnDeriveNormTensorDescriptor", 0, 1 },
	{ "cudnnInitTransformDest", 2, 2 },
	{ "cudnnGetFoldedConvBackwardDataDescriptors", 6, 13 },
};
static unsigned char state_kind[_SPY_FN_COUNT];

/* Which functions change remembered state: derived from names and parameters once. */
void
spy_state_flags_init(void)
{
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		const struct spy_fn_info *f = &spy_fn_info[i];

		backend_fn[i] = strncmp(f->name, "cudnnBackend", 12) == 0;
		if (f->nparams == 0 || f->ret != SPY_RET_STATUS)
			continue;
		if (strncmp(f->name, "cudnnCreate", 11) == 0 || strcmp(f->name, "cudnnBackendCreateDescriptor") == 0)
			state_kind[i] = STATE_CREATE;
		else if (strncmp(f->name, "cudnnDestroy", 12) == 0 ||
			 strcmp(f->name, "cudnnBackendDestroyDescriptor") == 0)
			state_kind[i] = (f->params[0].kind == SPY_ARG_DESC || f->params[0].kind == SPY_ARG_HANDLE)
						? STATE_DESTROY : STATE_NONE;
		else if ((strncmp(f->name, "cudnnSet", 8) == 0 || strncmp(f->name, "cudnnRNNSetClip", 15) == 0) &&
			 f->params[0].kind == SPY_ARG_DESC && f->nparams <= SPY_OBJ_MAX_ARGS)
			/* A longer one would be described from past the remembered arguments. */
			/* A Set with a padding fill behind a pointer: its value is kept as well, apart from other Sets. */
			state_kind[i] = i == _SPY_FN_cudnnSetRNNDataDescriptor || i == _SPY_FN_cudnnSetSeqDataDescriptor
						? STATE_SET_PADDING : STATE_SET;
		for (unsigned k = 0; k < sizeof(fills) / sizeof(fills[0]); k++)
			if (strcmp(f->name, fills[k].fn) == 0)
				state_kind[i] = STATE_FILL;
		if (state_kind[i] != STATE_NONE)
			spy_fn_flags[i] |= SPY_FN_STATE;
	}
	spy_args_init();
	spy_recbin_init();
	spy_algo_flags_init();
	spy_backend_flags_init();
}

/* A watched call returned: the legacy convolutions to algo.c, the graph API to backend.c (which tells algo.c what ran). */
static void
watched(struct spy_call *c, long status, const union spy_arg *args)
{
	if (backend_fn[c->id])
		spy_backend_call(c, status, args);
	else
		spy_algo_call(c, status, args);
}

static void
track_state(unsigned id, const union spy_arg *args)
{
	const struct spy_fn_info *f = &spy_fn_info[id];

	switch (state_kind[id]) {
	case STATE_CREATE:
		/* A new handle is when cuDNN loads its sub-libraries: look at what is mapped now. */
		if (id == _SPY_FN_cudnnCreate)
			spy_audit();
		/* The object comes back through the out-parameter that points to a handle or descriptor. */
		for (int i = 0; i < f->nparams; i++) {
			const struct spy_param_info *p = &f->params[i];

			if (p->kind == SPY_ARG_PTR && p->dir == SPY_DIR_OUT && args[i].p &&
			    (p->elem == SPY_ARG_DESC || p->elem == SPY_ARG_HANDLE)) {
				spy_obj_created(*(void *const *)args[i].p,
						p->elem == SPY_ARG_HANDLE ? "handle" : p->desc_kind);
				return;
			}
		}
		break;
	case STATE_DESTROY:
		spy_obj_destroyed(args[0].p);
		break;
	case STATE_SET:
		spy_obj_set(args[0].p, f->params[0].desc_kind, id, args);
		break;
	case STATE_SET_PADDING:
		spy_obj_set(args[0].p, f->params[0].desc_kind, id, args);
		spy_obj_set_fill(args[0].p, id, args);
		break;
	}
}

/* The descriptors cuDNN filled in: what the spy remembered of them no longer holds. */
static void
track_fill(unsigned id, const union spy_arg *args)
{
	const struct spy_fn_info *f = &spy_fn_info[id];

	for (unsigned k = 0; k < sizeof(fills) / sizeof(fills[0]); k++) {
		if (strcmp(f->name, fills[k].fn) != 0)
			continue;
		for (int i = fills[k].first; i <= fills[k].last && i < f->nparams; i++)
			if (f->params[i].kind == SPY_ARG_DESC)
				spy_obj_filled(args[i].p, id, args, fills[k].first, fills[k].last);
	}
}

/* A system call costs more than formatting a whole record: read it once per thread. */
static long
thread_id(void)
{
	if (!spy_tls.tid)
		spy_tls.tid = (int)syscall(SYS_gettid);
	return spy_tls.tid;
}

static void
common_fields(struct spy_line *l, const char *event, const struct spy_call *c, long status)
{
	spy_call_fields(l, event, c->id, status, c->copy, thread_id(), c->t0 ? c->t0 : spy_now_ns(), c->t0 != 0,
			c->t1 - c->t0);
}

/* cuDNN's message for this failure, kept for the program's own cudnnGetLastErrorString. */
static const char *
read_last_error(struct spy_buf *b, unsigned copy)
{
	typedef void (*get_fn)(char *, size_t);
	get_fn get = (get_fn)spy_real_fn(copy, _SPY_FN_cudnnGetLastErrorString);

	char now[sizeof(b->last_error)];

	/* Atomic: other threads may be finishing copy 0's resolution (copies.c publishes the major first). */
	if (!spy_config.last_error || !get || __atomic_load_n(&spy_copies[copy].major, __ATOMIC_RELAXED) < 9)
		return NULL;
	now[0] = 0;
	get(now, sizeof(now));
	now[sizeof(now) - 1] = 0;
	/*
	 * Not every failure leaves a message (9.19: a Set with an unknown format),
	 * and then cuDNN keeps the earlier one for the program, unread: so does
	 * the spy, instead of handing the program an empty string.
	 */
	if (!now[0])
		return NULL;
	memcpy(b->last_error, now, strlen(now) + 1);
	/* Each copy keeps its own message: only the same copy's cudnnGetLastErrorString gets this one. */
	b->last_error_pending = 1 + (int)copy;
	return b->last_error;
}

int
spy_take_last_error(unsigned copy, char *message, size_t max_size)
{
	struct spy_thread *th = spy_tls.thread;
	struct spy_buf *b = th ? th->buf : NULL;

	if (!b || b->last_error_pending != 1 + (int)copy)
		return 0;
	b->last_error_pending = 0;
	if (message && max_size) {
		strncpy(message, b->last_error, max_size - 1);
		message[max_size - 1] = 0;
	}
	return 1;
}

/* The recent calls a failure's record shows, oldest first: th->flight[(*from + i) % SPY_FLIGHT_MAX] for i < the count. */
static unsigned
recent_span(const struct spy_thread *th, unsigned *from)
{
	unsigned want = (unsigned)spy_config.flight;
	/* The newest entry is this call itself. */
	unsigned have = th->flight_pos > 0 ? th->flight_pos - 1 : 0;
	unsigned n = have < want ? have : want;

	*from = have - n;
	return n;
}

static void
recent_calls(struct spy_line *l, const struct spy_thread *th)
{
	unsigned from, n = recent_span(th, &from);
	int first = 1;

	spy_line_char(l, '[');
	for (unsigned i = 0; i < n; i++) {
		uint32_t e = th->flight[(from + i) % SPY_FLIGHT_MAX];

		spy_recent_json(l, e & 0xffff, (int16_t)(e >> 16), &first);
	}
	spy_line_char(l, ']');
}

/* One recent call as the failure line shows it: `name` or `name=status`. */
static size_t
recent_text_len(uint32_t e)
{
	int16_t st = (int16_t)(e >> 16);
	size_t n = strlen(spy_fn_info[e & 0xffff].name);

	if (st)
		n += st < 0 ? 7 : 6;	/* '=' and at most 5 digits (and a sign) */
	return n;
}

/*
 * The recent calls for the stderr line, oldest first, in at most `budget`
 * bytes: a long list keeps its newest calls and says how many older ones
 * it leaves out.
 */
static void
recent_text(struct spy_line *l, const struct spy_thread *th, size_t budget)
{
	unsigned want = (unsigned)spy_config.flight;
	unsigned have = th->flight_pos > 0 ? th->flight_pos - 1 : 0;
	unsigned n = have < want ? have : want, first = 0;
	size_t used = 24;	/* room for "(NNN earlier) " */

	for (unsigned i = n; i > 0; i--) {
		uint32_t e = th->flight[(have - n + i - 1) % SPY_FLIGHT_MAX];

		if ((e & 0xffff) >= _SPY_FN_COUNT)
			continue;
		used += recent_text_len(e) + 2;
		if (used > budget) {
			first = i;
			break;
		}
	}
	if (first) {
		spy_line_char(l, '(');
		spy_line_u64(l, first);
		spy_line_lit(l, " earlier) ");
	}
	for (unsigned i = first, shown = 0; i < n; i++) {
		uint32_t e = th->flight[(have - n + i) % SPY_FLIGHT_MAX];
		unsigned id = e & 0xffff;
		int16_t st = (int16_t)(e >> 16);

		if (id >= _SPY_FN_COUNT)
			continue;
		if (shown++)
			spy_line_lit(l, ", ");
		spy_line_raw(l, spy_fn_info[id].name);
		if (st) {
			spy_line_char(l, '=');
			spy_line_i64(l, st);
		}
	}
}

/* Per (function, status): how many stderr lines so far, for the rate limit. */
#define RATE_SLOTS 1024
static struct {
	uint32_t key;
	uint32_t count;
} rate[RATE_SLOTS];

static uint32_t
rate_count(unsigned id, long status)
{
	uint32_t key = (uint32_t)id << 16 | ((uint32_t)status & 0xffff) | 0x80000000u;

	for (unsigned i = (key * 2654435761u) % RATE_SLOTS, n = 0; n < RATE_SLOTS; i = (i + 1) % RATE_SLOTS, n++) {
		uint32_t k = __atomic_load_n(&rate[i].key, __ATOMIC_ACQUIRE), zero = 0;

		if (k == 0 && !__atomic_compare_exchange_n(&rate[i].key, &zero, key, 0, __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE))
			k = zero;
		if (k == 0 || k == key)
			return __atomic_add_fetch(&rate[i].count, 1, __ATOMIC_RELAXED);
	}
	return 1;
}

/*
 * Whether a failure of `id` with `status` will get a stderr line (the rate
 * limit not reached yet): its stack is captured only for the line or the
 * records, as unwinding costs more than the rest of a failure.
 */
static int
line_due(unsigned id, long status)
{
	uint32_t key = (uint32_t)id << 16 | ((uint32_t)status & 0xffff) | 0x80000000u;

	if (!(spy_config.stderr_mask & SPY_STDERR_FAILURES))
		return 0;
	for (unsigned i = (key * 2654435761u) % RATE_SLOTS, n = 0; n < RATE_SLOTS; i = (i + 1) % RATE_SLOTS, n++) {
		uint32_t k = __atomic_load_n(&rate[i].key, __ATOMIC_ACQUIRE);

		if (k == 0)
			return 1;
		if (k == key)
			return __atomic_load_n(&rate[i].count, __ATOMIC_RELAXED) < (uint32_t)spy_config.rate_limit;
	}
	return 1;
}

/* A failure line on stderr longer than this loses its oldest recent calls, then the end of its arguments. */
#define FAILURE_LINE_MAX 4096

static void
failure_line(struct spy_line *l, const struct spy_call *c, long status, const union spy_arg *args,
	     const char *message, const char *why, void *const *ips, int nips, const struct spy_pystack *py,
	     const struct spy_thread *th)
{
	uint32_t n = rate_count(c->id, status);
	const char *name, *file;
	size_t tail;

	if (!(spy_config.stderr_mask & SPY_STDERR_FAILURES) || n > (uint32_t)spy_config.rate_limit + 1)
		return;
	/* A negative status is a CUDA error found by the synchronizing mode. */
	name = status < 0 ? spy_cuda_error_name((int)-status) : spy_status_name(status);
	if (n == (uint32_t)spy_config.rate_limit + 1) {
		spy_log("%s returned %s (%ld) %ld times: suppressing further lines for it%s", spy_fn_info[c->id].name,
			name ? name : "an unknown status", status, spy_config.rate_limit,
			spy_sink_enabled() ? "; every failure is in the records" : "");
		return;
	}
	spy_line_reset(l);
	spy_line_lit(l, "cudnnspy: ");
	spy_line_raw(l, spy_fn_info[c->id].name);
	spy_args_json(l, c->id, args, SPY_ARGS_TEXT);
	spy_line_raw(l, status < 0 ? " then " : " = ");
	spy_line_raw(l, name ? name : "?");
	spy_line_lit(l, " (");
	spy_line_i64(l, status < 0 ? -status : status);
	spy_line_char(l, ')');
	if (c->pre && c->injected)
		spy_line_lit(l, " [injected]");
	if (message && message[0]) {
		spy_line_lit(l, ": ");
		spy_line_plain(l, message);
	}
	if (why && why[0]) {
		spy_line_lit(l, " | why: ");
		spy_line_plain(l, why);
	}
	/* Several copies answer in this process: which one answered this call (its caller is the stack's first frame). */
	if (spy_copy_count() > 1 && c->copy < SPY_MAX_COPIES) {
		spy_line_lit(l, " | copy ");
		spy_line_u64(l, c->copy);
		spy_line_lit(l, " (");
		spy_line_u64(l, spy_copies[c->copy].version);
		spy_line_char(l, ')');
	}
	if (nips > 0) {
		spy_line_lit(l, " | at ");
		spy_stack_text(l, ips, nips < 3 ? nips : 3);
	}
	if (py->n > 0) {
		spy_line_lit(l, " | python ");
		spy_py_text(l, py);
	}
	file = spy_sink_path();
	/* What must stay at the end: the record file, whatever came before. */
	tail = (file ? strlen(file) + 16 : 0) + 2;
	if (l->len + tail + 64 > FAILURE_LINE_MAX && FAILURE_LINE_MAX > tail + 64) {
		l->len = FAILURE_LINE_MAX - tail - 64;
		spy_line_lit(l, " ...");
	}
	if (th->flight_pos > 1 && spy_config.flight > 0) {
		spy_line_lit(l, " | after ");
		recent_text(l, th, FAILURE_LINE_MAX > l->len + tail ? FAILURE_LINE_MAX - l->len - tail : 0);
	}
	if (file) {
		spy_line_lit(l, " | record in ");
		spy_line_raw(l, file);
	}
	spy_line_char(l, '\n');
	if (!l->overflow) {
		/* One write(2) of any length: spy_log() has a fixed buffer. */
		l->spill_fd = STDERR_FILENO + 1;
		spy_line_spill(l);
		l->spill_fd = 0;
	}
}

spy_fnptr
spy_call_pre(struct spy_call *c, const void *handle)
{
	unsigned flags = spy_fn_flags[c->id];
	int saved = errno;

	c->injected = 0;
	c->gpu_slot = -1;
	c->stream = (void *)-1;
	if (flags & SPY_FN_INJECT) {
		const char *rule = NULL;
		int st = spy_inject_decide(c->id, spy_copy_major(c->copy), &rule);
		struct spy_buf *b = st ? spy_thread_buf(spy_tls.thread) : NULL;

		if (st) {
			c->injected = 1;
			c->fail_status = st;
			/* The program's cudnnGetLastErrorString says what happened. */
			if (b) {
				snprintf(b->last_error, sizeof(b->last_error),
					 "cudnnspy: %s injected into %s by CUDNNSPY_INJECT rule '%s'",
					 spy_status_name(st) ? spy_status_name(st) : "a failure", spy_fn_info[c->id].name,
					 rule);
				b->last_error_pending = 1 + (int)c->copy;
			}
			errno = saved;
			return NULL;
		}
	}
	if ((flags & (SPY_FN_GPU_TIME | SPY_FN_SYNC)) && handle)
		spy_gpu_pre(c, handle);
	errno = saved;
	return c->real;
}

/* A failure's stacks: the native one (its count), and the Python one unless CUDNNSPY_PYTHON=off. Inlined: a frame
 * of its own would be one more for the unwinder to walk on every failure. */
static inline __attribute__((always_inline)) int
stacks(void **ips, struct spy_pystack *py)
{
	if (spy_config.python != SPY_PYTHON_OFF)
		spy_py_capture(py);
	return spy_stack_capture(ips, SPY_STACK_MAX);
}

/* Everything else: a frame of its own, which the lanes above it do not pay for. */
static __attribute__((noinline)) void
slow_path(struct spy_call *c, long status, const union spy_arg *args)
{
	struct spy_thread *th = spy_tls.thread;
	unsigned flags = spy_fn_flags[c->id];
	int saved = errno, sink = spy_sink_enabled();
	struct spy_buf *b;
	struct spy_line *l;
	void *ips[SPY_STACK_MAX];
	struct spy_pystack py;
	const char *message = NULL;
	char cuda_message[160], why[768];
	int nips = 0, cuda_err = 0, failed, probe = 0;
	/* No real function was called, and no rule injected the status: the spy's fallback answered (fallback.c). */
	int no_function = !c->real && !(c->pre && c->injected);
	/* A destroyed object is forgotten after its record, which names it by its own id. */
	int destroy = state_kind[c->id] == STATE_DESTROY;

	/* Only the first byte: the slow path runs on every remembered Set, and a whole buffer costs a memset. */
	why[0] = 0;
	/* Enums in the numbering of the copy that answered (names.c). */
	spy_names_major = __atomic_load_n(&spy_copies[c->copy].major, __ATOMIC_RELAXED);
	if ((flags & SPY_FN_STATE) && status == 0 && args && !destroy)
		track_state(c->id, args);
	/* Before the GPU timing is resolved (spy_gpu_post), which may hand its time to the algorithm at once. */
	if ((flags & SPY_FN_WATCH) && args && !destroy)
		watched(c, status, args);
	if (c->pre && (c->gpu_slot >= 0 || (flags & SPY_FN_SYNC)))
		cuda_err = spy_gpu_post(c);
	failed = status != 0 || cuda_err != 0;
	if (!failed && !(flags & SPY_FN_TRACE))
		goto out;
	if (!failed && !sink)
		goto out;
	py.n = 0;
	b = spy_thread_buf(th);
	if (!b)
		goto out;	/* out of memory: counting goes on, recording cannot */
	l = &b->line;
	if (cuda_err) {
		snprintf(cuda_message, sizeof(cuda_message), "CUDA error %d (%s) found when synchronizing after this call",
			 cuda_err, spy_cuda_error_name(cuda_err));
		message = cuda_message;
		if (sink || line_due(c->id, -cuda_err))
			nips = stacks(ips, &py);
	} else if (c->pre && c->injected) {
		message = b->last_error;
		if (sink || line_due(c->id, status))
			nips = stacks(ips, &py);
	} else if (status != 0 && (probe = spy_backend_is_probe(c->id, status,
							       spy_copy_major(c->copy) == 8 ? 9 : 3000, args))) {
		/*
		 * A framework finalizing configs until one works: counted and recorded as
		 * probing, without the stack, the audit or cuDNN's message (which stays
		 * the program's to read).
		 */
		uint64_t *mapped = spy_sink_probes();

		__atomic_add_fetch(mapped ? &mapped[c->id] : &probes[c->id], 1, __ATOMIC_RELAXED);
	} else if (status != 0) {
		message = read_last_error(b, c->copy);
		if (sink || line_due(c->id, status))
			nips = stacks(ips, &py);
		spy_audit();
		/* cuDNN only repeats what its CUDA runtime said: say what the spy can see about why. */
		if (c->id == _SPY_FN_cudnnCreate && status == (spy_copy_major(c->copy) == 8 ? 1 : 1001))
			spy_audit_why_not_initialized(why, sizeof(why), c->copy);
		if (message && strstr(message, ".so") &&
		    (strstr(message, "cannot open") || strstr(message, "undefined symbol") ||
		     strstr(message, "No such file")))
			spy_audit_finding("sublib-load-failed", "error", message, NULL);
	} else if (flags & SPY_FN_BACKTRACE) {
		nips = spy_stack_capture(ips, SPY_STACK_MAX);
	}
	/* A traced call names its Python line only when asked: a probing failure never does. */
	if (!failed && spy_config.python == SPY_PYTHON_TRACED)
		spy_py_capture(&py);
	if (sink && !failed && spy_config.format == SPY_FORMAT_BINARY &&
	    (py.n > 0 ? spy_recbin_call_python(th, c, status, args, ips, nips, &py)
		      : spy_recbin_call(th, c, status, args, ips, nips)))
		sink = 0;	/* written packed */
	if (sink && failed && spy_config.format == SPY_FORMAT_BINARY) {
		struct spy_recbin_failure f = {
			.message = message, .why = why, .cuda_error = cuda_err, .injected = c->pre && c->injected,
			.no_function = no_function,
			.probing = probe != 0, .py = py.n > 0 ? &py : NULL,
		};

		f.nrecent = recent_span(th, &f.recent_from);
		if (spy_recbin_failure(th, c, status, args, ips, nips, &f))
			sink = 0;	/* written packed, and out at once */
	}
	if (sink) {
		spy_line_reset(l);
		common_fields(l, failed ? "failure" : "call", c, status);
		spy_line_lit(l, ",\"args\":");
		/* A traced call names its descriptors briefly; a failure gets everything. */
		spy_args_json(l, c->id, args, status == 0 ? SPY_ARGS_AFTER_SUCCESS | (failed ? 0 : SPY_ARGS_BRIEF) : 0);
		if (c->pre && c->injected)
			spy_line_lit(l, ",\"injected\":true");
		if (no_function)
			spy_line_lit(l, ",\"no_function\":true");
		if (probe)
			spy_line_lit(l, ",\"probing\":true");
		if (cuda_err) {
			spy_line_lit(l, ",\"cuda_error\":");
			spy_line_i64(l, cuda_err);
			spy_line_lit(l, ",\"cuda_error_name\":");
			spy_line_str(l, spy_cuda_error_name(cuda_err));
		}
		if (failed) {
			spy_line_lit(l, ",\"message\":");
			spy_line_str(l, message);
			if (why[0]) {
				spy_line_lit(l, ",\"why\":");
				spy_line_str(l, why);
			}
			spy_line_lit(l, ",\"recent\":");
			recent_calls(l, th);
		}
		if (nips) {
			spy_line_lit(l, ",\"stack\":");
			spy_stack_json(l, ips, nips);
		} else if (failed) {
			spy_line_lit(l, ",\"stack\":[]");
		}
		if (py.n > 0) {
			spy_line_lit(l, ",\"python\":");
			spy_py_json(l, &py);
		}
		spy_line_char(l, '}');
		/* A failure is written at once: it may be the last thing the process does. */
		spy_sink_commit(th, l, failed);
	}
	if (failed && (!probe || (spy_config.stderr_mask & SPY_STDERR_PROBING)))
		failure_line(l, c, cuda_err ? -cuda_err : status, args, message, why, ips, nips, &py, th);
out:
	/* After the record, which shows the descriptor as the call found it. */
	if (state_kind[c->id] >= STATE_SET && status != 0 && args && !(c->pre && c->injected))
		spy_obj_set_failed(args[0].p, c->id);
	if (state_kind[c->id] == STATE_FILL && status == 0 && args)
		track_fill(c->id, args);
	if (destroy && args) {
		if ((flags & SPY_FN_STATE) && status == 0)
			track_state(c->id, args);
		if (flags & SPY_FN_WATCH)
			watched(c, status, args);
	}
	errno = saved;
}

/*
 * The lanes after the first: a frame of their own, so that the first (a
 * remembered Set, on every call a framework makes) saves no registers it
 * does not use.
 */
static __attribute__((noinline)) void
other_lanes(struct spy_call *c, long status, const union spy_arg *args, unsigned flags)
{
	/* A graph's attributes, set one by one by the hundred: to backend.c, which keeps them. */
	if (flags == SPY_FN_WATCH && status == 0 && args && c->id == _SPY_FN_cudnnBackendSetAttribute) {
		int saved = errno;

		spy_names_major = __atomic_load_n(&spy_copies[c->copy].major, __ATOMIC_RELAXED);
		spy_backend_call(c, status, args);
		errno = saved;
		return;
	}
	slow_path(c, status, args);
}

/*
 * Which packed lane a traced call that succeeded may take (recbin.c): PLAIN_CALL, PLAIN_SET (a Set, remembered
 * with its stamp on the way), or 0 (the JSON record).
 */
enum { PLAIN_CALL = 1, PLAIN_SET };
static inline int
pack_kind(const struct spy_call *c, long status, unsigned flags)
{
	if (status != 0 || c->pre)
		return 0;
	if (flags == SPY_FN_TRACE)
		return PLAIN_CALL;
	return flags == (SPY_FN_TRACE | SPY_FN_STATE) && state_kind[c->id] == STATE_SET ? PLAIN_SET : 0;
}

/*
 * The next most frequent with records in format 2: a traced call that succeeded, packed (recbin.c). 1 when it
 * was; else the JSON record, after the state it already remembered (a same Set changes nothing).
 */
static inline int
packed(struct spy_thread *th, struct spy_call *c, long status, const union spy_arg *args, unsigned flags)
{
	int saved, done, kind = pack_kind(c, status, flags);

	if (!kind || !spy_config.pack_lane || !spy_sink_enabled() || !spy_thread_buf(th))
		return 0;
	saved = errno;
	spy_names_major = __atomic_load_n(&spy_copies[c->copy].major, __ATOMIC_RELAXED);
	done = kind == PLAIN_SET ? spy_recbin_call_set(th, c, status, args) : spy_recbin_call(th, c, status, args, NULL, 0);
	errno = saved;
	return done;
}

/* A traced call that the plain packer did not take: its record the general ways, then its count. */
static __attribute__((noinline)) void
traced_general(struct spy_call *c, long status, const union spy_arg *args, unsigned flags)
{
	struct spy_thread *th = spy_tls.thread;
	struct spy_counts *n;

	/* Seq-cst against the seal: the exit sees this flag, or this call's record sees the seal. */
	__atomic_store_n(&th->recording, 1, __ATOMIC_SEQ_CST);
	if (!packed(th, c, status, args, flags))
		other_lanes(c, status, args, flags);
	n = spy_counts_of(th, c->copy, c->id);
	SPY_INC(n->calls);
	if (status != 0)
		SPY_INC(n->fails);
	__atomic_store_n(&th->recording, 0, __ATOMIC_RELEASE);
}

/*
 * A traced call: its record, then its count (spy_call_end). A frame of its own, so that spy_call_slow's first
 * lane saves no registers for it. First the plain packer alone (a thread with its buffer, a function of plain
 * parameters: most traced calls), which counts the call itself, then the general ways. The packer answers the
 * call it refused, with its status and arguments kept in it, so that this frame keeps nothing across it and
 * saves no registers.
 */
static __attribute__((noinline)) void
traced(struct spy_call *c, long status, const union spy_arg *args, unsigned flags)
{
	struct spy_thread *th = spy_tls.thread;
	int kind = pack_kind(c, status, flags);

	if (kind && spy_recbin_plain_lane(th, c, args)) {
		const struct spy_call *refused;

		c->status = status;
		c->args = args;
		refused = spy_recbin_plain_fn[c->id](th, c, status, args,
						     SPY_PLAIN_COUNT | (kind == PLAIN_SET ? SPY_PLAIN_SET : 0));
		if (SPY_LIKELY(!refused))
			return;
		/* The wrapper's call, which the packer only read. */
		c = (struct spy_call *)(uintptr_t)refused;
		traced_general(c, c->status, c->args, spy_fn_flags[c->id]);
		return;
	}
	traced_general(c, status, args, flags);
}

void
spy_call_slow(struct spy_call *c, long status, const union spy_arg *args)
{
	unsigned flags = spy_fn_flags[c->id];

	/*
	 * The most frequent slow path of all, a Set that succeeded and is neither
	 * traced nor watched (a framework sets its descriptors before every call):
	 * remembered, and nothing else to do.
	 */
	if (SPY_LIKELY(flags == SPY_FN_STATE && status == 0 && state_kind[c->id] == STATE_SET && args)) {
		/* errno stays: spy_obj_set calls nothing that sets it (its one message, spy_log, keeps it). */
		spy_obj_set(args[0].p, spy_fn_info[c->id].params[0].desc_kind, c->id, args);
		return;
	}
	if (SPY_UNLIKELY(flags & SPY_FN_TRACE)) {
		traced(c, status, args, flags);
		return;
	}
	/* A tail call: a failure's stack then unwinds one frame fewer (about 2,000 instructions). */
	other_lanes(c, status, args, flags);
}
