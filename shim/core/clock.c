/*
 * The time of a call, cheaply. clock_gettime costs 21 ns on the
 * development VM (its vDSO reads the TSC under a seqlock and scales it);
 * the TSC alone costs 9. A traced call reads the clock twice, so where the
 * TSC is trusted (x86-64 with an invariant TSC that the kernel itself uses
 * as its clock) the spy reads it and scales it to CLOCK_MONOTONIC's
 * nanoseconds.
 *
 * The scale is measured from two clock_gettime readings CALIBRATE_NS
 * apart, with clock_gettime answering until then (a short run must not pay
 * clock_gettime throughout), and measured again, closer, REFINE_NS after
 * the first. Each thread keeps an anchor, a (TSC, CLOCK_MONOTONIC) pair, and
 * takes a new one when its last is SPY_TSC_REANCHOR ticks old (a few ms),
 * so that the times in the records stay within a fraction of a microsecond
 * of CLOCK_MONOTONIC, which the header's start_mono_ns and other processes'
 * records use, however the kernel slews it. A new anchor taken as the old
 * one expires never goes back from the time the old one gives.
 */
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

uint64_t spy_tsc_mult;
const char *spy_clock_source = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/* 2 ms: the readings' jitter (tens of ns) is then tens of parts per million, a few ns over an anchor's life */
#define CALIBRATE_NS 2000000ull
/* 200 ms: a fraction of a part per million */
#define REFINE_NS 200000000ull

enum { CAL_NONE, CAL_BUSY, CAL_STARTED, CAL_ROUGH, CAL_DONE };
static int state;
static uint64_t cal_tsc, cal_ns;

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if SPY_HAVE_TSC
/* Whether the TSC ticks at one rate on every CPU, and the kernel trusts it as its own clock. */
static int
tsc_trusted(void)
{
	unsigned a, b, c, d;
	char cs[16] = "";
	int saved = errno, f;
	ssize_t n = -1;

	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return 0;
	f = open(spy_clock_source, O_RDONLY | O_CLOEXEC);
	if (f >= 0) {
		n = read(f, cs, sizeof(cs) - 1);
		close(f);
	}
	errno = saved;
	return n >= 3 && strncmp(cs, "tsc", 3) == 0 && (cs[3] == '\n' || cs[3] == 0);
}
#endif

#if SPY_HAVE_TSC
/* The scale from the first readings to now; then the state `next`. */
static void
calibrate(int next)
{
	uint64_t t = spy_tsc_read(), now = mono_ns();
	uint64_t ticks = t - cal_tsc, span = now - cal_ns;
	/* ns per tick in 32.32 fixed point; under 4 (a TSC of 250 MHz and more) keeps ticks * mult in 64 bits. */
	uint64_t mult = ticks ? (uint64_t)(((unsigned __int128)span << 32) / ticks) : 0;

	if (mult > 0 && mult < (4ull << 32))
		__atomic_store_n(&spy_tsc_mult, mult, __ATOMIC_RELEASE);
	else
		next = CAL_DONE;
	__atomic_store_n(&state, next, __ATOMIC_RELEASE);
}
#endif

/* Until the scale is refined: the anchors of every thread call here when they are renewed. */
static void
refine(void)
{
#if SPY_HAVE_TSC
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (s == CAL_ROUGH && mono_ns() - __atomic_load_n(&cal_ns, __ATOMIC_RELAXED) >= REFINE_NS &&
	    __atomic_compare_exchange_n(&state, &s, CAL_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		calibrate(CAL_DONE);
#endif
}

#if SPY_HAVE_TSC
/* Out of line: spy_clock_slow's usual answer, where the TSC is not trusted, then saves no registers. */
static __attribute__((noinline)) uint64_t
clock_step(uint64_t ns, int s)
{
	if (s == CAL_NONE && __atomic_compare_exchange_n(&state, &s, CAL_BUSY, 0, __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE)) {
		if (!tsc_trusted()) {
			__atomic_store_n(&state, CAL_DONE, __ATOMIC_RELEASE);
			return ns;
		}
		cal_tsc = spy_tsc_read();
		cal_ns = mono_ns();
		__atomic_store_n(&state, CAL_STARTED, __ATOMIC_RELEASE);
	} else if ((s == CAL_STARTED || s == CAL_ROUGH) &&
		   ns - __atomic_load_n(&cal_ns, __ATOMIC_RELAXED) >= (s == CAL_STARTED ? CALIBRATE_NS : REFINE_NS) &&
		   __atomic_compare_exchange_n(&state, &s, CAL_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		calibrate(s == CAL_STARTED ? CAL_ROUGH : CAL_DONE);
	}
	return ns;
}
#endif

uint64_t
spy_clock_slow(void)
{
	uint64_t ns = mono_ns();
#if SPY_HAVE_TSC
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (SPY_UNLIKELY(s != CAL_DONE))
		return clock_step(ns, s);
#endif
	return ns;
}

uint64_t
spy_clock_anchor(uint64_t tsc)
{
#if SPY_HAVE_TSC
	struct spy_tls *t = &spy_tls;
	uint64_t mult, ns, before, after, at;

	refine();
	mult = __atomic_load_n(&spy_tsc_mult, __ATOMIC_RELAXED);
	/*
	 * The pair taken tightly: the clock between two ticks, paired with their
	 * middle. A thread preempted between them would pair the clock with a tick
	 * far from it, and every time of the next few ms would be off by as much:
	 * a wide pair is taken again (a few times at most).
	 */
	for (int tries = 0;; tries++) {
		before = spy_tsc_read();
		ns = mono_ns();
		after = spy_tsc_read();
		if (after - before < (1u << 14) || tries == 3)
			break;
	}
	at = before + (after - before) / 2;
	/*
	 * The time the old anchor gives then: a new one taken just after it never
	 * goes back from it. After a longer gap the clock alone answers: the
	 * thread's last time is from an anchor's life ago, and the old anchor's
	 * error has grown with the gap.
	 */
	if (t->tsc0 && at - t->tsc0 < 2 * SPY_TSC_REANCHOR) {
		uint64_t old = t->ns0 + (((at - t->tsc0) * mult) >> 32);

		if (old > ns)
			ns = old;
	}
	t->tsc0 = at;
	t->ns0 = ns;
	/* The time of `tsc`, the call's own tick, read before all this. */
	return ns - (((at - tsc) * mult) >> 32);
#else
	(void)tsc;
	return mono_ns();
#endif
}
