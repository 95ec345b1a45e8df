/*
 * The counters behind the summary, as the library keeps them per thread
 * and copy, and as a mapped record file holds them (docs/record-format.md,
 * "State"): the library's exit summary and the command's summary of a
 * process that did not exit both make their rows and write their fields
 * here, so that the two say the same.
 */
#ifndef SPY_COUNTS_H
#define SPY_COUNTS_H

#include <stdint.h>

#include "buf.h"

/* The copies of cuDNN the library tells apart (docs/architecture.md, "Several copies"), 0 to 7. */
#define SPY_MAX_COPIES 8

/* Durations: 4 buckets per octave from 1 ns to about 2^36 ns. */
#define SPY_HIST_BUCKETS 144

/* Laid out as a state frame holds it (kind SPY_STATE_TIMING): 4 u64, then the buckets as u32. */
struct spy_timing {
	uint64_t total_ns, min_ns, max_ns;
	uint64_t first_ns;	/* the thread's first timed call: lazy loading, kept apart from the steady state */
	uint32_t hist[SPY_HIST_BUCKETS];
};

/* Laid out as a state frame holds it (kind SPY_STATE_COUNTS): 6 u64, then 8 bytes the reader skips. */
struct spy_counts {
	uint64_t calls;		/* calls made by the program */
	uint64_t fails;		/* of those, returned a status other than SUCCESS */
	uint64_t internal;	/* calls between cuDNN's own sub-libraries */
	uint64_t timed;		/* calls whose duration was measured */
	uint64_t gpu_timed;	/* calls whose GPU time was measured */
	uint64_t gpu_total_ns;
	struct spy_timing *timing;	/* allocated at the first measured call */
};

_Static_assert(sizeof(struct spy_counts) == 56, "a state frame's counters are 56 bytes each");
_Static_assert(sizeof(struct spy_timing) == 32 + 4 * SPY_HIST_BUCKETS, "a state frame's timing has no padding");

/* One function's counts summed over threads (and copies). */
struct spy_row {
	unsigned id;
	uint64_t calls, fails, internal, timed, total, min, max, gpu_timed, gpu_total;
	uint64_t first, nfirst;	/* the threads' first timed calls: their time and their number */
	uint64_t hist[SPY_HIST_BUCKETS];
};

/* The bucket of a duration. */
static inline unsigned
spy_hist_bucket(uint64_t ns)
{
	unsigned msb, b;

	if (ns < 4)
		return (unsigned)ns;
	msb = 63u - (unsigned)__builtin_clzll(ns);
	b = msb * 4 + (unsigned)((ns >> (msb - 2)) & 3);
	return b < SPY_HIST_BUCKETS ? b : SPY_HIST_BUCKETS - 1;
}

void spy_row_init(struct spy_row *r, unsigned id);
/* One thread's counters of the function (read atomically: the thread may still be calling). */
void spy_row_add_counts(struct spy_row *r, const struct spy_counts *n);
/* One thread's timing of it, with the count of calls it timed. */
void spy_row_add_timing(struct spy_row *r, const struct spy_timing *t, uint64_t timed);
/* After the last add: a function never timed has no minimum. */
void spy_row_done(struct spy_row *r);
uint64_t spy_row_quantile(const struct spy_row *r, double q);
/* Another row of the same function added to r (the command's sums over copies). */
void spy_row_merge(struct spy_row *r, const struct spy_row *x);
/* qsort order of rows: most calls first, then by name. */
int spy_row_by_calls(const void *a, const void *b);
/* The summary's fields of one function, `{"fn":...}`, with its probing failures. */
void spy_row_json(struct spy_line *l, const char *fn, const struct spy_row *r, uint64_t probing);
/* The summary record's beginning: `{"event":"summary"` and its totals, up to `"probing"`. */
void spy_summary_head_json(struct spy_line *l, const struct spy_row *total, uint64_t dropped, uint64_t probing);
/* A copy's counts in the summary: `,"calls":...,"functions":[...]}`, the functions' calls, failures and internal. */
void spy_copy_counts_json(struct spy_line *l, const struct spy_row *total, const struct spy_row *rows, size_t n);

#endif
