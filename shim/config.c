/*
 * The option table: one row per CUDNNSPY_* variable. It drives parsing,
 * `cudnnspy --help-env` and docs/configuration.md (a test compares them).
 * A bad value is one warning that names the variable and the value; the
 * default stays.
 */
#include "core.h"
#include "gpu.h"
#include "inject.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct spy_config spy_config;
unsigned char spy_fn_flags[_SPY_FN_COUNT];

#define FIELD(f) &spy_config.f, sizeof(spy_config.f)

const struct spy_option spy_options[] = {
	{ "CUDNNSPY_LIBRARY", SPY_OPT_PATH, "", NULL,
	  "Absolute path of the real libcudnn.so.N, or of a directory holding one. "
	  "When set but unusable, cuDNN calls fail rather than reach another copy.",
	  FIELD(library) },
	{ "CUDNNSPY_OUTPUT", SPY_OPT_STRING, "", NULL,
	  "Where records go, as JSON Lines: a directory (one file per process) or a file name pattern "
	  "with %p (pid), %h (host), %r (rank), %e (program). Unset: no file, stderr only.",
	  FIELD(output) },
	{ "CUDNNSPY_TRACE", SPY_OPT_GLOBS, "", NULL,
	  "Functions whose every call is recorded, as globs separated by spaces or commas "
	  "(`*` for all, `cudnnConvolution*`). Failures are always recorded.",
	  FIELD(trace) },
	{ "CUDNNSPY_BACKTRACE", SPY_OPT_GLOBS, "", NULL,
	  "Traced functions whose records carry the call stack, as globs. Failures always carry one.",
	  FIELD(backtrace) },
	{ "CUDNNSPY_STDERR", SPY_OPT_FLAGS, "banner,failures,summary", "banner,failures,summary,probing",
	  "What the spy writes to stderr: a comma-separated list of banner, failures, "
	  "summary, probing (the lines of a framework's expected NOT_SUPPORTED probing, off by default); `all`, "
	  "or `none` to keep stderr silent.",
	  FIELD(stderr_mask) },
	{ "CUDNNSPY_FLIGHT", SPY_OPT_INT, "32", "0..256",
	  "How many of a thread's recent calls a failure record lists.",
	  FIELD(flight) },
	{ "CUDNNSPY_RATE_LIMIT", SPY_OPT_INT, "10", "1..1000000",
	  "Failure lines on stderr for one function and status before one `suppressing` line; "
	  "the records keep every failure.",
	  FIELD(rate_limit) },
	{ "CUDNNSPY_LAST_ERROR", SPY_OPT_BOOL, "on", NULL,
	  "Read cuDNN's own message (cudnnGetLastErrorString, 9.x) at each failure; the program still "
	  "gets the same text when it asks.",
	  FIELD(last_error) },
	{ "CUDNNSPY_GPU_TIME", SPY_OPT_BOOL, "off", NULL,
	  "Time the GPU work of each call that enqueues some, with CUDA events on the handle's stream, through "
	  "the CUDA runtime the process already loaded.",
	  FIELD(gpu_time) },
	{ "CUDNNSPY_SYNC", SPY_OPT_STRING, "", NULL,
	  "Synchronize the stream after each call that enqueues GPU work (1/on), or after the functions matching "
	  "these globs, so that an asynchronous fault is blamed on the call that caused it.",
	  FIELD(sync) },
	{ "CUDNNSPY_INJECT", SPY_OPT_STRING, "", NULL,
	  "Fault injection rules, comma-separated: FUNCTION=STATUS (every call), FUNCTION=STATUS@N (the Nth "
	  "call), FUNCTION=STATUS%P (P percent of calls); FUNCTION may be a glob, STATUS a name or number.",
	  FIELD(inject) },
	{ "CUDNNSPY_CRASH", SPY_OPT_BOOL, "off", NULL,
	  "On a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), write the thread's recent cuDNN calls and "
	  "the call counts to stderr and the records, then let the program die as it would have.",
	  FIELD(crash) },
	{ "CUDNNSPY_RUN_DIR", SPY_OPT_STRING, "", NULL,
	  "Set by `cudnnspy run`: an absolute directory where each process leaves an empty file saying that the spy "
	  "was loaded in it and whether it called cuDNN, so that run can say afterwards when it was not.",
	  FIELD(run_dir) },
	{ NULL, 0, NULL, NULL, NULL, NULL, 0 },
};

static const char *
env_get(const char *name)
{
	/* Paths come from the environment: never trust it in set-uid programs. */
	return secure_getenv(name);
}

int
spy_parse_bool(const char *value, long *out)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(value, yes[i]) == 0) {
			*out = 1;
			return 1;
		}
		if (strcasecmp(value, no[i]) == 0) {
			*out = 0;
			return 1;
		}
	}
	return 0;
}

