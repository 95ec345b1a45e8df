/*
 * One call that makes the real cuDNN call itself: the cnn sub-library's
 * cudnnGetFoldedConvBackwardDataDescriptors sets transform descriptors
 * through exported ops functions. A preloaded spy sees those calls; they
 * must be counted as internal, not as the program's.
 */
#include <stdio.h>

#include "g_prototypes.h"

int
main(void)
{
	cudnnConvolutionDescriptor_t conv, fconv;
	cudnnTensorDescriptor_t x, y, padded, fgrad;
	cudnnFilterDescriptor_t w, fw;
	cudnnTensorTransformDescriptor_t t[4];
	cudnnStatus_t st;

	cudnnCreateConvolutionDescriptor(&conv);
	cudnnCreateConvolutionDescriptor(&fconv);
	cudnnCreateTensorDescriptor(&x);
	cudnnCreateTensorDescriptor(&y);
	cudnnCreateTensorDescriptor(&padded);
	cudnnCreateTensorDescriptor(&fgrad);
	cudnnCreateFilterDescriptor(&w);
	cudnnCreateFilterDescriptor(&fw);
	for (int i = 0; i < 4; i++)
		cudnnCreateTensorTransformDescriptor(&t[i]);
	cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
	cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 3, 32, 32);
	cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 16, 16, 16);
	cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 16, 3, 3, 3);
	st = cudnnGetFoldedConvBackwardDataDescriptors(NULL, w, y, conv, x, CUDNN_TENSOR_NCHW, fw, padded, fconv,
						       fgrad, t[0], t[1], t[2], t[3]);
	printf("folded: %d\n", (int)st);
	return st == 0 ? 0 : 1;
}
