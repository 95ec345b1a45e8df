/*
 * A fake CUDA runtime (FAKE_CUDART) or driver (FAKE_DRIVER) library: just
 * the version queries, answering what the test sets in FAKECUDART_VERSION
 * or FAKECUDA_DRIVER.
 */
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static int
env_version(const char *name, int fallback)
{
	const char *v = getenv(name);

	return v ? atoi(v) : fallback;
}

#ifdef FAKE_CUDART
EXPORT int cudaRuntimeGetVersion(int *version);

int
cudaRuntimeGetVersion(int *version)
{
	*version = env_version("FAKECUDART_VERSION", 12080);
	return 0;
}
#endif

#ifdef FAKE_DRIVER
EXPORT int cuDriverGetVersion(int *version);

int
cuDriverGetVersion(int *version)
{
	*version = env_version("FAKECUDA_DRIVER", 12080);
	return 0;
}
#endif
