/*
 * A fake CUDA runtime (FAKE_CUDART) or driver (FAKE_DRIVER): version
 * queries, and for the runtime just enough of events, streams, capture and
 * the error state for the spy's GPU timing and synchronizing mode to be
 * tested without a GPU. Environment knobs:
 *   FAKECUDART_VERSION, FAKECUDA_DRIVER   versions to report
 *   FAKECUDA_TICK_NS      device time between two event records (250000)
 *   FAKECUDA_NOT_READY    queries of an event answered "not ready" first (0)
 *   FAKECUDA_CAPTURING    1: every stream is being captured
 *   FAKECUDA_EVENT_FAIL   1: cudaEventRecord fails (and sets the last error)
 *   FAKECUDA_ASYNC_ERROR_AT  the Nth kernel "launch" faults (700, sticky)
 * The fake cuDNN calls fakecuda_launch() for each function that enqueues work.
 * Device memory is host memory, 256-byte aligned as cudaMalloc's is, so that
 * the repros of cudnnspy repro (docs/repro.md) run here with the offsets
 * they reproduce:
 *   FAKECUDA_MALLOC_FAIL  1: cudaMalloc fails with 2 (out of memory)
 */
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int
env_int(const char *name, int fallback)
{
	const char *v = getenv(name);

	return v ? atoi(v) : fallback;
}

#ifdef FAKE_CUDART
struct fake_event {
	long long t;
	int queries;
};

static long long device_clock;
static int last_error, sticky_error, pending_fault, launches;

EXPORT int cudaRuntimeGetVersion(int *version);
EXPORT int cudaEventCreateWithFlags(struct fake_event **e, unsigned flags);
EXPORT int cudaEventRecord(struct fake_event *e, void *stream);
EXPORT int cudaEventQuery(struct fake_event *e);
EXPORT int cudaEventSynchronize(struct fake_event *e);
EXPORT int cudaEventElapsedTime(float *ms, struct fake_event *a, struct fake_event *b);
EXPORT int cudaEventDestroy(struct fake_event *e);
EXPORT int cudaStreamIsCapturing(void *stream, int *status);
EXPORT int cudaStreamSynchronize(void *stream);
EXPORT int cudaPeekAtLastError(void);
EXPORT int cudaGetLastError(void);
EXPORT const char *cudaGetErrorName(int err);
EXPORT int cudaSetDevice(int device);
EXPORT int cudaGetDevice(int *device);
EXPORT int cudaDeviceGetAttribute(int *value, int attr, int device);
EXPORT int cudaMalloc(void **ptr, size_t size);
EXPORT int cudaFree(void *ptr);
EXPORT int cudaMemset(void *ptr, int value, size_t count);
EXPORT int cudaMemcpy(void *dst, const void *src, size_t count, int kind);
EXPORT int cudaDeviceSynchronize(void);
EXPORT int cudaEventCreate(struct fake_event **e);
EXPORT const char *cudaGetErrorString(int err);
EXPORT void fakecuda_launch(void);
EXPORT int fakecuda_event_records(void);

static int records;

static int
fail(int err)
{
	if (!sticky_error)
		last_error = err;
	return err;
}

int
cudaRuntimeGetVersion(int *version)
{
	*version = env_int("FAKECUDART_VERSION", 12080);
	return 0;
}

int
cudaEventCreateWithFlags(struct fake_event **e, unsigned flags)
{
	(void)flags;
	*e = calloc(1, sizeof(**e));
	return *e ? 0 : fail(2);
}

int
cudaEventRecord(struct fake_event *e, void *stream)
{
	(void)stream;
	if (env_int("FAKECUDA_EVENT_FAIL", 0))
		return fail(400);
	records++;
	device_clock += env_int("FAKECUDA_TICK_NS", 250000);
	e->t = device_clock;
	e->queries = 0;
	return 0;
}

