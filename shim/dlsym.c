/*
 * Preload only: programs that open cuDNN themselves (TensorFlow/XLA/JAX,
 * cudnn-frontend, ctypes) call through dlsym(handle, "cudnn..."), which
 * LD_PRELOAD never sees. The exported dlsym (a trampoline, see
 * dlsym-trampoline.S) asks spy_dlsym_hook() first:
 *  - anything but a cudnn* name looked up through an explicit handle is
 *    passed on by a tail jump, so the real dlsym sees the caller's return
 *    address and RTLD_NEXT keeps its meaning for every other library;
 *  - a cudnn* function found in a cuDNN dispatcher gets the spy's wrapper,
 *    unless the caller is cuDNN itself (the dispatcher reaching its own
 *    sub-libraries must not loop back into the spy).
 */
#include "core.h"

#include <dlfcn.h>
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

void *
spy_dlsym_hook(void *handle, const char *name, void *caller)
{
	void *sym;
	Dl_info di;
	int id;

	if (!spy_real_dlsym_ptr) {
		spy_real_dlsym_ptr = spy_dlsym_real_fn();
		if (!spy_real_dlsym_ptr)
			return NULL;	/* no dlsym in the process: nothing better to say */
	}
	if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || !name || strncmp(name, "cudnn", 5) != 0)
		return &spy_dlsym_pass;
	id = spy_fn_lookup(name);
	if (id < 0)
		return &spy_dlsym_pass;
	sym = spy_dlsym(handle, name);
	if (!sym || sym == (void *)spy_wrapper[id])
		return sym;
	if (!dladdr(sym, &di) || !di.dli_fname || di.dli_fbase == spy_self_base() ||
	    !spy_is_dispatcher_name(base_of(di.dli_fname)))
		return sym;
	if (is_cudnn_object(caller))
		return sym;
	return (void *)spy_wrapper[id];
}
