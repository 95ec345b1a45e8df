/*
 * Parsing a value by its option's type (options.c): the library reads the
 * environment through it (core/config.c), and `cudnnspy run` checks its own
 * options with it before setting them, so both accept exactly the same words.
 */
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int
spy_option_set(const struct spy_option *o, const char *value)
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

const char *
spy_option_expected(const struct spy_option *o)
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
