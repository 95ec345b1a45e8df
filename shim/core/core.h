/*
 * What the core's files share: configuration, diagnostics, the real
 * library, per-thread state. Nothing here is called on the fast path.
 */
#ifndef SPY_CORE_H
#define SPY_CORE_H

#include <limits.h>
#include <stddef.h>

#include "options.h"
#include "spy.h"

/* Which library this is: set per build target in flavor.c. */
struct spy_flavor {
	const char *name;	/* "preload", "drop-in" */
	int major;		/* the cuDNN major it stands for */
};
extern const struct spy_flavor spy_flavor;

/* Reads the environment; bad values warn once and keep the default. */
void spy_config_load(void);
/* The same, from a lookup function: for tests. */
void spy_config_parse(const char *(*get)(const char *name));
/* 1 when `value` is one of 1/0/yes/no/on/off/true/false (case-insensitive), setting *out. */

/* Sets the flag bit on every function matching one of the globs; warns on globs that match nothing. */
void spy_apply_globs(const char *option, const char *globs, unsigned char bit);

/* log.c: the spy's own diagnostics on stderr, never stdout; nothing under spy_quiet. */
void spy_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says it at most once per flag (a static int owned by the caller). */
#define spy_log_once(flag, ...) \
	do { \
		if (!__atomic_exchange_n((flag), 1, __ATOMIC_RELAXED)) \
			spy_log(__VA_ARGS__); \
	} while (0)

/* resolve.c and copies.c: the real cuDNN copies. */
#define SPY_COPY_CALLERS 4
struct spy_real_lib {
	void *handle;
	void *base;		/* its load address: what tells copies apart */
	char path[PATH_MAX];
	const char *how;	/* which rule found it */
	char who[256];		/* for copies reached through dlsym(handle): who asked */
	size_t version;		/* cudnnGetVersion() */
	size_t cudart;		/* cudnnGetCudartVersion() */
	int major;
	int lazy_errno;		/* what the copy's first call left in errno (its one-time initialization) */
	int closed;		/* the program closed it and it is no longer mapped: its slot is not used again */
	/* The caller objects whose own names reached it once several copies were mapped (route.c), the first few. */
	char callers[SPY_COPY_CALLERS][64];
};
/* [0]: the copy the exported definitions serve (spy_resolve); [1..]: registered by copies.c. */
extern struct spy_real_lib spy_copies[SPY_MAX_COPIES];
#define spy_lib (spy_copies[0])
/* Copies 0..spy_ncopies-1 are usable; 1 once copy 0 is resolved. */
unsigned spy_copy_count(void);
/*
 * The copy id of the dispatcher mapped at `base` (file `fname`), registering
 * it at its first use, found the way `how` says (a static text): -1 when
 * every slot is taken (said once). The caller
 * runs spy_init() first, so that copy 0 is settled before any other.
 */
int spy_copy_for(void *base, const char *fname, const void *caller, const char *how);
/*
 * The program is about to dlclose `handle`: the copy it names gives back the
 * spy's own reference, so that it goes as it would without the spy. Returns
 * the copy, or -1; spy_copy_closed() after the real dlclose.
 */
int spy_copy_closing(void *handle);
/*
 * After the program's dlclose of copy k: still mapped (the program holds it
 * otherwise), the spy takes its reference again; gone, the copy is forgotten:
 * its calls fail as a closed library's, and a file opened again at its path
 * is a new copy. Returns where it was mapped when it is gone, else NULL.
 */
void *spy_copy_closed(int k);
/* Notes that the object named `caller` (a file name) reached copy k through the exported names. */
void spy_copy_note_caller(int k, const char *caller);
/* 1 when `p` lies in this library or in another build of the spy (a drop-in beside the preload, or both drop-ins). */
int spy_in_a_spy(const void *p);
/* The cuDNN major of a copy: 8 or 9; the spy's own flavor's when not known. */
int spy_copy_major(unsigned copy);
/* Fills a copy's table of real functions and asks its versions. */
void spy_copy_fill(unsigned copy);
/*
 * The errno the program's first call to `copy` starts with: what cuDNN's
 * one-time initialization left there, when the spy's own first question ran
 * it and it set errno (9.19 sets 0), once; otherwise `errno_now`.
 */
