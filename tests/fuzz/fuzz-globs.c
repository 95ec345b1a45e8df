/*
 * Fuzz target: spy_apply_globs (shim/core/config.c), the glob lists of
 * CUDNNSPY_TRACE, CUDNNSPY_BACKTRACE and CUDNNSPY_SYNC. The bytes are the
 * list. Only the chosen bit is ever set, and a list that names one
 * function exactly flags that function.
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *globs = fuzz_string(data, size);

	memset(spy_fn_flags, 0, sizeof(spy_fn_flags));
	spy_apply_globs("CUDNNSPY_TRACE", globs, SPY_FN_TRACE);
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		FUZZ_ASSERT((spy_fn_flags[i] & ~SPY_FN_TRACE) == 0);
		if (strcmp(globs, spy_fn_info[i].name) == 0)
			FUZZ_ASSERT(spy_fn_flags[i] == SPY_FN_TRACE);
	}
	free(globs);
	return 0;
}