static int
parse_flags(const char *value, const char *words, unsigned *out)
{
	unsigned mask = 0;
	const char *p = value;

	if (strcmp(value, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (strcmp(value, "all") == 0) {
		*out = ~0u;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		const char *w = words;
		unsigned bit = 1;
		int found = 0;

		while (*w) {
			size_t wl = strcspn(w, ",");

			if (len == wl && strncmp(p, w, len) == 0) {
				mask |= bit;
				found = 1;
			}
			bit <<= 1;
			w += wl;
			if (*w == ',')
				w++;
		}
		if (!found && len > 0)
			return -1;
		p += len;
		if (*p == ',')
			p++;
	}
	/* "", "," or ",,": silence must be asked for by name. */
	if (!mask)
		return -1;
	*out = mask;
	return 0;
}

static int
parse_int(const char *value, const char *range, long *out)
{
	long min = strtol(range, NULL, 10), max = strtol(strstr(range, "..") + 2, NULL, 10);
	char *end;
	long v;

	if (!value[0])
		return -1;
	v = strtol(value, &end, 10);
	if (*end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Returns 0, or -1 for a bad value (the caller warns and keeps the default). */
static int
set_value(const struct spy_option *o, const char *value)
{
	switch (o->type) {
	case SPY_OPT_PATH:
	case SPY_OPT_STRING:
	case SPY_OPT_GLOBS:
		if (strlen(value) >= o->size)
			return -1;
		strcpy(o->target, value);
		return 0;
	case SPY_OPT_FLAGS:
		return parse_flags(value, o->values, o->target);
	case SPY_OPT_INT:
		return parse_int(value, o->values, o->target);
	case SPY_OPT_BOOL:
		return spy_parse_bool(value, o->target) ? 0 : -1;
	}
	return -1;
}

static const char *
expected(const struct spy_option *o)
{
	switch (o->type) {
	case SPY_OPT_FLAGS:
		return "none, all or a comma-separated list of banner,failures,summary,probing";
	case SPY_OPT_INT:
		return o->values;
	case SPY_OPT_BOOL:
		return "1/0, yes/no, on/off or true/false";
	default:
		return "a value shorter than the limit";
	}
}

int spy_quiet;

void
spy_config_parse(const char *(*get)(const char *name))
{
	const char *quiet = NULL;

	/* CUDNNSPY_STDERR=none silences the warnings about the other settings too: read it first. */
	spy_quiet = 0;
	for (const struct spy_option *o = spy_options; o->name; o++) {
		if (o->target != &spy_config.stderr_mask)
			continue;
		quiet = get(o->name);
		spy_quiet = quiet && set_value(o, quiet) == 0 && spy_config.stderr_mask == 0;
	}
	for (const struct spy_option *o = spy_options; o->name; o++) {
		const char *v = o->target == &spy_config.stderr_mask ? quiet : get(o->name);

		set_value(o, o->def);
		if (!v)
			continue;
		if (o->type == SPY_OPT_PATH) {
			spy_config.library_refused = 0;
			if (v[0] && v[0] != '/') {
				spy_log("%s=%s is not an absolute path: refused", o->name, v);
				spy_config.library_refused = 1;
				continue;
			}
			if (strlen(v) >= o->size) {
				spy_log("%s is longer than %zu bytes: refused", o->name, o->size - 1);
				spy_config.library_refused = 1;
				continue;
			}
		}
		if (set_value(o, v) != 0) {
			if (strlen(v) > 200)
				spy_log("%s: a value of %zu bytes is not valid (expected %s): keeping the default",
					o->name, strlen(v), expected(o));
			else
				spy_log("%s=%s: expected %s: keeping the default", o->name, v, expected(o));
			set_value(o, o->def);
		}
	}
}

void
spy_apply_globs(const char *option, const char *globs, unsigned char bit)
{
	const char *p = globs;
	char glob[256];

	while (*p) {
		size_t len = strcspn(p, " ,\t");
		int matched = 0;

		if (len > 0 && len < sizeof(glob)) {
			memcpy(glob, p, len);
			glob[len] = 0;
			for (int i = 0; i < _SPY_FN_COUNT; i++) {
				if (fnmatch(glob, spy_fn_info[i].name, 0) == 0) {
					spy_fn_flags[i] |= bit;
					matched = 1;
				}
			}
			if (!matched)
				spy_log("%s: '%s' matches no cuDNN function", option, glob);
		} else if (len > 0) {
			spy_log("%s: a glob of %zu bytes is too long: ignored", option, len);
		}
		p += len;
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
	}
}

void
spy_config_load(void)
{
	spy_config_parse(env_get);
	spy_apply_globs("CUDNNSPY_TRACE", spy_config.trace, SPY_FN_TRACE);
	spy_apply_globs("CUDNNSPY_BACKTRACE", spy_config.backtrace, SPY_FN_BACKTRACE);
	spy_inject_init(spy_config.inject);
	spy_gpu_init();
}
