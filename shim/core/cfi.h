#ifndef SPY_CFI_H
#define SPY_CFI_H

#include <stdint.h>

/*
 * 1 when the FDE (as _Unwind_Find_FDE returns it) keeps its function's CFA at
 * the stack pointer plus a constant and the return address at CFA - 8
 * throughout; 0 for anything else or anything this reader does not know.
 */
int spy_cfi_plain(const void *fde);

#endif
