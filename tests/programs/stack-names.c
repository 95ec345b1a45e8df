/*
 * A failing call made from a static function: its name is only in the
 * program's .symtab, which dladdr does not read. The failure line and the
 * record's stack must name it.
 */
#include <stdio.h>

#include "g_prototypes.h"

static __attribute__((noinline)) cudnnStatus_t
layer_forward(cudnnTensorDescriptor_t t)
{
	return cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 224, 224);
}

int
main(void)
{
	cudnnTensorDescriptor_t t = NULL;

	cudnnCreateTensorDescriptor(&t);
	printf("status %d\n", (int)layer_forward(t));
	cudnnDestroyTensorDescriptor(t);
	return 0;
}
