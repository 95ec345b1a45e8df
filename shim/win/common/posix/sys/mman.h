/*
 * No shared mapping of the record file on Windows: mmap fails with ENODEV, which sends sink.c down its
 * own path for files that cannot be mapped (threads' buffers written whole, at least once a second).
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
static inline void *mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	(void)a; (void)n; (void)prot; (void)flags; (void)fd; (void)off;
	errno = ENODEV;
	return MAP_FAILED;
}
static inline int munmap(void *a, size_t n) { (void)a; (void)n; return 0; }
static inline int madvise(void *a, size_t n, int advice) { (void)a; (void)n; (void)advice; return 0; }
static inline int msync(void *a, size_t n, int flags) { (void)a; (void)n; (void)flags; return 0; }
#define MS_ASYNC 1
#endif
