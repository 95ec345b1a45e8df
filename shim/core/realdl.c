/*
 * The loader's own dlopen, dlsym and dlclose, past the spy's hooks (the
 * preload library exports a dlopen, a dlsym and a dlclose of its own), the spy's own load
 * base, and which file names are a cuDNN dispatcher. A leaf: every part may
 * use it. Built like resolve.c, without sanitizer instrumentation:
 * sanitizer runtimes call dlsym while they start.
 */
#include "core.h"

#include <dlfcn.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym;

/* The loader's own NAME: the first definition past this library, of the versions glibc has given it. */
static void *
libdl_fn(const char *name)
{
	static const char *versions[] = { "GLIBC_2.34", "GLIBC_2.17", "GLIBC_2.2.5" };
	void *self = spy_self_base();

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
			void *p = dlvsym(pass == 0 ? RTLD_NEXT : RTLD_DEFAULT, name, versions[i]);
			Dl_info di;

			if (p && (!dladdr(p, &di) || di.dli_fbase != self))
				return p;
		}
	}
	return NULL;
}

static dlsym_fn
find_real_dlsym(void)
{
	return (dlsym_fn)libdl_fn("dlsym");
}

void *
spy_dlsym_real_fn(void)
{
	dlsym_fn f = __atomic_load_n(&real_dlsym, __ATOMIC_ACQUIRE);

	if (!f) {
		/* Racing threads find the same answer: no lock needed. */
		f = find_real_dlsym();
		__atomic_store_n(&real_dlsym, f, __ATOMIC_RELEASE);
	}
	return (void *)f;
}

void *
spy_dlopen(const char *name, int flags)
{
	static void *(*real)(const char *, int);

	/* The preload library exports a dlopen of its own: the spy's own loads must not go through it. */
	if (!real)
		*(void **)&real = libdl_fn("dlopen");
	return real ? real(name, flags) : NULL;
}

int
spy_dlclose(void *handle)
{
	static int (*real)(void *);

	/* The preload library exports a dlclose of its own (dlsym.c), which gives back the spy's references. */
	if (!real)
		*(void **)&real = libdl_fn("dlclose");
	return real ? real(handle) : -1;
}

void *
spy_dlsym(void *handle, const char *name)
{
	dlsym_fn f = (dlsym_fn)spy_dlsym_real_fn();

	return f ? f(handle, name) : NULL;
}

void *
spy_self_base(void)
{
	static void *base;
	Dl_info di;

	if (!base && dladdr((void *)spy_self_base, &di))
		base = di.dli_fbase;
	return base;
}

int
spy_is_dispatcher_name(const char *base)
{
	/* libcudnn.so, libcudnn.so.9, libcudnn.so.9.19.0; not libcudnn_ops.so.9. */
	const char *p = base + 11;

	if (strncmp(base, "libcudnn.so", 11) != 0)
		return 0;
	while (*p) {
		if (*p++ != '.' || *p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return 1;
}
