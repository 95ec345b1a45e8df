/*
 * The slow path (slowpath.c): what a call that wants more than counting
 * does, once the wrapper has packed its arguments.
 */
#ifndef SPY_SLOWPATH_H
#define SPY_SLOWPATH_H

#include <stddef.h>
#include <stdint.h>

#include "spy.h"

/* A failure, a traced call, or remembered state: the wrapper packed the arguments. */
void spy_call_slow(struct spy_call *c, long status, const union spy_arg *args);
/* Work before the real call (gpu.c, inject.c); returns the function to call, or NULL. */
spy_fnptr spy_call_pre(struct spy_call *c, const void *handle);
/* Which functions create, set or destroy what the slow path remembers: SPY_FN_STATE, once the options are read. */
void spy_state_flags_init(void);
/* Copies the cuDNN message the spy read at this thread's last failure, once; 0 when there is none. */
int spy_take_last_error(unsigned copy, char *message, size_t max_size);
/* A function's failed calls that were a framework's expected probing. */
uint64_t spy_probes(unsigned id);

#endif
