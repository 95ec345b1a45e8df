/*
 * What every part of `cudnnspy report` leans on: memory that is there or
 * ends the command with a message (never half a report), strings made safe
 * for a terminal and for JSON, a growable string with a limit, a map and a
 * set, and field access that reads wrong types as absent. A leaf: it calls
 * no other part of the report, so that the parts do not call each other in
 * a circle through it. Every name outside a file is prefixed report_,
 * because the command links the spy's core and the other commands as well.
 */
#include "report-int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli-util.h"

void
report_warn_to(FILE *out, const char *fmt, ...)
{
	va_list ap;

	if (!out)
		return;
	/* A progress line on the terminal goes first (cli-progress.c). */
	if (out == stderr && cli_before_complain)
		cli_before_complain();
	fputs("cudnnspy: ", out);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* Out of memory is not bad input: say so and stop, rather than half a report. */
void
report_out_of_memory(void)
{
	complain("out of memory");
	exit(1);
}

void *
report_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		report_out_of_memory();
	return p;
}

void *
report_xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		report_out_of_memory();
	return p;
}

char *
report_xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		report_out_of_memory();
	return d;
}

/* A json_t that must exist: jansson returns NULL only when out of memory. */
json_t *
report_must(json_t *j)
{
	if (!j)
		report_out_of_memory();
	return j;
}

void
report_jset(json_t *obj, const char *key, json_t *value)
{
	if (json_object_set_new(obj, key, report_must(value)) != 0)
		report_out_of_memory();
}

void
report_jpush(json_t *arr, json_t *value)
{
	if (json_array_append_new(arr, report_must(value)) != 0)
		report_out_of_memory();
}

long long
report_sat_add(long long a, long long b)
{
	long long s;

	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? LLONG_MAX : LLONG_MIN;
	return s;
}

/*
 * A copy that is valid UTF-8 without control characters (each bad byte
 * becomes '?'), cut to at most CAP bytes at a character boundary, with
 * "..." when cut. Strings reach a terminal and JSON output from here, and
 * file names need not be UTF-8.
 */
char *
report_clean_dup(const char *s, size_t len, size_t cap)
{
	char *d = report_xcalloc(1, (len < cap ? len : cap) + 4);
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = 0;

		if (c >= 0x20 && c < 0x7f)
			n = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		if (n > 1) {
			unsigned char c1 = i + 1 < len ? (unsigned char)s[i + 1] : 0;
			unsigned char lo = 0x80, hi = 0xbf;

			/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
			else if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
			if (i + n > len || c1 < lo || c1 > hi)
				n = 0;
			for (size_t k = 2; n && k < n; k++)
				if (((unsigned char)s[i + k] & 0xc0) != 0x80)
					n = 0;
		}
		if (n == 0) {
			if (o + 1 > cap)
				goto cut;
			d[o++] = '?';
			i++;
			continue;
		}
		if (o + n > cap)
			goto cut;
		memcpy(d + o, s + i, n);
		o += n;
		i += n;
	}
	d[o] = '\0';
	return d;
cut:
	memcpy(d + o, "...", 4);
	return d;
}

char *
report_clean_str(const char *s, size_t cap)
{
	return report_clean_dup(s, strlen(s), cap);
}

void
report_sb_init(struct sbuf *b, size_t limit)
{
	b->cap = 128;
	b->p = report_xcalloc(1, b->cap);
	b->len = 0;
	b->limit = limit;
	b->cut = 0;
}

void
report_sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->cut)
		return;
	if (b->len + n > b->limit) {
		n = b->limit - b->len;
		/* Never end in the middle of a UTF-8 character. */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		b->cut = 1;
	}
	if (b->len + n + 4 > b->cap) {
		while (b->len + n + 4 > b->cap)
			b->cap *= 2;
		b->p = report_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	if (b->cut) {
		memcpy(b->p + b->len, "...", 3);
		b->len += 3;
	}
	b->p[b->len] = '\0';
}

void
report_sb_puts(struct sbuf *b, const char *s)
{
	report_sb_add(b, s, strlen(s));
}

