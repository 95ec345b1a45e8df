/*
 * Life cycle: the constructor only reads the configuration; the first cuDNN
 * call resolves the real library once (pthread_once), prints the banner and
 * from then on wrappers go straight through. Calls that arrive before the
 * constructor (another library's constructor) take the same lazy path.
 */
#include "core.h"
#include "fastpath.h"
#include "init.h"
#include "summary.h"
#include "audit.h"
#include "crash.h"
#include "gpu.h"
#include "inject.h"
#include "sink.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;
static int resolved_ok;

static void
at_exit(void)
{
	int saved = errno;

	if (spy_phase_exit_begin())
		return;
	spy_sink_seal();
	/* Another thread may have resolved: spy_resolved() (acquire) makes its resolved_ok visible here. */
	if (spy_resolved() && resolved_ok)
		spy_audit();
	spy_gpu_drain();
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next)
		spy_sink_flush(th);
	spy_summary_print();
	spy_sink_trim();
	errno = saved;
}

/*
 * cuDNN takes a lock in every call, even cudnnGetVersion: a child forked
 * while another thread was inside cuDNN hangs at its first cuDNN call.
 * The spy cannot prevent that, but it can say so before that call.
 */
static int fork_inside, fork_hazard;
/* A forked child's thread whose counters wait to move into the child's file: its next call goes the slow way. */
static struct spy_thread *home_pending;
static spy_fnptr saved_real[SPY_MAX_COPIES][_SPY_FN_COUNT];
static pthread_mutex_t hazard_lock = PTHREAD_MUTEX_INITIALIZER;

static void
fork_prepare(void)
{
	fork_inside = 0;
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next)
		if (th != spy_tls.thread && __atomic_load_n(&th->in_use, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&th->inside, __ATOMIC_RELAXED))
			fork_inside++;
}

static void
fork_child(void)
{
	pthread_mutex_init(&hazard_lock, NULL);
	/* The sink first: the counters in the parent's mapped file become the child's own memory before they are reset. */
	spy_sink_fork_child();
	spy_thread_fork_child();
	spy_audit_fork_child();
	if (spy_config.output[0] && spy_tls.thread) {
		home_pending = spy_tls.thread;
		for (unsigned s = 0; s <= SPY_SLOT_EXPORTED; s++)
			__atomic_store_n(&spy_slot_slow[s].why[SPY_SLOW_HOME], 1, __ATOMIC_RELEASE);
	}
	if (fork_inside > 0) {
		/* Every wrapper then takes the slow path once, where the finding is said first. */
		memcpy(saved_real, spy_copy_real, sizeof(saved_real));
		memset(spy_copy_real, 0, sizeof(spy_copy_real));
		__atomic_store_n(&fork_hazard, fork_inside, __ATOMIC_RELEASE);
	}
}

/*
 * The tables are restored before the flag is cleared, under a lock: a
 * thread that finds the flag clear finds the functions too (issue 15, item 10:
 * clearing first let another thread of the child see no function at all).
 */