int
cudaEventQuery(struct fake_event *e)
{
	/* Not ready is not an error: it never becomes the last error. */
	return e->queries++ < env_int("FAKECUDA_NOT_READY", 0) ? 600 : 0;
}

int
cudaEventSynchronize(struct fake_event *e)
{
	(void)e;
	return 0;
}

int
cudaEventElapsedTime(float *ms, struct fake_event *a, struct fake_event *b)
{
	*ms = (float)((double)(b->t - a->t) / 1e6);
	return 0;
}

int
cudaEventDestroy(struct fake_event *e)
{
	free(e);
	return 0;
}

int
cudaStreamIsCapturing(void *stream, int *status)
{
	(void)stream;
	*status = env_int("FAKECUDA_CAPTURING", 0);
	return 0;
}

int
cudaStreamSynchronize(void *stream)
{
	(void)stream;
	if (pending_fault) {
		sticky_error = pending_fault;
		last_error = pending_fault;
		pending_fault = 0;
	}
	return sticky_error;
}

int
cudaPeekAtLastError(void)
{
	return sticky_error ? sticky_error : last_error;
}

int
cudaGetLastError(void)
{
	int e = sticky_error ? sticky_error : last_error;

	last_error = 0;
	return e;
}

const char *
cudaGetErrorName(int err)
{
	switch (err) {
	case 0:
		return "cudaSuccess";
	case 2:
		return "cudaErrorMemoryAllocation";
	case 101:
		return "cudaErrorInvalidDevice";
	case 400:
		return "cudaErrorInvalidResourceHandle";
	case 600:
		return "cudaErrorNotReady";
	case 700:
		return "cudaErrorIllegalAddress";
	}
	return "cudaErrorUnknown";
}

int
cudaSetDevice(int device)
{
	return device == 0 ? 0 : fail(101);
}

int
cudaGetDevice(int *device)
{
	*device = 0;
	return 0;
}

/* FAKECUDA_CC="MAJOR.MINOR" (default 9.0): attributes 75 and 76, the compute capability. */
int
cudaDeviceGetAttribute(int *value, int attr, int device)
{
	const char *cc = getenv("FAKECUDA_CC");
	const char *dot = cc ? strchr(cc, '.') : NULL;

	(void)device;
	if (attr == 75)
		*value = cc ? atoi(cc) : 9;
	else if (attr == 76)
		*value = dot ? atoi(dot + 1) : 0;
	else
		return fail(1);
	return 0;
}

int
cudaMalloc(void **ptr, size_t size)
{
	if (env_int("FAKECUDA_MALLOC_FAIL", 0))
		return fail(2);
	*ptr = aligned_alloc(256, (size + 255) / 256 * 256 + 256);
	return *ptr ? 0 : fail(2);
}

int
cudaFree(void *ptr)
{
	free(ptr);
	return 0;
}

int
cudaMemset(void *ptr, int value, size_t count)
{
	memset(ptr, value, count);
	return 0;
}

int
cudaMemcpy(void *dst, const void *src, size_t count, int kind)
{
	(void)kind;
	memmove(dst, src, count);
	return 0;
}

int
cudaDeviceSynchronize(void)
{
	return cudaStreamSynchronize(NULL);
}

int
cudaEventCreate(struct fake_event **e)
{
	return cudaEventCreateWithFlags(e, 0);
}

/* The name is all the fake knows to say. */
const char *
cudaGetErrorString(int err)
{
	return cudaGetErrorName(err);
}

void
fakecuda_launch(void)
{
	if (++launches == env_int("FAKECUDA_ASYNC_ERROR_AT", 0))
		pending_fault = 700;
}

int
fakecuda_event_records(void)
{
	return records;
}
#endif

#ifdef FAKE_DRIVER
EXPORT int cuDriverGetVersion(int *version);

int
cuDriverGetVersion(int *version)
{
	*version = env_int("FAKECUDA_DRIVER", 12080);
	return 0;
}
#endif
