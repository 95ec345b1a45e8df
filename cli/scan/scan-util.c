/*
 * What every part of `cudnnspy scan` leans on: memory that is there or
 * ends the command with a message (never a crash), and lists of strings.
 * A leaf: it calls no other part of scan, so the parts do not call each
 * other in a circle through it.
 */
#include "scan-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory: running out is reported and ends the command, it is never a crash ---- */

void
scan_out_of_memory(void)
{
	fputs("cudnnspy: scan: out of memory\n", stderr);
	exit(1);
}

void *
scan_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		scan_out_of_memory();
	return p;
}

void *
scan_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		scan_out_of_memory();
	return p;
}

char *
scan_xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		scan_out_of_memory();
	return d;
}

char *
scan_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		scan_out_of_memory();
	return s;
}

void
scan_strv_add(struct scan_strv *sv, const char *s)
{
	if (sv->n + 1 >= sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 8;
		sv->v = scan_xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = scan_xstrdup(s);
	sv->v[sv->n] = NULL;
}

int
scan_strv_has(const struct scan_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return 1;
	return 0;
}

int
scan_strv_add_unique(struct scan_strv *sv, const char *s)
{
	if (scan_strv_has(sv, s))
		return 0;
	scan_strv_add(sv, s);
	return 1;
}

void
scan_strv_free(struct scan_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}
