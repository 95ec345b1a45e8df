/* The hand-written part of the fake cuDNN; g_fake.c has the rest. */
#include "fake-cudnn.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if FAKE_MAJOR == 8
#define FAKE_VERSION 8907
#define FAKE_CUDART 11080
#define NOT_INITIALIZED 1
#define BAD_PARAM 3
#else
#define FAKE_VERSION 91900
#define FAKE_CUDART 12080
#define NOT_INITIALIZED 1001
#define BAD_PARAM 2000
#endif

static int status_of[_SPY_FN_COUNT];
static unsigned long calls_of[_SPY_FN_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread char last_error[256];

static void
load_env(void)
{
	const char *s = getenv("FAKECUDNN_STATUS");
	char name[128];

	while (s && *s) {
		size_t len = strcspn(s, ",");
		const char *eq = memchr(s, '=', len);

		if (eq && (size_t)(eq - s) < sizeof(name)) {
			int id;

			memcpy(name, s, (size_t)(eq - s));
			name[eq - s] = 0;
			id = spy_fn_lookup(name);
			if (id >= 0)
				status_of[id] = atoi(eq + 1);
		}
		s += len;
		if (*s)
			s++;
	}
}

/* Work "enqueued" on the fake CUDA runtime, when the process has one with the hook. */
static void
launch(int id)
{
	static void (*hook)(void);
	static int looked;

	if (!(spy_fn_info[id].flags & SPY_FI_GPU))
		return;
	if (getenv("FAKECUDNN_SLEEP_US"))
		usleep((useconds_t)atoi(getenv("FAKECUDNN_SLEEP_US")));
	if (!looked) {
		*(void **)&hook = dlsym(RTLD_DEFAULT, "fakecuda_launch");
		looked = 1;
	}
	if (hook)
		hook();
}

cudnnStatus_t
fake_enter(int id)
{
	int st;

	pthread_once(&once, load_env);
	__atomic_add_fetch(&calls_of[id], 1, __ATOMIC_RELAXED);
	st = status_of[id];
	if (!st)
		launch(id);
	if (st && getenv("FAKECUDNN_MESSAGE"))
		snprintf(last_error, sizeof(last_error), "%s", getenv("FAKECUDNN_MESSAGE"));
	else if (st)
		snprintf(last_error, sizeof(last_error), "fake: %s failed with status %d",
			 spy_fn_info[id].name, st);
	return (cudnnStatus_t)st;
}

void *
fake_new_object(void)
{
	/* Distinct, never dereferenced by the program. */
	return calloc(1, 16);
}

FAKE_EXPORT void
fakecudnn_set_status(const char *name, int status)
{
	int id = spy_fn_lookup(name);

	pthread_once(&once, load_env);
	if (id >= 0)
		status_of[id] = status;
}

FAKE_EXPORT unsigned long
fakecudnn_calls(const char *name)
{
	int id = spy_fn_lookup(name);

	return id >= 0 ? __atomic_load_n(&calls_of[id], __ATOMIC_RELAXED) : 0;
}

FAKE_EXPORT size_t
cudnnGetVersion(void)
{
	const char *v = getenv("FAKECUDNN_VERSION");

	fake_enter(_SPY_FN_cudnnGetVersion);
	return v ? strtoul(v, NULL, 10) : FAKE_VERSION;
}

FAKE_EXPORT size_t
cudnnGetCudartVersion(void)
{
	fake_enter(_SPY_FN_cudnnGetCudartVersion);
	return FAKE_CUDART;
}

FAKE_EXPORT size_t
cudnnGetMaxDeviceVersion(void)
{
	fake_enter(_SPY_FN_cudnnGetMaxDeviceVersion);
	return 1200;
}

FAKE_EXPORT const char *
cudnnGetErrorString(cudnnStatus_t status)
{
	static __thread char buf[64];

	fake_enter(_SPY_FN_cudnnGetErrorString);
	snprintf(buf, sizeof(buf), "FAKE_STATUS_%d", (int)status);
	return buf;
}

FAKE_EXPORT void
cudnnGetLastErrorString(char *message, size_t max_size)
{
	fake_enter(_SPY_FN_cudnnGetLastErrorString);
	if (message && max_size) {
		snprintf(message, max_size, "%s", last_error);
		last_error[0] = 0;	/* read once, like the real one */
	}
}

FAKE_EXPORT cudnnStatus_t
cudnnGetProperty(libraryPropertyType type, int *value)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetProperty);

	if (st == 0 && value)
		*value = type == MAJOR_VERSION ? FAKE_MAJOR : type == MINOR_VERSION ? (FAKE_MAJOR == 8 ? 9 : 19) : 0;
	return st;
}

