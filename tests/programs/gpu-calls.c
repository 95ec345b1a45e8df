/*
 * Calls that enqueue GPU work (cudnnAddTensor) between host calls, with a
 * CUDA runtime loaded (argv[2], opened RTLD_GLOBAL like a framework's), then
 * asks the runtime for its error state at the end: the same with and
 * without the spy. usage: gpu-calls N [LIBCUDART] [set-error]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"

int
main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
	void *rt = argc > 2 ? dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL) : NULL;
	int (*get_last)(void) = NULL, (*stream_sync)(void *) = NULL, (*set_device)(int) = NULL;
	cudnnHandle_t h;
	cudnnTensorDescriptor_t t;
	float one = 1.0f;
	int fails = 0;

	if (argc > 2 && !rt) {
		printf("cannot load %s\n", argv[2]);
		return 2;
	}
	if (rt) {
		*(void **)&get_last = dlsym(rt, "cudaGetLastError");
		*(void **)&stream_sync = dlsym(rt, "cudaStreamSynchronize");
		*(void **)&set_device = dlsym(rt, "cudaSetDevice");
	}
	if (argc > 3 && strcmp(argv[3], "set-error") == 0 && set_device)
		set_device(99);	/* the program's own error, pending: the spy must leave it */
	if (cudnnCreate(&h) != 0 || cudnnCreateTensorDescriptor(&t) != 0)
		return 3;
	cudnnSetStream(h, (cudaStream_t)0x5eed);
	for (long i = 0; i < n; i++) {
		fails += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4) != 0;
		fails += cudnnAddTensor(h, &one, t, (void *)0x1000, &one, t, (void *)0x2000) != 0;
	}
	printf("calls %ld failed %d\n", n, fails);
	if (stream_sync)
		printf("final sync %d\n", stream_sync((void *)0x5eed));
	if (get_last)
		printf("last error %d\n", get_last());
	cudnnDestroyTensorDescriptor(t);
	cudnnDestroy(h);
	return 0;
}
