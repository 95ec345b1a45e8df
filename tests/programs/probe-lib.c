/*
 * Two copies of this library (PROBE_VALUE 1 and 2) are linked to
 * rtld-next, in that order. dlsym(RTLD_NEXT) from copy 1 must find copy 2:
 * a dlsym wrapper that called the real one from its own code would make
 * RTLD_NEXT relative to the wrapper and find copy 1 again.
 */
#include <dlfcn.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

__attribute__((visibility("default"))) int probe_value = PROBE_VALUE;

__attribute__((visibility("default"))) int CAT(probe_next_from_, PROBE_VALUE)(void);

int
CAT(probe_next_from_, PROBE_VALUE)(void)
{
	int *next = dlsym(RTLD_NEXT, "probe_value");

	return next ? *next : -1;
}
