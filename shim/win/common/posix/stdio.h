#include_next <stdio.h>
#ifndef SPY_WIN_STDIO_H
#define SPY_WIN_STDIO_H
#include "spy_posix.h"
#define renameat spy_renameat
int spy_renameat(int fromdir, const char *from, int todir, const char *to);
#endif
