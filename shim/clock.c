/*
 * The time of a call, cheaply. clock_gettime costs 21 ns on the
 * development VM (its vDSO reads the TSC under a seqlock and scales it);
 * the TSC alone costs 9. A traced call reads the clock twice, so where the
 * TSC is trusted (x86-64 with an invariant TSC that the kernel itself uses
 * as its clock) the spy reads it and scales it to CLOCK_MONOTONIC's
 * nanoseconds.
 *
 * The scale is measured once, from two clock_gettime readings at least
 * CALIBRATE_NS apart, with clock_gettime answering until then. Each thread
 * keeps an anchor, a (TSC, CLOCK_MONOTONIC) pair, and takes a new one when
 * its last is REANCHOR ticks old, so that the times in the records stay
 * within a fraction of a microsecond of CLOCK_MONOTONIC, which the header's
 * start_mono_ns and other processes' records use, however the kernel slews
 * it. A new anchor never goes back from the time the old one gives.
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

#define CALIBRATE_NS 20000000ull	/* 20 ms: the readings' jitter is then a few parts per million */

enum { CAL_NONE, CAL_BUSY, CAL_STARTED, CAL_DONE };
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
	f = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
	if (f >= 0) {
		n = read(f, cs, sizeof(cs) - 1);
		close(f);
	}
	errno = saved;
	return n >= 3 && strncmp(cs, "tsc", 3) == 0 && (cs[3] == '\n' || cs[3] == 0);
}
#endif

uint64_t
spy_clock_slow(void)
{
	uint64_t ns = mono_ns();
#if SPY_HAVE_TSC
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (s == CAL_NONE && __atomic_compare_exchange_n(&state, &s, CAL_BUSY, 0, __ATOMIC_ACQ_REL,
							    __ATOMIC_ACQUIRE)) {
		if (!tsc_trusted()) {
			__atomic_store_n(&state, CAL_DONE, __ATOMIC_RELEASE);
			return ns;
		}
		cal_tsc = spy_tsc_read();
		cal_ns = mono_ns();
		__atomic_store_n(&state, CAL_STARTED, __ATOMIC_RELEASE);
	} else if (s == CAL_STARTED && ns - __atomic_load_n(&cal_ns, __ATOMIC_RELAXED) >= CALIBRATE_NS &&
		   __atomic_compare_exchange_n(&state, &s, CAL_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		uint64_t t = spy_tsc_read(), now = mono_ns();
		uint64_t ticks = t - cal_tsc, span = now - cal_ns;
		/* ns per tick in 32.32 fixed point; under 4 (a TSC of 250 MHz and more) keeps ticks * mult in 64 bits. */
		uint64_t mult = ticks ? (uint64_t)(((unsigned __int128)span << 32) / ticks) : 0;

		if (mult > 0 && mult < (4ull << 32))
			__atomic_store_n(&spy_tsc_mult, mult, __ATOMIC_RELEASE);
		__atomic_store_n(&state, CAL_DONE, __ATOMIC_RELEASE);
	}
#endif
	return ns;
}

uint64_t
spy_clock_anchor(uint64_t tsc)
{
#if SPY_HAVE_TSC
	struct spy_tls *t = &spy_tls;
	uint64_t mult = __atomic_load_n(&spy_tsc_mult, __ATOMIC_RELAXED);
	uint64_t ns = mono_ns(), after = spy_tsc_read();

	/* The time the old anchor gives now: a new one never goes back from it. */
	if (t->tsc0) {
		uint64_t old = t->ns0 + (uint64_t)(((unsigned __int128)(tsc - t->tsc0) * mult) >> 32);

		if (old > ns)
			ns = old;
	}
	t->tsc0 = tsc + (after - tsc) / 2;
	t->ns0 = ns;
	return ns;
#else
	(void)tsc;
	return mono_ns();
#endif
}
