/*
 * A failing call made from a static function: its name is only in the
 * program's .symtab, which dladdr does not read. The failure line and the
 * record's stack must name it. usage: stack-names [LIBRARY]: then, after
 * that first failure, LIBRARY (stack-lib.c) is opened and fails inside it.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "g_prototypes.h"

static __attribute__((noinline)) cudnnStatus_t
layer_forward(cudnnTensorDescriptor_t t)
{
	return cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 224, 224);
}

int
main(int argc, char **argv)
{
	cudnnTensorDescriptor_t t = NULL;

	cudnnCreateTensorDescriptor(&t);
	printf("status %d\n", (int)layer_forward(t));
	if (argc > 1) {
		void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*call)(cudnnTensorDescriptor_t) = lib ? (int (*)(cudnnTensorDescriptor_t))dlsym(lib, "stack_lib_call") : NULL;

		printf("library status %d\n", call ? call(t) : -1);
	}
	cudnnDestroyTensorDescriptor(t);
	return 0;
}
