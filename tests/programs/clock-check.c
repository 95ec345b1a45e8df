/*
 * The times in the records against CLOCK_MONOTONIC, read by the program
 * around each call: cudnnGetVersion traced for long enough that the spy
 * reads the TSC (clock.c measures its rate over the first 2 ms, and again
 * over 200 ms: a call, a pause, a call), then
 * CALLS calls, each printed as "BEFORE AFTER" in ns, and a pause past a
 * re-anchoring between two of them.
 * usage: clock-check [CALLS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "g_prototypes.h"

static uint64_t
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	uint64_t b, a;
	struct timespec pause = { 0, 210000000 };	/* past a re-anchoring, and the refined scale */
	struct timespec calibrate = { 0, 3000000 };

	cudnnGetVersion();
	nanosleep(&calibrate, NULL);
	cudnnGetVersion();
	cudnnGetVersion();
	printf("warm\n");
	for (long i = 0; i < calls; i++) {
		if (i == calls / 2)
			nanosleep(&pause, NULL);
		b = now();
		cudnnGetVersion();
		a = now();
		printf("%llu %llu\n", (unsigned long long)b, (unsigned long long)a);
	}
	return 0;
}
