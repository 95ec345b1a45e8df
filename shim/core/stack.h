#ifndef SPY_STACK_H
#define SPY_STACK_H

#include "buf.h"

#define SPY_STACK_MAX 32

/* The caller's stack, innermost first, without the spy's own frames. */
int spy_stack_capture(void **ips, int max);
/*
 * The file to read a module's symbols from, for a name as the module map gives it: the name, or the program's
 * own file (through /proc/self/exe, into buf) when the name is the program's relative one.
 */
const char *spy_stack_symbol_file(const char *name, char *buf, size_t size);
/* [{"module":..., "offset":..., "symbol":...}, ...] */
void spy_stack_json(struct spy_line *l, void *const *ips, int n);
/* "main (prog+0x1139) < __libc_start_call_main (libc.so.6+0x271ca)" */
void spy_stack_text(struct spy_line *l, void *const *ips, int n);

#endif
