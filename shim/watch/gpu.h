#ifndef SPY_GPU_H
#define SPY_GPU_H

#include "spy.h"

/* Flags the functions that enqueue GPU work for timing and synchronizing, as configured. */
void spy_gpu_init(void);
/* Before the real call: stream, capture check, first event. */
void spy_gpu_pre(struct spy_call *c, const void *handle);
/* After it: second event, resolve finished timings, synchronize; returns a CUDA error found, or 0. */
int spy_gpu_post(struct spy_call *c);
/* At exit: wait for every pending timing and record it. */
void spy_gpu_drain(void);
/* The CUDA runtime's name for an error. */
const char *spy_cuda_error_name(int err);
/* Counts for the summary. */
struct spy_gpu_stats {
	unsigned long long timed, skipped_pool, skipped_capture, skipped_error;
	int off;	/* no CUDA runtime in the process */
};
void spy_gpu_stats(struct spy_gpu_stats *out);

#endif
