/*
 * A preloaded library, listed before libcudnnspy.so in LD_PRELOAD, that
 * answers membarrier(2) with ENOSYS, as an old kernel or a seccomp filter
 * does: the spy's frames in place then take the fence way (sink.h's
 * spy_buf_enter). Every other system call goes to the next syscall()
 * (dlsym(RTLD_NEXT)). The first refusal is said once on stderr, so that a
 * test can tell the spy asked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef long syscall_fn(long, long, long, long, long, long, long);

EXPORT long syscall(long number, ...);

static int said;

long
syscall(long number, ...)
{
	static const char msg[] = "no-membarrier: refused membarrier (ENOSYS)\n";
	syscall_fn *next;
	long a[6];
	va_list ap;

	/* Six words, as the kernel's convention passes them: the call's own and what follows. */
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_membarrier) {
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) && write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			said = 1;
		errno = ENOSYS;
		return -1;
	}
	*(void **)&next = dlsym(RTLD_NEXT, "syscall");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
