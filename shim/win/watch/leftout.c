/*
 * The Linux-only parts, left out of the Windows build, each with why; nothing here pretends to do them.
 *  - Crash records (entry/crash.c): POSIX signals and ucontext; a Windows crash is a structured exception,
 *    which the drop-in does not hook (a vectored handler would see every first-chance exception cuDNN and
 *    CUDA raise and handle themselves).
 *  - GPU time and CUDNNSPY_SYNC (watch/gpu.c): they find libcudart through the loader's ELF scopes; the
 *    calls' host times are still measured.
 *  - Python frames (core/pyframes.c): they read CPython's thread state found through ELF symbols.
 */
#include "core.h"
#include "gpu.h"
#include "pyframes.h"

#include <string.h>

void
spy_crash_install(void)
{
}

void
spy_gpu_init(void)
{
	static int said;
	int asked = spy_config.gpu_time || spy_config.sync[0];

	for (int i = 0; i < _SPY_FN_COUNT; i++)
		spy_fn_flags[i] &= (unsigned char)~(SPY_FN_SYNC | SPY_FN_GPU_TIME);
	if (asked)
		spy_log_once(&said, "GPU times and CUDNNSPY_SYNC are not available in the Windows drop-in: host times only");
}

void
spy_gpu_pre(struct spy_call *c, const void *handle)
{
	(void)c;
	(void)handle;
}

int
spy_gpu_post(struct spy_call *c)
{
	(void)c;
	return 0;
}

void
spy_gpu_drain(void)
{
}

const char *
spy_cuda_error_name(int err)
{
	(void)err;
	return "cudaError";
}

void
spy_gpu_stats(struct spy_gpu_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->off = 1;
}

int
spy_py_capture(struct spy_pystack *s)
{
	s->n = 0;
	return 0;
}

void
spy_py_opened(const char *name)
{
	(void)name;
}

uint64_t
spy_py_hash(const struct spy_pystack *s)
{
	(void)s;
	return 0;
}

void
spy_py_json(struct spy_line *l, const struct spy_pystack *s)
{
	(void)s;
	spy_line_lit(l, "[]");
}

void
spy_py_text(struct spy_line *l, const struct spy_pystack *s)
{
	(void)l;
	(void)s;
}
