/*
 * The narrow internal API that the generated wrappers call.
 *
 * A wrapper runs spy_call_begin(), the real function (or the fallback when
 * there is none), then spy_call_end(); only when spy_call_end() asks for it
 * does it pack the arguments and call spy_call_slow(). The fast path is a
 * few loads and increments on per-thread memory: no lock, no allocation, no
 * clock, errno untouched.
 */
#ifndef SPY_H
#define SPY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "spy-api.h"

#define SPY_EXPORT __attribute__((visibility("default")))
#define SPY_LIKELY(x) __builtin_expect(!!(x), 1)
#define SPY_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Relaxed, so that the exit summary may read other threads' counters. */
#define SPY_INC(x) __atomic_store_n(&(x), (x) + 1, __ATOMIC_RELAXED)

typedef void (*spy_fnptr)(void);

/* One argument, as raw bits: decoding happens off the fast path. */
union spy_arg {
	int64_t i;
	uint64_t u;
	double d;
	const void *p;
};

/* Durations: 4 buckets per octave from 1 ns to about 2^36 ns. */
#define SPY_HIST_BUCKETS 144

struct spy_timing {
	uint64_t total_ns, min_ns, max_ns;
	uint64_t first_ns;	/* the thread's first timed call: lazy loading, kept apart from the steady state */
	uint32_t hist[SPY_HIST_BUCKETS];
};

struct spy_counts {
	uint64_t calls;		/* calls made by the program */
	uint64_t fails;		/* of those, returned a status other than SUCCESS */
	uint64_t internal;	/* calls between cuDNN's own sub-libraries */
	uint64_t timed;		/* calls whose duration was measured */
	uint64_t gpu_timed;	/* calls whose GPU time was measured */
	uint64_t gpu_total_ns;
	struct spy_timing *timing;	/* allocated at the first measured call */
};

/*
 * Every cuDNN dispatcher the process maps that answers calls gets a copy id
 * (docs/architecture.md, "Several copies"): 0 is the copy the exported
 * definitions serve, 1..SPY_MAX_COPIES-1 the copies reached through
 * dlsym(handle). Each has its own table of real functions and counters.
 */
#define SPY_MAX_COPIES 8

/* The flight recorder: this thread's last calls, function id and status. */
#define SPY_FLIGHT_MAX 256

struct spy_buf;

/* Per-thread state; never freed, reused after its thread exits. */
struct spy_thread {
	struct spy_thread *next;
	int in_use;
	unsigned index;		/* blocks numbered from 0 as they are made: format 2's text ids (recbin.c) */
	int inside;		/* inside a real cuDNN call now: read by the fork handler */
	unsigned flight_pos;
	uint32_t flight[SPY_FLIGHT_MAX];
	struct spy_buf *buf;	/* records waiting to be written; NULL until the first */
	struct spy_counts n[_SPY_FN_COUNT];	/* copy 0 */
	struct spy_counts *copy_n[SPY_MAX_COPIES];	/* copies 1..: allocated at the thread's first call */
};

struct spy_tls {
	unsigned depth;			/* wrappers of this thread now inside a real call */
	unsigned char resolving;	/* this thread is inside the one-time resolution */
	unsigned char copy;		/* the copy of this thread's outermost call in progress */
	int tid;			/* the kernel's thread id, once read; 0 again in a forked child */
	struct spy_thread *thread;
	uint64_t tsc0, ns0;		/* this thread's clock anchor (clock.c); tsc0 0 until the first */
};

struct spy_call {
	spy_fnptr real;
	unsigned id;
	unsigned nested;
	unsigned copy;		/* the copy that answers; for a nested call, the outer call's */
	int fail_status;	/* what to return when the real function is missing */
	unsigned char pre;	/* spy_call_pre() has work: injection, GPU timing, synchronizing */
	unsigned char injected;	/* the status is the spy's: the real function was not called */
	short gpu_slot;		/* the event pair timing this call on the GPU, or -1 */
	void *stream;		/* the handle's CUDA stream, when GPU work is watched */
	uint64_t t0, t1;	/* CLOCK_MONOTONIC around the real call, when measured */
};

extern __thread struct spy_tls spy_tls __attribute__((tls_model("initial-exec")));
/* Per copy: filled once when the copy is resolved or registered (copies.c, resolve.c). */
extern spy_fnptr spy_copy_real[SPY_MAX_COPIES][_SPY_FN_COUNT];
#define spy_real (spy_copy_real[0])
/* A copy's real function, as the slow path reads it: atomic, since another thread may still be filling the table. */
#define spy_real_fn(copy, id) __atomic_load_n(&spy_copy_real[(copy)][(id)], __ATOMIC_RELAXED)
/* Per copy: the wrappers that answer with that copy; [0] are the exported definitions. */
extern const spy_fnptr spy_copy_wrapper[SPY_MAX_COPIES][_SPY_FN_COUNT];
#define spy_wrapper (spy_copy_wrapper[0])

spy_fnptr spy_call_setup(struct spy_call *c);
/* A call made from inside another cuDNN call: what the caller reaches without the spy. */
spy_fnptr spy_nested_real(struct spy_call *c, const void *caller);
void spy_call_slow(struct spy_call *c, long status, const union spy_arg *args);
const char *spy_fail_error_string(long status);
void spy_fail_last_error(char *message, size_t max_size);

void spy_time_add(struct spy_counts *n, uint64_t ns);

