/* The table printed at exit: calls and failures per function. */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct row {
	unsigned id;
	struct spy_counts n;
};

static int
by_calls(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->n.calls != y->n.calls)
		return x->n.calls < y->n.calls ? 1 : -1;
	return strcmp(spy_fn_info[x->id].name, spy_fn_info[y->id].name);
}

void
spy_summary_print(void)
{
	static struct row rows[_SPY_FN_COUNT];
	struct spy_counts total = { 0, 0, 0 };
	int nrows = 0;

	for (unsigned id = 0; id < _SPY_FN_COUNT; id++) {
		struct spy_counts s = { 0, 0, 0 };

		for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
			s.calls += __atomic_load_n(&th->n[id].calls, __ATOMIC_RELAXED);
			s.fails += __atomic_load_n(&th->n[id].fails, __ATOMIC_RELAXED);
			s.internal += __atomic_load_n(&th->n[id].internal, __ATOMIC_RELAXED);
		}
		if (s.calls || s.internal) {
			rows[nrows].id = id;
			rows[nrows].n = s;
			nrows++;
			total.calls += s.calls;
			total.fails += s.fails;
			total.internal += s.internal;
		}
	}
	/* A process that never called cuDNN (a shell the launcher went through) says nothing. */
	if (nrows == 0)
		return;
	qsort(rows, (size_t)nrows, sizeof(rows[0]), by_calls);
	spy_log("summary (pid %d): %llu calls, %llu failed, %llu internal", (int)getpid(),
		(unsigned long long)total.calls, (unsigned long long)total.fails,
		(unsigned long long)total.internal);
	spy_log("  %-48s %10s %8s %9s", "function", "calls", "failed", "internal");
	for (int i = 0; i < nrows; i++)
		spy_log("  %-48s %10llu %8llu %9llu", spy_fn_info[rows[i].id].name,
			(unsigned long long)rows[i].n.calls, (unsigned long long)rows[i].n.fails,
			(unsigned long long)rows[i].n.internal);
}
