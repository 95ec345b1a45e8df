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

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>

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

void
spy_stack_json(struct spy_line *l, void *const *ips, int n)
{
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
		spy_line_str(l, ok ? di.dli_sname : NULL);
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}

void
spy_stack_text(struct spy_line *l, void *const *ips, int n)
{
	for (int i = 0; i < n; i++) {
		Dl_info di;

		if (i)
			spy_line_lit(l, " < ");
		if (!dladdr(ips[i], &di)) {
			spy_line_xdigits(l, (uintptr_t)ips[i]);
			continue;
		}
		spy_line_raw(l, di.dli_sname ? di.dli_sname : "?");
		spy_line_lit(l, " (");
		spy_line_raw(l, di.dli_fname ? base_name(di.dli_fname) : "?");
		spy_line_char(l, '+');
		spy_line_xdigits(l, (uintptr_t)ips[i] - (uintptr_t)di.dli_fbase);
		spy_line_char(l, ')');
	}
}
