#include_next <stdlib.h>
#ifndef SPY_WIN_STDLIB_H
#define SPY_WIN_STDLIB_H
/* No set-user-id programs on Windows: the environment is the program's own. */
#define secure_getenv getenv
#endif
