/* The hand-written part of the fake cuDNN; g_fake.c has the rest. */
#include "fake-cudnn.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FAKE_VERSION may come from the build: a second copy that answers differently. */
#if FAKE_MAJOR == 8
#ifndef FAKE_VERSION
#define FAKE_VERSION 8907
#endif
#define FAKE_CUDART 11080
#define NOT_INITIALIZED 1
#define BAD_PARAM 3
#define NOT_SUPPORTED 9
#else
#ifndef FAKE_VERSION
#define FAKE_VERSION 91900
#endif
#define FAKE_CUDART 12080
#define NOT_INITIALIZED 1001
#define BAD_PARAM 2000
#define NOT_SUPPORTED 3000
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

	errno = 0;

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

	/*
	 * As cuDNN 9.19 does at the first call of a process, whichever function it is: its one-time
	 * initialization leaves errno 0 (errno-kept compares the program with and without the spy).
	 */
	pthread_once(&once, load_env);
	/* As a dispatcher without its sub-libraries does, at its first call. */
	if (getenv("FAKECUDNN_ABORT")) {
		fprintf(stderr, "Invalid handle. Cannot load symbol %s\n", spy_fn_info[id].name);
		abort();
	}
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

/*
 * FAKECUDNN_VERSION, else a file "fakecudnn-version" beside the library: each
 * copy of the fake in its own directory can then say which one it is, in a
 * process with several.
 */
static size_t
version_beside_me(void)
{
	static size_t version;
	size_t known = __atomic_load_n(&version, __ATOMIC_ACQUIRE);
	Dl_info di;
	char path[4096], text[32] = "";
	const char *slash;
	FILE *f;
	int saved = errno;

	/* Threads may ask at once: each finds the same answer, published atomically. */
	if (known)
		return known;
	if (!dladdr((void *)version_beside_me, &di) || !di.dli_fname || !(slash = strrchr(di.dli_fname, '/')))
		return FAKE_VERSION;
	snprintf(path, sizeof(path), "%.*s/fakecudnn-version", (int)(slash - di.dli_fname), di.dli_fname);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(text, sizeof(text), f))
			text[0] = 0;
		fclose(f);
	}
	known = text[0] ? strtoul(text, NULL, 10) : FAKE_VERSION;
	__atomic_store_n(&version, known, __ATOMIC_RELEASE);
	/* The file is the fake's own business: cuDNN's GetVersion leaves errno alone after its first call. */
	errno = saved;
	return known;
}

FAKE_EXPORT size_t
cudnnGetVersion(void)
{
	const char *v = getenv("FAKECUDNN_VERSION");

	fake_enter(_SPY_FN_cudnnGetVersion);
	return v ? strtoul(v, NULL, 10) : version_beside_me();
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

/* Ranked results for the backward searches, in the same shape as the forward ones. */
#define FAKE_FILL_PERF(name, type, algo_type, a0, a1, a2) \
	static cudnnStatus_t \
	name(int requested, int *returned, type *perf) \
	{ \
		static const int algos[] = { a0, a1, a2 }; \
		static const float times[] = { 0.7f, 1.1f, 3.0f }; \
		int n = requested < 3 ? requested : 3; \
 \
		for (int i = 0; i < n; i++) { \
			memset(&perf[i], 0, sizeof(perf[i])); \
			perf[i].algo = (algo_type)algos[i]; \
			perf[i].time = times[i]; \
			perf[i].memory = (size_t)(i + 1) * 2048; \
			perf[i].determinism = (cudnnDeterminism_t)(i != 1); \
			perf[i].mathType = (cudnnMathType_t)(i == 0); \
		} \
		if (returned) \
			*returned = n; \
		return (cudnnStatus_t)0; \
	}
FAKE_FILL_PERF(fill_bwd_data_perf, cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t, 1, 0, 5)
FAKE_FILL_PERF(fill_bwd_filter_perf, cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t, 3, 1, 0)

FAKE_EXPORT cudnnStatus_t
cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
					  const cudnnTensorDescriptor_t dyDesc,
					  const cudnnConvolutionDescriptor_t convDesc,
					  const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
					  int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnFindConvolutionBackwardDataAlgorithm);

	(void)handle, (void)wDesc, (void)dyDesc, (void)convDesc, (void)dxDesc;
	return st ? st : fill_bwd_data_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

