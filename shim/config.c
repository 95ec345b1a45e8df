/*
 * The option table: one row per CUDNNSPY_* variable. It drives parsing,
 * `cudnnspy --help-env` and docs/configuration.md (a test compares them).
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

const struct spy_option spy_options[] = {
	{ "CUDNNSPY_LIBRARY", SPY_OPT_PATH, "",
	  NULL,
	  "Absolute path of the real libcudnn.so.N, or of a directory holding one. "
	  "When set but unusable, cuDNN calls fail rather than reach another copy." },
	{ "CUDNNSPY_STDERR", SPY_OPT_FLAGS, "banner,failures,summary",
	  "banner,failures,summary",
	  "What the spy writes to stderr: a comma-separated list of banner, failures, "
	  "summary; `all`, or `none` to keep stderr silent." },
	{ NULL, 0, NULL, NULL, NULL },
};

struct spy_config spy_config;

static const char *
env_get(const char *name)
{
	/* Paths come from the environment: never trust it in set-uid programs. */
	return secure_getenv(name);
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

static void
set_option(const struct spy_option *o, const char *value, int from_default)
{
	if (strcmp(o->name, "CUDNNSPY_LIBRARY") == 0) {
		spy_config.library[0] = 0;
		spy_config.library_refused = 0;
		if (value[0] && value[0] != '/') {
			spy_log("%s=%s is not an absolute path: refused", o->name, value);
			spy_config.library_refused = 1;
			return;
		}
		if (strlen(value) >= sizeof(spy_config.library)) {
			spy_log("%s is longer than %zu bytes: refused", o->name,
				sizeof(spy_config.library) - 1);
			spy_config.library_refused = 1;
			return;
		}
		strcpy(spy_config.library, value);
	} else if (strcmp(o->name, "CUDNNSPY_STDERR") == 0) {
		if (parse_flags(value, o->values, &spy_config.stderr_mask) != 0 && !from_default) {
			spy_log("%s=%s: expected none, all or a list of %s: keeping %s",
				o->name, value, o->values, o->def);
			parse_flags(o->def, o->values, &spy_config.stderr_mask);
		}
	}
}

void
spy_config_parse(const char *(*get)(const char *name))
{
	for (const struct spy_option *o = spy_options; o->name; o++) {
		const char *v = get(o->name);

		set_option(o, o->def, 1);
		if (v)
			set_option(o, v, 0);
	}
}

void
spy_config_load(void)
{
	spy_config_parse(env_get);
}
