#ifndef SPY_RECBIN_H
#define SPY_RECBIN_H

#include "spy.h"

/* Which functions' calls can be packed: set once from the API description. */
void spy_recbin_init(void);
/*
 * Format 2: writes a traced call that succeeded as a packed frame (recfmt.h),
 * its descriptors and handles as texts written once, and its stack (nips
 * return addresses, or none) as modules and offsets. 0 when it cannot (the
 * backend API, a struct, a text buffer or a padding fill behind a pointer; a
 * text too long; no buffer; a module map that cannot be used): the caller
 * writes the JSON record instead.
 */
int spy_recbin_call(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		    void *const *ips, int nips);

#endif
