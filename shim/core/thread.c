/*
 * Per-thread state (spy_tls) and counters. Each thread gets its own block so that no cache
 * line is shared on the fast path; blocks are kept on a list for the exit
 * summary and reused by new threads once their thread has exited.
 */
#include "core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct spy_tls spy_tls __attribute__((tls_model("initial-exec")));

int
spy_tid(void)
{
	if (!spy_tls.tid)
		spy_tls.tid = (int)syscall(SYS_gettid);
	return spy_tls.tid;
}

static struct spy_thread *threads;
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;
/* For when even one block cannot be allocated: counts shared, still right per thread. */
static struct spy_thread fallback = { .in_use = 1, .index = ~0u, .copy_n = { fallback.n } };
static int fallback_listed;

/* What the writer does with a block whose thread ends (sink.c sets it: the writer owns its buffers). */
static void (*exit_hook)(struct spy_thread *);

void
spy_thread_set_exit_hook(void (*fn)(struct spy_thread *))
{
	__atomic_store_n(&exit_hook, fn, __ATOMIC_RELEASE);
}

static void
thread_exit(void *p)
{
	struct spy_thread *th = p;
	void (*hook)(struct spy_thread *) = __atomic_load_n(&exit_hook, __ATOMIC_ACQUIRE);

	/* What this thread buffered goes out before another thread takes the block. */
	if (hook)
		hook(th);
	/*
	 * The thread may still call: from a destructor of the program's that runs
	 * after this one. It then claims a block afresh (spy_thread_get), which
	 * sets the key again, so this runs again in the next round; this block
	 * must no longer be its own before another thread can take it.
	 */
	if (spy_tls.thread == th)
		spy_tls.thread = NULL;
	__atomic_store_n(&th->in_use, 0, __ATOMIC_RELEASE);
}

static void
make_key(void)
{
	key_ok = pthread_key_create(&key, thread_exit) == 0;
}

static struct spy_thread *
claim(void)
{
	for (struct spy_thread *th = __atomic_load_n(&threads, __ATOMIC_ACQUIRE); th; th = th->next) {
		int free_ = 0;

		if (th != &fallback &&
		    __atomic_compare_exchange_n(&th->in_use, &free_, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			th->life++;
			return th;
		}
	}
	return NULL;
}

static void
push(struct spy_thread *th)
{
	th->next = __atomic_load_n(&threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&threads, &th->next, th, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

struct spy_thread *
spy_thread_get(void)
{
	struct spy_thread *th = spy_tls.thread;

	if (th)
		return th;
	pthread_once(&key_once, make_key);
	th = claim();
	if (!th) {
		th = calloc(1, sizeof(*th));
		if (th) {
			static unsigned blocks;

			th->copy_n[0] = th->n;
			th->in_use = 1;
			th->index = __atomic_fetch_add(&blocks, 1, __ATOMIC_RELAXED);
			push(th);
		} else {
			if (!__atomic_exchange_n(&fallback_listed, 1, __ATOMIC_ACQ_REL))
				push(&fallback);
			th = &fallback;
		}
	}
	if (key_ok && th != &fallback)
		pthread_setspecific(key, th);
	spy_tls.thread = th;
	return th;
}

struct spy_thread *
spy_thread_list(void)
{
	return __atomic_load_n(&threads, __ATOMIC_ACQUIRE);
}

/*
 * In a forked child only the forking thread lives on, and the counts it
 * inherited are the parent's: start from zero.
 */
void
spy_thread_fork_child(void)
{
	spy_tls.tid = 0;
	for (struct spy_thread *th = threads; th; th = th->next) {
		for (unsigned k = 0; k < SPY_MAX_COPIES; k++) {
			struct spy_counts *n = th->copy_n[k];

			for (int i = 0; n && i < _SPY_FN_COUNT; i++) {
				struct spy_timing *t = n[i].timing;

				memset(&n[i], 0, sizeof(n[i]));
				if (t) {
					memset(t, 0, sizeof(*t));
					t->min_ns = UINT64_MAX;
					n[i].timing = t;
				}
			}
		}
		th->flight_pos = 0;
		/* The counters are the child's own memory now (spy_sink_fork_child): moved into its own file later. */
		th->home = 0;
		/* A thread of the parent's in the middle of a record is not the child's: its exit waits for none. */
		th->recording = 0;
		if (th != spy_tls.thread && th != &fallback)
			th->in_use = 0;
	}
}
