/*
 * Several cuDNN copies in one process (docs/architecture.md, "Several
 * copies"). Copy 0 is the one resolve.c finds for the exported definitions;
 * a dispatcher reached through dlsym(handle, "cudnn...") is registered here
 * at its first lookup and gets the next id, its own table of real functions
 * and its own wrappers (spy_copy_wrapper[id]), so that every call is
 * answered by the copy the program reached, as it would be without the spy.
 */
#include "core.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spy_real_lib spy_copies[SPY_MAX_COPIES];
spy_fnptr spy_copy_real[SPY_MAX_COPIES][_SPY_FN_COUNT];

/* Copies 1..nextra are registered; written under the lock, read without it. */
static unsigned nextra;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* What nested calls reach, per copy and function, found at the first such call. */
static spy_fnptr nested_real[SPY_MAX_COPIES][_SPY_FN_COUNT];

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

unsigned
spy_copy_count(void)
{
	return 1 + __atomic_load_n(&nextra, __ATOMIC_ACQUIRE);
}

int
spy_copy_major(unsigned copy)
{
	int major = copy < SPY_MAX_COPIES ? __atomic_load_n(&spy_copies[copy].major, __ATOMIC_RELAXED) : 0;

	return major == 8 || major == 9 ? major : spy_flavor.major;
}

/*
 * This library, or another build of the spy in the same process (both
 * drop-ins, when one library links libcudnn.so.8 and another
 * libcudnn.so.9): each stands in front of a real copy, and taking one for
 * the other's real functions sends calls back and forth forever.
 */
int
spy_in_a_spy(const void *p)
{
	Dl_info di, mi;
	void *h, *mark;
	int spy;

	if (!p || !dladdr(p, &di))
		return 0;
	if (di.dli_fbase == spy_self_base())
		return 1;
	if (!di.dli_fname || strncmp(base_of(di.dli_fname), "libcudnn", 8) != 0)
		return 0;
	h = spy_dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	/* Every build of the spy defines its public API; a real cuDNN does not. */
	mark = spy_dlsym(h, "cudnnspy_is_loaded");
	spy = mark && dladdr(mark, &mi) && mi.dli_fbase == di.dli_fbase;
	spy_dlclose(h);
	return spy;
}

/* No errno value is negative. */
#define LAZY_UNTOUCHED (-0x5e57)

union spy_slot_flags spy_slot_slow[SPY_MAX_COPIES + 1];
/* Per copy, 1 while its first-call errno waits: taken by exactly one call. */
static int first_errno_pending[SPY_MAX_COPIES];

/* Copy 0 is reached through the exported names and through its handle's wrappers: both slots wait. */
static void
first_errno_wait(unsigned copy, unsigned char on)
{
	__atomic_store_n(&spy_slot_slow[copy].why[SPY_SLOW_ERRNO], on, __ATOMIC_RELEASE);
	if (copy == 0)
		__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_ERRNO], on, __ATOMIC_RELEASE);
}

int
spy_copy_first_errno(unsigned copy, int errno_now)
{
	if (copy < SPY_MAX_COPIES && __atomic_load_n(&first_errno_pending[copy], __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&first_errno_pending[copy], 0, __ATOMIC_ACQ_REL)) {
		first_errno_wait(copy, 0);
		return spy_copies[copy].lazy_errno;
	}
	return errno_now;
}

