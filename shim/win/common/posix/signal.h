#include_next <signal.h>
#ifndef SPY_WIN_SIGNAL_H
#define SPY_WIN_SIGNAL_H
#include <sys/types.h>
#ifndef _POSIX
typedef _sigset_t sigset_t;
#endif
/*
 * No SIGXFSZ on Windows (no file-size limit): the mask sink.c sets around a write changes nothing
 * (winpthreads' pthread_sigmask is 0 too).
 */
#ifndef SIGXFSZ
#define SIGXFSZ 25
#endif
#define SIG_BLOCK 0
#define SIG_SETMASK 2
static inline int sigemptyset(sigset_t *s) { *s = 0; return 0; }
static inline int sigaddset(sigset_t *s, int n) { *s |= (sigset_t)1 << n; return 0; }
/* Reached only under a file-size limit, which Windows never has (sys/resource.h). */
static inline int sigismember(const sigset_t *s, int n) { return (int)((*s >> n) & 1); }
static inline int sigpending(sigset_t *s) { *s = 0; return 0; }
struct timespec;
static inline int sigtimedwait(const sigset_t *s, void *info, const struct timespec *t)
{
	(void)s; (void)info; (void)t;
	return -1;
}
#endif
