/*
 * Durations and the exit summary: a table on stderr and a `summary` record.
 * Durations go into per-thread log-scale histograms (4 buckets an octave),
 * so quantiles cost no per-call memory.
 */
#include "core.h"
#include "summary.h"
#include "slowpath.h"
#include "algo.h"
#include "backend.h"
#include "gpu.h"
#include "sink.h"
#include "recfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * A function's timing for the counters `n` of this thread: in the mapped
 * file when its counters are (spy_summary_home), else in memory.
 */
static struct spy_timing *
timing_new(const struct spy_counts *n)
{
	struct spy_thread *th = spy_tls.thread;

	for (unsigned k = 0; th && th->home && k < SPY_MAX_COPIES; k++) {
		const struct spy_counts *c = __atomic_load_n(&th->copy_n[k], __ATOMIC_RELAXED);

		if (c && n >= c && n < c + _SPY_FN_COUNT) {
			struct spy_timing *t = spy_sink_state(SPY_STATE_TIMING, k, (uint32_t)(n - c), th->index, sizeof(*t));

			if (t)
				return t;
			break;
		}
	}
	return calloc(1, sizeof(struct spy_timing));
}

/* A home in the mapped file for the counters of one copy: 0 when there is none (they stay where they are). */
static int
home_copy(struct spy_thread *th, unsigned k)
{
	struct spy_counts *old = th->copy_n[k], *m;

	m = spy_sink_state(SPY_STATE_COUNTS, k, _SPY_FN_COUNT, th->index, _SPY_FN_COUNT * sizeof(*m));
	if (!m)
		return 0;
	memcpy(m, old, _SPY_FN_COUNT * sizeof(*m));
	for (unsigned id = 0; id < _SPY_FN_COUNT; id++) {
		struct spy_timing *t = m[id].timing, *u;

		if (!t || !(u = spy_sink_state(SPY_STATE_TIMING, k, id, th->index, sizeof(*u))))
			continue;
		memcpy(u, t, sizeof(*u));
		m[id].timing = u;
	}
	/* Release: the exit summary of another thread reads the counters through this pointer. */
	__atomic_store_n(&th->copy_n[k], m, __ATOMIC_RELEASE);
	return 1;
}

void
spy_summary_home(struct spy_thread *th)
{
	unsigned gen;

	spy_sink_open();
	gen = spy_sink_state_gen();
	if (!th || !gen || th->home == gen || th->index == ~0u)
		return;
	for (unsigned k = 0; k < SPY_MAX_COPIES; k++)
		if (th->copy_n[k] && !home_copy(th, k))
			return;
	th->home = gen;
}

struct spy_counts *
spy_summary_counters(struct spy_thread *th, unsigned k)
{
	struct spy_counts *m = th->home ? spy_sink_state(SPY_STATE_COUNTS, k, _SPY_FN_COUNT, th->index,
							   _SPY_FN_COUNT * sizeof(*m)) : NULL;

	return m ? m : calloc(_SPY_FN_COUNT, sizeof(struct spy_counts));
}

static inline __attribute__((always_inline)) void
timing_add(struct spy_counts *n, struct spy_timing *t, uint64_t ns)
{
	SPY_INC(n->timed);
	__atomic_store_n(&t->total_ns, t->total_ns + ns, __ATOMIC_RELAXED);
	if (ns < t->min_ns)
		__atomic_store_n(&t->min_ns, ns, __ATOMIC_RELAXED);
	if (ns > t->max_ns)
		__atomic_store_n(&t->max_ns, ns, __ATOMIC_RELAXED);
	SPY_INC(t->hist[spy_hist_bucket(ns)]);
}

/* Once per function and thread, at its first measured call: out of line, so that spy_time_add saves no registers. */
static __attribute__((noinline)) void
timing_first(struct spy_counts *n, uint64_t ns)
{
	struct spy_timing *t = timing_new(n);

	if (!t)
		return;
	t->min_ns = UINT64_MAX;
	t->first_ns = ns;
	__atomic_store_n(&n->timing, t, __ATOMIC_RELEASE);
	timing_add(n, t, ns);
}

void
spy_time_add(struct spy_counts *n, uint64_t ns)
{
	struct spy_timing *t = n->timing;

	if (SPY_UNLIKELY(!t)) {
		timing_first(n, ns);
		return;
	}
	timing_add(n, t, ns);
}

