#include_next <sys/stat.h>
#ifndef SPY_WIN_SYS_STAT_H
#define SPY_WIN_SYS_STAT_H
#include "spy_posix.h"
/* Windows has no symlink modes and msvcrt's stat no other users' write bits: none are ever set. */
#ifndef S_ISLNK
#define S_ISLNK(m) 0
#endif
#undef S_IWOTH
#define S_IWOTH 0
#define S_ISVTX 0
typedef spy_uid_t uid_t;
/* After <sys/stat.h>: "struct stat" is what mingw-w64 makes of it (struct _stat64 with 64-bit offsets). */
int spy_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int spy_fstat(int fd, struct stat *st);
#ifndef SPY_POSIX_IMPL
#define lstat stat
#define fstatat spy_fstatat
#undef fstat
#define fstat spy_fstat
#endif
#endif