/* Per-function flags, set once from the configuration: read on the fast path. */
enum spy_fn_flag {
	SPY_FN_TRACE = 1 << 0,		/* record every call */
	SPY_FN_BACKTRACE = 1 << 1,	/* traced calls carry a stack */
	SPY_FN_STATE = 1 << 2,		/* creates, sets or destroys an object the spy remembers */
	SPY_FN_INJECT = 1 << 3,		/* a CUDNNSPY_INJECT rule matches */
	SPY_FN_GPU_TIME = 1 << 4,	/* enqueues GPU work, timed with CUDA events */
	SPY_FN_SYNC = 1 << 5,		/* enqueues GPU work, synchronized after the call */
	SPY_FN_WATCH = 1 << 6,		/* its successes matter too (algo.c): searches, convolutions, backend */
	SPY_FN_TIMED = 1 << 7,		/* every call timed: what ran takes its host time (convolutions, Execute) */
};
#define SPY_FN_PRE (SPY_FN_INJECT | SPY_FN_GPU_TIME | SPY_FN_SYNC)

/* Work before the real call (gpu.c, inject.c); returns the function to call, or NULL. */
spy_fnptr spy_call_pre(struct spy_call *c, const void *handle);
extern unsigned char spy_fn_flags[_SPY_FN_COUNT];

/*
 * CLOCK_MONOTONIC in ns, from the TSC where it is trusted (clock.c): a
 * traced call reads it twice, and the TSC costs less than half of
 * clock_gettime.
 */
#if defined(__x86_64__)
#define SPY_HAVE_TSC 1
static inline uint64_t
spy_tsc_read(void)
{
	return __builtin_ia32_rdtsc();
}
#else
#define SPY_HAVE_TSC 0
#endif
/* ns per tick, 32.32 fixed point; 0 while clock_gettime answers (not measured yet, or not trusted). */
extern uint64_t spy_tsc_mult;
/* A new anchor for this thread at `tsc`: its time. */
uint64_t spy_clock_anchor(uint64_t tsc);
/* clock_gettime, measuring the TSC's rate on the way. */
uint64_t spy_clock_slow(void);
/* Ticks after which a thread takes a new anchor: a few ms (6 at 2.6 GHz). */
#define SPY_TSC_REANCHOR (1ull << 24)

static inline uint64_t
spy_now_ns(void)
{
#if SPY_HAVE_TSC
	uint64_t mult = __atomic_load_n(&spy_tsc_mult, __ATOMIC_RELAXED);

	if (SPY_LIKELY(mult)) {
		struct spy_tls *t = &spy_tls;
		uint64_t c = spy_tsc_read(), d = c - t->tsc0;

		if (SPY_LIKELY(d < SPY_TSC_REANCHOR && t->tsc0))
			return t->ns0 + ((d * mult) >> 32);
		return spy_clock_anchor(c);
	}
#endif
	return spy_clock_slow();
}

static inline struct spy_counts *
spy_counts_of(struct spy_thread *th, unsigned copy, unsigned id)
{
	return copy ? &th->copy_n[copy][id] : &th->n[id];
}

/*
 * `copy` is a constant in the exported wrappers (0), so that the per-copy
 * tables cost nothing there; a nested call (cuDNN's sub-libraries calling
 * each other through the exported names) belongs to the outer call's copy.
 */
static inline spy_fnptr
spy_call_begin(struct spy_call *c, unsigned id, unsigned copy, const void *caller)
{
	struct spy_tls *t = &spy_tls;

	c->id = id;
	c->nested = t->depth++;
	c->copy = copy;
	/* Relaxed: a plain load, which TSan knows races benignly with the one-time fill (a NULL takes the slow path). */
	c->real = __atomic_load_n(&spy_copy_real[copy][id], __ATOMIC_RELAXED);
	c->t0 = 0;
	c->pre = 0;
	if (SPY_UNLIKELY(c->nested))
		spy_nested_real(c, caller);
	else
		t->copy = (unsigned char)copy;
	if (SPY_UNLIKELY(c->real == NULL || t->thread == NULL || (copy && t->thread->copy_n[copy] == NULL)))
		spy_call_setup(c);
	t->thread->inside = 1;
	if (SPY_UNLIKELY(spy_fn_flags[id] & SPY_FN_PRE) && !c->nested)
		c->pre = 1;
	/*
	 * Reading the clock costs more than the rest of the wrapper: time the
	 * first call and one in 16 after it, and every call of a traced function or of one whose time the
	 * slow path keeps (not the backend's bookkeeping: a graph sets hundreds of attributes).
	 */
	if (SPY_UNLIKELY(((spy_counts_of(t->thread, copy, id)->calls & 15) == 0 ||
			  (spy_fn_flags[id] & (SPY_FN_TRACE | SPY_FN_TIMED))) && !c->nested))
		c->t0 = spy_now_ns();
	return c->real;
}

/* Returns nonzero when the call wants the slow path (a failure, a record, remembered state). */
static inline int
spy_call_end(struct spy_call *c, long status, unsigned copy)
{
	struct spy_tls *t = &spy_tls;
	struct spy_thread *th = t->thread;
	struct spy_counts *n;

	t->depth--;
	if (SPY_UNLIKELY(c->nested)) {
		/* The outer call of this thread set up its copy's counters. */
		SPY_INC(spy_counts_of(th, c->copy, c->id)->internal);
		return 0;
	}
	n = spy_counts_of(th, copy, c->id);
	if (SPY_UNLIKELY(c->t0)) {
		c->t1 = spy_now_ns();
		spy_time_add(n, c->t1 - c->t0);
	}
	SPY_INC(n->calls);
	th->inside = 0;
	th->flight[th->flight_pos++ % SPY_FLIGHT_MAX] = c->id | (uint32_t)(status & 0xffff) << 16;
	if (SPY_UNLIKELY(status != 0)) {
		SPY_INC(n->fails);
		return 1;
	}
	return spy_fn_flags[c->id];
}

#endif