void
spy_copy_fill(unsigned copy)
{
	struct spy_real_lib *lib = &spy_copies[copy];
	spy_fnptr *real = spy_copy_real[copy], found[_SPY_FN_COUNT];
	size_t version = 0;

	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		void *p = spy_dlsym(lib->handle, spy_fn_info[i].name);

		/* Paranoia: a handle's search never reaches the spy, but a copy must not either. */
		found[i] = spy_in_a_spy(p) ? NULL : (spy_fnptr)p;
	}
	if (found[_SPY_FN_cudnnGetVersion]) {
		/*
		 * The process's first call into a cuDNN runs its one-time initialization,
		 * which may set errno (9.19 sets it to 0, whatever it was). This is that
		 * call now, the spy's and not the program's: what it leaves goes to the
		 * program's first call (spy_copy_first_errno), which no longer runs it.
		 * A value no errno takes tells whether it wrote one at all.
		 */
		errno = LAZY_UNTOUCHED;
		version = ((size_t (*)(void))found[_SPY_FN_cudnnGetVersion])();
		if (errno != LAZY_UNTOUCHED) {
			lib->lazy_errno = errno;
			__atomic_store_n(&first_errno_pending[copy], 1, __ATOMIC_RELEASE);
			first_errno_wait(copy, 1);
		}
	}
	if (found[_SPY_FN_cudnnGetCudartVersion])
		lib->cudart = ((size_t (*)(void))found[_SPY_FN_cudnnGetCudartVersion])();
	lib->version = version;
	/*
	 * The major before the functions: a thread that finds a function (other
	 * threads call while copy 0 is being resolved) decodes in its numbering.
	 */
	__atomic_store_n(&lib->major, version >= 10000 ? (int)(version / 10000) : (int)(version / 1000),
			 __ATOMIC_RELEASE);
	for (int i = 0; i < _SPY_FN_COUNT; i++)
		__atomic_store_n(&real[i], found[i], __ATOMIC_RELEASE);
}

static void
copy_banner(unsigned k)
{
	const struct spy_real_lib *c = &spy_copies[k];

	if (!(spy_config.stderr_mask & SPY_STDERR_BANNER))
		return;
	spy_log("%s: copy %u: cuDNN %d.%d.%d (%zu) from %s [%s by %s]", spy_flavor.name, k, c->major,
		(int)(c->major >= 9 ? c->version / 100 % 100 : c->version / 100 % 10), (int)(c->version % 100),
		c->version, c->path, c->how, c->who[0] ? c->who : "?");
}

