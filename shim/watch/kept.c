/*
 * A record kept in the mapped file (recfmt.h, SPY_STATE_RECORD): the
 * writer renders its text again into the text not in use and stores
 * `which` last, so that a reader after any ending finds one whole text;
 * values that change at every call are stored in place, and the reader
 * writes them into the text's marks. The caller's lock keeps one writer.
 */
#include "kept.h"
#include "sink.h"

#include <string.h>

int
spy_kept_live(const struct spy_kept *k)
{
	return k->rec && k->gen == spy_sink_state_gen();
}

void
spy_kept_text(struct spy_kept *k, unsigned number, const struct spy_line *l)
{
	unsigned gen = spy_sink_state_gen();
	struct spy_rec_kept *r, *old = NULL;
	uint32_t next;

	if (!gen || l->overflow || l->len > SPY_KEPT_TEXT_MAX)
		return;
	if (k->gen != gen || !k->rec || l->len > k->rec->cap) {
		/* Room for the text to grow by half again (a query's engines come one by one). */
		uint32_t cap = (uint32_t)(l->len + l->len / 2 + 256);
		struct spy_rec_kept *grown;

		if (cap > SPY_KEPT_TEXT_MAX)
			cap = SPY_KEPT_TEXT_MAX;
		grown = spy_sink_state(SPY_STATE_RECORD, 0, number, 0, sizeof(*grown) + 2 * (size_t)cap);
		if (!grown)
			return;
		grown->cap = cap;
		if (k->gen == gen && k->rec) {
			old = k->rec;
			memcpy(grown->v, old->v, sizeof(grown->v));
		}
		k->rec = grown;
		k->gen = gen;
	}
	r = k->rec;
	next = 1 - __atomic_load_n(&r->which, __ATOMIC_RELAXED);
	memcpy(r->text + (size_t)next * r->cap, l->data, l->len);
	__atomic_store_n(&r->len[next], (uint32_t)l->len, __ATOMIC_RELAXED);
	__atomic_store_n(&r->which, next, __ATOMIC_RELEASE);
	/* Too small for the text now: the old place says nothing more, once the new one holds it. */
	if (old) {
		__atomic_store_n(&old->len[0], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&old->len[1], 0, __ATOMIC_RELEASE);
	}
}

void
spy_kept_clear(struct spy_kept *k)
{
	if (!spy_kept_live(k))
		return;
	__atomic_store_n(&k->rec->len[0], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&k->rec->len[1], 0, __ATOMIC_RELEASE);
}

void
spy_kept_values(struct spy_kept *k, const uint64_t *v, int n)
{
	if (!spy_kept_live(k))
		return;
	for (int i = 0; i < n && i < SPY_KEPT_VALUES; i++)
		__atomic_store_n(&k->rec->v[i], v[i], __ATOMIC_RELAXED);
}