/* One row per function with calls: of one copy, or of all of them (copy -1). */
static int
collect(struct spy_row *rows, struct spy_row *total, int sort, int copy)
{
	unsigned ncopies = spy_copy_count();
	int nrows = 0;

	memset(total, 0, sizeof(*total));
	for (unsigned id = 0; id < _SPY_FN_COUNT; id++) {
		struct spy_row r;

		spy_row_init(&r, id);
		for (unsigned k = 0; k < ncopies; k++)
		for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
			struct spy_counts *counts = __atomic_load_n(&th->copy_n[k], __ATOMIC_ACQUIRE);
			const struct spy_counts *n;
			const struct spy_timing *t;

			if ((copy >= 0 && k != (unsigned)copy) || !counts)
				continue;
			n = &counts[id];
			t = __atomic_load_n(&n->timing, __ATOMIC_ACQUIRE);
			spy_row_add_counts(&r, n);
			if (t)
				spy_row_add_timing(&r, t, __atomic_load_n(&n->timed, __ATOMIC_RELAXED));
		}
		spy_row_done(&r);
		if (r.calls || r.internal) {
			rows[nrows++] = r;
			total->calls += r.calls;
			total->fails += r.fails;
			total->internal += r.internal;
		}
	}
	if (sort)
		qsort(rows, (size_t)nrows, sizeof(rows[0]), spy_row_by_calls);
	return nrows;
}

static int collect(struct spy_row *rows, struct spy_row *total, int sort, int copy);

/* Failures that were a framework's expected probing (slowpath.c): part of the failures, said apart. */
static uint64_t
total_probes(const struct spy_row *rows, int nrows)
{
	uint64_t n = 0;

	for (int i = 0; i < nrows; i++)
		n += spy_probes(rows[i].id);
	return n;
}

/* Per copy: which copy answered how many calls of what (one copy: the rows and total given). */
static void copies_fields(struct spy_line *l, const struct spy_row *all, int nall, const struct spy_row *all_total);

static void
summary_fields(struct spy_line *l, const struct spy_row *rows, int nrows, const struct spy_row *total)
{
	spy_summary_head_json(l, total, spy_sink_dropped(), total_probes(rows, nrows));
	spy_line_lit(l, ",\"functions\":[");
	for (int i = 0; i < nrows; i++) {
		const struct spy_row *r = &rows[i];

		if (i)
			spy_line_char(l, ',');
		spy_row_json(l, spy_fn_info[r->id].name, r, spy_probes(r->id));
	}
	spy_line_char(l, ']');
}

void
spy_summary_crash(int fd, int sig)
{
	/* Static: a signal handler allocates nothing. Unsorted: qsort is not async-signal-safe. */
	static struct spy_row rows[_SPY_FN_COUNT];
	static struct spy_line l;
	struct spy_row total;
	int nrows = collect(rows, &total, 0, -1);

	spy_line_reset(&l);
	/* Written out in pieces as it fills: it may be longer than the static block. */
	l.spill_fd = fd + 1;
	summary_fields(&l, rows, nrows, &total);
	spy_line_lit(&l, ",\"crashed\":");
	spy_line_i64(&l, sig);
	spy_line_lit(&l, "}\n");
	spy_line_spill(&l);
}

static void
copies_fields(struct spy_line *l, const struct spy_row *all, int nall, const struct spy_row *all_total)
{
	static struct spy_row own[_SPY_FN_COUNT];
	unsigned n = spy_copy_count();

	spy_line_lit(l, ",\"copies\":[");
	for (unsigned k = 0; k < n; k++) {
		const struct spy_real_lib *c = &spy_copies[k];
		struct spy_row own_total;
		/* One copy: the same snapshot as the totals, which threads still calling at exit() would move. */
		const struct spy_row *rows = n == 1 ? all : own, *total = n == 1 ? all_total : &own_total;
		int nrows = n == 1 ? nall : collect(own, &own_total, 1, (int)k);

		if (k)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"copy\":");
		spy_line_u64(l, k);
		spy_line_lit(l, ",\"path\":");
		spy_line_str(l, c->handle || c->closed ? c->path : NULL);
		spy_line_lit(l, ",\"version\":");
		if (c->handle || c->closed)
			spy_line_u64(l, c->version);
		else
			spy_line_lit(l, "null");
		/* Who reached it, and how: the callers behind each copy (issue 26). */
		spy_line_lit(l, ",\"how\":");
		spy_line_str(l, c->handle || c->closed ? c->how : NULL);
		spy_line_lit(l, ",\"by\":");
		spy_line_str(l, k && c->who[0] ? c->who : NULL);
		spy_line_lit(l, ",\"callers\":[");
		for (int i = 0; i < SPY_COPY_CALLERS && c->callers[i][0]; i++) {
			if (i)
				spy_line_char(l, ',');
			spy_line_str(l, c->callers[i]);
		}
		spy_line_char(l, ']');
		spy_line_lit(l, ",\"closed\":");
		if (c->closed)
			spy_line_lit(l, "true");
		else
			spy_line_lit(l, "false");
		spy_copy_counts_json(l, total, rows, (size_t)nrows);
	}
	spy_line_char(l, ']');
}

