#ifndef SPY_RECBIN_H
#define SPY_RECBIN_H

#include "spy.h"

/* Which functions' calls can be packed: set once from the API description. */
void spy_recbin_init(void);
/*
 * Format 2: writes a traced call that succeeded as a packed frame (recfmt.h),
 * its descriptors and handles as texts written once. 0 when it cannot (the
 * function has arguments behind pointers; out of memory): the caller writes
 * the JSON record instead.
 */
int spy_recbin_call(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args);
/* In a forked child: the texts' ids start again in the child's file. */
void spy_recbin_fork_child(void);

#endif
