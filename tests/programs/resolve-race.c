/*
 * Calls made while another thread is still inside the spy's one-time
 * resolution: thread A's first call resolves copy 0 and then writes the
 * banner to a stderr that the test keeps full, so that A stays in the
 * resolution; the main thread, after a pause, finds the functions resolved
 * and makes CALLS calls, enough that its records reach the file before A
 * is done. Prints "ok" once both are done.
 * usage: resolve-race CALLS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "g_prototypes.h"

static void *
first(void *arg)
{
	(void)arg;
	return (void *)cudnnGetVersion();
}

int
main(int argc, char **argv)
{
	long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 5000, fails = 0;
	cudnnTensorDescriptor_t t;
	pthread_t a;
	void *r;

	if (pthread_create(&a, NULL, first, NULL) != 0)
		return 2;
	usleep(300000);
	if (cudnnCreateTensorDescriptor(&t) != 0)
		return 1;
	for (long i = 0; i < calls; i++)
		fails += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4) != 0;
	cudnnDestroyTensorDescriptor(t);
	pthread_join(a, &r);
	printf("%s\n", fails ? "failed" : "ok");
	return fails != 0;
}
