/*
 * The real cuDNN on Windows: what core/resolve.c, realdl.c, copies.c and route.c are on Linux, for the one
 * copy a drop-in DLL stands in front of. Found in this order:
 *   a) CUDNNSPY_LIBRARY: a DLL file, or a directory holding cudnn64_<major>.dll; no fallback when unusable;
 *   b) a cuDNN DLL the process has loaded already (EnumProcessModules), other than a spy;
 *   c) the directories Windows searches for a DLL the program imports (the program's directory, the system
 *      directories, the current directory, PATH), skipping this DLL's own file.
 * Each is loaded by its full path (LoadLibraryExW, with the DLL's own directory searched first for what it
 * imports: cuDNN 9's sub-libraries lie beside it), so that the loader never hands back this DLL, which has
 * the very name searched for. Files are compared by volume and file id, not by name.
 * One copy: Windows binds a program's imports to one module per name, so there are no several copies
 * reached through one set of exported names to route between (route.c), and no dlsym(handle) to register
 * more (copies.c's spy_copy_for).
 */
#include <windows.h>
#include <psapi.h>

#include "core.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

struct spy_real_lib spy_copies[SPY_MAX_COPIES];
spy_fnptr spy_copy_real[SPY_MAX_COPIES][_SPY_FN_COUNT];
union spy_slot_flags spy_slot_slow[SPY_MAX_COPIES + 1];
unsigned spy_copy_gen = 1;

/* No errno value is negative (copies.c). */
#define LAZY_UNTOUCHED (-0x5e57)
static int first_errno_pending;

static HMODULE
self(void)
{
	HMODULE m = NULL;

	GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
			   (LPCWSTR)(void *)self, &m);
	return m;
}

void *
spy_self_base(void)
{
	return (void *)self();
}

void *
spy_dlopen(const char *name, int flags)
{
	HMODULE m;

	if (!name)
		return GetModuleHandleW(NULL);
	if (flags & 4 /* RTLD_NOLOAD */)
		return GetModuleHandleA(name);
	m = LoadLibraryExA(name, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
	return m;
}

void *
spy_dlsym(void *handle, const char *name)
{
	return handle ? (void *)GetProcAddress((HMODULE)handle, name) : NULL;
}

int
spy_dlclose(void *handle)
{
	return FreeLibrary((HMODULE)handle) ? 0 : -1;
}

unsigned
spy_copy_count(void)
{
	return 1;
}

int
spy_copy_major(unsigned copy)
{
	int major = copy < SPY_MAX_COPIES ? __atomic_load_n(&spy_copies[copy].major, __ATOMIC_RELAXED) : 0;

	return major == 8 || major == 9 ? major : spy_flavor.major;
}

/* Every build of the spy exports its public API; a real cuDNN does not. */
static int
is_a_spy(HMODULE m)
{
	return m == self() || GetProcAddress(m, "cudnnspy_is_loaded") != NULL;
}

int
spy_in_a_spy(const void *p)
{
	HMODULE m;

	if (!p || !GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				      (LPCWSTR)p, &m))
		return 0;
	return is_a_spy(m);
}

int
spy_copy_first_errno(unsigned copy, int errno_now)
{
	if (copy == 0 && __atomic_load_n(&first_errno_pending, __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&first_errno_pending, 0, __ATOMIC_ACQ_REL)) {
		__atomic_store_n(&spy_slot_slow[0].why[SPY_SLOW_ERRNO], 0, __ATOMIC_RELEASE);
		__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_ERRNO], 0, __ATOMIC_RELEASE);
		return spy_copies[0].lazy_errno;
	}
	return errno_now;
}

/* As copies.c's: the table from GetProcAddress, and the versions asked once, errno passed on to the program. */
void
spy_copy_fill(unsigned copy)
{
	struct spy_real_lib *lib = &spy_copies[copy];
	spy_fnptr found[_SPY_FN_COUNT];
	size_t version = 0;

	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		void *p = spy_dlsym(lib->handle, spy_fn_info[i].name);

		found[i] = spy_in_a_spy(p) ? NULL : (spy_fnptr)p;
	}
	if (found[_SPY_FN_cudnnGetVersion]) {
		errno = LAZY_UNTOUCHED;
		version = ((size_t (*)(void))found[_SPY_FN_cudnnGetVersion])();
		if (errno != LAZY_UNTOUCHED) {
			lib->lazy_errno = errno;
			__atomic_store_n(&first_errno_pending, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&spy_slot_slow[0].why[SPY_SLOW_ERRNO], 1, __ATOMIC_RELEASE);
			__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_ERRNO], 1, __ATOMIC_RELEASE);
		}
	}
	if (found[_SPY_FN_cudnnGetCudartVersion])
		lib->cudart = ((size_t (*)(void))found[_SPY_FN_cudnnGetCudartVersion])();
	lib->version = version;
	__atomic_store_n(&lib->major, version >= 10000 ? (int)(version / 10000) : (int)(version / 1000),
			 __ATOMIC_RELEASE);
	for (int i = 0; i < _SPY_FN_COUNT; i++)
		__atomic_store_n(&spy_copy_real[copy][i], found[i], __ATOMIC_RELEASE);
}

