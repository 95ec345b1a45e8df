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

struct spy_counts {
	uint64_t calls;		/* calls made by the program */
	uint64_t fails;		/* of those, returned a status other than SUCCESS */
	uint64_t internal;	/* calls between cuDNN's own sub-libraries */
};

/* Per-thread state; never freed, reused after its thread exits. */
struct spy_thread {
	struct spy_thread *next;
	int in_use;
	struct spy_counts n[_SPY_FN_COUNT];
};

struct spy_tls {
	unsigned depth;			/* wrappers of this thread now inside a real call */
	unsigned char resolving;	/* this thread is inside the one-time resolution */
	struct spy_thread *thread;
};

struct spy_call {
	spy_fnptr real;
	unsigned id;
	unsigned nested;
	int fail_status;	/* what to return when the real function is missing */
};

extern __thread struct spy_tls spy_tls __attribute__((tls_model("initial-exec")));
extern spy_fnptr spy_real[_SPY_FN_COUNT];	/* filled once by the resolution */
extern const spy_fnptr spy_wrapper[_SPY_FN_COUNT];

spy_fnptr spy_call_setup(struct spy_call *c);
void spy_call_slow(struct spy_call *c, long status, const union spy_arg *args);
const char *spy_fail_error_string(long status);
void spy_fail_last_error(char *message, size_t max_size);

static inline spy_fnptr
spy_call_begin(struct spy_call *c, unsigned id)
{
	struct spy_tls *t = &spy_tls;

	c->id = id;
	c->nested = t->depth++;
	c->real = spy_real[id];
	if (SPY_UNLIKELY(c->real == NULL || t->thread == NULL))
		return spy_call_setup(c);
	return c->real;
}

/* Returns nonzero when the call wants the slow path (a failure, a record). */
static inline int
spy_call_end(struct spy_call *c, long status)
{
	struct spy_tls *t = &spy_tls;
	struct spy_counts *n = &t->thread->n[c->id];

	t->depth--;
	if (SPY_UNLIKELY(c->nested)) {
		SPY_INC(n->internal);
		return 0;
	}
	SPY_INC(n->calls);
	if (SPY_UNLIKELY(status != 0)) {
		SPY_INC(n->fails);
		return 1;
	}
	return 0;
}

#endif
