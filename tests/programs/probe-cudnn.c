/*
 * Probes for cuDNN the way a program that supports it optionally does:
 * dlsym(RTLD_DEFAULT) and dlsym(dlopen(NULL)). Not linked to cuDNN: under
 * the preload it must find none when the process has none (issue 15, item 22).
 */
#include <dlfcn.h>
#include <stdio.h>

int
main(void)
{
	void *self = dlopen(NULL, RTLD_NOW);
	void *a = dlsym(RTLD_DEFAULT, "cudnnGetVersion");
	void *b = self ? dlsym(self, "cudnnGetVersion") : NULL;

	printf("RTLD_DEFAULT: %s\nmain program: %s\n", a ? "found" : "none", b ? "found" : "none");
	return a || b ? 0 : 3;
}
