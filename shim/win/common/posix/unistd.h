#include_next <unistd.h>
#ifndef SPY_WIN_UNISTD_H
#define SPY_WIN_UNISTD_H
#include "spy_posix.h"
/* One user: the file's owner as msvcrt's stat says it (0) is the caller. */
static inline spy_uid_t geteuid(void) { return 0; }
#define _SC_PAGESIZE 30
pid_t spy_getppid(void);
int spy_unlinkat(int dirfd, const char *path, int flags);
int spy_close(int fd);
#ifndef SPY_POSIX_IMPL
#define sysconf spy_sysconf
#define gethostname spy_gethostname
#define getppid spy_getppid
#define unlinkat spy_unlinkat
#define close spy_close
#endif
#endif
