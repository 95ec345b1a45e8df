/*
 * The program the Windows drop-in is tested with (test_windows.py): linked to cudnn64_9.dll like a
 * program built with NVIDIA's import library, it prints what cuDNN answered, so that a run with the drop-in
 * first in the search order can be compared with one without, byte for byte. One call fails (the test makes
 * the fake refuse cudnnSetTensor4dDescriptor): its record carries a stack through app_describe, which the
 * program exports so that the stack can name it from the exports, as it names a DLL's frames. The Win32
 * last error is set before the first call (the spy's one-time resolution) and before the failure (its record
 * written at once) and printed after: the spy must leave it as cuDNN did. With "stub", it calls an undeclared
 * name the DLL it was linked to exports (cudnnSetBackdoor, found with GetProcAddress) with eight arguments.
 * APP_SUBLIB names a DLL it loads before cudnnCreate, standing for one of cuDNN's sub-libraries. With
 * "kill N", it makes N calls of cudnnSetTensor4dDescriptor and ends with TerminateProcess, as a scheduler or
 * Task Manager ends a job: no exit handler and no DLL detach runs.
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"

#ifndef APP_MAJOR
#define APP_MAJOR 9
#endif

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

	if (argc > 1 && strcmp(argv[1], "stub") == 0) {
		/* The fake's signature for them (tests/fake/fake-cudnn.c): four register, four stack arguments. */
		typedef double (*stub_fn)(long, long, long, long, long, long, double, double);
		HMODULE m = GetModuleHandleA(argc > 2 ? argv[2] : "cudnn64_9.dll");
		stub_fn fn = m ? (stub_fn)(void *)GetProcAddress(m, "cudnnSetBackdoor") : NULL;

		printf("cudnnSetBackdoor: %s\n", fn ? "exported" : "not exported");
		/* First, before any other call: the drop-in's stub resolves then. */
		if (fn) {
			printf("cudnnSetBackdoor(1, ..., 6, 0.5, 0.25): %.4f\n", fn(1, 2, 3, 4, 5, 6, 0.5, 0.25));
			printf("again: %.4f\n", fn(-1, -2, -3, -4, -5, -6, 2.0, 4.0));
		}
		printf("version %zu\n", cudnnGetVersion());
		return 0;
	}
	if (argc > 2 && strcmp(argv[1], "kill") == 0) {
		long n = strtol(argv[2], NULL, 10);

		printf("version %zu\n", cudnnGetVersion());
		cudnnCreateTensorDescriptor(&t);
		for (long i = 0; i < n; i++)
			cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1 + (int)(i % 64), 3, 224, 224);
		printf("%ld calls made\n", n);
		fflush(stdout);
		TerminateProcess(GetCurrentProcess(), 9);
		return 1;
	}
	SetLastError(4242);
	printf("version %zu\n", cudnnGetVersion());
	printf("last error after the first call: %lu\n", GetLastError());
	printf("error string 3: %s\n", cudnnGetErrorString((cudnnStatus_t)3));
	/* As cuDNN 9 loads its sub-libraries by name: one the test puts elsewhere, loaded by its full path. */
	if (getenv("APP_SUBLIB"))
		printf("sub-library: %s\n", LoadLibraryA(getenv("APP_SUBLIB")) ? "loaded" : "not loaded");
	printf("create handle: %d\n", (int)cudnnCreate(&h));
	printf("create tensor: %d\n", (int)cudnnCreateTensorDescriptor(&t));
	for (long i = 0; i < reps; i++)
		cudnnCreateFilterDescriptor(&f), cudnnDestroyFilterDescriptor(f);
	printf("filters x%ld\n", reps);
	SetLastError(4343);
	st = app_describe(t, -1);
	printf("set tensor n=-1: %d (last error %lu)\n", st, GetLastError());
#if APP_MAJOR != 8
	/* cuDNN 9's: 8.x has no cudnnGetLastErrorString. */
	cudnnGetLastErrorString(msg, sizeof(msg));
#else
	snprintf(msg, sizeof(msg), "%s", cudnnGetErrorString((cudnnStatus_t)st));
#endif
	printf("last error: %s\n", msg);
	printf("destroy tensor: %d\n", (int)cudnnDestroyTensorDescriptor(t));
	printf("destroy handle: %d\n", (int)cudnnDestroy(h));
	return st == 0 ? 0 : 3;
}
