/*
 * Linked to libcudnn.so.9, and loads each library named on the command line
 * with dlopen(RTLD_LOCAL) as a framework would, then makes a handle: the
 * spy's audit then sees every copy at once.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "g_prototypes.h"

int
main(int argc, char **argv)
{
	cudnnHandle_t h = NULL;
	cudnnStatus_t st;

	for (int i = 1; i < argc; i++) {
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
			printf("cannot load %s: %s\n", argv[i], dlerror());
			return 2;
		}
	}
	st = cudnnCreate(&h);
	printf("version %zu create %d\n", cudnnGetVersion(), (int)st);
	if (st == 0)
		cudnnDestroy(h);
	return 0;
}
