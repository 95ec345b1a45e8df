#ifndef SPY_COMPACT_H
#define SPY_COMPACT_H

#include <stddef.h>

/*
 * The mapped record file `f` (`size` bytes, named `base` in `dirfd`) made
 * compact: its frames written to a new file, which is renamed over it.
 * 0 with *compacted the new file's descriptor (O_APPEND); -1 when it is
 * left as it was.
 */
int spy_compact(int f, size_t size, int dirfd, const char *base, int *compacted);

#endif
