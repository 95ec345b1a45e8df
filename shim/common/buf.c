/*
 * The record formatters, no printf. A line allocates only when a record
 * outgrows its first 16 KB (an exit summary of many functions, a long
 * failure), and keeps the block for the thread's next long record.
 */
#include "buf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
spy_line_reset(struct spy_line *l)
{
	/* Zeroed lines (static, calloc) start in their own first block. */
	if (!l->data) {
		l->data = l->first;
		l->cap = sizeof(l->first);
	}
	l->len = 0;
	l->overflow = 0;
}

void
spy_line_free(struct spy_line *l)
{
	if (l->data && l->data != l->first)
		free(l->data);
	l->data = l->first;
	l->cap = sizeof(l->first);
	l->len = 0;
}

void
spy_line_spill(struct spy_line *l)
{
	const char *p = l->data;
	size_t n = l->len;

	while (n > 0) {
		ssize_t w = write(l->spill_fd - 1, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	l->len = 0;
}

void
spy_line_mem_slow(struct spy_line *l, const char *s, size_t n)
{
	size_t cap;
	char *d;

	if (l->overflow)
		return;
	if (!l->data)
		spy_line_reset(l);
	if (l->spill_fd > 0) {
		/* Fill, write out, go on: the pieces add up to the line. */
		while (l->len + n >= l->cap) {
			size_t part = l->cap - 1 - l->len;

			memcpy(l->data + l->len, s, part);
			l->len += part;
			s += part;
			n -= part;
			spy_line_spill(l);
		}
		memcpy(l->data + l->len, s, n);
		l->len += n;
		return;
	}
	cap = l->cap;
	while (cap <= l->len + n && cap <= SPY_LINE_MAX)
		cap *= 2;
	d = cap <= SPY_LINE_MAX ? malloc(cap) : NULL;
	if (!d) {
		l->overflow = 1;
		return;
	}
	memcpy(d, l->data, l->len);
	if (l->data != l->first)
		free(l->data);
	l->data = d;
	l->cap = cap;
	memcpy(l->data + l->len, s, n);
	l->len += n;
}

void
spy_line_name(struct spy_line *l, const char *s)
{
	size_t n;

	if (!s) {
		spy_line_lit(l, "null");
		return;
	}
	n = strlen(s);
	if (l->len + n + 2 >= l->cap) {
		spy_line_char(l, '"');
		spy_line_mem(l, s, n);
		spy_line_char(l, '"');
		return;
	}
	l->data[l->len] = '"';
	memcpy(l->data + l->len + 1, s, n);
	l->data[l->len + 1 + n] = '"';
	l->len += n + 2;
}

void
spy_line_plain(struct spy_line *l, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		spy_line_char(l, *p < 0x20 || *p == 0x7f ? '?' : (char)*p);
}

void
spy_line_str(struct spy_line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		spy_line_lit(l, "null");
		return;
	}
	spy_line_char(l, '"');
	while (*p) {
		const unsigned char *run = p;

		/* Copy runs of plain characters at once: names and messages are mostly plain. */
		while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			p++;
		spy_line_mem(l, (const char *)run, (size_t)(p - run));
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };

			spy_line_mem(l, e, 2);
		} else {
			/* Controls, and bytes that may not be UTF-8 (paths, messages), as code points. */
			char e[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };

			spy_line_mem(l, e, 6);
		}
		p++;
	}
	spy_line_char(l, '"');
}

void
spy_line_u64(struct spy_line *l, uint64_t v)
{
	/* Two digits a step: records are full of 13-digit timestamps. */
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[24];
	int i = sizeof(tmp);

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;

		v /= 100;
		tmp[--i] = pairs[d + 1];
		tmp[--i] = pairs[d];
	}
	if (v >= 10) {
		tmp[--i] = pairs[v * 2 + 1];
		tmp[--i] = pairs[v * 2];
	} else {
		tmp[--i] = (char)('0' + v);
	}
	spy_line_mem(l, tmp + i, sizeof(tmp) - (size_t)i);
}

void
spy_line_i64(struct spy_line *l, int64_t v)
{
	if (v < 0) {
		spy_line_char(l, '-');
		spy_line_u64(l, (uint64_t)0 - (uint64_t)v);
	} else {
		spy_line_u64(l, (uint64_t)v);
	}
}

void
spy_line_xdigits(struct spy_line *l, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[20];
	int i = sizeof(tmp);

	do {
		tmp[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	spy_line_lit(l, "0x");
	spy_line_mem(l, tmp + i, sizeof(tmp) - (size_t)i);
}

void
spy_line_hex(struct spy_line *l, uint64_t v)
{
	spy_line_char(l, '"');
	spy_line_xdigits(l, v);
	spy_line_char(l, '"');
}

void
spy_line_double(struct spy_line *l, double v)
{
	char tmp[40];

	if (isnan(v)) {
		spy_line_lit(l, "\"nan\"");
	} else if (isinf(v)) {
		spy_line_raw(l, v > 0 ? "\"inf\"" : "\"-inf\"");
	} else {
		/* Rare (alpha, beta, epsilon): printf is acceptable here. */
		snprintf(tmp, sizeof(tmp), "%.17g", v);
		spy_line_raw(l, tmp);
	}
}

void
spy_line_key(struct spy_line *l, const char *key)
{
	spy_line_name(l, key);
	spy_line_char(l, ':');
}

void
spy_line_float(struct spy_line *l, float v)
{
	char b[32];

	if (!isfinite(v)) {
		spy_line_double(l, v);
		return;
	}
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, (double)v);
		if (strtof(b, NULL) == v)
			break;
	}
	spy_line_raw(l, b);
}
