/*
 * The option table and what it fills: the data that the library's
 * configuration parser (core/config.c) and the command's --help-env share.
 */
#ifndef SPY_OPTIONS_H
#define SPY_OPTIONS_H

#include <limits.h>
#include <stddef.h>

#include "spy-api.h"

/* The option table (options.c) and the values config.c parses into it. */
enum spy_stderr_bits {
	SPY_STDERR_BANNER = 1 << 0,
	SPY_STDERR_FAILURES = 1 << 1,
	SPY_STDERR_SUMMARY = 1 << 2,
	SPY_STDERR_PROBING = 1 << 3,	/* lines for a framework's expected NOT_SUPPORTED probing too */
};

struct spy_config {
	char library[PATH_MAX];	/* CUDNNSPY_LIBRARY, or "" */
	int library_refused;	/* it was set to something unusable: no fallback */
	char output[PATH_MAX];	/* CUDNNSPY_OUTPUT: directory or pattern, or "" */
	char trace[4096];	/* CUDNNSPY_TRACE: globs of functions recorded on every call */
	char backtrace[4096];	/* CUDNNSPY_BACKTRACE: globs of traced functions that carry a stack */
	unsigned stderr_mask;	/* CUDNNSPY_STDERR */
	long flight;		/* CUDNNSPY_FLIGHT: recent calls kept per thread */
	long rate_limit;	/* CUDNNSPY_RATE_LIMIT: stderr lines per kind of failure */
	long last_error;	/* CUDNNSPY_LAST_ERROR: read cuDNN's message at failures */
	long gpu_time;		/* CUDNNSPY_GPU_TIME */
	char sync[4096];	/* CUDNNSPY_SYNC: a boolean, or globs */
	char inject[4096];	/* CUDNNSPY_INJECT: fault injection rules */
	long crash;		/* CUDNNSPY_CRASH: the fatal-signal handler */
	char run_dir[PATH_MAX];	/* CUDNNSPY_RUN_DIR: cudnnspy run's markers */
	long format;		/* CUDNNSPY_FORMAT: SPY_FORMAT_JSON or SPY_FORMAT_BINARY, once read */
	long python;		/* CUDNNSPY_PYTHON: SPY_PYTHON_* */
	int pack_lane;		/* format 2 without Python frames on traced calls: slowpath.c's lane for them */
};
extern struct spy_config spy_config;
/* CUDNNSPY_FORMAT's values, in the order of the option table's words; config.c settles `auto` as it reads it. */
enum { SPY_FORMAT_AUTO, SPY_FORMAT_JSON, SPY_FORMAT_BINARY };
/* CUDNNSPY_PYTHON's values, in the order of the option table's words. */
enum { SPY_PYTHON_OFF, SPY_PYTHON_FAILURES, SPY_PYTHON_TRACED };

enum spy_option_type { SPY_OPT_PATH, SPY_OPT_STRING, SPY_OPT_GLOBS, SPY_OPT_FLAGS, SPY_OPT_INT, SPY_OPT_BOOL,
	SPY_OPT_CHOICE };

struct spy_option {
	const char *name;
	enum spy_option_type type;
	const char *def;
	const char *values;	/* SPY_OPT_FLAGS, SPY_OPT_CHOICE: the accepted words; SPY_OPT_INT: "MIN..MAX" */
	const char *help;
	void *target;		/* the spy_config field it sets */
	size_t size;		/* of the target, for strings */
};
extern const struct spy_option spy_options[];

/* A value parsed by its option's type into the option's target: 0, or -1 for a bad value (optparse.c). */
int spy_option_set(const struct spy_option *o, const char *value);
/* What a bad value should have been, in words for a message. */
const char *spy_option_expected(const struct spy_option *o);
int spy_parse_bool(const char *value, long *out);

/* CUDNNSPY_STDERR=none: not a line on stderr, not even a warning (config.c). */
extern int spy_quiet;

/* Per-function flags, set once from the configuration: read on the fast path. */
enum spy_fn_flag {
	SPY_FN_TRACE = 1 << 0,		/* record every call */
	SPY_FN_BACKTRACE = 1 << 1,	/* traced calls carry a stack */
	SPY_FN_STATE = 1 << 2,		/* creates, sets or destroys an object the spy remembers */
	SPY_FN_INJECT = 1 << 3,		/* a CUDNNSPY_INJECT rule matches */
	SPY_FN_GPU_TIME = 1 << 4,	/* enqueues GPU work, timed with CUDA events */
	SPY_FN_SYNC = 1 << 5,		/* enqueues GPU work, synchronized after the call */
	SPY_FN_WATCH = 1 << 6,		/* its successes matter too (algo.c): searches, convolutions, backend */
	SPY_FN_TIMED = 1 << 7,		/* every call timed: what ran takes its host time (convolutions, Execute) */
};
#define SPY_FN_PRE (SPY_FN_INJECT | SPY_FN_GPU_TIME | SPY_FN_SYNC)

extern unsigned char spy_fn_flags[_SPY_FN_COUNT];

#endif