FAKE_EXPORT cudnnStatus_t
cudnnCreate(cudnnHandle_t *handle)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnCreate);

	if (st != 0)
		return st;
	if (!handle)
		return (cudnnStatus_t)BAD_PARAM;
	*handle = fake_new_object();
	return st;
}

FAKE_EXPORT cudnnStatus_t
cudnnDestroy(cudnnHandle_t handle)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnDestroy);

	if (st == 0 && !handle)
		return (cudnnStatus_t)BAD_PARAM;
	if (st == 0)
		free(handle);
	return st;
}

static cudnnCallback_t callback;
static void *callback_udata;
static unsigned callback_mask;
static cudaStream_t stream;

FAKE_EXPORT cudnnStatus_t
cudnnSetCallback(unsigned mask, void *udata, cudnnCallback_t fptr)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnSetCallback);

	if (st == 0) {
		callback_mask = mask;
		callback_udata = udata;
		callback = fptr;
	}
	return st;
}

FAKE_EXPORT cudnnStatus_t
cudnnGetCallback(unsigned *mask, void **udata, cudnnCallback_t *fptr)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetCallback);

	if (st == 0) {
		if (mask)
			*mask = callback_mask;
		if (udata)
			*udata = callback_udata;
		if (fptr)
			*fptr = callback;
	}
	return st;
}

FAKE_EXPORT cudnnStatus_t
cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
	(void)handle;
	stream = streamId;
	return fake_enter(_SPY_FN_cudnnSetStream);
}

FAKE_EXPORT cudnnStatus_t
cudnnGetStream(cudnnHandle_t handle, cudaStream_t *streamId)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetStream);

	(void)handle;
	if (st == 0 && streamId)
		*streamId = stream;
	return st;
}

/*
 * Like the real sub-libraries, the fake calls one of its own exported
 * functions by name: a preloaded spy sees that call as an internal one.
 */
FAKE_EXPORT cudnnStatus_t
cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnTensorFormat_t format,
			   cudnnDataType_t dataType, int n, int c, int h, int w)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnSetTensor4dDescriptor);

	(void)format;
	if (st != 0)
		return st;
	return cudnnSetTensor4dDescriptorEx(tensorDesc, dataType, n, c, h, w, c * h * w, h * w, w, 1) == 0
		       ? (cudnnStatus_t)0 : (cudnnStatus_t)BAD_PARAM;
}

static cudnnStatus_t
fill_fwd_perf(int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
	/* Ranked as cuDNN ranks them: fastest first. */
	static const int algos[] = { 1, 0, 6 };
	static const float times[] = { 0.5f, 0.9f, 2.5f };
	int n = requested < 3 ? requested : 3;

	for (int i = 0; i < n; i++) {
		memset(&perf[i], 0, sizeof(perf[i]));
		perf[i].algo = (cudnnConvolutionFwdAlgo_t)algos[i];
		perf[i].time = times[i];
		perf[i].memory = (size_t)i * 1024;
		perf[i].determinism = (cudnnDeterminism_t)1;
	}
	if (returned)
		*returned = n;
	return (cudnnStatus_t)0;
}

FAKE_EXPORT cudnnStatus_t
cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
				     const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
				     const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
				     int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnFindConvolutionForwardAlgorithm);

	(void)handle, (void)xDesc, (void)wDesc, (void)convDesc, (void)yDesc;
	return st ? st : fill_fwd_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

FAKE_EXPORT cudnnStatus_t
cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
				       const cudnnFilterDescriptor_t filterDesc,
				       const cudnnConvolutionDescriptor_t convDesc,
				       const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
				       int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetConvolutionForwardAlgorithm_v7);

	(void)handle, (void)srcDesc, (void)filterDesc, (void)convDesc, (void)destDesc;
	return st ? st : fill_fwd_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

/*
 * The names libcudnn.so.9 exports without a declaration: the spy forwards
 * them by jump stubs, blind to their arguments. The fake gives them a
 * signature with every kind of argument register, so a test can see that
 * all of them arrive untouched.
 */
#define FAKE_STUB(name, k) \
	FAKE_EXPORT double name(long a, long b, long c, long d, long e, long f, double x, double y); \
	FAKE_EXPORT double name(long a, long b, long c, long d, long e, long f, double x, double y) \
	{ \
		return (double)(k) * 1e6 + (double)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f) + x * 0.5 + y * 0.25; \
	}
FAKE_STUB(cudnnGetBackdoor, 1)
FAKE_STUB(cudnnSetBackdoor, 2)
FAKE_STUB(cudnnSetBackdoorEx, 3)
FAKE_STUB(cudnnGetRNNDropoutLocationsInternal, 4)