FAKE_EXPORT cudnnStatus_t
cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
					    const cudnnTensorDescriptor_t diffDesc,
					    const cudnnConvolutionDescriptor_t convDesc,
					    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
					    int *returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetConvolutionBackwardDataAlgorithm_v7);

	(void)handle, (void)filterDesc, (void)diffDesc, (void)convDesc, (void)gradDesc;
	return st ? st : fill_bwd_data_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

FAKE_EXPORT cudnnStatus_t
cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
					    const cudnnTensorDescriptor_t dyDesc,
					    const cudnnConvolutionDescriptor_t convDesc,
					    const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
					    int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnFindConvolutionBackwardFilterAlgorithm);

	(void)handle, (void)xDesc, (void)dyDesc, (void)convDesc, (void)dwDesc;
	return st ? st : fill_bwd_filter_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

FAKE_EXPORT cudnnStatus_t
cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
					      const cudnnTensorDescriptor_t diffDesc,
					      const cudnnConvolutionDescriptor_t convDesc,
					      const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
					      int *returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7);

	(void)handle, (void)srcDesc, (void)diffDesc, (void)convDesc, (void)gradDesc;
	return st ? st : fill_bwd_filter_perf(requestedAlgoCount, returnedAlgoCount, perfResults);
}

/* What the forward algorithms need, as the forward search says (its ranks 0, 1, 2: algorithms 1, 0, 6). */
FAKE_EXPORT cudnnStatus_t
cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
					const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
					const cudnnTensorDescriptor_t yDesc, cudnnConvolutionFwdAlgo_t algo,
					size_t *sizeInBytes)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnGetConvolutionForwardWorkspaceSize);

	(void)handle, (void)xDesc, (void)wDesc, (void)convDesc, (void)yDesc;
	if (st == 0 && sizeInBytes)
		*sizeInBytes = algo == 1 ? 0 : algo == 0 ? 1024 : algo == 6 ? 2048 : 4096;
	return st;
}

/*
 * The graph API, enough to build, rank, plan and execute: each descriptor
 * keeps the first element of every attribute set on it. A heuristics query
 * fills the program's engine configs with engines 12, 0 and 7 (with knobs);
 * reading a config's engine or knobs copies them into the program's own
 * descriptors, as cuDNN does. A plan says its workspace size and its JSON.
 */
#define FAKE_BE_MAGIC 0x66616b65
#define FAKE_BE_ATTRS 32

struct fake_be {
	int magic, type, n;
	struct {
		int name;
		int64_t v;
		void *p;
	} a[FAKE_BE_ATTRS];
	struct fake_be *engine;	/* configs filled by a heuristics query */
	int nknobs;
	struct fake_be *knobs[4];
};

static struct fake_be *
fake_be(void *d)
{
	struct fake_be *b = d;

	return b && b->magic == FAKE_BE_MAGIC ? b : NULL;
}

static void
fake_be_set(struct fake_be *b, int name, int64_t v, void *p)
{
	int i = 0;

	while (i < b->n && b->a[i].name != name)
		i++;
	if (i == FAKE_BE_ATTRS)
		return;
	if (i == b->n)
		b->n++;
	b->a[i].name = name;
	b->a[i].v = v;
	b->a[i].p = p;
}

static int
fake_be_get(const struct fake_be *b, int name, int64_t *v, void **p)
{
	for (int i = 0; b && i < b->n; i++)
		if (b->a[i].name == name) {
			*v = b->a[i].v;
			*p = b->a[i].p;
			return 1;
		}
	return 0;
}

static struct fake_be *
fake_be_new(int type)
{
	struct fake_be *b = calloc(1, sizeof(*b));

	if (b) {
		b->magic = FAKE_BE_MAGIC;
		b->type = type;
	}
	return b;
}

FAKE_EXPORT cudnnStatus_t
cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType, cudnnBackendDescriptor_t *descriptor)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnBackendCreateDescriptor);

	if (st == 0 && descriptor)
		*descriptor = fake_be_new((int)descriptorType);
	return st;
}

