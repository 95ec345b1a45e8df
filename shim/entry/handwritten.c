/* The wrappers the generator skips (HANDWRITTEN in shim/gen/gen.py). */
#include "core.h"
#include "fastpath.h"
#include "g_prototypes.h"

/*
 * cuDNN clears its message when it is read. The spy reads it at each
 * failure for the record, so it hands the same text to the program, once,
 * exactly as cuDNN would have.
 */
void spy_hw_cudnnGetLastErrorString(unsigned copy, unsigned slot, const void *caller,
			       const spy_fnptr (*wrappers)[_SPY_FN_COUNT], char *message, size_t max_size);

/* The generator's entry points (every copy's) call this body. */
void
spy_hw_cudnnGetLastErrorString(unsigned copy, unsigned slot, const void *caller,
			       const spy_fnptr (*wrappers)[_SPY_FN_COUNT], char *message, size_t max_size)
{
	struct spy_call c;
	_spy_pfn_cudnnGetLastErrorString f =
		(_spy_pfn_cudnnGetLastErrorString)spy_call_begin(&c, _SPY_FN_cudnnGetLastErrorString, copy, slot, caller,
							   wrappers);

	if (!c.nested && spy_take_last_error(c.copy, message, max_size))
		;
	else if (f)
		f(message, max_size);
	else
		spy_fail_last_error(message, max_size);
	if (spy_call_end(&c, 0, copy)) {
		const union spy_arg a[2] = { { .p = message }, { .u = max_size } };

		spy_call_slow(&c, 0, a);
	}
}
