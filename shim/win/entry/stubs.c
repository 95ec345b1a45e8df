/*
 * What an undeclared name's jump stub (g_stubs_win.S, stubs.S) reaches at its first call: the real
 * function, once the one-time resolution has run; without one, a function that answers
 * CUDNN_STATUS_NOT_INITIALIZED, as the declared wrappers do (their parameters are unknown: nothing else
 * can be said to the caller).
 */
#include <windows.h>

#include "core.h"
#include "init.h"

#include <errno.h>

spy_fnptr spy_win_stub_real(unsigned id);

static int
not_initialized(void)
{
	return spy_copy_major(0) == 8 ? 1 : 1001;
}

spy_fnptr
spy_win_stub_real(unsigned id)
{
	DWORD saved = GetLastError();
	int saved_errno = errno;
	spy_fnptr f;

	if (id >= _SPY_FN_COUNT)
		return (spy_fnptr)not_initialized;
	spy_init();
	f = __atomic_load_n(&spy_copy_real[0][id], __ATOMIC_ACQUIRE);
	errno = saved_errno;
	SetLastError(saved);
	return f ? f : (spy_fnptr)not_initialized;
}
