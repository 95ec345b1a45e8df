/*
 * Loads cuDNN the ways frameworks do, by name and by path, one of them
 * failing, and prints what dlopen and dlerror said: the same with and
 * without the spy. usage: load-attempts PATH_OF_ANOTHER_CUDNN
 */
#include <dlfcn.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	void *byname = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	void *missing = dlopen("/nonexistent/dir/libcudnn.so.8", RTLD_NOW);
	const char *e = dlerror();
	char err[512];
	void *bypath;

	/* The text lives only until the next dl call. */
	snprintf(err, sizeof(err), "%s", e ? e : "(no dlerror)");
	bypath = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
	size_t (*v)(void) = NULL;

	printf("by name %s\n", byname ? "loaded" : "failed");
	printf("missing %s: %s\n", missing ? "loaded" : "failed", err);
	printf("by path %s\n", bypath ? "loaded" : "failed");
	if (byname)
		*(void **)&v = dlsym(byname, "cudnnGetVersion");
	printf("version %zu\n", v ? v() : 0);
	return 0;
}
