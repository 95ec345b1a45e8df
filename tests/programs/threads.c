/*
 * 8 threads calling cuDNN at once: the exit summary must count every call
 * exactly (per-thread counters, summed at exit).
 * usage: threads [CALLS_PER_THREAD]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "g_prototypes.h"

#define THREADS 8

static long calls = 20000;

static void *
worker(void *arg)
{
	cudnnTensorDescriptor_t t;
	long fails = 0;

	(void)arg;
	if (cudnnCreateTensorDescriptor(&t) != 0)
		return (void *)1;
	for (long i = 0; i < calls; i++)
		fails += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4) != 0;
	cudnnDestroyTensorDescriptor(t);
	return (void *)fails;
}

int
main(int argc, char **argv)
{
	pthread_t th[THREADS];
	long fails = 0;

	if (argc > 1)
		calls = strtol(argv[1], NULL, 10);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(th[i], &r);
		fails += (long)r;
	}
	printf("threads %d calls %ld fails %ld\n", THREADS, calls, fails);
	return fails != 0;
}