FAKE_EXPORT cudnnStatus_t
cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t attributeName,
			 cudnnBackendAttributeType_t attributeType, int64_t elementCount,
			 const void *arrayOfElements)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnBackendSetAttribute);
	struct fake_be *b = fake_be(descriptor);
	int64_t v = 0;
	void *p = NULL;

	if (st != 0)
		return st;
	if (!b || elementCount < 0 || (elementCount > 0 && !arrayOfElements))
		return (cudnnStatus_t)BAD_PARAM;
	if (elementCount > 0) {
		switch (attributeType) {
		case CUDNN_TYPE_INT64:
			v = *(const int64_t *)arrayOfElements;
			break;
		case CUDNN_TYPE_BACKEND_DESCRIPTOR:
		case CUDNN_TYPE_HANDLE:
		case CUDNN_TYPE_VOID_PTR:
			p = *(void *const *)arrayOfElements;
			break;
		case CUDNN_TYPE_FLOAT:
		case CUDNN_TYPE_DOUBLE:
		case CUDNN_TYPE_BOOLEAN:
		case CUDNN_TYPE_CHAR:
		case CUDNN_TYPE_FRACTION:
			break;
		default:
			v = *(const int32_t *)arrayOfElements;	/* the enums */
			break;
		}
	}
	fake_be_set(b, (int)attributeName, v, p);
	return st;
}

/* Copies a filled descriptor into one the program created. */
static void
fake_be_copy(struct fake_be *to, const struct fake_be *from)
{
	if (to && from) {
		int magic = to->magic, type = to->type;

		memcpy(to, from, sizeof(*to));
		to->magic = magic;
		to->type = type;
	}
}

/* Whether `index` is in the comma-separated list of environment variable `var` ("12,0"). */
static int
fake_listed(const char *var, int64_t index)
{
	const char *list = getenv(var);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (*p >= '0' && *p <= '9' && atoll(p) == index)
			return 1;
	return 0;
}

static int
fake_plan_engine(const struct fake_be *plan, int64_t *index)
{
	int64_t v;
	void *p = NULL;
	const struct fake_be *cfg, *eng;

	if (!fake_be_get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, &v, &p) || !(cfg = fake_be(p)))
		return 0;
	eng = cfg->engine;
	if (!eng && fake_be_get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, &v, &p))
		eng = fake_be(p);
	return eng && fake_be_get(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, index, &p);
}

