/*
 * What a call returns when there is no real function to call, and the lazy
 * resolution behind the jump stubs of undeclared names.
 */
#include "core.h"
#include "fastpath.h"
#include "init.h"

#include <string.h>

static const char missing_message[] =
	"cudnnspy: the real cuDNN is not available; see the cudnnspy line on stderr";

const char *
spy_fail_error_string(long status)
{
	const char *s = spy_status_name(status);

	return s ? s : "CUDNN_UNKNOWN_STATUS";
}

void
spy_fail_last_error(char *message, size_t max_size)
{
	if (!message || max_size == 0)
		return;
	strncpy(message, missing_message, max_size - 1);
	message[max_size - 1] = 0;
}

/* Their prototypes are unknown: the status is all a caller can get. */
static int
stub_missing(void)
{
	return spy_flavor.major == 8 ? 1 : 1001;
}

/* Called by the architecture's stub thunk with every argument register saved. */
spy_fnptr spy_stub_resolve(unsigned id);

spy_fnptr
spy_stub_resolve(unsigned id)
{
	spy_fnptr f = NULL;

	if (id < _SPY_FN_COUNT && spy_init() == 0) {
		spy_fork_hazard_check();
		f = __atomic_load_n(&spy_real[id], __ATOMIC_ACQUIRE);
	}
	return f ? f : (spy_fnptr)stub_missing;
}
