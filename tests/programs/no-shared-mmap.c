/*
 * A preloaded library, listed before libcudnnspy.so in LD_PRELOAD, that
 * refuses writable shared mappings of regular files as a file system without
 * them does (some FUSE and network file systems): mmap answers MAP_FAILED
 * with errno ENODEV. Every other mapping goes to the next mmap
 * (dlsym(RTLD_NEXT)). The first refusal is said once on stderr, so that a test
 * can tell whether the spy tried one.
 */
/* Both names defined here, each as itself: sys/mman.h must not turn mmap into mmap64 (meson's -D). */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef void *mmap_fn(void *, size_t, int, int, int, off_t);

EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
EXPORT void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset);

static int said;

static int
refused(int prot, int flags, int fd)
{
	struct stat st;
	int saved = errno;
	static const char msg[] = "no-shared-mmap: refused a writable shared mapping of a regular file (ENODEV)\n";

	/* MAP_SHARED_VALIDATE (3) has the MAP_SHARED bit too. */
	if (!(flags & MAP_SHARED) || !(prot & PROT_WRITE) || fd < 0 || (flags & MAP_ANONYMOUS))
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		errno = saved;
		return 0;
	}
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) && write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		said = 1;
	errno = ENODEV;
	return 1;
}

static void *
forward(const char *name, void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	mmap_fn *next;

	*(void **)&next = dlsym(RTLD_NEXT, name);
	if (!next) {
		errno = ENOSYS;
		return MAP_FAILED;
	}
	return next(addr, length, prot, flags, fd, offset);
}

void *
mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	if (refused(prot, flags, fd))
		return MAP_FAILED;
	return forward("mmap", addr, length, prot, flags, fd, offset);
}

void *
mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	if (refused(prot, flags, fd))
		return MAP_FAILED;
	return forward("mmap64", addr, length, prot, flags, fd, offset);
}
