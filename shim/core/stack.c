/*
 * Call stacks for failure records. libunwind is opened at run time with
 * RTLD_LOCAL: linked normally, its _Unwind_* definitions would enter the
 * process's global scope ahead of libgcc_s and take over C++ exception
 * unwinding. Without it (the default build leaves it out) glibc's
 * backtrace() serves. libunwind keeps a pipe open to check addresses, on
 * the lowest free descriptors, and closes those numbers again when a read
 * from them fails: after a program closed every descriptor and opened its
 * own files, it closed the program's. Frames inside the spy itself are
 * dropped. Each frame's module comes from the map modules.c keeps, and its
 * function from the module file's symbol table (symtab.c): dladdr, which
 * searches the object's whole dynamic symbol table for every frame, only
 * when the map cannot answer.
 */
#include "core.h"
#include "modules.h"
#include "stack.h"
#include "symtab.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The modules of N frames: from the map, else from dladdr frame by frame. */
static void
modules_of(void *const *ips, int n, struct spy_module *mods)
{
	if (spy_modules_find(ips, n, mods) == 0)
		return;
	for (int i = 0; i < n; i++) {
		Dl_info di;

		mods[i].base = 0;
		mods[i].name = NULL;
		if (dladdr(ips[i], &di)) {
			mods[i].base = (uintptr_t)di.dli_fbase;
			mods[i].name = di.dli_fname;
		}
	}
}

int
spy_stack_capture(void **ips, int max)
{
	void *raw[SPY_STACK_MAX + 16];
	struct spy_module mods[SPY_STACK_MAX + 16];
	uintptr_t self = (uintptr_t)spy_self_base();
	int n, out = 0;

	pthread_once(&once, load_unwinder);
	n = unw_backtrace_p ? unw_backtrace_p(raw, SPY_STACK_MAX + 16) : backtrace(raw, SPY_STACK_MAX + 16);
	modules_of(raw, n, mods);
	for (int i = 0; i < n && out < max; i++) {
		if (mods[i].name && mods[i].base == self)
			continue;
		/* A sanitizer's backtrace interceptor above the spy: the program's stack starts below it. */
		if (out == 0 && mods[i].name && (strstr(mods[i].name, "libasan") || strstr(mods[i].name, "libtsan")))
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
 * The frame's function, from the module file's symbol table (.symtab, else
 * .dynsym); from dladdr when the file has neither or cannot be read. A
 * relative module name (the program, as it was started) is read through
 * /proc/self/exe when that is the same file: the program may have changed
 * directory since.
 */
static const char *
frame_file(const char *file)
{
	/* Asked once per name (the map's names stay put): two stats a frame cost more than the rest of a record. */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static const char *asked;
	static int is_exe;
	struct stat a, b;
	int exe;

	if (file[0] == '/')
		return file;
	pthread_mutex_lock(&lock);
	if (file != asked) {
		asked = file;
		is_exe = stat("/proc/self/exe", &a) == 0 && stat(file, &b) == 0 && a.st_dev == b.st_dev &&
			 a.st_ino == b.st_ino;
	}
	exe = is_exe;
	pthread_mutex_unlock(&lock);
	return exe ? "/proc/self/exe" : file;
}

const char *
spy_stack_symbol_file(const char *name, char *buf, size_t size)
{
	const char *file = frame_file(name);
	ssize_t n;

	if (strcmp(file, "/proc/self/exe") != 0)
		return file;
	/* Read later by another process: the program's own file, not the reader's. */
	n = readlink("/proc/self/exe", buf, size - 1);
	if (n <= 0)
		return name;
	buf[n] = 0;
	return buf;
}

static const char *
frame_name(const struct spy_module *m, const void *ip, char *buf, size_t size)
{
	const char *file = m->name;
	Dl_info di;
	int found;

	if (!file || !file[0])
		return NULL;
	file = frame_file(file);
	/* A return address points after the call: one byte back is inside the caller. */
	found = spy_symtab_name(file, (uint64_t)((uintptr_t)ip - 1 - m->base), buf, size);
	if (found > 0)
		return buf;
	if (found < 0 && dladdr(ip, &di) && di.dli_sname)
		return di.dli_sname;
	return NULL;
}

void
spy_stack_json(struct spy_line *l, void *const *ips, int n)
{
	char name[256];
	struct spy_module mods[SPY_STACK_MAX];

	if (n > SPY_STACK_MAX)
		n = SPY_STACK_MAX;
	modules_of(ips, n, mods);
	spy_line_char(l, '[');
	for (int i = 0; i < n; i++) {
		int ok = mods[i].name != NULL;

		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"module\":");
		spy_line_str(l, ok ? mods[i].name : NULL);
		spy_line_lit(l, ",\"offset\":");
		/* Return addresses point after the call: one byte back names the calling line. */
		spy_line_hex(l, ok ? (uintptr_t)ips[i] - mods[i].base : (uintptr_t)ips[i]);
		spy_line_lit(l, ",\"symbol\":");
		spy_line_str(l, ok ? frame_name(&mods[i], ips[i], name, sizeof(name)) : NULL);
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}

void
spy_stack_text(struct spy_line *l, void *const *ips, int n)
{
	char name[256];
	struct spy_module mods[SPY_STACK_MAX];

	if (n > SPY_STACK_MAX)
		n = SPY_STACK_MAX;
	modules_of(ips, n, mods);
	for (int i = 0; i < n; i++) {
		const char *fn;

		if (i)
			spy_line_lit(l, " < ");
		if (!mods[i].name) {
			spy_line_xdigits(l, (uintptr_t)ips[i]);
			continue;
		}
		fn = frame_name(&mods[i], ips[i], name, sizeof(name));
		/* A file or function named with a newline must not break the failure line. */
		spy_line_plain(l, fn ? fn : "?");
		spy_line_lit(l, " (");
		spy_line_plain(l, base_name(mods[i].name));
		spy_line_char(l, '+');
		spy_line_xdigits(l, (uintptr_t)ips[i] - mods[i].base);
		spy_line_char(l, ')');
	}
}
