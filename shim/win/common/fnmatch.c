/*
 * fnmatch(3) without flags, which the configuration's function-name globs (config.c, inject.c) need and
 * mingw-w64 lacks: '*', '?', and bracket expressions with ranges and '!' or '^'. Names have no '/'.
 */
#include <fnmatch.h>
#include <stddef.h>

static const char *
bracket(const char *p, char c, int *matched)
{
	int negate = *p == '!' || *p == '^', hit = 0;

	if (negate)
		p++;
	/* A ']' first is a member. */
	do {
		char lo = *p++, hi = lo;

		if (!lo)
			return NULL;
		if (*p == '-' && p[1] && p[1] != ']') {
			hi = p[1];
			p += 2;
		}
		if (lo <= c && c <= hi)
			hit = 1;
	} while (*p != ']');
	*matched = hit != negate;
	return p + 1;
}

int
fnmatch(const char *pattern, const char *string, int flags)
{
	const char *p = pattern, *s = string, *star = NULL, *resume = NULL;

	(void)flags;
	while (*s) {
		int ok = 0;
		const char *next = NULL;

		if (*p == '*') {
			star = ++p;
			resume = s;
			continue;
		}
		if (*p == '?') {
			ok = 1;
			next = p + 1;
		} else if (*p == '[') {
			next = bracket(p + 1, *s, &ok);
			if (!next) {
				ok = *s == '[';
				next = p + 1;
			}
		} else if (*p) {
			ok = *p == *s;
			next = p + 1;
		}
		if (ok) {
			p = next;
			s++;
			continue;
		}
		if (!star)
			return FNM_NOMATCH;
		p = star;
		s = ++resume;
	}
	while (*p == '*')
		p++;
	return *p ? FNM_NOMATCH : 0;
}
