/*
 * The counters a mapped record file holds (state frames, version 6:
 * docs/record-format.md, "State"), summed per process, and the summary
 * they give when the process ended without writing its own: killed, the
 * OOM killer, _exit, exec. The rows and their fields are the library's own
 * (shim/common/counts.c), so that the summary says what the exit would
 * have said, up to the call in flight.
 */
#include "rec-state.h"
#include "counts.h"
#include "recfmt.h"
#include "spy-api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec_state {
	struct spy_row *rows[SPY_MAX_COPIES];	/* per copy, a row per function, made as the copy comes */
	uint64_t probes[_SPY_FN_COUNT];
	uint64_t dropped;
	int any;
	/* The records the process kept up to date (SPY_STATE_RECORD), their values in: JSON lines. */
	char **kept;
	size_t nkept, kept_cap;
};

struct rec_state *
rec_state_new(void)
{
	return calloc(1, sizeof(struct rec_state));
}

void
rec_state_free(struct rec_state *s)
{
	if (!s)
		return;
	for (int k = 0; k < SPY_MAX_COPIES; k++)
		free(s->rows[k]);
	for (size_t i = 0; i < s->nkept; i++)
		free(s->kept[i]);
	free(s->kept);
	free(s);
}

static uint32_t
u32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
u64_at(const uint8_t *p)
{
	return (uint64_t)u32_at(p) | (uint64_t)u32_at(p + 4) << 32;
}

static struct spy_row *
rows_of(struct rec_state *s, unsigned copy)
{
	if (!s->rows[copy]) {
		s->rows[copy] = malloc(_SPY_FN_COUNT * sizeof(struct spy_row));
		if (!s->rows[copy])
			return NULL;
		for (unsigned id = 0; id < _SPY_FN_COUNT; id++)
			spy_row_init(&s->rows[copy][id], id);
	}
	return s->rows[copy];
}

/*
 * A kept record: its whole text with its values written in for their marks
 * (recfmt.h), when it is one record's line; 0 for anything else.
 */
static int
kept_record(struct rec_state *s, const uint8_t *p, size_t n)
{
	uint32_t which = u32_at(p), len, cap = u32_at(p + 12);
	const uint8_t *text;
	uint64_t v[SPY_KEPT_VALUES];
	char *out, **grown;
	size_t o = 0;

	if (which > 1 || cap > SPY_KEPT_TEXT_MAX || n < sizeof(struct spy_rec_kept) + 2 * (size_t)cap ||
	    (len = u32_at(p + 4 + 4 * which)) > cap)
		return 0;
	/* Made and never written (the process ended between the two), or given up for a larger place. */
	if (len == 0)
		return 1;
	for (int i = 0; i < SPY_KEPT_VALUES; i++)
		v[i] = u64_at(p + 16 + 8 * i);
	text = p + sizeof(struct spy_rec_kept) + (size_t)which * cap;
	/* Each mark (2 bytes) becomes at most 20 digits. */
	out = malloc((size_t)len * 10 + 1);
	if (!out)
		return 0;
	for (uint32_t i = 0; i < len; i++) {
		if (text[i] == (uint8_t)SPY_KEPT_MARK && i + 1 < len && text[i + 1] >= '0' &&
		    text[i + 1] < '0' + SPY_KEPT_VALUES) {
			o += (size_t)snprintf(out + o, 21, "%llu", (unsigned long long)v[text[i + 1] - '0']);
			i++;
		} else {
			out[o++] = (char)text[i];
		}
	}
	out[o] = 0;
	/* Whether it is JSON the reader asks before it gives it (records.c). */
	if (out[0] != '{' || memchr(out, '\n', o)) {
		free(out);
		return 0;
	}
	if (s->nkept == s->kept_cap) {
		grown = realloc(s->kept, (s->kept_cap ? 2 * s->kept_cap : 16) * sizeof(*grown));
		if (!grown) {
			free(out);
			return 0;
		}
		s->kept = grown;
		s->kept_cap = s->kept_cap ? 2 * s->kept_cap : 16;
	}
	s->kept[s->nkept++] = out;
	return 1;
}

size_t
rec_state_kept(const struct rec_state *s)
{
	return s ? s->nkept : 0;
}

const char *
rec_state_kept_line(const struct rec_state *s, size_t i)
{
	return s && i < s->nkept ? s->kept[i] : NULL;
}