int spy_copy_first_errno(unsigned copy, int errno_now);


/*
 * route.c: the copy that answers a call made through an exported name from
 * return address `ra`, as the loader bound the caller's reference without
 * the spy: the global scope first, then the caller's own dependencies. A
 * copy id, or -1 with *raw set to the real function of a copy that has no
 * slot (answered, not recorded).
 */
int spy_route(const void *ra, unsigned id, spy_fnptr *raw);
/* Bumped whenever a copy goes away: what was found per caller (route.c) is stale. */
extern unsigned spy_copy_gen;
/* Where a thread keeps the route of one return address and function (spy_thread.route). */
static inline struct spy_route_entry *
spy_route_slot(struct spy_thread *th, const void *ra, unsigned id)
{
	return &th->route[(((uintptr_t)ra >> 2) ^ id) % SPY_ROUTE_CACHE];
}
/*
 * The route this thread found for `ra` and function `id` while no copy has
 * gone since: 1, with *copy and *raw. Inline: it is the whole of an exported
 * call's routing once the route is known (init.c), and spy_route's first step.
 */
static inline int
spy_route_known(const void *ra, unsigned id, int *copy, spy_fnptr *raw)
{
	struct spy_thread *th = spy_tls.thread;
	const struct spy_route_entry *e;

	if (!th)
		return 0;
	e = spy_route_slot(th, ra, id);
	if (e->ra != ra || e->id != id || e->gen != __atomic_load_n(&spy_copy_gen, __ATOMIC_ACQUIRE))
		return 0;
	*copy = e->copy;
	*raw = e->raw;
	return 1;
}
/* An object bound to the exported names: several copies mapped now turns routing on. */
void spy_route_recheck(void);

/* Finds and opens copy 0, the one the exported definitions serve, and fills its table; 0 on success. */
int spy_resolve(void);
/* The real dlsym, whatever interposes it (never the spy's own). */
void *spy_dlsym(void *handle, const char *name);
/* The real dlopen, never the preload library's own. */
void *spy_dlopen(const char *name, int flags);
/* The real dlclose, never the preload library's own. */
int spy_dlclose(void *handle);
/* The real dlsym itself, for a tail jump that keeps the caller's address. */
void *spy_dlsym_real_fn(void);
/* Base address of the spy's own object, to refuse loading itself. */
void *spy_self_base(void);
/* 1 if `base` (a file name, no directory) names a cuDNN dispatcher library. */
int spy_is_dispatcher_name(const char *base);
/* Split a search list (':' separated) and call fn on each absolute entry. */
void spy_foreach_dir(const char *list, void (*fn)(const char *dir, void *arg), void *arg);

/* thread.c: per-thread counters. */
struct spy_thread *spy_thread_get(void);
/* The calling thread's kernel id (cached). */
int spy_tid(void);
/* What to do with a thread's block when the thread ends, before another thread may take it (sink.c: flush). */
void spy_thread_set_exit_hook(void (*fn)(struct spy_thread *));
struct spy_thread *spy_thread_list(void);
void spy_thread_fork_child(void);

/* phase.c: where the process stands (init.c moves it on). */
int spy_resolved(void);		/* 1 once the resolution has run, found or not */
int spy_exiting(void);		/* 1 once the exit handler has started */
void spy_phase_resolved_set(void);
int spy_phase_exit_begin(void);	/* the exit begins; 1 when it had begun already */
/*
 * cudnnspy run's marker: a PID.WHAT file in CUDNNSPY_RUN_DIR ("loaded", "called"), holding TEXT (the record
 * file's path for "records") or empty for NULL; silent on failure.
 */
void spy_run_marker(const char *what, const char *text);

#endif
