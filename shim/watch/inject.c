/*
 * Fault injection (CUDNNSPY_INJECT): a matching call returns the chosen
 * status without the real function being called, so that a program's
 * error handling can be tried without a broken GPU. Rules, comma-separated:
 *   GLOB=STATUS        every call
 *   GLOB=STATUS@N      the Nth call (from 1) of each matching function
 *   GLOB=STATUS%P      P percent of the calls, spread evenly
 * STATUS is a cudnnStatus_t name (with or without CUDNN_STATUS_) in either
 * numbering, or a number. A bad rule gets a warning and is ignored.
 */
#include "core.h"
#include "inject.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RULES 16

struct rule {
	char text[160];
	char status_name[64];	/* resolved against the real library's major at use */
	long status_number;	/* when given as a number */
	long nth;		/* @N, or 0 */
	long percent;		/* %P, or 100 */
};

static struct rule rules[MAX_RULES];
static int nrules;
static signed char rule_of[_SPY_FN_COUNT];
static unsigned long counts[_SPY_FN_COUNT];

static int
status_known(const char *name)
{
	const struct spy_enum_info *e = &spy_enum_info[_SPY_ENUM_cudnnStatus_t];

	for (unsigned i = 0; i < e->count; i++)
		if (strcmp(e->values[i].name, name) == 0)
			return 1;
	return 0;
}

static int
parse_rule(const char *text, struct rule *r, char *glob, size_t globsize)
{
	const char *eq = strchr(text, '=');
	const char *st;
	char *end;
	size_t n;

	memset(r, 0, sizeof(*r));
	snprintf(r->text, sizeof(r->text), "%s", text);
	r->percent = 100;
	if (!eq || eq == text || (size_t)(eq - text) >= globsize)
		return -1;
	memcpy(glob, text, (size_t)(eq - text));
	glob[eq - text] = 0;
	st = eq + 1;
	n = strcspn(st, "@%");
	if (n == 0 || n >= 48)
		return -1;
	errno = 0;
	if (st[n] == '@') {
		r->nth = strtol(st + n + 1, &end, 10);
		if (*end || r->nth < 1 || errno == ERANGE)
			return -1;
	} else if (st[n] == '%') {
		r->percent = strtol(st + n + 1, &end, 10);
		if (*end || r->percent < 1 || r->percent > 100)
			return -1;
	}
	if (st[0] >= '0' && st[0] <= '9') {
		r->status_number = strtol(st, &end, 10);
		/* A status is an int: a larger number would be cut to 32 bits and inject something else. */
		if (end != st + n || r->status_number <= 0 || r->status_number > INT_MAX || errno == ERANGE)
			return -1;
		return 0;
	}
	snprintf(r->status_name, sizeof(r->status_name), "%s%.*s", strncmp(st, "CUDNN_STATUS_", 13) ? "CUDNN_STATUS_" : "",
		 (int)n, st);
	return status_known(r->status_name) && strcmp(r->status_name, "CUDNN_STATUS_SUCCESS") != 0 ? 0 : -1;
}

void
spy_inject_init(const char *spec)
{
	const char *p = spec;

	memset(rule_of, -1, sizeof(rule_of));
	nrules = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		char text[160], glob[128];
		int matched = 0;

		if (len > 0 && len < sizeof(text)) {
			memcpy(text, p, len);
			text[len] = 0;
			if (nrules >= MAX_RULES) {
				spy_log("CUDNNSPY_INJECT: more than %d rules: '%s' ignored", MAX_RULES, text);
			} else if (parse_rule(text, &rules[nrules], glob, sizeof(glob)) != 0) {
				spy_log("CUDNNSPY_INJECT: '%s' is not FUNCTION=STATUS[@N|%%P] with a known failing status: "
					"ignored", text);
			} else {
				for (int i = 0; i < _SPY_FN_COUNT; i++) {
					if (spy_fn_info[i].ret != SPY_RET_STATUS || rule_of[i] >= 0 ||
					    fnmatch(glob, spy_fn_info[i].name, 0) != 0)
						continue;
					rule_of[i] = (signed char)nrules;
					spy_fn_flags[i] |= SPY_FN_INJECT;
					matched = 1;
				}
				if (matched)
					nrules++;
				else
					spy_log("CUDNNSPY_INJECT: '%s' matches no cuDNN function that returns a status: "
						"ignored", text);
			}
		} else if (len > 0) {
			spy_log("CUDNNSPY_INJECT: a rule of %zu bytes is too long: ignored", len);
		}
		p += len;
		if (*p)
			p++;
	}
}

static long
status_value(const struct rule *r, int major)
{
	const struct spy_enum_info *e = &spy_enum_info[_SPY_ENUM_cudnnStatus_t];
	unsigned want = major == 8 ? SPY_MAJOR_8 : SPY_MAJOR_9;

	if (r->status_number)
		return r->status_number;
	for (unsigned i = 0; i < e->count; i++)
		if (strcmp(e->values[i].name, r->status_name) == 0 && (e->values[i].majors & want))
			return e->values[i].value;
	return major == 8 ? 1 : 1001;
}

int
spy_inject_decide(unsigned id, int major, const char **rule_text)
{
	const struct rule *r;
	unsigned long n;

	if (rule_of[id] < 0)
		return 0;
	r = &rules[(int)rule_of[id]];
	n = __atomic_add_fetch(&counts[id], 1, __ATOMIC_RELAXED);
	if (r->nth && n != (unsigned long)r->nth)
		return 0;
	/* P percent, evenly: inject when n*P/100 steps past a whole number. */
	if (!r->nth && r->percent < 100 && (n * (unsigned long)r->percent) / 100 == ((n - 1) * (unsigned long)r->percent) / 100)
		return 0;
	*rule_text = r->text;
	return (int)status_value(r, major);
}