int
rec_state_frame(struct rec_state *s, const uint8_t *p, size_t n)
{
	unsigned kind, copy;
	uint32_t a;
	struct spy_row *rows;

	if (n < SPY_REC_STATE_HEAD - 4)
		return 0;
	kind = p[0];
	copy = p[1];
	a = u32_at(p + 4);
	if (p[2] || p[3] || copy >= SPY_MAX_COPIES)
		return 0;
	p += SPY_REC_STATE_HEAD - 4;
	n -= SPY_REC_STATE_HEAD - 4;
	switch (kind) {
	case SPY_STATE_COUNTS:
		if (a != _SPY_FN_COUNT || n < (size_t)a * sizeof(struct spy_counts) || !(rows = rows_of(s, copy)))
			return 0;
		for (unsigned id = 0; id < _SPY_FN_COUNT; id++, p += sizeof(struct spy_counts)) {
			struct spy_counts c = { u64_at(p), u64_at(p + 8), u64_at(p + 16), u64_at(p + 24), u64_at(p + 32),
						u64_at(p + 40), NULL };

			spy_row_add_counts(&rows[id], &c);
			/* Timed calls count where their timing is (rec_state_frame's SPY_STATE_TIMING), as the library counts them. */
			rows[id].timed += c.timed;
		}
		break;
	case SPY_STATE_TIMING: {
		struct spy_timing t;

		if (a >= _SPY_FN_COUNT || n < sizeof(t) || !(rows = rows_of(s, copy)))
			return 0;
		t.total_ns = u64_at(p);
		t.min_ns = u64_at(p + 8);
		t.max_ns = u64_at(p + 16);
		t.first_ns = u64_at(p + 24);
		for (unsigned b = 0; b < SPY_HIST_BUCKETS; b++)
			t.hist[b] = u32_at(p + 32 + 4 * b);
		/* A timing made but never filled (the process ended between the two) holds no call. */
		if (t.min_ns == 0 && t.max_ns == 0 && t.total_ns == 0 && t.first_ns == 0)
			break;
		spy_row_add_timing(&rows[a], &t, 0);
		break;
	}
	case SPY_STATE_RECORD:
		if (n < sizeof(struct spy_rec_kept) || !kept_record(s, p, n))
			return 0;
		break;
	case SPY_STATE_PROCESS:
		if (a != _SPY_FN_COUNT || n < (2 + (size_t)a) * 8)
			return 0;
		s->dropped += u64_at(p);
		for (unsigned id = 0; id < _SPY_FN_COUNT; id++)
			s->probes[id] += u64_at(p + 16 + 8 * id);
		break;
	default:
		return 0;
	}
	s->any = 1;
	return 1;
}

int
rec_state_any(const struct rec_state *s)
{
	return s && s->any;
}

/*
 * The rows with calls, of one copy or of all (copy -1), sorted as the
 * library sorts them; their totals in *total. NULL when out of memory.
 */
static struct spy_row *
collect(const struct rec_state *s, int copy, size_t *nrows, struct spy_row *total)
{
	struct spy_row *out = malloc(_SPY_FN_COUNT * sizeof(*out));

	*nrows = 0;
	spy_row_init(total, 0);
	if (!out)
		return NULL;
	for (unsigned id = 0; id < _SPY_FN_COUNT; id++) {
		struct spy_row r;

		spy_row_init(&r, id);
		for (int k = 0; k < SPY_MAX_COPIES; k++) {
			const struct spy_row *x = s->rows[k] ? &s->rows[k][id] : NULL;

			if (x && (copy < 0 || k == copy))
				spy_row_merge(&r, x);
		}
		spy_row_done(&r);
		if (r.calls || r.internal) {
			out[(*nrows)++] = r;
			total->calls += r.calls;
			total->fails += r.fails;
			total->internal += r.internal;
		}
	}
	qsort(out, *nrows, sizeof(*out), spy_row_by_calls);
	return out;
}

int
rec_state_summary(const struct rec_state *s, struct spy_line *l)
{
	struct spy_row total;
	size_t nrows;
	struct spy_row *rows = collect(s, -1, &nrows, &total);
	uint64_t probing = 0;
	int first = 1;

	if (!rows)
		return 0;
	for (size_t i = 0; i < nrows; i++)
		probing += s->probes[rows[i].id];
	spy_line_reset(l);
	spy_summary_head_json(l, &total, s->dropped, probing);
	spy_line_lit(l, ",\"functions\":[");
	for (size_t i = 0; i < nrows; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_row_json(l, spy_fn_info[rows[i].id].name, &rows[i], s->probes[rows[i].id]);
	}
	free(rows);
	/* Who each copy is, the library records say: here only what each answered. */
	spy_line_lit(l, "],\"copies\":[");
	for (int k = 0; k < SPY_MAX_COPIES; k++) {
		struct spy_row own;
		struct spy_row *mine;

		if (!s->rows[k])
			continue;
		mine = collect(s, k, &nrows, &own);
		if (!mine)
			return 0;
		if (!first)
			spy_line_char(l, ',');
		first = 0;
		spy_line_lit(l, "{\"copy\":");
		spy_line_u64(l, (uint64_t)k);
		spy_line_lit(l, ",\"path\":null,\"version\":null,\"how\":null,\"by\":null,\"callers\":[],\"closed\":false");
		spy_copy_counts_json(l, &own, mine, nrows);
		free(mine);
	}
	spy_line_lit(l, "],\"exited\":false}");
	return !l->overflow;
}
