/*
 * Sets every legacy descriptor kind that cuDNN 9.19 accepts without a GPU,
 * with known values, then uses each in one call that fails on purpose (a
 * NULL handle), so that the failure records show the remembered state. The
 * test compares the decoded records with the values set here.
 */
#include <stdio.h>

#include "g_prototypes.h"

#define CHECK(x) \
	do { \
		cudnnStatus_t st_ = (x); \
		if (st_ != 0) \
			printf("%s: %d\n", #x, (int)st_); \
	} while (0)

int
main(void)
{
	cudnnTensorDescriptor_t t4, tn;
	cudnnFilterDescriptor_t f4, fn;
	cudnnConvolutionDescriptor_t c2, cn;
	cudnnActivationDescriptor_t act;
	cudnnPoolingDescriptor_t p2, pn;
	cudnnLRNDescriptor_t lrn;
	cudnnOpTensorDescriptor_t op;
	cudnnReduceTensorDescriptor_t red;
	cudnnCTCLossDescriptor_t ctc;
	cudnnSpatialTransformerDescriptor_t st;
	int dims[4] = { 2, 4, 6, 8 }, strides[4] = { 192, 48, 8, 1 };
	int fdims[4] = { 16, 4, 3, 3 };
	int pad[2] = { 1, 2 }, stride[2] = { 3, 4 }, dil[2] = { 1, 1 };
	int win[2] = { 2, 2 }, ppad[2] = { 0, 0 }, pstride[2] = { 2, 2 };
	int stdims[4] = { 1, 3, 5, 5 };

	CHECK(cudnnCreateTensorDescriptor(&t4));
	CHECK(cudnnCreateTensorDescriptor(&tn));
	CHECK(cudnnCreateFilterDescriptor(&f4));
	CHECK(cudnnCreateFilterDescriptor(&fn));
	CHECK(cudnnCreateConvolutionDescriptor(&c2));
	CHECK(cudnnCreateConvolutionDescriptor(&cn));
	CHECK(cudnnCreateActivationDescriptor(&act));
	CHECK(cudnnCreatePoolingDescriptor(&p2));
	CHECK(cudnnCreatePoolingDescriptor(&pn));
	CHECK(cudnnCreateLRNDescriptor(&lrn));
	CHECK(cudnnCreateOpTensorDescriptor(&op));
	CHECK(cudnnCreateReduceTensorDescriptor(&red));
	CHECK(cudnnCreateCTCLossDescriptor(&ctc));
	CHECK(cudnnCreateSpatialTransformerDescriptor(&st));

	CHECK(cudnnSetTensor4dDescriptor(t4, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 8, 16, 32, 64));
	CHECK(cudnnSetTensorNdDescriptor(tn, CUDNN_DATA_DOUBLE, 4, dims, strides));
	CHECK(cudnnSetFilter4dDescriptor(f4, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NCHW, 32, 16, 5, 5));
	CHECK(cudnnSetFilterNdDescriptor(fn, CUDNN_DATA_INT8, CUDNN_TENSOR_NHWC, 4, fdims));
	CHECK(cudnnSetConvolution2dDescriptor(c2, 1, 2, 3, 4, 1, 1, CUDNN_CONVOLUTION, CUDNN_DATA_FLOAT));
	CHECK(cudnnSetConvolutionMathType(c2, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
	CHECK(cudnnSetConvolutionGroupCount(c2, 4));
	CHECK(cudnnSetConvolutionNdDescriptor(cn, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_HALF));
	CHECK(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_CLIPPED_RELU, CUDNN_PROPAGATE_NAN, 6.0));
	CHECK(cudnnSetPooling2dDescriptor(p2, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2, 2));
	CHECK(cudnnSetPoolingNdDescriptor(pn, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, CUDNN_PROPAGATE_NAN, 2,
					  win, ppad, pstride));
	CHECK(cudnnSetLRNDescriptor(lrn, 5, 1e-4, 0.75, 2.0));
	CHECK(cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_MUL, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN));
	CHECK(cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_NORM2, CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN,
					     CUDNN_REDUCE_TENSOR_FLATTENED_INDICES, CUDNN_32BIT_INDICES));
	CHECK(cudnnSetCTCLossDescriptor(ctc, CUDNN_DATA_FLOAT));
	CHECK(cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, stdims));

	/* Each descriptor used once in a call that fails (NULL handle): the records show its state. */
	cudnnConvolutionForward(NULL, NULL, t4, NULL, f4, NULL, c2, CUDNN_CONVOLUTION_FWD_ALGO_GEMM, NULL, 0,
				NULL, tn, NULL);
	cudnnConvolutionForward(NULL, NULL, tn, NULL, fn, NULL, cn, CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, NULL, 0,
				NULL, t4, NULL);
	cudnnActivationForward(NULL, act, NULL, t4, NULL, NULL, t4, NULL);
	cudnnPoolingForward(NULL, p2, NULL, t4, NULL, NULL, t4, NULL);
	cudnnPoolingForward(NULL, pn, NULL, t4, NULL, NULL, t4, NULL);
	cudnnLRNCrossChannelForward(NULL, lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, NULL, t4, NULL, NULL, t4, NULL);
	cudnnOpTensor(NULL, op, NULL, t4, NULL, NULL, t4, NULL, NULL, t4, NULL);
	cudnnReduceTensor(NULL, red, NULL, 0, NULL, 0, NULL, t4, NULL, NULL, t4, NULL);
	cudnnSpatialTfGridGeneratorForward(NULL, st, NULL, NULL);
	printf("done\n");
	return 0;
}