int
spy_copy_for(void *base, const char *fname, const void *caller, const char *how)
{
	static int full_said;
	struct spy_real_lib *c;
	Dl_info di;
	unsigned n, k;
	void *h;

	/* The caller ran spy_init() first: copy 0, the exported definitions' copy, is settled before any other. */
	if (spy_lib.handle && base == spy_lib.base)
		return 0;
	n = __atomic_load_n(&nextra, __ATOMIC_ACQUIRE);
	for (k = 1; k <= n; k++)
		if (spy_copies[k].base == base)
			return (int)k;
	pthread_mutex_lock(&lock);
	for (k = n + 1; k <= nextra; k++) {
		if (spy_copies[k].base == base) {
			pthread_mutex_unlock(&lock);
			return (int)k;
		}
	}
	k = nextra + 1;
	if (k >= SPY_MAX_COPIES) {
		pthread_mutex_unlock(&lock);
		spy_log_once(&full_said, "more than %d cuDNN copies answer calls in this process: %s and any later "
			     "copy are passed through unwatched (their calls are neither counted nor recorded)",
			     SPY_MAX_COPIES, fname);
		return -1;
	}
	h = spy_dlopen(fname, RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		pthread_mutex_unlock(&lock);
		return -1;
	}
	c = &spy_copies[k];
	memset(c, 0, sizeof(*c));
	c->handle = h;
	c->base = base;
	c->how = how;
	if (fname[0] != '/' || !realpath(fname, c->path))
		snprintf(c->path, sizeof(c->path), "%s", fname);
	snprintf(c->who, sizeof(c->who), "%s",
		 caller && dladdr(caller, &di) && di.dli_fname && di.dli_fname[0] ? base_of(di.dli_fname)
										   : program_invocation_short_name);
	spy_copy_fill(k);
	__atomic_store_n(&nextra, k, __ATOMIC_RELEASE);
	/* Two copies answer: the exported names now go where each caller's own scope goes (route.c). */
	__atomic_store_n(&spy_slot_slow[SPY_SLOT_EXPORTED].why[SPY_SLOW_ROUTE], 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	copy_banner(k);
	return (int)k;
}

unsigned spy_copy_gen = 1;

void
spy_copy_note_caller(int k, const char *caller)
{
	struct spy_real_lib *c;

	if (k < 0 || k >= SPY_MAX_COPIES || !caller || !caller[0])
		return;
	c = &spy_copies[k];
	pthread_mutex_lock(&lock);
	for (int i = 0; i < SPY_COPY_CALLERS; i++) {
		if (strncmp(c->callers[i], caller, sizeof(c->callers[i]) - 1) == 0)
			break;
		if (!c->callers[i][0]) {
			snprintf(c->callers[i], sizeof(c->callers[i]), "%s", caller);
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

int
spy_copy_closing(void *handle)
{
	unsigned n = spy_copy_count();

	for (unsigned k = 0; k < n && handle; k++) {
		if (spy_copies[k].handle != handle || spy_copies[k].closed)
			continue;
		/* Given back first: the program's own close may then be the last. */
		spy_dlclose(spy_copies[k].handle);
		return (int)k;
	}
	return -1;
}

struct still_mapped {
	void *base;
	char name[PATH_MAX];
	int found;
};

static int
still_mapped_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct still_mapped *m = arg;

	(void)size;
	if ((void *)info->dlpi_addr != m->base || !info->dlpi_name)
		return 0;
	snprintf(m->name, sizeof(m->name), "%s", info->dlpi_name);
	m->found = 1;
	return 1;
}

void *
spy_copy_closed(int k)
{
	struct spy_real_lib *c;
	struct still_mapped m;
	void *h = NULL, *gone;

	if (k < 0 || k >= SPY_MAX_COPIES)
		return NULL;
	c = &spy_copies[k];
	m = (struct still_mapped){ .base = c->base };
	gone = c->base;
	/* By the name the loader holds: a file replaced at that path is another object. */
	if (dl_iterate_phdr(still_mapped_cb, &m) && m.found)
		h = spy_dlopen(m.name, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		c->handle = h;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	c->closed = 1;
	c->handle = NULL;
	c->base = NULL;
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		__atomic_store_n(&spy_copy_real[k][i], NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&nested_real[k][i], NULL, __ATOMIC_RELEASE);
	}
	__atomic_add_fetch(&spy_copy_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return gone;
}

/*
 * A sub-library's call, without the spy, is bound as the loader binds it: the
 * global scope first (a copy linked by the program answers the references of
 * a copy opened by path with RTLD_LOCAL), then the caller's own dependencies
 * (libcudnn_cnn.so.9 needs libcudnn_ops.so.9). cuDNN tags its exports with
 * each library's SONAME, which the caller's reference carries as its version:
 * the definition in the caller's dependencies names that version.
 */
static spy_fnptr
nested_lookup(unsigned k, unsigned id, const void *caller)
{
	const char *name = spy_fn_info[id].name;
	struct link_map *lm = NULL;
	Dl_info di;
	void *local = NULL, *global = NULL;

	/* The caller's link map is its dlopen handle; another build of the spy is no part of a copy. */
	if (caller && dladdr1(caller, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm && di.dli_fname &&
	    strncmp(base_of(di.dli_fname), "libcudnn", 8) == 0 && !spy_in_a_spy(caller))
		local = spy_dlsym(lm, name);
	if (spy_in_a_spy(local))
		local = NULL;
	if (local && dladdr(local, &di) && di.dli_fname) {
		global = dlvsym(RTLD_NEXT, name, base_of(di.dli_fname));
		if (spy_in_a_spy(global))
			global = NULL;
	}
	if (global)
		return (spy_fnptr)global;
	if (local)
		return (spy_fnptr)local;
	return __atomic_load_n(&spy_copy_real[k][id], __ATOMIC_ACQUIRE);
}

spy_fnptr
spy_nested_real(struct spy_call *c, const void *caller)
{
	unsigned k = spy_tls.copy;
	spy_fnptr f = __atomic_load_n(&nested_real[k][c->id], __ATOMIC_ACQUIRE);

	c->copy = k;
	if (!f && spy_resolved()) {
		int saved = errno;

		f = nested_lookup(k, c->id, caller);
		__atomic_store_n(&nested_real[k][c->id], f, __ATOMIC_RELEASE);
		errno = saved;
	}
	if (f)
		c->real = f;
	else
		c->real = __atomic_load_n(&spy_copy_real[k][c->id], __ATOMIC_ACQUIRE);
	return c->real;
}