/* On stderr only when several copies answered: each with its own counts. */
static void
copies_print(void)
{
	static struct spy_row rows[_SPY_FN_COUNT];
	unsigned n = spy_copy_count();

	if (n < 2)
		return;
	for (unsigned k = 0; k < n; k++) {
		const struct spy_real_lib *c = &spy_copies[k];
		struct spy_row total;
		int nrows = collect(rows, &total, 1, (int)k);

		char by[sizeof(c->who) + sizeof(c->callers) + 96] = "";

		if (k && c->how && strcmp(c->how, "linked") == 0)
			snprintf(by, sizeof(by), ", linked by %s", c->who[0] ? c->who : "?");
		else if (k && c->who[0])
			snprintf(by, sizeof(by), ", through dlsym(handle) by %s", c->who);
		/* Who called it by name once several copies were mapped (route.c). */
		for (int i = 0; i < SPY_COPY_CALLERS && c->callers[i][0]; i++)
			snprintf(by + strlen(by), sizeof(by) - strlen(by), "%s%s", i ? ", " : ", called by name from ",
				 c->callers[i]);
		spy_log("copy %u: %s (%zu)%s%s: %llu call%s, %llu failed, %llu internal", k,
			c->handle || c->closed ? c->path : "none", c->version, by, c->closed ? ", closed by the program" : "",
			(unsigned long long)total.calls, total.calls == 1 ? "" : "s",
			(unsigned long long)total.fails, (unsigned long long)total.internal);
		for (int i = 0; i < nrows; i++)
			spy_log("  copy %u  %-41s %10llu %8llu %9llu", k, spy_fn_info[rows[i].id].name,
				(unsigned long long)rows[i].calls, (unsigned long long)rows[i].fails,
				(unsigned long long)rows[i].internal);
	}
}

static void
summary_record(const struct spy_row *rows, int nrows, const struct spy_row *total)
{
	struct spy_thread *th = spy_thread_get();
	struct spy_buf *b = spy_thread_buf(th);
	struct spy_line *l;

	if (!b)
		return;
	l = &b->line;
	spy_line_reset(l);
	summary_fields(l, rows, nrows, total);
	copies_fields(l, rows, nrows, total);
	if (spy_config.gpu_time || spy_config.sync[0]) {
		struct spy_gpu_stats g;

		spy_gpu_stats(&g);
		spy_line_lit(l, ",\"gpu\":{\"runtime\":");
		spy_line_raw(l, g.off ? "false" : "true");
		spy_line_lit(l, ",\"timed\":");
		spy_line_u64(l, g.timed);
		spy_line_lit(l, ",\"skipped_pool\":");
		spy_line_u64(l, g.skipped_pool);
		spy_line_lit(l, ",\"skipped_capture\":");
		spy_line_u64(l, g.skipped_capture);
		spy_line_lit(l, ",\"skipped_error\":");
		spy_line_u64(l, g.skipped_error);
		spy_line_char(l, '}');
	}
	spy_line_char(l, '}');
	spy_sink_commit_last(th, l);
}

void
spy_summary_print(void)
{
	static struct spy_row rows[_SPY_FN_COUNT];
	struct spy_row total;
	int nrows;

	spy_algo_exit_findings();
	nrows = collect(rows, &total, 1, -1);
	/* A file once opened always ends with a summary, even when no call was counted. */
	if (spy_sink_path() || (nrows > 0 && spy_sink_enabled())) {
		/* What ran for each convolution, before the summary: the summary stays the last line. */
		spy_algo_records();
		spy_backend_records();
		summary_record(rows, nrows, &total);
	}
	/* A process that never called cuDNN (a shell the launcher went through) says nothing. */
	if (nrows == 0 || !(spy_config.stderr_mask & SPY_STDERR_SUMMARY))
		return;
	if (total_probes(rows, nrows))
		spy_log("summary (pid %d): %llu calls, %llu failed (%llu of them probing), %llu internal", (int)getpid(),
			(unsigned long long)total.calls, (unsigned long long)total.fails,
			(unsigned long long)total_probes(rows, nrows), (unsigned long long)total.internal);
	else
		spy_log("summary (pid %d): %llu calls, %llu failed, %llu internal", (int)getpid(),
			(unsigned long long)total.calls, (unsigned long long)total.fails,
			(unsigned long long)total.internal);
	/* The first call apart: it pays for cuDNN's lazy loading and is not what the steady state costs. */
	spy_log("  %-48s %10s %8s %9s %10s %12s", "function", "calls", "failed", "internal", "p50 ns", "first ns");
	for (int i = 0; i < nrows; i++)
		spy_log("  %-48s %10llu %8llu %9llu %10llu %12llu", spy_fn_info[rows[i].id].name,
			(unsigned long long)rows[i].calls, (unsigned long long)rows[i].fails,
			(unsigned long long)rows[i].internal, (unsigned long long)spy_row_quantile(&rows[i], 0.5),
			(unsigned long long)(rows[i].nfirst ? rows[i].first / rows[i].nfirst : 0));
	copies_print();
	spy_algo_print();
	if (spy_sink_dropped())
		spy_log("%llu records could not be written", spy_sink_dropped());
	if (spy_sink_path())
		spy_log("records in %s", spy_sink_path());
}
