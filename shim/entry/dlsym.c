/*
 * Preload only: programs that open cuDNN themselves (TensorFlow/XLA/JAX,
 * cudnn-frontend, ctypes) call through dlsym(handle, "cudnn..."), which
 * LD_PRELOAD never sees. The exported dlsym (a trampoline, see
 * dlsym-trampoline.S) asks spy_dlsym_hook() first:
 *  - anything but a cudnn* name looked up through an explicit handle is
 *    passed on by a tail jump, so the real dlsym sees the caller's return
 *    address and RTLD_NEXT keeps its meaning for every other library;
 *  - a cudnn* function found in a cuDNN dispatcher gets the spy's wrapper
 *    bound to that dispatcher's copy (copies.c), unless the caller is cuDNN
 *    itself (the dispatcher reaching its own sub-libraries must not loop
 *    back into the spy).
 */
#include "core.h"
#include "pyframes.h"
#include "init.h"
#include "audit.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

/* Returned to the trampoline to mean "jump to the real dlsym". */
char spy_dlsym_pass;
/* Read by the trampoline; set before spy_dlsym_hook returns &spy_dlsym_pass. */
void *spy_real_dlsym_ptr;

void *spy_dlsym_hook(void *handle, const char *name, void *caller);

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int
is_cudnn_object(const void *addr)
{
	Dl_info di;

	return addr && dladdr(addr, &di) && di.dli_fname &&
	       strncmp(base_of(di.dli_fname), "libcudnn", 8) == 0 && di.dli_fbase != spy_self_base();
}

/* The handle dlopen(NULL) returns: the main program's, whose search is the global scope. */
static void *
main_handle(void)
{
	static void *h;

	if (!h)
		h = spy_dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	return h;
}

/*
 * dlsym(RTLD_DEFAULT, "cudnn...") reaches the preload's own definition
 * first. Without the spy it would find the next definition, or none: a
 * program that probes for cuDNN must still find none when there is none
 * (the loader's message then names the spy, the one difference left).
 */
static void *
default_lookup(const char *name)
{
	void *sym = spy_dlsym(RTLD_DEFAULT, name);
	Dl_info di;

	if (!sym || !dladdr(sym, &di) || di.dli_fbase != spy_self_base())
		return &spy_dlsym_pass;
	/* The spy's definition stands in front of a real one, as it does for linked callers. */
	return spy_dlsym(RTLD_NEXT, name) ? sym : NULL;
}

void *
spy_dlsym_hook(void *handle, const char *name, void *caller)
{
	void *sym;
	Dl_info di;
	int id, copy;
	unsigned known;

	if (!spy_real_dlsym_ptr) {
		spy_real_dlsym_ptr = spy_dlsym_real_fn();
		if (!spy_real_dlsym_ptr)
			return NULL;	/* no dlsym in the process: nothing better to say */
	}
	if (!name || strncmp(name, "cudnn", 5) != 0)
		return &spy_dlsym_pass;
	if (handle == RTLD_DEFAULT)
		return spy_fn_lookup(name) >= 0 ? default_lookup(name) : &spy_dlsym_pass;
	if (handle == RTLD_NEXT)
		return &spy_dlsym_pass;
	id = spy_fn_lookup(name);
	if (id < 0)
		return &spy_dlsym_pass;
	sym = spy_dlsym(handle, name);
	if (!sym || dladdr(sym, &di) == 0 || !di.dli_fname)
		return sym;
	/*
	 * The program's own handle (dlopen(NULL)) searches the global scope, as
	 * RTLD_DEFAULT does: found only where a real cuDNN stands behind the spy.
	 * A handle to the spy's own file gets its definitions: that was asked for.
	 */
	if (di.dli_fbase == spy_self_base())
		return handle == main_handle() && !spy_dlsym(RTLD_NEXT, name) ? NULL : sym;
	if (!spy_is_dispatcher_name(base_of(di.dli_fname)))
		return sym;
	if (is_cudnn_object(caller))
		return sym;
	/* The wrapper bound to the copy behind this handle; past the last slot, the real function. */
	spy_init();	/* copy 0 first: the exported definitions' copy is settled before any other */
	known = spy_copy_count();
	copy = spy_copy_for(di.dli_fbase, di.dli_fname, caller, "reached through dlsym(handle)");
	/* A new copy: the audit names which copy each library record is, and who reaches which copy. */
	if (spy_copy_count() != known)
		spy_audit();
	if (copy < 0 || !spy_copy_wrapper[copy][id])
		return sym;
	return (void *)spy_copy_wrapper[copy][id];
}

/*
 * dlopen: the spy watches every attempt to load a cuDNN library, by the
 * program, a framework, or cuDNN loading its own sub-libraries. A name
 * without a slash must be searched from the caller's frame, so the hook
 * only notes the attempt and the real dlopen runs by a tail jump; whether it
 * loaded is seen at the next audit. A path is opened here, so that a
 * failure's dlerror text is known; on failure the real dlopen then runs
 * again from the caller's frame, so that the caller's dlerror() still has
 * its message.
 */
void *spy_real_dlopen_ptr;
void *spy_dlopen_hook(const char *name, int flags, void *caller);

static void *
find_real_dlopen(void)
{
	static const char *versions[] = { "GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5" };

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		void *p = dlvsym(RTLD_NEXT, "dlopen", versions[i]);

		if (p)
			return p;
	}
	return NULL;
}

void *
spy_dlopen_hook(const char *name, int flags, void *caller)
{
	void *(*real)(const char *, int);
	void *h;
	Dl_info di;
	const char *who = dladdr(caller, &di) && di.dli_fname ? di.dli_fname : NULL;

	if (!spy_real_dlopen_ptr) {
		spy_real_dlopen_ptr = find_real_dlopen();
		if (!spy_real_dlopen_ptr)
			return NULL;	/* no dlopen in the process: nothing better to say */
	}
	spy_py_opened(name);
	if (!name || strncmp(base_of(name), "libcudnn", 8) != 0)
		return &spy_dlsym_pass;
	if (!strchr(name, '/')) {
		spy_audit_load(name, flags, who, SPY_LOAD_PENDING, NULL);
		return &spy_dlsym_pass;
	}
	*(void **)&real = spy_real_dlopen_ptr;
	h = real(name, flags);
	if (h) {
		spy_audit_load(name, flags, who, SPY_LOAD_LOADED, NULL);
		return h;
	}
	spy_audit_load(name, flags, who, SPY_LOAD_FAILED, dlerror());
	return &spy_dlsym_pass;
}

/*
 * dlclose: the spy holds a reference on every copy it forwards to, so that a
 * call in flight never lands in an unmapped library. When the program
 * closes a copy, that reference is given back first; if the copy is then
 * gone, it is forgotten (copies.c), and a file opened again at its path,
 * replaced or not, is loaded afresh, as it would be without the spy.
 */
SPY_EXPORT int
dlclose(void *handle)
{
	int saved = errno, k, rc;

	k = spy_resolved() ? spy_copy_closing(handle) : -1;
	errno = saved;
	rc = spy_dlclose(handle);
	if (k >= 0) {
		void *gone;

		saved = errno;
		gone = spy_copy_closed(k);
		if (gone)
			spy_audit_unmapped(gone);
		errno = saved;
	}
	return rc;
}
