/*
 * What every part of the library shares: per-thread state and counters, the
 * copies' tables of real functions and wrappers, and the clock. The fast
 * path itself (entry/fastpath.h) reads these; nothing here calls upward.
 */
#ifndef SPY_H
#define SPY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "counts.h"
#include "options.h"
#include "spy-api.h"

#ifdef _WIN32
#define SPY_EXPORT __declspec(dllexport)	/* the Windows DLLs export the cudnn* names from a .def (gen.py) */
#else
#define SPY_EXPORT __attribute__((visibility("default")))
#endif
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

/*
 * Every cuDNN dispatcher the process maps that answers calls gets a copy id
 * (docs/architecture.md, "Several copies"): 0 is the copy the exported
 * definitions serve, 1..SPY_MAX_COPIES-1 the copies reached through
 * dlsym(handle). Each has its own table of real functions and counters
 * (SPY_MAX_COPIES: counts.h, since a record file's counters name copies).
 */

/* The flight recorder: this thread's last calls, function id and status. */
#define SPY_FLIGHT_MAX 256

struct spy_buf;
struct spy_stack_cache;

/* Where an exported call from one return address went (route.c): a small cache per thread, no lock. */
#define SPY_ROUTE_CACHE 64
struct spy_route_entry {
	const void *ra;
	unsigned gen;		/* route.c's generation when found: a closed copy makes every entry stale */
	unsigned short id;
	short copy;		/* -1: `raw`, the real function of a copy without a slot */
	spy_fnptr raw;
};

/* Per-thread state; never freed, reused after its thread exits. */
struct spy_thread {
	struct spy_thread *next;
	int in_use;
	unsigned index;		/* blocks numbered from 0 as they are made: format 2's text ids (recbin.c) */
	int inside;		/* inside a real cuDNN call now: read by the fork handler */
	int recording;		/* writing a traced call's record and then counting it: the exit waits (sink.c's seal) */
	unsigned flight_pos;
	uint32_t flight[SPY_FLIGHT_MAX];
	struct spy_buf *buf;	/* records waiting to be written; NULL until the first */
	/*
	 * Per copy: its counters, copy 0's in `n` or in the record file once the
	 * thread's first call found it mapped (summary.c's spy_summary_home),
	 * copies 1..'s allocated at the thread's first call to them.
	 */
	struct spy_counts *copy_n[SPY_MAX_COPIES];
	unsigned home;		/* the mapped file (spy_sink_state_gen) the counters are in; 0: in memory */
	struct spy_counts n[_SPY_FN_COUNT];
	struct spy_route_entry route[SPY_ROUTE_CACHE];
	unsigned life;		/* bumped each time a thread claims this state: what stack.c kept is another thread's */
	struct spy_stack_cache *stacks;	/* stacks seen before (stack.c); NULL until a first one is kept */
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
	/* Set by a traced call's lane only (slowpath.c): what its other ways need after the packer refused. */
	long status;
	const union spy_arg *args;
};

extern __thread struct spy_tls spy_tls __attribute__((tls_model("initial-exec")));
/*
 * Why a wrapper must take spy_call_setup, per slot: slots 0..SPY_MAX_COPIES-1 are the copies' wrappers
 * (spy_copy_wrapper), SPY_SLOT_EXPORTED the exported entry points (copy 0, unless the caller's own scope reaches
 * another copy: route.c). Each reason is a byte of its own, so that setting one never rewrites another, and the
 * fast path tests them all with one load.
 */
#define SPY_SLOT_EXPORTED SPY_MAX_COPIES
enum {
	SPY_SLOW_ERRNO,		/* the copy's first-call errno waits for the program's first call (copies.c) */
	SPY_SLOW_RECHECK,	/* an object bound to the exported names: look at the copies mapped (route.c) */
	SPY_SLOW_ROUTE,		/* more than one copy mapped: each exported call goes where its caller's scope goes */
	SPY_SLOW_HOME,		/* a forked child's thread moves its counters into the child's own file (init.c) */
};
union spy_slot_flags {
	int any;
	unsigned char why[4];
};
extern union spy_slot_flags spy_slot_slow[SPY_MAX_COPIES + 1];
/* spy_slot_slow[].any when routing is its only reason (the bytes in memory order). */
#define SPY_SLOW_ONLY_ROUTE ((int)(1u << (8 * SPY_SLOW_ROUTE)))
/* spy_call.nested of an exported call handed to another copy's wrapper: that wrapper does the accounting. */
#define SPY_REROUTED 0x80000000u
/* Per copy: filled once when the copy is resolved or registered (copies.c, resolve.c). */
extern spy_fnptr spy_copy_real[SPY_MAX_COPIES][_SPY_FN_COUNT];
#define spy_real (spy_copy_real[0])
/* A copy's real function, as the slow path reads it: atomic, since another thread may still be filling the table. */
#define spy_real_fn(copy, id) __atomic_load_n(&spy_copy_real[(copy)][(id)], __ATOMIC_RELAXED)
/* Per copy: the wrappers that answer with that copy; [0] are the exported definitions. */
extern const spy_fnptr spy_copy_wrapper[SPY_MAX_COPIES][_SPY_FN_COUNT];
#define spy_wrapper (spy_copy_wrapper[0])

/* A call made from inside another cuDNN call: what the caller reaches without the spy (copies.c). */
spy_fnptr spy_nested_real(struct spy_call *c, const void *caller);



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
/* The file naming the kernel's clock, read once before the TSC is trusted (a test points it elsewhere). */
extern const char *spy_clock_source;
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
	return &th->copy_n[copy][id];
}

#endif
