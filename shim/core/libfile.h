/*
 * What a path is, before the loader sees it: the loader blocks forever on
 * a FIFO and dies of SIGBUS on a truncated file, and either takes the
 * program with it.
 */
#ifndef SPY_LIBFILE_H
#define SPY_LIBFILE_H

#include <stddef.h>

/*
 * 0 when `path` is a regular, readable ELF shared object of this process's
 * class, byte order and machine, whose program and section headers and
 * loadable segments lie inside the file. Otherwise -1, with the reason in
 * `why` (a phrase that follows the path: "is a FIFO, not a library").
 * Never blocks: a FIFO is refused before it is opened.
 */
int spy_library_file_check(const char *path, char *why, size_t whylen);

#endif
