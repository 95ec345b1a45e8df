/*
 * Provokes the failures users meet, on purpose, with the real cuDNN and no
 * GPU: cudnnCreate without a device (NOT_INITIALIZED), a NULL handle
 * (BAD_PARAM), and bad descriptor values (BAD_PARAM). It prints each status
 * and cuDNN's own message, which must read the same with or without the spy.
 */
#include <stdio.h>

/* In the source tree, the generator's prototypes (no cuDNN headers needed); installed under
 * share/doc/cudnnspy/examples, where those are not, cuDNN's own header:
 *   cc -I$CUDA_HOME/include failures.c -L$CUDA_HOME/lib64 -lcudnn */
#if defined(__has_include)
#if __has_include("g_prototypes.h")
#include "g_prototypes.h"
#else
#include <cudnn.h>
#endif
#else
#include "g_prototypes.h"
#endif

static void
show(const char *what, cudnnStatus_t st)
{
	char msg[512] = "";

	if (cudnnGetVersion() >= 90000)
		cudnnGetLastErrorString(msg, sizeof(msg));
	printf("%s: %d %s [%s]\n", what, (int)st, cudnnGetErrorString(st), msg);
}

int
main(void)
{
	cudnnHandle_t handle = NULL;
	cudnnTensorDescriptor_t t;
	cudnnFilterDescriptor_t f;
	cudnnConvolutionDescriptor_t c;
	cudaStream_t stream = NULL;

	show("cudnnCreate", cudnnCreate(&handle));
	show("cudnnGetStream(NULL handle)", cudnnGetStream(NULL, &stream));
	cudnnCreateTensorDescriptor(&t);
	cudnnCreateFilterDescriptor(&f);
	cudnnCreateConvolutionDescriptor(&c);
	show("tensor n=0", cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 3, 8, 8));
	show("filter k=-4", cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, -4, 3, 3, 3));
	show("convolution stride 0",
	     cudnnSetConvolution2dDescriptor(c, 1, 1, 0, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
	cudnnDestroyConvolutionDescriptor(c);
	cudnnDestroyFilterDescriptor(f);
	cudnnDestroyTensorDescriptor(t);
	return 0;
}