void
report_sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Longer than the stack buffer (signatures, messages): formatted again, whole. */
	if (n >= (int)sizeof(tmp)) {
		big = report_xcalloc(1, (size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (n > 0)
		report_sb_add(b, big ? big : tmp, (size_t)n);
	free(big);
}

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static struct map_ent *
map_slot(struct map_ent *ents, size_t cap, const char *key, size_t klen, uint64_t h)
{
	size_t mask = cap - 1, i = h & mask;

	while (ents[i].key && !(ents[i].hash == h && ents[i].klen == klen &&
				memcmp(ents[i].key, key, klen) == 0))
		i = (i + 1) & mask;
	return &ents[i];
}

void *
report_map_get(struct map *m, const char *key, size_t klen)
{
	struct map_ent *e;

	if (!m->cap)
		return NULL;
	e = map_slot(m->ents, m->cap, key, klen, hash_bytes(key, klen));
	return e->key ? e->val : NULL;
}

/* Adds KEY (copied), which must not be there yet. */
void
report_map_put(struct map *m, const char *key, size_t klen, void *val)
{
	struct map_ent *e;
	uint64_t h = hash_bytes(key, klen);

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct map_ent *ents = report_xcalloc(cap, sizeof(*ents));

		for (size_t i = 0; i < m->cap; i++)
			if (m->ents[i].key)
				*map_slot(ents, cap, m->ents[i].key, m->ents[i].klen,
					  m->ents[i].hash) = m->ents[i];
		free(m->ents);
		m->ents = ents;
		m->cap = cap;
	}
	e = map_slot(m->ents, m->cap, key, klen, h);
	e->key = report_xcalloc(1, klen + 1);
	memcpy(e->key, key, klen);
	e->klen = klen;
	e->hash = h;
	e->val = val;
	m->n++;
}

/* The values, in no particular order: callers sort them. */
void **
report_map_values(struct map *m)
{
	void **v = report_xcalloc(m->n, sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < m->cap; i++)
		if (m->ents[i].key)
			v[k++] = m->ents[i].val;
	return v;
}

void
report_map_free(struct map *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->ents[i].key)
			continue;
		free(m->ents[i].key);
		if (free_val)
			free_val(m->ents[i].val);
	}
	free(m->ents);
	m->ents = NULL;
	m->cap = m->n = 0;
}

/* 1 when X is new, 0 when it was there, -1 when the set is at LIMIT. */
int
report_llset_add(struct llset *s, long long x, size_t limit)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct llset bigger;

		if (s->n >= limit)
			goto check_only;
		bigger.cap = s->cap ? s->cap * 2 : 64;
		bigger.n = 0;
		bigger.v = report_xcalloc(bigger.cap, sizeof(*bigger.v));
		bigger.used = report_xcalloc(bigger.cap, 1);
		for (i = 0; i < s->cap; i++)
			if (s->used[i])
				report_llset_add(&bigger, s->v[i], limit);
		free(s->v);
		free(s->used);
		*s = bigger;
	}
check_only:
	i = (size_t)hash_bytes((const char *)&x, sizeof(x)) & (s->cap - 1);
	while (s->used[i]) {
		if (s->v[i] == x)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	if (s->n >= limit)
		return -1;
	s->used[i] = 1;
	s->v[i] = x;
	s->n++;
	return 1;
}

int
report_llset_add_shared(struct llset *s, long long x, size_t per, size_t *used, size_t total)
{
	size_t limit = per;
	int rc;

	if (*used >= total) {
		/* With the total reached, X is only looked for: the set does not grow (an empty one has no table). */
		if (!s->n)
			return -1;
		limit = s->n < per ? s->n : per;
	}
	rc = report_llset_add(s, x, limit);
	if (rc == 1)
		(*used)++;
	return rc;
}

uint64_t
report_hash(const char *p, size_t n)
{
	return hash_bytes(p, n);
}

void
report_llset_free(struct llset *s)
{
	free(s->v);
	free(s->used);
	memset(s, 0, sizeof(*s));
}

/* ---- field access: wrong types read as absent ---- */

int
report_get_int(json_t *o, const char *key, long long *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return 0;
	*out = json_integer_value(v);
	return 1;
}

/* A count or a duration: an integer that is not negative. */
int
report_get_count(json_t *o, const char *key, long long *out)
{
	long long v;

	if (!report_get_int(o, key, &v) || v < 0)
		return 0;
	*out = v;
	return 1;
}

const char *
report_get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

char *
report_get_clean(json_t *o, const char *key, size_t cap)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return NULL;
	return report_clean_dup(json_string_value(v), json_string_length(v), cap);
}

/* ---- names for a person ---- */

const char *
report_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

char *
report_version_string(long long v)
{
	char *s;
	int n;

	/* 9.x counts major*10000 + minor*100 + patch; 8.x major*1000 + minor*100 + patch. */
	if (v >= 90000)
		n = asprintf(&s, "%lld.%lld.%lld", v / 10000, v % 10000 / 100, v % 100);
	else if (v >= 0)
		n = asprintf(&s, "%lld.%lld.%lld", v / 1000, v % 1000 / 100, v % 100);
	else
		n = asprintf(&s, "%lld", v);
	if (n < 0)
		report_out_of_memory();
	return s;
}

/* ---- the model's fields, for the parts that print it: absent reads as 0 or DEF ---- */

long long
report_jget_int(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

const char *
report_jget_str(json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}
