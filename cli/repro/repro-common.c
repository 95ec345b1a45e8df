/*
 * The parts of a repro that the planners (repro.c, repro-graph.c) and the
 * writers (repro-write.c, repro-graph.c) share: the buffers a plan
 * allocates, and the C text of numbers and comments. A leaf: it calls no
 * other part of repro, so the parts do not call each other in a circle.
 */
#include "repro.h"
#include "spy-api.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int
repro_add_buffer(struct repro_plan *p, const char *param, unsigned long long addr, unsigned long long bytes,
		 int input, const char *dtype, unsigned long long elems)
{
	struct repro_buffer *b = NULL;

	if (!addr)
		return 0;
	/* The same address is the same memory: the program may have aliased buffers. */
	for (int i = 0; i < p->nbufs; i++)
		if (p->bufs[i].addr == addr)
			b = &p->bufs[i];
	if (!b) {
		if (p->nbufs == REPRO_MAX_BUFS)
			return -1;
		b = &p->bufs[p->nbufs++];
		memset(b, 0, sizeof(*b));
		b->addr = addr;
		b->offset = (unsigned)(addr % 256);
		snprintf(b->var, sizeof(b->var), "buf_%s", param);
		for (char *c = b->var; *c; c++)
			if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
				*c = '_';
	}
	if (bytes > b->bytes)
		b->bytes = bytes;
	if (input && !b->input) {
		b->input = 1;
		b->dtype = dtype;
		b->elems = elems;
	} else if (!b->dtype && dtype && !b->input) {
		b->dtype = dtype;
		b->elems = elems;
	}
	snprintf(b->users + strlen(b->users), sizeof(b->users) - strlen(b->users), "%s%s", b->users[0] ? ", " : "",
		 param);
	return 0;
}

/*
 * Records are input from strangers (issue 27). What repro takes from them
 * into the program is either one of these checked words, or text escaped
 * for where it goes (repro_comment, repro_text and the writers' string
 * escapes); the build command passes paths so that no byte of them can
 * become an option (repro.c).
 */
int
repro_id_ok(const char *id)
{
	const char *h = id ? strchr(id, '#') : NULL;
	size_t kind = h ? (size_t)(h - id) : 0, digits = h ? strspn(h + 1, "0123456789") : 0;

	/* kind#N, as the spy writes them: "tensor#3", "backend#12". */
	if (!h || kind == 0 || kind > 24 || strspn(id, "abcdefghijklmnopqrstuvwxyz") != kind)
		return 0;
	return digits > 0 && digits <= 18 && h[1 + digits] == '\0' && h[1] != '0';
}

int
repro_cudnn_word(const char *word)
{
	if (!word || !word[0] || strlen(word) > 128)
		return 0;
	for (int e = 0; e < _SPY_ENUM_COUNT; e++) {
		if (strcmp(spy_enum_info[e].name, word) == 0)
			return 1;
		for (unsigned v = 0; v < spy_enum_info[e].count; v++)
			if (strcmp(spy_enum_info[e].values[v].name, word) == 0)
				return 1;
	}
	return spy_fn_lookup(word) >= 0;
}

int
repro_enum_word(const char *type, const char *word)
{
	if (!word || !type)
		return 0;
	for (int e = 0; e < _SPY_ENUM_COUNT; e++) {
		if (strcmp(spy_enum_info[e].name, type) != 0)
			continue;
		for (unsigned v = 0; v < spy_enum_info[e].count; v++)
			if (strcmp(spy_enum_info[e].values[v].name, word) == 0)
				return 1;
		return 0;
	}
	/* A type the description has no values for: any cuDNN name, never another word. */
	return repro_cudnn_word(word);
}

void
repro_text(FILE *out, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)(s ? s : "?"); *c; c++) {
		if (*c == '\\')
			fputs("\\\\", out);
		else if (*c < 0x20 || *c > 0x7e)
			fprintf(out, "\\%03o", *c);
		else
			fputc(*c, out);
	}
}

/* Text for a C comment: printable ASCII, and never the end of the comment. */
void
repro_comment(FILE *out, const char *s)
{
	for (const char *c = s ? s : "?"; *c; c++) {
		if (c[0] == '*' && c[1] == '/')
			fputs("* ", out);
		else if (*c < 0x20 || *c > 0x7e)
			fputc('?', out);
		else
			fputc(*c, out);
	}
}

void
repro_int(FILE *out, long long v)
{
	/* The most negative value has no literal: 9223372036854775808 is too big for any signed type. */
	if (v == LLONG_MIN)
		fputs("(-9223372036854775807LL - 1)", out);
	else
		fprintf(out, "%lld%s", v, v > 2147483647LL || v < -2147483647LL ? "LL" : "");
}
