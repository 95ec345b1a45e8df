/*
 * Rows of the summary from per-thread counters (counts.h): the exit
 * summary's (summary.c) and the command's for a process that did not exit
 * (records.c), one way for both.
 */
#include "counts.h"
#include "spy-api.h"

#include <string.h>

/* The lower bound of a bucket's range, in ns. */
static uint64_t
bucket_floor(unsigned b)
{
	if (b < 4)
		return b;
	return (uint64_t)(4 | (b & 3)) << (b / 4 - 2);
}

void
spy_row_init(struct spy_row *r, unsigned id)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->min = UINT64_MAX;
}

void
spy_row_add_counts(struct spy_row *r, const struct spy_counts *n)
{
	r->calls += __atomic_load_n(&n->calls, __ATOMIC_RELAXED);
	r->fails += __atomic_load_n(&n->fails, __ATOMIC_RELAXED);
	r->internal += __atomic_load_n(&n->internal, __ATOMIC_RELAXED);
	r->gpu_timed += __atomic_load_n(&n->gpu_timed, __ATOMIC_RELAXED);
	r->gpu_total += __atomic_load_n(&n->gpu_total_ns, __ATOMIC_RELAXED);
}

void
spy_row_add_timing(struct spy_row *r, const struct spy_timing *t, uint64_t timed)
{
	/* Atomic: other threads may still be calling (exit() from one thread). */
	uint64_t lo = __atomic_load_n(&t->min_ns, __ATOMIC_RELAXED);
	uint64_t hi = __atomic_load_n(&t->max_ns, __ATOMIC_RELAXED);

	r->timed += timed;
	r->total += __atomic_load_n(&t->total_ns, __ATOMIC_RELAXED);
	r->first += __atomic_load_n(&t->first_ns, __ATOMIC_RELAXED);
	r->nfirst++;
	if (lo < r->min)
		r->min = lo;
	if (hi > r->max)
		r->max = hi;
	for (unsigned b = 0; b < SPY_HIST_BUCKETS; b++)
		r->hist[b] += __atomic_load_n(&t->hist[b], __ATOMIC_RELAXED);
}

void
spy_row_done(struct spy_row *r)
{
	if (!r->timed)
		r->min = 0;
}

uint64_t
spy_row_quantile(const struct spy_row *r, double q)
{
	uint64_t want = (uint64_t)(q * (double)r->timed), seen = 0;

	for (unsigned b = 0; b < SPY_HIST_BUCKETS; b++) {
		seen += r->hist[b];
		if (seen > want) {
			uint64_t lo = bucket_floor(b);

			/* Clamp to what was really seen: a bucket's bound can lie outside. */
			return lo < r->min ? r->min : lo > r->max ? r->max : lo;
		}
	}
	return r->max;
}

/*
 * One call in 16 is timed, but every thread's first call is, and it pays for
 * cuDNN's lazy loading (a millisecond): estimated apart, so that it is not
 * multiplied by sixteen.
 */
static uint64_t
steady_ns(const struct spy_row *r)
{
	uint64_t timed = r->timed > r->nfirst ? r->timed - r->nfirst : 0, calls = r->calls > r->nfirst ? r->calls - r->nfirst : 0;
	uint64_t total = r->total > r->first ? r->total - r->first : 0;

	return timed ? (uint64_t)((double)total * (double)calls / (double)timed) : 0;
}

