/*
 * The loop that bench/run-bench.py times: one cuDNN function called
 * ITERATIONS times in a tight loop by each of THREADS threads, which start
 * together. Which library answers (the real cuDNN, the fake, the spy in
 * front of either) is the driver's business: it sets LD_PRELOAD and
 * LD_LIBRARY_PATH. The program only reports which file its calls reach.
 *
 * usage: bench FUNCTION ITERATIONS [THREADS] [--rss]
 *   FUNCTION   set4d: cudnnSetTensor4dDescriptor on one descriptor per thread,
 *                     valid arguments (a cheap host call that cuDNN checks)
 *              version: cudnnGetVersion (next to nothing on cuDNN's side)
 *              setattr: cudnnBackendSetAttribute of a backend tensor descriptor's
 *                    data type, one descriptor per thread (the graph API's
 *                    most frequent call)
 *              setnd: cudnnSetTensorNdDescriptor of 4 dimensions on one
 *                    descriptor per thread (its arrays: what a traced call reads)
 *              fail: cudnnSetTensor4dDescriptor with a dimension of 0, which
 *                    cuDNN refuses (BAD_PARAM): every call a failure, the
 *                    spy's failure path
 *   --rss      print VmRSS at start, after the warm-up and after the loop
 *   --second-copy LIBRARY
 *              first open another cuDNN by path (RTLD_LOCAL) and ask its version
 *              through its handle: two copies mapped, as when a framework
 *              brings its own, and the spy's exported names then go where
 *              each caller's scope goes (the multi-copy path)
 *
 * Output on stdout, one "key=value ..." line per fact:
 *   library=/usr/local/cuda/lib64/libcudnn.so.9	(the rest of the line, spaces and all)
 *   version=91900
 *   thread=0 function=set4d iterations=2000000 ns_per_call=77.912 failures=0
 *   rss_kib start=... warm=... end=...
 * Exit status 1 when a call failed (succeeded, for fail) or the arguments
 * are wrong: a failure takes the spy's slow path and the numbers would
 * mean something else.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "g_prototypes.h"

#define MAX_THREADS 64

enum function { FN_SET4D, FN_VERSION, FN_FAIL, FN_SETATTR, FN_SETND };

struct worker {
	pthread_t thread;
	int index;
	double ns_per_call;
	long failures;
};

static enum function fn;
static long iterations;
static long warmup;
static pthread_barrier_t start_line;
static pthread_barrier_t warm_line;
static int measure_rss;
static long rss_warm_kib;

/* Keeps the compiler from dropping cudnnGetVersion's result (it cannot drop the call anyway). */
static volatile size_t sink;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long
rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0) {
			kib = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return kib;
}

/* The thread's backend tensor descriptor, for setattr. */
static __thread cudnnBackendDescriptor_t backend;

static long
loop(cudnnTensorDescriptor_t t, long n)
{
	long failures = 0;
	size_t acc = 0;

	/* Two loops, not a switch inside one: the loop body is the call and nothing else. */
	if (fn == FN_SET4D) {
		for (long i = 0; i < n; i++)
			failures += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
							       32, 3, 224, 224) != CUDNN_STATUS_SUCCESS;
	} else if (fn == FN_SETATTR) {
		cudnnDataType_t dt = CUDNN_DATA_FLOAT;

		for (long i = 0; i < n; i++)
			failures += cudnnBackendSetAttribute(backend, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1,
							     &dt) != CUDNN_STATUS_SUCCESS;
	} else if (fn == FN_SETND) {
		static const int dims[4] = { 32, 3, 224, 224 }, strides[4] = { 3 * 224 * 224, 224 * 224, 224, 1 };

		for (long i = 0; i < n; i++)
			failures += cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 4, dims, strides) != CUDNN_STATUS_SUCCESS;
	} else if (fn == FN_FAIL) {
		for (long i = 0; i < n; i++)
			failures += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
							       0, 3, 224, 224) == CUDNN_STATUS_SUCCESS;
	} else {
		for (long i = 0; i < n; i++)
			acc += cudnnGetVersion();
		sink = acc;
	}
	return failures;
}

