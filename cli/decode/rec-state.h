/*
 * The counters of a mapped record file, per process, and the summary they
 * give for a process that ended without its own (rec-state.c).
 */
#ifndef CUDNNSPY_REC_STATE_H
#define CUDNNSPY_REC_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

struct rec_state;

struct rec_state *rec_state_new(void);
void rec_state_free(struct rec_state *s);
/* A state frame's payload: added to the sums, 1; 0 when it is none the library writes (damage). */
int rec_state_frame(struct rec_state *s, const uint8_t *payload, size_t n);
/* The records the process kept up to date (an algo choice's), as JSON lines: how many, and each. */
size_t rec_state_kept(const struct rec_state *s);
const char *rec_state_kept_line(const struct rec_state *s, size_t i);
/* 1 once a state frame was added. */
int rec_state_any(const struct rec_state *s);
/* The summary record the counters give, as one JSON line in `l` (no newline); 0 when out of memory. */
int rec_state_summary(const struct rec_state *s, struct spy_line *l);

#endif
