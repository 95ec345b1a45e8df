/*
 * The POSIX subset of shim/win/posix/ over Win32, for the portable layers' files (README.md there). Files are
 * opened with CreateFileA and handed to msvcrt as descriptors (_open_osfhandle), so that sink.c's write(2)
 * and fstat(2) work on them: a record file is opened for appending only (FILE_APPEND_DATA without
 * FILE_WRITE_DATA), which Windows makes atomic per write, as O_APPEND is on Linux, and shared for reading
 * and deleting, so that a reader may open it while the program writes it. Directories have no msvcrt
 * descriptor: spy_open(O_DIRECTORY) gives a number of this file's own, which openat, fstatat, renameat and
 * unlinkat turn back into the directory's path.
 */
#define SPY_POSIX_IMPL	/* the POSIX names are the real ones here: the spy_ ones are defined over them */
#include <windows.h>
#include <psapi.h>
#include <tlhelp32.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <dlfcn.h>

#include "spy_posix.h"


#define DIRS 16
#define DIR_FD_BASE 0x40000000	/* far above msvcrt's descriptors (at most 8192) */
static char dirs[DIRS][MAX_PATH];
static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;

static int
win_errno(DWORD e)
{
	switch (e) {
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS:
		return EEXIST;
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION:
		return EACCES;
	case ERROR_DISK_FULL:
	case ERROR_HANDLE_DISK_FULL:
		return ENOSPC;
	case ERROR_DIRECTORY:
		return ENOTDIR;
	default:
		return EIO;
	}
}

static const char *
dir_path(int dirfd)
{
	unsigned i = (unsigned)dirfd - DIR_FD_BASE;

	return dirfd >= DIR_FD_BASE && i < DIRS && dirs[i][0] ? dirs[i] : NULL;
}

static int
absolute(const char *p)
{
	return p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':');
}

/* DIRFD's path joined with PATH into OUT: 0, or -1 with errno. */
static int
join(int dirfd, const char *path, char *out, size_t size)
{
	const char *d;

	if (dirfd == AT_FDCWD || absolute(path))
		d = NULL;
	else if (!(d = dir_path(dirfd))) {
		errno = EBADF;
		return -1;
	}
	if (snprintf(out, size, "%s%s%s", d ? d : "", d ? "/" : "", path) >= (int)size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

static int
open_dir(const char *path)
{
	DWORD a = GetFileAttributesA(path);

	if (a == INVALID_FILE_ATTRIBUTES) {
		errno = win_errno(GetLastError());
		return -1;
	}
	if (!(a & FILE_ATTRIBUTE_DIRECTORY)) {
		errno = ENOTDIR;
		return -1;
	}
	pthread_mutex_lock(&dirs_lock);
	for (int i = 0; i < DIRS; i++) {
		if (dirs[i][0])
			continue;
		snprintf(dirs[i], sizeof(dirs[i]), "%s", path);
		pthread_mutex_unlock(&dirs_lock);
		return DIR_FD_BASE + i;
	}
	pthread_mutex_unlock(&dirs_lock);
	errno = EMFILE;
	return -1;
}

int
spy_open(const char *path, int flags, ...)
{
	DWORD access, disposition;
	HANDLE h;
	int fd, crt = _O_BINARY;
	DWORD saved = GetLastError();

	if (flags & O_DIRECTORY)
		return open_dir(path);
	switch (flags & (O_RDONLY | O_WRONLY | O_RDWR)) {
	case O_WRONLY:
		access = 0;
		break;
	case O_RDWR:
		access = FILE_READ_DATA;
		break;
	default:
		access = FILE_READ_DATA;
		crt |= _O_RDONLY;
	}
	if (flags & O_APPEND) {
		access |= FILE_APPEND_DATA;
		crt |= _O_APPEND;
	} else if (flags & (O_WRONLY | O_RDWR)) {
		access |= FILE_WRITE_DATA | FILE_APPEND_DATA;
	}
	access |= FILE_READ_ATTRIBUTES | FILE_WRITE_ATTRIBUTES | SYNCHRONIZE;
	if ((flags & O_CREAT) && (flags & O_EXCL))
		disposition = CREATE_NEW;
	else if (flags & O_CREAT)
		disposition = (flags & O_TRUNC) ? CREATE_ALWAYS : OPEN_ALWAYS;
	else
		disposition = (flags & O_TRUNC) ? TRUNCATE_EXISTING : OPEN_EXISTING;
	/* Not inherited (no SECURITY_ATTRIBUTES): O_CLOEXEC. */
	h = CreateFileA(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, disposition,
			FILE_ATTRIBUTE_NORMAL, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		errno = win_errno(GetLastError());
		SetLastError(saved);
		return -1;
	}
	fd = _open_osfhandle((intptr_t)h, crt);
	if (fd < 0) {
		CloseHandle(h);
		errno = EMFILE;
	}
	SetLastError(saved);
	return fd;
}

int
spy_openat(int dirfd, const char *path, int flags, ...)
{
	char full[MAX_PATH * 2];

	if (join(dirfd, path, full, sizeof(full)) != 0)
		return -1;
	return spy_open(full, flags);
}

int
spy_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	char full[MAX_PATH * 2];

	(void)flags;
	if (join(dirfd, path, full, sizeof(full)) != 0)
		return -1;
	return stat(full, st);
}

/* A directory's number is this file's own: fstat says it is a directory of the caller's, and close forgets it. */
int
spy_fstat(int fd, struct stat *st)
{
	const char *d = dir_path(fd);

	if (d)
		return stat(d, st);
	return fstat(fd, st);
}

int
spy_close(int fd)
{
	unsigned i = (unsigned)fd - DIR_FD_BASE;

	if (fd >= DIR_FD_BASE && i < DIRS) {
		pthread_mutex_lock(&dirs_lock);
		dirs[i][0] = 0;
		pthread_mutex_unlock(&dirs_lock);
		return 0;
	}
	return close(fd);
}

/* msvcrt's _dup gives the lowest free number and no more: F_DUPFD_CLOEXEC says EINVAL, and the file keeps its own. */
int
spy_fcntl(int fd, int cmd, ...)
{
	(void)fd;
	(void)cmd;
	errno = EINVAL;
	return -1;
}

/*
 * A handle of fd's file that may write anywhere in it: a record file's descriptor appends only (above), which
 * a section of PAGE_READWRITE and SetEndOfFile both refuse. NULL with errno.
 */
static HANDLE
writable(int fd)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd), w;

	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return NULL;
	}
	w = ReOpenFile(h, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, 0);
	if (w == INVALID_HANDLE_VALUE) {
		errno = win_errno(GetLastError());
		return NULL;
	}
	return w;
}

