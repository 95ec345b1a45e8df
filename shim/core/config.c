/*
 * The environment read through the option table (options.c): each
 * CUDNNSPY_* variable parsed by its type into spy_config. A bad value is
 * one warning that names the variable and the value; the default stays.
 */
#include "core.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char *
env_get(const char *name)
{
	/* Paths come from the environment: never trust it in set-uid programs. */
	return secure_getenv(name);
}

/* `auto`: format 2, except where the user named the file as JSON Lines (CUDNNSPY_OUTPUT=run-%p.jsonl). */
static void
settle_format(void)
{
	size_t n = strlen(spy_config.output);

	if (spy_config.format != SPY_FORMAT_AUTO)
		return;
	spy_config.format = n >= 6 && strcmp(spy_config.output + n - 6, ".jsonl") == 0 ? SPY_FORMAT_JSON
										      : SPY_FORMAT_BINARY;
}

/* "/..." on Linux; on Windows also a drive letter's path or a share's (the drop-in DLL's CUDNNSPY_LIBRARY). */
static int
path_absolute(const char *v)
{
#ifdef _WIN32
	if (((v[0] | 0x20) >= 'a' && (v[0] | 0x20) <= 'z' && v[1] == ':' && (v[2] == '\\' || v[2] == '/')) ||
	    (v[0] == '\\' && v[1] == '\\'))
		return 1;
#endif
	return v[0] == '/';
}

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
		spy_quiet = quiet && spy_option_set(o, quiet) == 0 && spy_config.stderr_mask == 0;
	}
	for (const struct spy_option *o = spy_options; o->name; o++) {
		const char *v = o->target == &spy_config.stderr_mask ? quiet : get(o->name);

		spy_option_set(o, o->def);
		if (!v)
			continue;
		if (o->type == SPY_OPT_PATH) {
			spy_config.library_refused = 0;
			if (v[0] && !path_absolute(v)) {
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
		if (spy_option_set(o, v) != 0) {
			if (strlen(v) > 200)
				spy_log("%s: a value of %zu bytes is not valid (expected %s): keeping the default",
					o->name, strlen(v), spy_option_expected(o));
			else
				spy_log("%s=%s: expected %s: keeping the default", o->name, v, spy_option_expected(o));
			spy_option_set(o, o->def);
		}
	}
	settle_format();
#ifdef _WIN32
	/* Windows takes either separator; the writer's names (a directory, a trailing one) split at '/'. */
	for (char *p = spy_config.output; *p; p++)
		if (*p == '\\')
			*p = '/';
#endif
	/* A traced call with Python frames takes the slow path, which reads them: the lane stays as it was. */
	spy_config.pack_lane = spy_config.format == SPY_FORMAT_BINARY && spy_config.python != SPY_PYTHON_TRACED;
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
}
