/*
 * The program the Windows drop-in is tested with (test_windows.py): linked to cudnn64_9.dll like a
 * program built with NVIDIA's import library, it prints what cuDNN answered, so that a run with the drop-in
 * first in the search order can be compared with one without, byte for byte. One call fails (the test makes
 * the fake refuse cudnnSetTensor4dDescriptor): its record carries a stack through app_describe, which the
 * program exports so that the stack can name it from the exports, as it names a DLL's frames.
 */
#include <stdio.h>
#include <stdlib.h>

#include "g_prototypes.h"

__declspec(dllexport) __attribute__((noinline)) int app_describe(cudnnTensorDescriptor_t t, int n);

__declspec(dllexport) __attribute__((noinline)) int
app_describe(cudnnTensorDescriptor_t t, int n)
{
	return (int)cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, 3, 224, 224);
}

int
main(int argc, char **argv)
{
	long reps = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
	cudnnTensorDescriptor_t t = NULL;
	cudnnFilterDescriptor_t f = NULL;
	cudnnHandle_t h = NULL;
	char msg[256] = "";
	int st;

	printf("version %zu\n", cudnnGetVersion());
	printf("error string 3: %s\n", cudnnGetErrorString((cudnnStatus_t)3));
	printf("create handle: %d\n", (int)cudnnCreate(&h));
	printf("create tensor: %d\n", (int)cudnnCreateTensorDescriptor(&t));
	for (long i = 0; i < reps; i++)
		cudnnCreateFilterDescriptor(&f), cudnnDestroyFilterDescriptor(f);
	printf("filters x%ld\n", reps);
	st = app_describe(t, -1);
	printf("set tensor n=-1: %d\n", st);
	cudnnGetLastErrorString(msg, sizeof(msg));
	printf("last error: %s\n", msg);
	printf("destroy tensor: %d\n", (int)cudnnDestroyTensorDescriptor(t));
	printf("destroy handle: %d\n", (int)cudnnDestroy(h));
	return st == 0 ? 0 : 3;
}
