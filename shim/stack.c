/*
 * Call stacks for failure records. libunwind is opened at run time with
 * RTLD_LOCAL: linked normally, its _Unwind_* definitions would enter the
 * process's global scope ahead of libgcc_s and take over C++ exception
 * unwinding. Without it (the default build leaves it out) glibc's
 * backtrace() serves. libunwind keeps a pipe open to check addresses, on
 * the lowest free descriptors, and closes those numbers again when a read
 * from them fails: after a program closed every descriptor and opened its
 * own files, it closed the program's. Frames inside the spy itself are
 * dropped.
 */
#include "core.h"
#include "stack.h"
#include "symtab.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

typedef int (*unw_backtrace_fn)(void **, int);

static unw_backtrace_fn unw_backtrace_p;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
load_unwinder(void)
{
#ifdef SPY_HAVE_LIBUNWIND
	void *h = spy_dlopen(SPY_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h)
		unw_backtrace_p = (unw_backtrace_fn)spy_dlsym(h, "unw_backtrace");
#endif
}

int
spy_stack_capture(void **ips, int max)
{
	void *raw[SPY_STACK_MAX + 16];
	void *self = spy_self_base();
	int n, out = 0;

	pthread_once(&once, load_unwinder);
	n = unw_backtrace_p ? unw_backtrace_p(raw, SPY_STACK_MAX + 16) : backtrace(raw, SPY_STACK_MAX + 16);
	for (int i = 0; i < n && out < max; i++) {
		Dl_info di;

		if (dladdr(raw[i], &di) && di.dli_fbase == self)
			continue;
		/* A sanitizer's backtrace interceptor above the spy: the program's stack starts below it. */
		if (out == 0 && di.dli_fname && (strstr(di.dli_fname, "libasan") || strstr(di.dli_fname, "libtsan")))
			continue;
		ips[out++] = raw[i];
	}
	return out;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * The frame's function: the exported name dladdr has, else the module's own
 * symbol table. A relative module name (the program, as it was started) is
 * read through /proc/self/exe when that is the same file: the program may
 * have changed directory since.
 */
static const char *
frame_name(const Dl_info *di, const void *ip, char *buf, size_t size)
{
	const char *file = di->dli_fname;
	struct stat a, b;

	if (di->dli_sname)
		return di->dli_sname;
	if (!file || !file[0])
		return NULL;
	if (file[0] != '/' && stat("/proc/self/exe", &a) == 0 && stat(file, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		file = "/proc/self/exe";
	/* A return address points after the call: one byte back is inside the caller. */
	return spy_symtab_name(file, (uint64_t)((uintptr_t)ip - 1 - (uintptr_t)di->dli_fbase), buf, size) ? buf : NULL;
}

void
spy_stack_json(struct spy_line *l, void *const *ips, int n)
{
	char name[256];

	spy_line_char(l, '[');
	for (int i = 0; i < n; i++) {
		Dl_info di;
		int ok = dladdr(ips[i], &di);

		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"module\":");
		spy_line_str(l, ok ? di.dli_fname : NULL);
		spy_line_lit(l, ",\"offset\":");
		/* Return addresses point after the call: one byte back names the calling line. */
		spy_line_hex(l, ok ? (uintptr_t)ips[i] - (uintptr_t)di.dli_fbase : (uintptr_t)ips[i]);
		spy_line_lit(l, ",\"symbol\":");
		spy_line_str(l, ok ? frame_name(&di, ips[i], name, sizeof(name)) : NULL);
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}

void
spy_stack_text(struct spy_line *l, void *const *ips, int n)
{
	char name[256];

	for (int i = 0; i < n; i++) {
		Dl_info di;
		const char *fn;

		if (i)
			spy_line_lit(l, " < ");
		if (!dladdr(ips[i], &di)) {
			spy_line_xdigits(l, (uintptr_t)ips[i]);
			continue;
		}
		fn = frame_name(&di, ips[i], name, sizeof(name));
		spy_line_raw(l, fn ? fn : "?");
		spy_line_lit(l, " (");
		spy_line_raw(l, di.dli_fname ? base_name(di.dli_fname) : "?");
		spy_line_char(l, '+');
		spy_line_xdigits(l, (uintptr_t)ips[i] - (uintptr_t)di.dli_fbase);
		spy_line_char(l, ')');
	}
}