/*
 * Mode 0: the file extended to off + len (NTFS allocates it then, so that a full disk is known before a
 * mapped page is written). Any other (a reservation that keeps the size, a hole): ENOSYS, and sink.c
 * reserves nothing and punches nothing.
 */
int
spy_fallocate(int fd, int mode, off_t off, off_t len)
{
	DWORD saved = GetLastError();
	LARGE_INTEGER size, end;
	HANDLE h;
	int r = 0;

	if (mode != 0) {
		errno = ENOSYS;
		return -1;
	}
	if (off < 0 || len <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (!(h = writable(fd)))
		return -1;
	end.QuadPart = (LONGLONG)off + (LONGLONG)len;
	if (!GetFileSizeEx(h, &size) ||
	    (size.QuadPart < end.QuadPart && (!SetFilePointerEx(h, end, NULL, FILE_BEGIN) || !SetEndOfFile(h)))) {
		errno = win_errno(GetLastError());
		r = -1;
	}
	CloseHandle(h);
	SetLastError(saved);
	return r;
}

static DWORD
granularity(void)
{
	SYSTEM_INFO si;

	GetSystemInfo(&si);
	return si.dwAllocationGranularity;
}

/*
 * A view's offset is a multiple of the allocation granularity (64 KiB), a page's of sink.c's: the view
 * begins that much before, and munmap finds its start again by rounding down. The section is closed at once;
 * the view keeps it.
 */
void *
spy_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	DWORD saved = GetLastError(), g = granularity();
	uint64_t at, end;
	HANDLE h, m;
	size_t delta;
	void *v;

	if (addr || flags != MAP_SHARED || prot != (PROT_READ | PROT_WRITE) || fd < 0 || off < 0 || !len) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	if (!(h = writable(fd)))
		return MAP_FAILED;
	at = (uint64_t)off / g * g;
	delta = (size_t)((uint64_t)off - at);
	end = (uint64_t)off + len;
	m = CreateFileMappingA(h, NULL, PAGE_READWRITE, (DWORD)(end >> 32), (DWORD)end, NULL);
	v = m ? MapViewOfFile(m, FILE_MAP_READ | FILE_MAP_WRITE, (DWORD)(at >> 32), (DWORD)at, delta + len) : NULL;
	if (!v)
		errno = win_errno(GetLastError());
	if (m)
		CloseHandle(m);
	CloseHandle(h);
	SetLastError(saved);
	return v ? (char *)v + delta : MAP_FAILED;
}

int
spy_munmap(void *addr, size_t len)
{
	DWORD saved = GetLastError();
	uintptr_t g = granularity();
	int r = UnmapViewOfFile((void *)((uintptr_t)addr / g * g)) ? 0 : -1;

	(void)len;
	if (r)
		errno = EINVAL;
	SetLastError(saved);
	return r;
}

int
spy_madvise(void *addr, size_t len, int advice)
{
	DWORD saved = GetLastError();

	/* Unlocked pages: VirtualUnlock takes them out of the working set (and says ERROR_NOT_LOCKED). */
	if (advice == MADV_DONTNEED)
		VirtualUnlock(addr, len);
	SetLastError(saved);
	return 0;
}

