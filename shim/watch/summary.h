/*
 * The counts at the end (summary.c): the exit table, and the duration
 * histogram the fast path adds to.
 */
#ifndef SPY_SUMMARY_H
#define SPY_SUMMARY_H

#include <stdint.h>

#include "spy.h"

/*
 * The thread's counters moved into the mapped record file, opened now if
 * it is not yet, where a reader finds them however the process ends: by the
 * thread itself, at its first call (and in a forked child, at its next).
 * Nothing when nothing is mapped.
 */
void spy_summary_home(struct spy_thread *th);
/* New counters for the thread's calls to copy k: in the mapped file when the thread's others are. NULL: none. */
struct spy_counts *spy_summary_counters(struct spy_thread *th, unsigned k);
/* One measured duration into a function's counters and histogram. */
void spy_time_add(struct spy_counts *n, uint64_t ns);
/* The exit summary: records, the stderr table, each part's exit records. */
void spy_summary_print(void);
/* From a signal handler: the counts as a summary record on `fd`, async-signal-safe. */
void spy_summary_crash(int fd, int sig);

#endif
