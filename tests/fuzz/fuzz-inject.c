/*
 * Fuzz target: spy_inject_init (shim/watch/inject.c), the CUDNNSPY_INJECT rules.
 * The bytes are the rule list. Then every function is asked a few times
 * whether to inject, as the wrappers would: a function gets a status only
 * when a rule flagged it, and never CUDNN_STATUS_SUCCESS (0).
 */
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "inject.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *spec = fuzz_string(data, size);

	memset(spy_fn_flags, 0, sizeof(spy_fn_flags));
	spy_inject_init(spec);
	for (unsigned id = 0; id < _SPY_FN_COUNT; id++) {
		for (int call = 0; call < 3; call++) {
			const char *rule = NULL;
			int st = spy_inject_decide(id, 9, &rule);

			if (st) {
				FUZZ_ASSERT(spy_fn_flags[id] & SPY_FN_INJECT);
				FUZZ_ASSERT(rule != NULL && memchr(rule, 0, 160) != NULL);
			}
			if (!(spy_fn_flags[id] & SPY_FN_INJECT))
				FUZZ_ASSERT(st == 0);
		}
	}
	free(spec);
	return 0;
}