long
spy_sysconf(int name)
{
	SYSTEM_INFO si;

	(void)name;
	GetSystemInfo(&si);
	return (long)si.dwPageSize;
}

int
spy_gethostname(char *name, size_t len)
{
	DWORD n = (DWORD)len;

	return GetComputerNameA(name, &n) ? 0 : -1;
}

static char short_name[MAX_PATH];

/* The .exe's file name without directory or ".exe", as a program started as "prog" sees argv[0]'s base on Linux. */
static void
read_name(void)
{
	char path[MAX_PATH];
	DWORD n = GetModuleFileNameA(NULL, path, sizeof(path));
	const char *b = path;
	size_t len;

	if (n == 0 || n >= sizeof(path)) {
		snprintf(short_name, sizeof(short_name), "unknown");
		return;
	}
	for (const char *p = path; *p; p++)
		if (*p == '\\' || *p == '/')
			b = p + 1;
	len = strlen(b);
	if (len > 4 && _stricmp(b + len - 4, ".exe") == 0)
		len -= 4;
	snprintf(short_name, sizeof(short_name), "%.*s", (int)len, b);
}

const char *
spy_program_short_name(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, read_name);
	return short_name;
}

int
spy_renameat(int fromdir, const char *from, int todir, const char *to)
{
	char a[MAX_PATH * 2], b[MAX_PATH * 2];

	if (join(fromdir, from, a, sizeof(a)) != 0 || join(todir, to, b, sizeof(b)) != 0)
		return -1;
	if (!MoveFileExA(a, b, MOVEFILE_REPLACE_EXISTING)) {
		errno = win_errno(GetLastError());
		return -1;
	}
	return 0;
}

int
spy_unlinkat(int dirfd, const char *path, int flags)
{
	char full[MAX_PATH * 2];

	(void)flags;
	if (join(dirfd, path, full, sizeof(full)) != 0)
		return -1;
	if (!DeleteFileA(full)) {
		errno = win_errno(GetLastError());
		return -1;
	}
	return 0;
}

ssize_t
process_vm_readv(int pid, const struct iovec *local, unsigned long nl, const struct iovec *remote, unsigned long nr,
		 unsigned long flags)
{
	SIZE_T got = 0;

	(void)pid;
	(void)flags;
	if (nl != 1 || nr != 1 || local->iov_len != remote->iov_len) {
		errno = EINVAL;
		return -1;
	}
	if (!ReadProcessMemory(GetCurrentProcess(), remote->iov_base, local->iov_base, local->iov_len, &got)) {
		errno = EFAULT;
		return -1;
	}
	return (ssize_t)got;
}

int
dladdr(const void *addr, Dl_info *info)
{
	static __thread char name[MAX_PATH];
	HMODULE m;

	if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				(LPCSTR)addr, &m))
		return 0;
	if (!GetModuleFileNameA(m, name, sizeof(name)))
		name[0] = 0;
	info->dli_fname = name;
	info->dli_fbase = (void *)m;
	info->dli_sname = NULL;
	info->dli_saddr = NULL;
	return 1;
}

void *
dlsym(void *handle, const char *name)
{
	return (void *)GetProcAddress(handle ? (HMODULE)handle : GetModuleHandleW(NULL), name);
}

/* The parent's process id, from a snapshot of the processes (Windows keeps it, not the relation). */
pid_t
spy_getppid(void)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
	PROCESSENTRY32 pe = { .dwSize = sizeof(pe) };
	DWORD me = GetCurrentProcessId(), parent = 0;

	if (snap == INVALID_HANDLE_VALUE)
		return 0;
	for (BOOL ok = Process32First(snap, &pe); ok; ok = Process32Next(snap, &pe))
		if (pe.th32ProcessID == me) {
			parent = pe.th32ParentProcessID;
			break;
		}
	CloseHandle(snap);
	return (pid_t)parent;
}

ssize_t
spy_win_cmdline(char *out, size_t size)
{
	/* shell32 loaded when a record file is opened, not linked: it brings user32 and more into every process. */
	typedef wchar_t **(WINAPI *split_fn)(const wchar_t *, int *);
	HMODULE sh = LoadLibraryExW(L"shell32.dll", NULL, LOAD_LIBRARY_SEARCH_SYSTEM32);
	split_fn split = sh ? (split_fn)(void *)GetProcAddress(sh, "CommandLineToArgvW") : NULL;
	int argc = 0;
	wchar_t **argv = split ? split(GetCommandLineW(), &argc) : NULL;
	size_t used = 0;

	if (!argv)
		return -1;
	for (int i = 0; i < argc; i++) {
		int n = WideCharToMultiByte(CP_UTF8, 0, argv[i], -1, out + used, (int)(size - used), NULL, NULL);

		/* Whole arguments only, as a read of /proc/self/cmdline cut at the buffer keeps what fits. */
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	LocalFree(argv);
	return (ssize_t)used;
}
