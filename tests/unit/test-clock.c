/*
 * The call clock (shim/core/clock.c): clock_gettime where the TSC is not
 * trusted, the TSC scaled to CLOCK_MONOTONIC where it is. Which one a machine
 * gets depends on its kernel's clock (a VM booted with tsc=unstable never
 * takes the TSC path), so each test points the clock at a clocksource file
 * of its own. Each test needs a fresh process (check forks, the default):
 * the clock decides once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "spy.h"
#include "unit.h"

static char source[64];

static uint64_t
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock reads `text` as the kernel's clock; NULL: the file is missing. */
static void
clock_source(const char *text)
{
	snprintf(source, sizeof(source), "/tmp/cudnnspy-clock-%ld", (long)getpid());
	unlink(source);
	if (text) {
		FILE *f = fopen(source, "w");

		ck_assert_ptr_nonnull(f);
		fputs(text, f);
		fclose(f);
	}
	spy_clock_source = source;
}

static int
invariant_tsc(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
#else
	return 0;
#endif
}

/* Reads the clock for `ns`, CLOCK_MONOTONIC around each reading: each within `slack` of it, none going back. */
static void
follow(uint64_t ns, uint64_t slack)
{
	uint64_t end = mono() + ns, last = 0, after = 0;

	while (after < end) {
		uint64_t before = mono(), t = spy_now_ns();

		after = mono();
		ck_assert_msg(t + slack >= before && t <= after + slack, "%llu outside [%llu, %llu]",
			      (unsigned long long)t, (unsigned long long)before, (unsigned long long)after);
		ck_assert_msg(t >= last, "went back %llu ns", (unsigned long long)(last - t));
		last = t;
	}
}

static const char *const untrusted[] = { "kvm-clock\n", "tsc-early\n", "hpet\n", "", "ts", NULL };

START_TEST(test_untrusted_is_clock_gettime)
{
	clock_source(untrusted[_i]);
	/* Past the calibration's 2 ms: clock_gettime itself, exactly, throughout. */
	follow(5000000, 0);
	ck_assert_uint_eq(spy_tsc_mult, 0);
	unlink(source);
}
END_TEST

START_TEST(test_trusted_tsc_follows_monotonic)
{
	if (!invariant_tsc()) {
		/* Not trusted whatever the kernel says: clock_gettime answers. */
		clock_source("tsc\n");
		follow(3000000, 0);
		ck_assert_uint_eq(spy_tsc_mult, 0);
		unlink(source);
		return;
	}
	clock_source("tsc\n");
	/* Through the rough scale (2 ms), the refined one (200 ms) and many anchors, to within 50 us. */
	follow(250000000, 50000);
	ck_assert_uint_ne(spy_tsc_mult, 0);
	/* An anchor older than two lives is not stretched over the gap: a new one is taken. */
	usleep(30000);
	follow(20000000, 50000);
	ck_assert_uint_ne(spy_tsc_mult, 0);
	unlink(source);
}
END_TEST

UNIT_SUITE(clock)
{
	Suite *s = suite_create("clock");
	TCase *tc = tcase_create("clock");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_untrusted_is_clock_gettime, 0, UNIT_COUNT(untrusted));
	tcase_add_test(tc, test_trusted_tsc_follows_monotonic);
	suite_add_tcase(s, tc);
	return s;
}