void
spy_row_json(struct spy_line *l, const char *fn, const struct spy_row *r, uint64_t probing)
{
	spy_line_lit(l, "{\"fn\":");
	spy_line_name(l, fn);
	spy_line_lit(l, ",\"calls\":");
	spy_line_u64(l, r->calls);
	spy_line_lit(l, ",\"failures\":");
	spy_line_u64(l, r->fails);
	spy_line_lit(l, ",\"internal\":");
	spy_line_u64(l, r->internal);
	spy_line_lit(l, ",\"probing\":");
	spy_line_u64(l, probing);
	spy_line_lit(l, ",\"timed\":");
	spy_line_u64(l, r->timed);
	spy_line_lit(l, ",\"total_ns\":");
	spy_line_u64(l, r->timed ? (r->first < r->total ? r->first : r->total) + steady_ns(r) : 0);
	spy_line_lit(l, ",\"first_ns\":");
	spy_line_u64(l, r->nfirst ? r->first / r->nfirst : 0);
	spy_line_lit(l, ",\"steady_ns\":");
	/* Calls after the first, none of them timed: not measured (one in 16 is), not zero. */
	if (r->calls > r->nfirst && r->timed <= r->nfirst)
		spy_line_lit(l, "null");
	else
		spy_line_u64(l, steady_ns(r));
	spy_line_lit(l, ",\"min_ns\":");
	spy_line_u64(l, r->min);
	spy_line_lit(l, ",\"max_ns\":");
	spy_line_u64(l, r->max);
	spy_line_lit(l, ",\"p50_ns\":");
	spy_line_u64(l, spy_row_quantile(r, 0.5));
	spy_line_lit(l, ",\"p99_ns\":");
	spy_line_u64(l, spy_row_quantile(r, 0.99));
	spy_line_lit(l, ",\"gpu_timed\":");
	spy_line_u64(l, r->gpu_timed);
	spy_line_lit(l, ",\"gpu_total_ns\":");
	spy_line_u64(l, r->gpu_total);
	spy_line_char(l, '}');
}

void
spy_row_merge(struct spy_row *r, const struct spy_row *x)
{
	r->calls += x->calls;
	r->fails += x->fails;
	r->internal += x->internal;
	r->gpu_timed += x->gpu_timed;
	r->gpu_total += x->gpu_total;
	r->timed += x->timed;
	r->total += x->total;
	r->first += x->first;
	r->nfirst += x->nfirst;
	if (x->min < r->min)
		r->min = x->min;
	if (x->max > r->max)
		r->max = x->max;
	for (unsigned b = 0; b < SPY_HIST_BUCKETS; b++)
		r->hist[b] += x->hist[b];
}

int
spy_row_by_calls(const void *a, const void *b)
{
	const struct spy_row *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(spy_fn_info[x->id].name, spy_fn_info[y->id].name);
}

void
spy_summary_head_json(struct spy_line *l, const struct spy_row *total, uint64_t dropped, uint64_t probing)
{
	spy_line_lit(l, "{\"event\":\"summary\",\"calls\":");
	spy_line_u64(l, total->calls);
	spy_line_lit(l, ",\"failures\":");
	spy_line_u64(l, total->fails);
	spy_line_lit(l, ",\"internal\":");
	spy_line_u64(l, total->internal);
	spy_line_lit(l, ",\"dropped\":");
	spy_line_u64(l, dropped);
	spy_line_lit(l, ",\"probing\":");
	spy_line_u64(l, probing);
}

void
spy_copy_counts_json(struct spy_line *l, const struct spy_row *total, const struct spy_row *rows, size_t n)
{
	spy_line_lit(l, ",\"calls\":");
	spy_line_u64(l, total->calls);
	spy_line_lit(l, ",\"failures\":");
	spy_line_u64(l, total->fails);
	spy_line_lit(l, ",\"internal\":");
	spy_line_u64(l, total->internal);
	spy_line_lit(l, ",\"functions\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"fn\":");
		spy_line_name(l, spy_fn_info[rows[i].id].name);
		spy_line_lit(l, ",\"calls\":");
		spy_line_u64(l, rows[i].calls);
		spy_line_lit(l, ",\"failures\":");
		spy_line_u64(l, rows[i].fails);
		spy_line_lit(l, ",\"internal\":");
		spy_line_u64(l, rows[i].internal);
		spy_line_char(l, '}');
	}
	spy_line_lit(l, "]}");
}
