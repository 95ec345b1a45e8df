/*
 * Opens cuDNN itself, RTLD_LOCAL, and calls through dlsym(handle): the way
 * TensorFlow/XLA, JAX and cudnn-frontend's dynamic loading reach it.
 * usage: dlopen-client LIBRARY
 */
#include <dlfcn.h>
#include <stdio.h>

#include "g_prototypes.h"

int
main(int argc, char **argv)
{
	void *h = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	size_t (*get_version)(void);
	cudnnStatus_t (*create)(cudnnHandle_t *);
	const char *(*error_string)(cudnnStatus_t);
	cudnnHandle_t handle;
	void *missing;

	if (!h) {
		printf("dlopen failed: %s\n", dlerror());
		return 2;
	}
	*(void **)&get_version = dlsym(h, "cudnnGetVersion");
	*(void **)&create = dlsym(h, "cudnnCreate");
	*(void **)&error_string = dlsym(h, "cudnnGetErrorString");
	if (!get_version || !create || !error_string) {
		printf("dlsym failed\n");
		return 2;
	}
	printf("version %zu\n", get_version());
	printf("create %d\n", (int)create(&handle));
	printf("error string %s\n", error_string((cudnnStatus_t)2000));
	/* A name the library lacks stays missing, with dlerror set as usual. */
	dlerror();
	missing = dlsym(h, "cudnnNoSuchFunction");
	printf("missing %s, dlerror %s\n", missing ? "found" : "null", dlerror() ? "set" : "unset");
	return 0;
}
