/*
 * The POSIX subset that the portable layers call and mingw-w64 lacks (README.md): declared here, defined
 * over Win32 in shim/win/common/posix.c. Only the Windows build sees this directory.
 */
#ifndef SPY_POSIX_H
#define SPY_POSIX_H

#include <stddef.h>
#include <sys/types.h>

/* open(2)'s flags that msvcrt lacks. O_CLOEXEC: not inherited, and binary (no "\n" -> "\r\n" in records). */
#define O_CLOEXEC (0x0080 /* _O_NOINHERIT */ | 0x8000 /* _O_BINARY */)
#define O_NOFOLLOW 0		/* CreateFileA follows a reparse point, which only an administrator may plant by default */
#define O_DIRECTORY 0x40000000	/* spy_open: the handle of a directory (FILE_FLAG_BACKUP_SEMANTICS) */
#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define F_DUPFD_CLOEXEC 1030
#define F_GETFD 1
#define F_SETFD 2
#define FD_CLOEXEC 1

typedef int spy_uid_t;
typedef int spy_gid_t;

/* Files opened with CreateFileA (shared read and delete, so that a reader may open them while written). */
int spy_open(const char *path, int flags, ...);
int spy_openat(int dirfd, const char *path, int flags, ...);
int spy_fcntl(int fd, int cmd, ...);
int spy_fallocate(int fd, int mode, off_t off, off_t len);
long spy_sysconf(int name);
int spy_gethostname(char *name, size_t len);
/* The program's arguments as /proc/self/cmdline holds them (each ends with a NUL), in UTF-8: their length, or -1. */
ssize_t spy_win_cmdline(char *out, size_t size);
/* The program's file name without directory or ".exe": glibc's program_invocation_short_name. */
const char *spy_program_short_name(void);

#endif
