/*
 * A library the program opens after its first failure (stack-names late):
 * the spy's map of loaded objects must learn of it, and name its static
 * function and its exported one in the next failure's stack.
 */
#include "g_prototypes.h"

int stack_lib_call(cudnnTensorDescriptor_t t);

static __attribute__((noinline)) int
lib_layer(cudnnTensorDescriptor_t t)
{
	return (int)cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 224, 224);
}

__attribute__((visibility("default"), noinline)) int
stack_lib_call(cudnnTensorDescriptor_t t)
{
	int st = lib_layer(t);

	/* Not a tail call: this frame stays on the stack. */
	__asm__ volatile("" ::: "memory");
	return st;
}
