/*
 * A cuDNN program that runs without a GPU: version, error strings,
 * descriptors, and cudnnCreate (1001 without a GPU). It prints what cuDNN
 * answered on stdout, so that a test can compare runs with and without the
 * spy; with an argument N it repeats the descriptor calls N times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In the source tree, the generator's prototypes (no cuDNN headers needed); installed under
 * share/doc/cudnnspy/examples, where those are not, cuDNN's own header:
 *   cc -I$CUDA_HOME/include host-calls.c -L$CUDA_HOME/lib64 -lcudnn */
#if defined(__has_include)
#if __has_include("g_prototypes.h")
#include "g_prototypes.h"
#else
#include <cudnn.h>
#endif
#else
#include "g_prototypes.h"
#endif

int
main(int argc, char **argv)
{
	long reps = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	cudnnTensorDescriptor_t t = NULL;
	cudnnHandle_t h = NULL;
	cudnnStatus_t st;
	int fails = 0;

	printf("version %zu\n", cudnnGetVersion());
	printf("error string 2000: %s\n", cudnnGetErrorString((cudnnStatus_t)2000));
	st = cudnnCreateTensorDescriptor(&t);
	printf("create tensor: %d\n", (int)st);
	for (long i = 0; i < reps; i++) {
		st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 32, 3, 224, 224);
		fails += st != 0;
	}
	printf("set tensor x%ld: %d failed\n", reps, fails);
	/* A bad value: cuDNN answers BAD_PARAM. */
	st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 224, 224);
	printf("set tensor n=-1: %d\n", (int)st);
	if (cudnnGetVersion() >= 90000) {
		/* cuDNN's own message must reach the program whole, spy or not. */
		char msg[512] = "";

		cudnnGetLastErrorString(msg, sizeof(msg));
		printf("last error: %s\n", msg);
	}
	st = cudnnDestroyTensorDescriptor(t);
	printf("destroy tensor: %d\n", (int)st);
	errno = 0;
	st = cudnnCreate(&h);
	printf("create handle: %d errno %d\n", (int)st, errno);
	if (st == 0)
		cudnnDestroy(h);
	return 0;
}