void
spy_fork_hazard_check(void)
{
	char message[256];
	int said = 0;

	if (!__atomic_load_n(&fork_hazard, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&hazard_lock);
	if (__atomic_load_n(&fork_hazard, __ATOMIC_ACQUIRE)) {
		memcpy(spy_copy_real, saved_real, sizeof(saved_real));
		__atomic_store_n(&fork_hazard, 0, __ATOMIC_RELEASE);
		said = 1;
	}
	pthread_mutex_unlock(&hazard_lock);
	if (!said)
		return;
	snprintf(message, sizeof(message),
		 "this process was forked while %d other thread%s of its parent %s inside cuDNN; cuDNN takes a "
		 "lock in every call, so this call may never return", fork_inside, fork_inside == 1 ? "" : "s",
		 fork_inside == 1 ? "was" : "were");
	spy_audit_finding("fork-inside-cudnn", "warning", message, NULL);
}

/*
 * In the global scope when the constructor runs: the program's own
 * dependencies and LD_PRELOAD, loaded before main (or opened RTLD_GLOBAL,
 * the rare late case that keeps the handler).
 */
static int
loaded_at_start(void)
{
	void *main_scope, *p;
	Dl_info di;

	if (strcmp(spy_flavor.name, "drop-in") != 0)
		return 1;
	/* The main program's handle searches the global scope alone (RTLD_DEFAULT would search this library's own). */
	main_scope = spy_dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	p = main_scope ? spy_dlsym(main_scope, "cudnnspy_is_loaded") : NULL;
	return !main_scope || (p && dladdr(p, &di) && di.dli_fbase == spy_self_base());
}

static void
load_config(void)
{
	int saved = errno;

	spy_config_load();
	/* What the configuration asks of the other parts, once it is read. */
	spy_inject_init(spy_config.inject);
	spy_gpu_init();
	spy_run_marker("loaded", NULL);
	spy_state_flags_init();
	pthread_atfork(fork_prepare, NULL, fork_child);
	/*
	 * Registered from the constructor, so that it runs after the exit
	 * handlers the program registers later, which may still call cuDNN.
	 * A library the program opens late (a drop-in that PyTorch's or
	 * cudnn-frontend's dlopen brings in) would run its handler before the
	 * program's earlier ones, whose calls would come after the summary: its
	 * destructor, after every exit handler, ends the records instead.
	 */
	if (loaded_at_start())
		atexit(at_exit);
	errno = saved;
}

__attribute__((constructor)) static void
spy_constructor(void)
{
	pthread_once(&config_once, load_config);
}

__attribute__((destructor)) static void
spy_destructor(void)
{
	at_exit();
}

static void
banner(void)
{
	if (!(spy_config.stderr_mask & SPY_STDERR_BANNER))
		return;
	if (resolved_ok)
		spy_log("%s: cuDNN %d.%d.%d (%zu) from %s [%s]", spy_flavor.name, spy_lib.major,
			(int)(spy_lib.major >= 9 ? spy_lib.version / 100 % 100 : spy_lib.version / 100 % 10),
			(int)(spy_lib.version % 100), spy_lib.version, spy_lib.path, spy_lib.how);
}

static void
resolve(void)
{
	spy_tls.resolving = 1;
	pthread_once(&config_once, load_config);
	/*
	 * Before cuDNN is first asked anything: a dispatcher that cannot load its
	 * sub-libraries aborts inside that first question ("Invalid handle.
	 * Cannot load symbol ..."), and the handler and run's markers can then
	 * say so.
	 */
	spy_crash_install();
	spy_run_marker("resolving", NULL);
	resolved_ok = spy_resolve() == 0;
	spy_run_marker("called", NULL);
	banner();
	spy_phase_resolved_set();
	spy_audit();
	spy_tls.resolving = 0;
}

int
spy_init(void)
{
	int saved = errno;

	/* A call made from inside the resolution (a constructor it ran) cannot wait for it. */
	if (spy_tls.resolving)
		return -1;
	pthread_once(&resolve_once, resolve);
	errno = saved;
	return resolved_ok ? 0 : -1;
}

static int
fail_status(unsigned copy, unsigned id)
{
	int known = __atomic_load_n(&spy_copies[copy].major, __ATOMIC_RELAXED);
	int major = known ? known : spy_flavor.major;

	if (!known && spy_fn_info[id].majors == SPY_MAJOR_8)
		major = 8;
	return major == 8 ? 1 : 1001;	/* CUDNN_STATUS_NOT_INITIALIZED */
}

/* Counters for the thread's calls to copies other than 0; shared when none can be allocated. */
static void
copy_counters(struct spy_thread *th, unsigned copy)
{
	static struct spy_counts shared[SPY_MAX_COPIES][_SPY_FN_COUNT];

	struct spy_counts *n;

	if (th->copy_n[copy])
		return;
	n = spy_summary_counters(th, copy);
	/* Release: the exit summary of another thread reads them. */
	__atomic_store_n(&th->copy_n[copy], n ? n : shared[copy], __ATOMIC_RELEASE);
}

/*
 * An exported call while several copies are mapped: answered by the copy
 * the caller's own scope reaches (route.c). Another copy's call goes
 * through that copy's wrapper (spy_call_begin takes it), which counts and
 * records it as that copy's; this call then only hands it on
 * (SPY_REROUTED, undone in spy_call_end). A copy without a slot's call goes
 * to its real function, unrecorded.
 */
static int
reroute(struct spy_call *c, int k, spy_fnptr raw)
{
	if (k == 0)
		return 0;
	/* Copy k's real function, which spy_call_begin exchanges for copy k's wrapper; a copy without a slot's. */
	raw = k > 0 ? __atomic_load_n(&spy_copy_real[k][c->id], __ATOMIC_ACQUIRE) : raw;
	if (!raw)
		return 0;
	c->real = raw;
	c->copy = k > 0 ? (unsigned)k : 0;
	c->nested = SPY_REROUTED;
	spy_tls.depth--;
	return 1;
}

static int
route(struct spy_call *c, const void *caller)
{
	const union spy_slot_flags *f = &spy_slot_slow[SPY_SLOT_EXPORTED];
	spy_fnptr raw = NULL;
	unsigned known;
	int k;

	if (c->nested || c->copy != 0 || !spy_resolved())
		return 0;
	if (__atomic_load_n(&f->why[SPY_SLOW_RECHECK], __ATOMIC_ACQUIRE))
		spy_route_recheck();
	if (!__atomic_load_n(&f->why[SPY_SLOW_ROUTE], __ATOMIC_ACQUIRE))
		return 0;
	known = spy_copy_count();
	k = spy_route(caller, c->id, &raw);
	if (spy_copy_count() != known)
		spy_audit();	/* a new copy: the library records and the findings say who reaches it */
	return reroute(c, k, raw);
}

/* spy_call_setup's routing alone, for a caller whose route this thread knows already: 1 when it did. */
static int
route_known(struct spy_call *c, const void *caller)
{
	spy_fnptr raw;
	int k;

	if (!spy_route_known(caller, c->id, &k, &raw))
		return 0;
	reroute(c, k, raw);
	return 1;
}

void
spy_call_enter(struct spy_call *c, const void *caller, unsigned slot, const spy_fnptr (*wrappers)[_SPY_FN_COUNT])
{
	/* Several copies mapped and nothing else to do. */
	if (!(slot == SPY_SLOT_EXPORTED && c->real && spy_tls.thread && !c->nested &&
	      __atomic_load_n(&spy_slot_slow[slot].any, __ATOMIC_RELAXED) == SPY_SLOW_ONLY_ROUTE &&
	      route_known(c, caller)))
		spy_call_setup(c, caller);
	/* Another copy answers this exported call: through its wrapper, which does the accounting. */
	if (c->nested == SPY_REROUTED && c->copy && wrappers[c->copy][c->id])
		c->real = wrappers[c->copy][c->id];
}

void
spy_nested_enter(struct spy_call *c, const void *caller, unsigned copy, unsigned slot,
		 const spy_fnptr (*wrappers)[_SPY_FN_COUNT])
{
	struct spy_tls *t = &spy_tls;

	spy_nested_real(c, caller);
	if (c->real == NULL || t->thread == NULL || (copy && t->thread->copy_n[copy] == NULL) ||
	    __atomic_load_n(&spy_slot_slow[slot].any, __ATOMIC_RELAXED))
		spy_call_enter(c, caller, slot, wrappers);
}

void
spy_call_rerouted(void)
{
	spy_tls.depth++;
}

/* The forked child's thread has moved its counters, or has ended: every call takes the fast path again. */
static void
home_done(void)
{
	struct spy_thread *th = __atomic_load_n(&home_pending, __ATOMIC_ACQUIRE);

	if (!th || (th != spy_tls.thread && __atomic_load_n(&th->in_use, __ATOMIC_ACQUIRE)))
		return;
	__atomic_store_n(&home_pending, NULL, __ATOMIC_RELEASE);
	for (unsigned s = 0; s <= SPY_SLOT_EXPORTED; s++)
		__atomic_store_n(&spy_slot_slow[s].why[SPY_SLOW_HOME], 0, __ATOMIC_RELEASE);
}

spy_fnptr
spy_call_setup(struct spy_call *c, const void *caller)
{
	static int missing_said[SPY_MAX_COPIES][_SPY_FN_COUNT];
	const struct spy_real_lib *lib = &spy_copies[c->copy];
	int saved = errno;

	if (!spy_tls.thread)
		spy_thread_get();
	if (c->copy)
		copy_counters(spy_tls.thread, c->copy);
	if (!c->real && __atomic_load_n(&fork_hazard, __ATOMIC_ACQUIRE)) {
		spy_fork_hazard_check();
		c->real = __atomic_load_n(&spy_copy_real[c->copy][c->id], __ATOMIC_ACQUIRE);
	}
	if (!c->real && (spy_init() == 0 || c->copy))
		c->real = __atomic_load_n(&spy_copy_real[c->copy][c->id], __ATOMIC_ACQUIRE);
	/* Its counters where a reader finds them after any ending: the mapped record file. */
	if (spy_config.output[0] && spy_tls.thread && !spy_tls.resolving && spy_resolved() &&
	    (!spy_tls.thread->home || spy_tls.thread->home != spy_sink_state_gen()))
		spy_summary_home(spy_tls.thread);
	if (__atomic_load_n(&home_pending, __ATOMIC_ACQUIRE))
		home_done();
	if (route(c, caller)) {
		errno = saved;
		return c->real;
	}
	if (!c->real) {
		c->fail_status = fail_status(c->copy, c->id);
		if (lib->closed)
			spy_log_once(&missing_said[c->copy][c->id], "%s called through copy %u (%s), which the program "
				     "closed: nothing behind it to call, returning %s", spy_fn_info[c->id].name, c->copy,
				     lib->path, spy_status_name(c->fail_status));
		else if (lib->handle)
			spy_log_once(&missing_said[c->copy][c->id], "%s is not in %s (cuDNN %zu): returning %s",
				     spy_fn_info[c->id].name, lib->path, lib->version, spy_status_name(c->fail_status));
	}
	/*
	 * The program's errno, or, for its first call to the copy, what cuDNN's first call would have made it;
	 * never for a call cuDNN makes itself.
	 */
	errno = c->real && !c->nested ? spy_copy_first_errno(c->copy, saved) : saved;
	return c->real;
}
