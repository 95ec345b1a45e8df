/*
 * Records kept up to date in the mapped record file (kept.c), for a
 * reader after an ending without exit: the algo records of the choices
 * that ran, the heuristics queries.
 */
#ifndef SPY_KEPT_H
#define SPY_KEPT_H

#include <stdint.h>

#include "buf.h"
#include "recfmt.h"

struct spy_kept {
	struct spy_rec_kept *rec;	/* in the mapped file; NULL: none */
	unsigned gen;			/* the file it is in (spy_sink_state_gen) */
};

/* The record's text as `l` holds it (a JSON record, SPY_KEPT_MARK and a digit for each value): kept, or made. */
void spy_kept_text(struct spy_kept *k, unsigned number, const struct spy_line *l);
/* Its values, in place. */
void spy_kept_values(struct spy_kept *k, const uint64_t *v, int n);
/* It says nothing any more: a reader gives no record for it. */
void spy_kept_clear(struct spy_kept *k);
/* 1 when it is kept in this process's mapped file (the one its text went to). */
int spy_kept_live(const struct spy_kept *k);

#endif