static void *
run_worker(void *arg)
{
	struct worker *w = arg;
	cudnnTensorDescriptor_t t = NULL;
	uint64_t t0, t1;

	/* Each thread its own descriptor: two threads on one would measure cuDNN's sharing, not the spy's. */
	if (fn != FN_VERSION && cudnnCreateTensorDescriptor(&t) != CUDNN_STATUS_SUCCESS) {
		w->failures = 1;
		t = NULL;
	}
	if (fn == FN_SETATTR && cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &backend) !=
				    CUDNN_STATUS_SUCCESS) {
		w->failures = 1;
		t = NULL;
	}
	/*
	 * Untimed warm-up: lazy binding, the spy's per-thread state, the record
	 * file and its buffer, the caches. The memory check starts after it, so
	 * that it sees growth per call and not one-time setup.
	 */
	if (t || fn == FN_VERSION)
		w->failures += loop(t, warmup);
	pthread_barrier_wait(&warm_line);
	if (w->index == 0 && measure_rss)
		rss_warm_kib = rss_kib();
	pthread_barrier_wait(&start_line);
	t0 = now_ns();
	if (t || fn == FN_VERSION)
		w->failures += loop(t, iterations);
	t1 = now_ns();
	w->ns_per_call = (double)(t1 - t0) / (double)iterations;
	if (t)
		cudnnDestroyTensorDescriptor(t);
	if (backend)
		cudnnBackendDestroyDescriptor(backend);
	return NULL;
}

static int
usage(void)
{
	fprintf(stderr, "usage: bench set4d|setnd|version|setattr|fail ITERATIONS [THREADS] [--rss] [--second-copy LIBRARY]\n");
	return 1;
}

int
main(int argc, char **argv)
{
	static struct worker workers[MAX_THREADS];
	long threads = 1, rss_start = -1, rss_end;
	long failures = 0;
	int pos = 0;
	const char *fname = NULL, *second = NULL;
	Dl_info where;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rss") == 0) {
			measure_rss = 1;
			continue;
		}
		if (strcmp(argv[i], "--second-copy") == 0 && i + 1 < argc) {
			second = argv[++i];
			continue;
		}
		if (pos == 0)
			fname = argv[i];
		else if (pos == 1)
			iterations = strtol(argv[i], NULL, 10);
		else if (pos == 2)
			threads = strtol(argv[i], NULL, 10);
		else
			return usage();
		pos++;
	}
	if (!fname || iterations <= 0 || threads < 1 || threads > MAX_THREADS)
		return usage();
	if (strcmp(fname, "set4d") == 0)
		fn = FN_SET4D;
	else if (strcmp(fname, "version") == 0)
		fn = FN_VERSION;
	else if (strcmp(fname, "setattr") == 0)
		fn = FN_SETATTR;
	else if (strcmp(fname, "fail") == 0)
		fn = FN_FAIL;
	else if (strcmp(fname, "setnd") == 0)
		fn = FN_SETND;
	else
		return usage();
	if (second) {
		void *h = dlopen(second, RTLD_NOW | RTLD_LOCAL);
		size_t (*v)(void) = h ? (size_t (*)(void))dlsym(h, "cudnnGetVersion") : NULL;

		if (!v) {
			fprintf(stderr, "bench: cannot use %s as a second copy\n", second);
			return 1;
		}
		printf("second_copy=%zu\n", v());
	}
	warmup = iterations / 10 < 10000 ? iterations / 10 : 10000;
	if (warmup < 100)
		warmup = 100;
	if (measure_rss)
		rss_start = rss_kib();

	/*
	 * Which file answers the program's calls (the spy, the drop-in or the
	 * library itself), so that the driver can check its setup. The call is
	 * also the first one: the spy resolves the real library here, untimed.
	 */
	if (dladdr((void *)cudnnGetVersion, &where) == 0 || !where.dli_fname)
		where.dli_fname = "?";
	printf("library=%s\nversion=%zu\n", where.dli_fname, cudnnGetVersion());
	pthread_barrier_init(&warm_line, NULL, (unsigned)threads);
	pthread_barrier_init(&start_line, NULL, (unsigned)threads);
	for (long i = 0; i < threads; i++) {
		workers[i].index = (int)i;
		if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0) {
			fprintf(stderr, "bench: cannot start thread %ld\n", i);
			return 1;
		}
	}
	for (long i = 0; i < threads; i++)
		pthread_join(workers[i].thread, NULL);
	rss_end = measure_rss ? rss_kib() : -1;
	for (long i = 0; i < threads; i++) {
		printf("thread=%ld function=%s iterations=%ld ns_per_call=%.3f failures=%ld\n", i, fname, iterations,
		       workers[i].ns_per_call, workers[i].failures);
		failures += workers[i].failures;
	}
	if (measure_rss)
		printf("rss_kib start=%ld warm=%ld end=%ld\n", rss_start, rss_warm_kib, rss_end);
	return failures != 0;
}
