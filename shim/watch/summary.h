/*
 * The counts at the end (summary.c): the exit table, and the duration
 * histogram the fast path adds to.
 */
#ifndef SPY_SUMMARY_H
#define SPY_SUMMARY_H

#include <stdint.h>

#include "spy.h"

/* One measured duration into a function's counters and histogram. */
void spy_time_add(struct spy_counts *n, uint64_t ns);
/* The exit summary: records, the stderr table, each part's exit records. */
void spy_summary_print(void);
/* From a signal handler: the counts as a summary record on `fd`, async-signal-safe. */
void spy_summary_crash(int fd, int sig);

#endif
