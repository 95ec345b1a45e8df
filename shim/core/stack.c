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
#include "cfi.h"
#include "core.h"
#include "modules.h"
#include "stack.h"
#include "symtab.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*unw_backtrace_fn)(void **, int);
/* libgcc's unwinder, which glibc's backtrace() also uses: asked for each frame's CFA too (see keep()). */
struct _Unwind_Context;
typedef int (*uw_trace_fn)(struct _Unwind_Context *, void *);
typedef int (*uw_backtrace_fn)(uw_trace_fn, void *);
typedef uintptr_t (*uw_get_fn)(struct _Unwind_Context *);
struct uw_bases {
	void *tbase, *dbase, *func;
};
typedef const void *(*uw_find_fde_fn)(void *, struct uw_bases *);

static unw_backtrace_fn unw_backtrace_p;
static uw_backtrace_fn uw_backtrace_p;
static uw_get_fn uw_get_ip_p, uw_get_cfa_p;
static uw_find_fde_fn uw_find_fde_p;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
load_unwinder(void)
{
#ifdef SPY_HAVE_LIBUNWIND
	void *h = spy_dlopen(SPY_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h)
		unw_backtrace_p = (unw_backtrace_fn)spy_dlsym(h, "unw_backtrace");
	if (unw_backtrace_p)
		return;
#endif
	/* What backtrace() would open on its first call anyway; local, so that nothing of it enters the global scope. */
	void *g = spy_dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!g)
		return;
	uw_get_ip_p = (uw_get_fn)spy_dlsym(g, "_Unwind_GetIP");
	uw_get_cfa_p = (uw_get_fn)spy_dlsym(g, "_Unwind_GetCFA");
	uw_find_fde_p = (uw_find_fde_fn)spy_dlsym(g, "_Unwind_Find_FDE");
	if (uw_get_ip_p && uw_get_cfa_p)
		uw_backtrace_p = (uw_backtrace_fn)spy_dlsym(g, "_Unwind_Backtrace");
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

#define RAW_MAX (SPY_STACK_MAX + 16)

/*
 * Stacks a thread has failed from before. Unwinding costs about 2,000 instructions a frame (the unwinder finds
 * each frame's FDE and runs its CFI), and a program that fails once usually fails again from the same line. On
 * x86-64 a call leaves its return address at its callee's CFA - 8, and the unwinder says each frame's CFA: a
 * stack seen before is the same stack again when spy_stack_capture's own CFA is the same and every return
 * address is still in its slot, provided each frame's CFA is its stack pointer plus a constant of its code
 * (cfi.c): then, from the innermost, a slot holding the return address it held means the same code, so the
 * same CFA for the next slot. A stack with a frame pointer, alloca or a realigned frame between is unwound
 * every time: such a frame could move the slots above it while stale return addresses of an earlier call
 * stay in the old ones.
 */
#define CACHE_WAYS 4
struct stack_way {
	uintptr_t cfa;			/* spy_stack_capture's CFA when kept; 0: empty */
	int nraw, nout, max;
	uintptr_t ip[RAW_MAX];		/* the unwinder's frames (0 is spy_stack_capture's own) */
	uintptr_t slot[RAW_MAX];	/* where frame i's return address lies */
	void *out[SPY_STACK_MAX];	/* what spy_stack_capture returned for it */
};
struct spy_stack_cache {
	unsigned life;			/* the spy_thread's life it belongs to */
	unsigned next;			/* the way the next new stack takes */
	int busy;			/* in use now: a signal handler's failure on this thread leaves it alone */
	struct stack_way way[CACHE_WAYS];
};

struct walk {
	int n;
	int keepable;
	uintptr_t ip[RAW_MAX], slot[RAW_MAX];
};

static int
one_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip, cfa;

	if (w->n >= RAW_MAX)
		return 5;	/* _URC_END_OF_STACK: enough */
	ip = uw_get_ip_p(ctx);
	if (!ip)
		return 5;
	cfa = uw_get_cfa_p(ctx);
	/* A signal frame, or code whose return address is elsewhere: this stack cannot be checked by its slots. */
	if (!cfa || *(const uintptr_t *)(cfa - sizeof(uintptr_t)) != ip)
		w->keepable = 0;
	w->ip[w->n] = ip;
	w->slot[w->n] = cfa - sizeof(uintptr_t);
	w->n++;
	return 0;
}

