/*
 * Shared mappings of a file over Win32 sections (posix.c): what sink.c's mapped writer asks for, a file
 * opened for writing mapped MAP_SHARED at any offset, and nothing else (an anonymous or fixed mapping fails
 * with ENODEV: Windows has no fork, whose child alone asks for one).
 */
#ifndef SPY_WIN_MMAN_H
#define SPY_WIN_MMAN_H
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_SHARED 1
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20
#define MAP_FIXED 0x10
#define MAP_FAILED ((void *)-1)
#define MADV_DONTNEED 4
#define MS_ASYNC 1
void *spy_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int spy_munmap(void *addr, size_t len);
/* MADV_DONTNEED: the pages leave the process's working set; they stay the file's. */
int spy_madvise(void *addr, size_t len, int advice);
static inline int msync(void *a, size_t n, int flags) { (void)a; (void)n; (void)flags; return 0; }
#ifndef SPY_POSIX_IMPL
#define mmap spy_mmap
#define munmap spy_munmap
#define madvise spy_madvise
#endif
#endif
