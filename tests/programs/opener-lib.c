/*
 * A library that opens cuDNN by name with dlopen, as TensorFlow's does, and
 * has a DT_RUNPATH of $ORIGIN/bundled: the loader searches as the caller,
 * so without the spy the copy there answers. The same functions as
 * bundled-lib.c, so that bundled-main.c drives both.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((visibility("default"))) size_t bundled_version(void);
__attribute__((visibility("default"))) const char *bundled_error_string(int status);

static void *
lookup(const char *name)
{
	static void *h;

	if (!h)
		h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("cannot open libcudnn.so.9: %s\n", dlerror());
		exit(1);
	}
	return dlsym(h, name);
}

size_t
bundled_version(void)
{
	size_t (*fn)(void);

	*(void **)&fn = lookup("cudnnGetVersion");
	return fn ? fn() : 0;
}

const char *
bundled_error_string(int status)
{
	const char *(*fn)(int);

	*(void **)&fn = lookup("cudnnGetErrorString");
	return fn ? fn(status) : "(none)";
}