/*
 * Frame i's return address lies at the CFA of frame i - 1: frames 1 to n - 2 must each keep theirs at a
 * constant distance from the one inside it (cfi.c). The outermost needs not (the thread's start marks its
 * return address undefined).
 */
static int
plain_frames(const struct walk *w)
{
	if (!uw_find_fde_p)
		return 0;
	for (int i = 1; i < w->n - 1; i++) {
		struct uw_bases bases;

		/* A return address points after the call: one byte back is inside the caller. */
		if (!spy_cfi_plain(uw_find_fde_p((void *)(w->ip[i] - 1), &bases)))
			return 0;
	}
	return 1;
}

static struct spy_stack_cache *
cache_of(struct spy_thread *th)
{
	struct spy_stack_cache *c;

	if (!th)
		return NULL;
	c = th->stacks;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->life = th->life;
		th->stacks = c;
	}
	if (c->life != th->life) {
		memset(c, 0, sizeof(*c));
		c->life = th->life;
	}
	return c->busy ? NULL : c;
}

static int
seen(const struct spy_stack_cache *c, uintptr_t cfa, int max, void **ips)
{
	for (int k = 0; k < CACHE_WAYS; k++) {
		const struct stack_way *w = &c->way[k];
		int i;

		if (w->cfa != cfa || w->max != max)
			continue;
		/* Frame 0 is this function's call of the unwinder, not made now: the rest are live. */
		for (i = 1; i < w->nraw && *(const uintptr_t *)w->slot[i] == w->ip[i]; i++)
			;
		if (i < w->nraw)
			continue;
		memcpy(ips, w->out, (size_t)w->nout * sizeof(ips[0]));
		return w->nout;
	}
	return -1;
}

/* The spy's frames and a sanitizer's interceptor left out: the caller's stack. */
static int
filter(void *const *raw, int n, void **ips, int max)
{
	struct spy_module mods[RAW_MAX];
	uintptr_t self = (uintptr_t)spy_self_base();
	int out = 0;

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

/* Not inlined: its CFA is the key of what it keeps, and the unwinder's frame 1 must be its caller's. */
__attribute__((noinline)) int
spy_stack_capture(void **ips, int max)
{
	void *raw[RAW_MAX];
	uintptr_t cfa = (uintptr_t)__builtin_dwarf_cfa();
	struct spy_stack_cache *c;
	struct walk w;
	int n, out;

	if (max > SPY_STACK_MAX)
		max = SPY_STACK_MAX;
	pthread_once(&once, load_unwinder);
	if (!uw_backtrace_p) {
		n = unw_backtrace_p ? unw_backtrace_p(raw, RAW_MAX) : backtrace(raw, RAW_MAX);
		return filter(raw, n, ips, max);
	}
	c = cache_of(spy_tls.thread);
	if (c) {
		/* Read and written by this thread alone; busy keeps a signal handler's failure out of both. */
		c->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if ((out = seen(c, cfa, max, ips)) >= 0) {
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			c->busy = 0;
			return out;
		}
	}
	w.n = 0;
	w.keepable = 1;
	uw_backtrace_p(one_frame, &w);
	for (int i = 0; i < w.n; i++)
		raw[i] = (void *)w.ip[i];
	out = filter(raw, w.n, ips, max);
	if (c && w.keepable && w.n > 1 && w.slot[1] + sizeof(uintptr_t) == cfa && plain_frames(&w)) {
		struct stack_way *k = &c->way[c->next++ % CACHE_WAYS];

		k->nraw = w.n;
		k->nout = out;
		k->max = max;
		memcpy(k->ip, w.ip, (size_t)w.n * sizeof(w.ip[0]));
		memcpy(k->slot, w.slot, (size_t)w.n * sizeof(w.slot[0]));
		memcpy(k->out, ips, (size_t)out * sizeof(ips[0]));
		k->cfa = cfa;
	}
	if (c) {
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		c->busy = 0;
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