FAKE_EXPORT cudnnStatus_t
cudnnBackendGetAttribute(const cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t attributeName,
			 cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
			 int64_t *elementCount, void *arrayOfElements)
{
	static const int64_t engines[] = { 12, 0, 7 };
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnBackendGetAttribute);
	struct fake_be *b = fake_be(descriptor);
	void **out = arrayOfElements;
	int64_t n = 0, v, none;
	void *p;
	/* How many configs heuristics rank: FAKECUDNN_HEUR_COUNT, 3 by default; engines past the third are 100+rank. */
	int64_t ranked = getenv("FAKECUDNN_HEUR_COUNT") ? atoll(getenv("FAKECUDNN_HEUR_COUNT")) : 3;

	if (st != 0)
		return st;
	/* As the real one: the count may be left out (cudnn-frontend reads single values so). */
	if (!elementCount)
		elementCount = &none;
	if (!b)
		return (cudnnStatus_t)BAD_PARAM;
	/* The real 9.19 says NOT_SUPPORTED here for configs it ranked: cudnn-frontend asks every time. */
	if (attributeName == CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED)
		return (cudnnStatus_t)NOT_SUPPORTED;
	if (attributeName == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
		n = requestedElementCount < ranked ? requestedElementCount : ranked;
		for (int64_t i = 0; i < n && out; i++) {
			struct fake_be *cfg = fake_be(out[i]);

			if (!cfg)
				return (cudnnStatus_t)BAD_PARAM;
			cfg->engine = fake_be_new(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
			if (cfg->engine)
				fake_be_set(cfg->engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, i < 3 ? engines[i] : 100 + i, NULL);
			cfg->nknobs = (int)(2 - i > 0 ? 2 - i : 0);
			for (int k = 0; k < cfg->nknobs; k++) {
				cfg->knobs[k] = fake_be_new(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
				if (!cfg->knobs[k])
					continue;
				fake_be_set(cfg->knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, k == 0 ? i : 2, NULL);
				fake_be_set(cfg->knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, k == 0 ? i + 1 : 3, NULL);
			}
		}
	} else if (attributeName == CUDNN_ATTR_ENGINECFG_ENGINE && b->engine) {
		n = 1;
		if (requestedElementCount > 0 && out)
			fake_be_copy(fake_be(out[0]), b->engine);
	} else if (attributeName == CUDNN_ATTR_ENGINECFG_KNOB_CHOICES) {
		n = b->nknobs;
		for (int64_t i = 0; i < n && i < requestedElementCount && out; i++)
			fake_be_copy(fake_be(out[i]), b->knobs[i]);
	} else if (attributeName == CUDNN_ATTR_ENGINE_NUMERICAL_NOTE && b->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR) {
		/*
		 * Every engine uses tensor cores; those in FAKECUDNN_NONDET_ENGINES
		 * ("12,0") are also non-deterministic, as cuDNN notes of some.
		 */
		int32_t notes[2] = { CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC };

		n = fake_be_get(b, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &v, &p) && fake_listed("FAKECUDNN_NONDET_ENGINES", v) ? 2 : 1;
		for (int64_t i = 0; i < n && i < requestedElementCount && arrayOfElements; i++)
			((int32_t *)arrayOfElements)[i] = notes[i];
	} else if (attributeName == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE) {
		n = 1;
		if (requestedElementCount > 0 && arrayOfElements)
			*(int64_t *)arrayOfElements = 4096;
	} else if (attributeName == CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION) {
		char text[128];
		int64_t index = -1;

		fake_plan_engine(b, &index);
		snprintf(text, sizeof(text), "{\"fake\": true, \"engineId\": %lld, \"note\": \"plan \\\"json\\\"\"}",
			 (long long)index);
		n = (int64_t)strlen(text) + 1;
		if (requestedElementCount > 0 && arrayOfElements)
			memcpy(arrayOfElements, text, (size_t)(requestedElementCount < n ? requestedElementCount : n));
	} else if (fake_be_get(b, (int)attributeName, &v, &p)) {
		n = 1;
		if (requestedElementCount > 0 && arrayOfElements) {
			if (attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR)
				fake_be_copy(fake_be(out[0]), fake_be(p));
			else if (attributeType == CUDNN_TYPE_INT64)
				*(int64_t *)arrayOfElements = v;
			else if (attributeType == CUDNN_TYPE_HANDLE || attributeType == CUDNN_TYPE_VOID_PTR)
				*(void **)arrayOfElements = p;
			else
				*(int32_t *)arrayOfElements = (int32_t)v;
		}
	}
	*elementCount = n;
	return st;
}

/* A plan whose engine is in FAKECUDNN_UNSUPPORTED_ENGINES ("12,0") is NOT_SUPPORTED, as a GPU would say of some. */
FAKE_EXPORT cudnnStatus_t
cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnBackendFinalize);
	struct fake_be *b = fake_be(descriptor);
	int64_t index = -1;

	if (st != 0 || !b || b->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR || !fake_plan_engine(b, &index))
		return st;
	if (fake_listed("FAKECUDNN_UNSUPPORTED_ENGINES", index)) {
		snprintf(last_error, sizeof(last_error), "engine %lld is not supported here", (long long)index);
		return (cudnnStatus_t)NOT_SUPPORTED;
	}
	return st;
}

/*
 * A plan takes FAKECUDNN_ENGINE_US of its engine to run ("12=2000,0=200":
 * microseconds by engine), as engines differ on a GPU: what a framework's
 * tuning sweep measures.
 */
FAKE_EXPORT cudnnStatus_t
cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
		    cudnnBackendDescriptor_t variantPack)
{
	cudnnStatus_t st = fake_enter(_SPY_FN_cudnnBackendExecute);
	const char *list = getenv("FAKECUDNN_ENGINE_US");
	int64_t index = -1;

	(void)handle;
	(void)variantPack;
	if (st != 0 || !list || !fake_plan_engine(fake_be(executionPlan), &index))
		return st;
	for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',')
		if (*p >= '0' && *p <= '9' && atoll(p) == index && strchr(p, '=') &&
		    strchr(p, '=') < p + strcspn(p, ","))
			usleep((useconds_t)atoll(strchr(p, '=') + 1));
	return st;
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
