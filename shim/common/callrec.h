/*
 * The fields every call and failure record begins with, in one place for
 * the library, which writes them in format 1, and the command, which
 * writes them again from format 2's packed calls: the two must be the
 * same to the byte (the binary-records tests compare them).
 */
#ifndef SPY_CALLREC_H
#define SPY_CALLREC_H

#include <stdint.h>

#include "buf.h"

/* `{"event":EVENT,"fn":...,"dur_ns":...` of function `fn`; `dur_ns` null when `timed` is 0. */
void spy_call_fields(struct spy_line *l, const char *event, unsigned fn, long long status, unsigned copy,
		     long long tid, uint64_t t_ns, int timed, uint64_t dur_ns);

/*
 * One entry of a failure record's "recent" list, `{"fn":...,"status":...}`, after a comma unless it is the
 * first (*first, cleared here); nothing for an id that names no function.
 */
void spy_recent_json(struct spy_line *l, unsigned fn, long long status, int *first);

#endif
