/*
 * The narrow internal API that the generated wrappers call.
 *
 * A wrapper runs spy_call_begin(), the real function (or the fallback when
 * there is none), then spy_call_end(); only when spy_call_end() asks for it
 * does it pack the arguments and call spy_call_slow(). The fast path is a
 * few loads and increments on per-thread memory: no lock, no allocation, no
 * clock, errno untouched.
 */
#ifndef SPY_FASTPATH_H
#define SPY_FASTPATH_H

#include "spy.h"
#include "slowpath.h"
#include "summary.h"

/* The first call of a thread or a copy: resolves, and sets up the thread's counters (init.c). */
spy_fnptr spy_call_setup(struct spy_call *c, const void *caller);
/*
 * The slow start of a call: spy_call_setup, or for an exported call while several copies are mapped and the
 * thread knows the caller's route, that route alone; a call that another copy answers gets that copy's wrapper
 * from `wrappers` (spy_copy_wrapper). One call out of line, so that the fast path keeps its registers.
 */
void spy_call_enter(struct spy_call *c, const void *caller, unsigned slot,
		    const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
/* The start of a nested call (cuDNN calling its own exported names): what it reaches, then spy_call_enter's checks. */
void spy_nested_enter(struct spy_call *c, const void *caller, unsigned copy, unsigned slot,
		      const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
/*
 * The end of an exported call that spy_call_setup handed to another copy's wrapper: gives back the depth it
 * took. Out of line, so that the fast path's depth stays one decrement in memory.
 */
void spy_call_rerouted(void);
/* What a wrapper answers when the real function is missing (fallback.c). */
const char *spy_fail_error_string(long status);
void spy_fail_last_error(char *message, size_t max_size);

/*
 * `copy` is a constant in the exported wrappers (0), so that the per-copy
 * tables cost nothing there; a nested call (cuDNN's sub-libraries calling
 * each other through the exported names) belongs to the outer call's copy.
 */
/*
 * `wrappers` is spy_copy_wrapper, passed by the generated wrappers that define it (and on to the handwritten
 * ones), so that this header names no table of theirs.
 * Always inlined: out of line it costs a call and spills (+38 instructions on cudnnGetVersion, callgrind).
 */
static inline __attribute__((always_inline)) spy_fnptr
spy_call_begin(struct spy_call *c, unsigned id, unsigned copy, unsigned slot, const void *caller,
	       const spy_fnptr (*wrappers)[_SPY_FN_COUNT])
{
	struct spy_tls *t = &spy_tls;

	c->id = id;
	c->nested = t->depth++;
	c->copy = copy;
	/* Relaxed: a plain load, which TSan knows races benignly with the one-time fill (a NULL takes the slow path). */
	c->real = __atomic_load_n(&spy_copy_real[copy][id], __ATOMIC_RELAXED);
	c->t0 = 0;
	c->pre = 0;
	if (SPY_UNLIKELY(c->nested)) {
		spy_nested_enter(c, caller, copy, slot, wrappers);
	} else {
		t->copy = (unsigned char)copy;
		/*
		 * Also while the slot has a reason (spy_slot_slow): a copy's first-call errno waiting, or, for the
		 * exported names, several copies mapped, each caller answered by the copy its own scope reaches.
		 */
		if (SPY_UNLIKELY(c->real == NULL || t->thread == NULL || (copy && t->thread->copy_n[copy] == NULL) ||
				 __atomic_load_n(&spy_slot_slow[slot].any, __ATOMIC_RELAXED)))
			spy_call_enter(c, caller, slot, wrappers);
	}
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
	unsigned flags;

	t->depth--;
	if (SPY_UNLIKELY(c->nested)) {
		/* Handed to another copy's wrapper by spy_call_setup, which took back this call's depth. */
		if (c->nested == SPY_REROUTED) {
			spy_call_rerouted();
			return 0;
		}
		/* The outer call of this thread set up its copy's counters. */
		SPY_INC(spy_counts_of(th, c->copy, c->id)->internal);
		return 0;
	}
	n = spy_counts_of(th, copy, c->id);
	if (SPY_UNLIKELY(c->t0)) {
		c->t1 = spy_now_ns();
		spy_time_add(n, c->t1 - c->t0);
	}
	flags = spy_fn_flags[c->id];
	th->inside = 0;
	th->flight[th->flight_pos++ % SPY_FLIGHT_MAX] = c->id | (uint32_t)(status & 0xffff) << 16;
	/*
	 * A traced call is counted once its record is written (spy_call_slow): a
	 * file read after any ending holds a record of every call it counts.
	 */
	if (SPY_UNLIKELY(flags & SPY_FN_TRACE))
		return 1;
	SPY_INC(n->calls);
	if (SPY_UNLIKELY(status != 0)) {
		SPY_INC(n->fails);
		return 1;
	}
	return flags;
}

#endif