/* cuDNN calling its own exported names through this DLL (its sub-libraries import cudnn64_N.dll): the real one. */
spy_fnptr
spy_nested_real(struct spy_call *c, const void *caller)
{
	(void)caller;
	c->copy = 0;
	c->real = __atomic_load_n(&spy_copy_real[0][c->id], __ATOMIC_ACQUIRE);
	return c->real;
}

/* One copy: every exported call is copy 0's, and nothing sets SPY_SLOW_ROUTE. */
int
spy_route(const void *ra, unsigned id, spy_fnptr *raw)
{
	(void)ra;
	(void)id;
	*raw = NULL;
	return 0;
}

void
spy_route_recheck(void)
{
	__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_RECHECK], 0, __ATOMIC_SEQ_CST);
}

/* The volume and file id of a file: what tells this DLL's own file from another of the same name. */
static int
file_id(const wchar_t *path, BY_HANDLE_FILE_INFORMATION *fi)
{
	HANDLE h = CreateFileW(path, FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
	int ok;

	if (h == INVALID_HANDLE_VALUE)
		return -1;
	ok = GetFileInformationByHandle(h, fi);
	CloseHandle(h);
	return ok ? 0 : -1;
}

static int
is_self_file(const wchar_t *path)
{
	static BY_HANDLE_FILE_INFORMATION me;
	static int known;
	BY_HANDLE_FILE_INFORMATION fi;
	wchar_t mine[MAX_PATH];

	if (!known) {
		DWORD n = GetModuleFileNameW(self(), mine, MAX_PATH);

		if (n == 0 || n >= MAX_PATH || file_id(mine, &me) != 0)
			return 0;
		known = 1;
	}
	return file_id(path, &fi) == 0 && fi.dwVolumeSerialNumber == me.dwVolumeSerialNumber &&
	       fi.nFileIndexHigh == me.nFileIndexHigh && fi.nFileIndexLow == me.nFileIndexLow;
}

static void
take(HMODULE m, const char *how)
{
	wchar_t w[MAX_PATH];
	DWORD n = GetModuleFileNameW(m, w, MAX_PATH);

	spy_lib.handle = m;
	spy_lib.base = (void *)m;
	spy_lib.how = how;
	if (n == 0 || n >= MAX_PATH ||
	    !WideCharToMultiByte(CP_UTF8, 0, w, -1, spy_lib.path, sizeof(spy_lib.path), NULL, NULL))
		snprintf(spy_lib.path, sizeof(spy_lib.path), "?");
}

/* The file at `path` loaded, if it is a cuDNN (it has cudnnGetVersion) and no spy: 0; else -1 with why. */
static int
load_path(const wchar_t *path, const char *how, char *why, size_t whylen)
{
	DWORD attr = GetFileAttributesW(path), saved = GetLastError();
	HMODULE m;

	if (attr == INVALID_FILE_ATTRIBUTES || (attr & FILE_ATTRIBUTE_DIRECTORY)) {
		snprintf(why, whylen, "no such file");
		return -1;
	}
	if (is_self_file(path)) {
		snprintf(why, whylen, "it is this drop-in itself");
		return -1;
	}
	m = LoadLibraryExW(path, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
	if (!m) {
		snprintf(why, whylen, "LoadLibraryExW failed with error %lu", GetLastError());
		SetLastError(saved);
		return -1;
	}
	SetLastError(saved);
	if (is_a_spy(m) || !GetProcAddress(m, "cudnnGetVersion")) {
		snprintf(why, whylen, is_a_spy(m) ? "it is a build of cudnnspy" : "it has no cudnnGetVersion");
		FreeLibrary(m);
		return -1;
	}
	take(m, how);
	return 0;
}

static void
dll_name(wchar_t *out, size_t size)
{
	swprintf(out, size, L"cudnn64_%d.dll", spy_flavor.major);
}

static int
from_setting(void)
{
	wchar_t w[MAX_PATH], name[32];
	char why[160];
	DWORD attr;

	if (!MultiByteToWideChar(CP_ACP, 0, spy_config.library, -1, w, MAX_PATH)) {
		spy_log("CUDNNSPY_LIBRARY=%s: not a path; cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED",
			spy_config.library);
		return -1;
	}
	attr = GetFileAttributesW(w);
	if (attr != INVALID_FILE_ATTRIBUTES && (attr & FILE_ATTRIBUTE_DIRECTORY)) {
		size_t n = wcslen(w);

		dll_name(name, 32);
		swprintf(w + n, MAX_PATH - n, L"%ls%ls", n && (w[n - 1] == L'\\' || w[n - 1] == L'/') ? L"" : L"\\",
			 name);
	}
	if (load_path(w, "CUDNNSPY_LIBRARY", why, sizeof(why)) == 0)
		return 0;
	spy_log("CUDNNSPY_LIBRARY=%s: cannot use it: %s; not trying any other copy; cuDNN calls will return "
		"CUDNN_STATUS_NOT_INITIALIZED", spy_config.library, why);
	return -1;
}

/* A real cuDNN the program loaded itself (by full path, say), before its first call reached this DLL. */
static int
from_loaded(void)
{
	HMODULE mods[1024];
	DWORD need = 0;
	wchar_t want[32];

	dll_name(want, 32);
	if (!EnumProcessModules(GetCurrentProcess(), mods, sizeof(mods), &need))
		return -1;
	for (DWORD i = 0; i < need / sizeof(HMODULE) && i < 1024; i++) {
		wchar_t path[MAX_PATH];
		const wchar_t *b;
		DWORD n = GetModuleFileNameW(mods[i], path, MAX_PATH);

		if (n == 0 || n >= MAX_PATH || mods[i] == self())
			continue;
		b = wcsrchr(path, L'\\');
		b = b ? b + 1 : path;
		if (_wcsicmp(b, want) != 0 || is_a_spy(mods[i]) || !GetProcAddress(mods[i], "cudnnGetVersion"))
			continue;
		/* Its own reference: the program may free its one. */
		if (GetModuleHandleExW(0, path, &mods[i])) {
			take(mods[i], "loaded by the program");
			return 0;
		}
	}
	return -1;
}

static int
try_dir(const wchar_t *dir, const char *how, char *tried, size_t tsize)
{
	wchar_t path[MAX_PATH], name[32];
	char why[160];
	size_t n = wcslen(dir);

	if (!n)
		return -1;
	dll_name(name, 32);
	if (swprintf(path, MAX_PATH, L"%ls%ls%ls", dir, dir[n - 1] == L'\\' || dir[n - 1] == L'/' ? L"" : L"\\",
		     name) < 0)
		return -1;
	if (load_path(path, how, why, sizeof(why)) == 0)
		return 0;
	if (GetFileAttributesW(path) != INVALID_FILE_ATTRIBUTES) {
		size_t used = strlen(tried);

		snprintf(tried + used, tsize - used, "%s%ls (%s)", used ? ", " : "", path, why);
	}
	return -1;
}

/* The standard search order for a DLL a program imports (SafeDllSearchMode), without this DLL's own file. */
static int
from_search(char *tried, size_t tsize)
{
	wchar_t dir[MAX_PATH], *path, *p, *next;
	DWORD n;

	n = GetModuleFileNameW(NULL, dir, MAX_PATH);
	if (n && n < MAX_PATH) {
		wchar_t *s = wcsrchr(dir, L'\\');

		if (s) {
			*s = 0;
			if (try_dir(dir, "the program's directory", tried, tsize) == 0)
				return 0;
		}
	}
	n = GetSystemDirectoryW(dir, MAX_PATH);
	if (n && n < MAX_PATH && try_dir(dir, "the system directory", tried, tsize) == 0)
		return 0;
	n = GetWindowsDirectoryW(dir, MAX_PATH);
	if (n && n < MAX_PATH && try_dir(dir, "the Windows directory", tried, tsize) == 0)
		return 0;
	n = GetCurrentDirectoryW(MAX_PATH, dir);
	if (n && n < MAX_PATH && try_dir(dir, "the current directory", tried, tsize) == 0)
		return 0;
	n = GetEnvironmentVariableW(L"PATH", NULL, 0);
	if (!n || !(path = calloc(n + 1, sizeof(wchar_t))))
		return -1;
	GetEnvironmentVariableW(L"PATH", path, n + 1);
	for (p = path; p; p = next) {
		next = wcschr(p, L';');
		if (next)
			*next++ = 0;
		if (try_dir(p, "PATH", tried, tsize) == 0) {
			free(path);
			return 0;
		}
	}
	free(path);
	return -1;
}

int
spy_resolve(void)
{
	char tried[1024] = "";
	int rc;

	if (spy_config.library_refused) {
		spy_log("CUDNNSPY_LIBRARY is set but unusable (see above): not trying any other copy; "
			"cuDNN calls will return CUDNN_STATUS_NOT_INITIALIZED");
		rc = -1;
	} else if (spy_config.library[0]) {
		rc = from_setting();
	} else {
		rc = from_loaded();
		if (rc != 0)
			rc = from_search(tried, sizeof(tried));
		if (rc != 0)
			spy_log("no real cuDNN found (CUDNNSPY_LIBRARY unset; none loaded in the process; the search "
				"order has no cudnn64_%d.dll but this one%s%s); cuDNN calls will return "
				"CUDNN_STATUS_NOT_INITIALIZED", spy_flavor.major, tried[0] ? "; refused: " : "", tried);
	}
	if (rc != 0)
		return -1;
	spy_copy_fill(0);
	return 0;
}
