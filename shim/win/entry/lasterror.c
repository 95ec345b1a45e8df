/*
 * The program's Win32 last error, kept across the spy's own work as errno is: the fast path calls no Win32
 * function, and each of its calls out of line (the first call's resolution, the slow path's records and
 * stacks, the pre-call work) is wrapped here (ld --wrap, shim/win/meson.build), so that GetLastError() after
 * a cuDNN call says what cuDNN left, whatever the spy's LoadLibraryExW, CreateFileA or WriteFile said.
 */
#include <windows.h>

#include "fastpath.h"

void __real_spy_call_enter(struct spy_call *c, const void *caller, unsigned slot,
			   const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
void __real_spy_nested_enter(struct spy_call *c, const void *caller, unsigned copy, unsigned slot,
			     const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
spy_fnptr __real_spy_call_pre(struct spy_call *c, const void *handle);
void __real_spy_call_slow(struct spy_call *c, long status, const union spy_arg *args);
void __wrap_spy_call_enter(struct spy_call *c, const void *caller, unsigned slot,
			   const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
void __wrap_spy_nested_enter(struct spy_call *c, const void *caller, unsigned copy, unsigned slot,
			     const spy_fnptr (*wrappers)[_SPY_FN_COUNT]);
spy_fnptr __wrap_spy_call_pre(struct spy_call *c, const void *handle);
void __wrap_spy_call_slow(struct spy_call *c, long status, const union spy_arg *args);

void
__wrap_spy_call_enter(struct spy_call *c, const void *caller, unsigned slot, const spy_fnptr (*wrappers)[_SPY_FN_COUNT])
{
	DWORD saved = GetLastError();

	__real_spy_call_enter(c, caller, slot, wrappers);
	SetLastError(saved);
}

void
__wrap_spy_nested_enter(struct spy_call *c, const void *caller, unsigned copy, unsigned slot,
			const spy_fnptr (*wrappers)[_SPY_FN_COUNT])
{
	DWORD saved = GetLastError();

	__real_spy_nested_enter(c, caller, copy, slot, wrappers);
	SetLastError(saved);
}

spy_fnptr
__wrap_spy_call_pre(struct spy_call *c, const void *handle)
{
	DWORD saved = GetLastError();
	spy_fnptr f = __real_spy_call_pre(c, handle);

	SetLastError(saved);
	return f;
}

void
__wrap_spy_call_slow(struct spy_call *c, long status, const union spy_arg *args)
{
	DWORD saved = GetLastError();

	__real_spy_call_slow(c, status, args);
	SetLastError(saved);
}
