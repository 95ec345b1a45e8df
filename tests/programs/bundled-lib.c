/*
 * A library that finds its own cuDNN, as a PyTorch wheel's libtorch_cuda.so
 * does: built twice, with a DT_RUNPATH and with a DT_RPATH of
 * $ORIGIN/bundled. Without the spy, the copy there answers.
 */
#include <stddef.h>

#include "g_prototypes.h"

__attribute__((visibility("default"))) size_t bundled_version(void);
__attribute__((visibility("default"))) const char *bundled_error_string(int status);

size_t
bundled_version(void)
{
	return cudnnGetVersion();
}

const char *
bundled_error_string(int status)
{
	return cudnnGetErrorString((cudnnStatus_t)status);
}
