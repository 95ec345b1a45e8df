/*
 * What the core's files share: configuration, diagnostics, the real
 * library, per-thread state. Nothing here is called on the fast path.
 */
#ifndef SPY_CORE_H
#define SPY_CORE_H

#include <limits.h>
#include <stddef.h>

#include "spy.h"

/* Which library this is: set per build target in flavor.c. */
struct spy_flavor {
	const char *name;	/* "preload", "drop-in" */
	int major;		/* the cuDNN major it stands for */
};
extern const struct spy_flavor spy_flavor;

/* config.c: the option table and its parsed values. */
enum spy_stderr_bits {
	SPY_STDERR_BANNER = 1 << 0,
	SPY_STDERR_FAILURES = 1 << 1,
	SPY_STDERR_SUMMARY = 1 << 2,
};

struct spy_config {
	char library[PATH_MAX];	/* CUDNNSPY_LIBRARY, or "" */
	int library_refused;	/* it was set to something unusable: no fallback */
	unsigned stderr_mask;	/* CUDNNSPY_STDERR */
};
extern struct spy_config spy_config;

enum spy_option_type { SPY_OPT_PATH, SPY_OPT_FLAGS };

struct spy_option {
	const char *name;
	enum spy_option_type type;
	const char *def;
	const char *values;	/* for SPY_OPT_FLAGS: the accepted words */
	const char *help;
};
extern const struct spy_option spy_options[];

/* Reads the environment; bad values warn once and keep the default. */
void spy_config_load(void);
/* The same, from a lookup function: for tests. */
void spy_config_parse(const char *(*get)(const char *name));

/* log.c: the spy's own diagnostics on stderr, never stdout. */
void spy_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says it at most once per flag (a static int owned by the caller). */
#define spy_log_once(flag, ...) \
	do { \
		if (!__atomic_exchange_n((flag), 1, __ATOMIC_RELAXED)) \
			spy_log(__VA_ARGS__); \
	} while (0)

/* resolve.c: the real cuDNN. */
struct spy_real_lib {
	void *handle;
	char path[PATH_MAX];
	const char *how;	/* which rule found it */
	size_t version;		/* cudnnGetVersion() */
	size_t cudart;		/* cudnnGetCudartVersion() */
	int major;
};
extern struct spy_real_lib spy_lib;

/* Finds and opens the real library and fills spy_real[]; 0 on success. */
int spy_resolve(void);
/* The real dlsym, whatever interposes it (never the spy's own). */
void *spy_dlsym(void *handle, const char *name);
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
struct spy_thread *spy_thread_list(void);
void spy_thread_fork_child(void);

/* summary.c */
void spy_summary_print(void);

/* init.c */
int spy_init(void);		/* resolves once; 0 when the real library is there */

#endif
