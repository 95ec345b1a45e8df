/*
 * The environment read through the option table (options.c): each
 * CUDNNSPY_* variable parsed by its type into spy_config. A bad value is
 * one warning that names the variable and the value; the default stays.
 */
#include "core.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* One of the comma-separated words: its index. */
static int
parse_choice(const char *value, const char *words, long *out)
{
	long i = 0;

	for (const char *w = words; *w; i++) {
		size_t wl = strcspn(w, ",");

		if (strlen(value) == wl && strncmp(value, w, wl) == 0) {
			*out = i;
			return 0;
		}
		w += wl;
		if (*w == ',')
			w++;
	}
	return -1;
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
	case SPY_OPT_CHOICE:
		return parse_choice(value, o->values, o->target);
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
	case SPY_OPT_CHOICE:
		return o->values;
	default:
		return "a value shorter than the limit";
	}
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
	settle_format();
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
