/*
 * Convolutions through the legacy API: descriptors, output-dimension
 * queries, the searches (cudnnFind*, cudnnGet*_v7), a workspace query, and
 * convolution calls with chosen algorithms: the fastest, then a slower one
 * with too small a workspace (which also changes the choice), backward data
 * and filter, bias-activation, and a 3-D convolution that was never
 * searched. Without a GPU (the real cuDNN) the handle is NULL and the
 * searches and convolutions fail; the descriptors and output dimensions
 * still work. usage: conv-legacy [LIBCUDART|- [nondet|stop]]
 *   nondet: backward filter runs what its search ranked second, which the
 *           fake cuDNN marks CUDNN_NON_DETERMINISTIC
 *   stop:   SIGSTOP to itself before it returns (a test copies the record
 *           file then: what a process killed there leaves)
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "g_prototypes.h"

static int
packed_strides(int nd, const int *dims, int *strides)
{
	int acc = 1;

	for (int i = nd - 1; i >= 0; i--) {
		strides[i] = acc;
		acc *= dims[i];
	}
	return nd;
}

int
main(int argc, char **argv)
{
	cudnnHandle_t h = NULL;
	cudnnTensorDescriptor_t x, y, bias, x5, y5;
	cudnnFilterDescriptor_t w, w5;
	cudnnConvolutionDescriptor_t conv, conv3;
	cudnnActivationDescriptor_t act;
	cudnnConvolutionFwdAlgoPerf_t fwd[8];
	cudnnConvolutionBwdDataAlgoPerf_t bwd_data[8];
	cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter[8];
	/* What a real cuDNN computes; the fake leaves these as they are. */
	int n = 8, c = 32, hh = 32, ww = 32, ret = 0, i;
	int dims5[5] = { 2, 4, 8, 8, 8 }, strides5[5], wdims5[5] = { 8, 4, 3, 3, 3 }, ydims5[5] = { 2, 8, 4, 4, 4 };
	int pad3[3] = { 1, 1, 1 }, stride3[3] = { 2, 2, 2 }, dil3[3] = { 1, 1, 1 };
	size_t ws = 0;
	float one = 1.0f, zero = 0.0f;
	void *mem = (void *)0x1000;

	int nondet = argc > 2 && strcmp(argv[2], "nondet") == 0;
	cudnnConvolutionBwdFilterAlgo_t filter_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;

	if (argc > 1 && strcmp(argv[1], "-") != 0 && !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
		printf("cannot load %s\n", argv[1]);
		return 2;
	}
	printf("create %d\n", (int)cudnnCreate(&h));
	if (h)
		cudnnSetStream(h, (cudaStream_t)0x5eed);
	cudnnCreateTensorDescriptor(&x);
	cudnnCreateTensorDescriptor(&y);
	cudnnCreateTensorDescriptor(&bias);
	cudnnCreateFilterDescriptor(&w);
	cudnnCreateConvolutionDescriptor(&conv);
	cudnnCreateActivationDescriptor(&act);
	cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 16, 32, 32);
	cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 32, 16, 3, 3);
	cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
	cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH);
	printf("output dim %d\n", (int)cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &hh, &ww));
	printf("y %dx%dx%dx%d\n", n, c, hh, ww);
	cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hh, ww);
	cudnnSetTensor4dDescriptor(bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c, 1, 1);
	cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);

	/* A 3-D convolution with Nd descriptors: strides, not a format. */
	cudnnCreateTensorDescriptor(&x5);
	cudnnCreateTensorDescriptor(&y5);
	cudnnCreateFilterDescriptor(&w5);
	cudnnCreateConvolutionDescriptor(&conv3);
	cudnnSetTensorNdDescriptor(x5, CUDNN_DATA_FLOAT, 5, dims5, (packed_strides(5, dims5, strides5), strides5));
	cudnnSetFilterNdDescriptor(w5, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, wdims5);
	cudnnSetConvolutionNdDescriptor(conv3, 3, pad3, stride3, dil3, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
	printf("output dim nd %d\n", (int)cudnnGetConvolutionNdForwardOutputDim(conv3, x5, w5, 5, ydims5));
	printf("y5 %dx%dx%dx%dx%d\n", ydims5[0], ydims5[1], ydims5[2], ydims5[3], ydims5[4]);
	cudnnSetTensorNdDescriptor(y5, CUDNN_DATA_FLOAT, 5, ydims5, (packed_strides(5, ydims5, strides5), strides5));

	/* The searches; the real cuDNN follows a NULL handle in some of them, so they need one. */
	if (!h)
		goto run;
	printf("find fwd %d", (int)cudnnFindConvolutionForwardAlgorithm(h, x, w, conv, y, 8, &ret, fwd));
	printf(" returned %d\n", ret);
	ret = 0;
	printf("get fwd %d", (int)cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, 8, &ret, fwd));
	printf(" returned %d\n", ret);
	ret = 0;
	printf("find bwd-data %d", (int)cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, 8, &ret,
										  bwd_data));
	printf(" returned %d\n", ret);
	ret = 0;
	printf("find bwd-filter %d", (int)cudnnFindConvolutionBackwardFilterAlgorithm(h, x, y, conv, w, 8, &ret,
										      bwd_filter));
	printf(" returned %d\n", ret);
	if (nondet && ret > 1)
		filter_algo = bwd_filter[1].algo;
	printf("workspace query %d", (int)cudnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y,
										      CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
										      &ws));
	printf(" %zu\n", ws);
run:

	/* The fastest algorithm, four times; then a slower one with too small a workspace. */
	for (i = 0; i < 4; i++)
		printf("fwd %d\n", (int)cudnnConvolutionForward(h, &one, x, mem, w, mem, conv,
							       CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, mem, 0,
							       &zero, y, mem));
	for (i = 0; i < 2; i++)
		printf("fwd slow %d\n", (int)cudnnConvolutionForward(h, &one, x, mem, w, mem, conv,
								    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, mem, 512,
								    &zero, y, mem));
	for (i = 0; i < 2; i++)
		printf("bwd-data %d\n", (int)cudnnConvolutionBackwardData(h, &one, w, mem, y, mem, conv,
									 CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, mem, 2048,
									 &zero, x, mem));
	for (i = 0; i < 2; i++)
		printf("bwd-filter %d\n", (int)cudnnConvolutionBackwardFilter(h, &one, x, mem, y, mem, conv,
									     filter_algo, mem,
									     2048, &zero, w, mem));
	printf("bias-act %d\n", (int)cudnnConvolutionBiasActivationForward(
					h, &one, x, mem, w, mem, conv, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
					mem, 0, &zero, y, mem, bias, mem, act, y, mem));
	printf("fwd 3d %d\n", (int)cudnnConvolutionForward(h, &one, x5, mem, w5, mem, conv3,
							  CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, mem, 0, &zero, y5,
							  mem));

	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyTensorDescriptor(y);
	cudnnDestroyTensorDescriptor(bias);
	cudnnDestroyTensorDescriptor(x5);
	cudnnDestroyTensorDescriptor(y5);
	cudnnDestroyFilterDescriptor(w);
	cudnnDestroyFilterDescriptor(w5);
	cudnnDestroyConvolutionDescriptor(conv);
	cudnnDestroyConvolutionDescriptor(conv3);
	cudnnDestroyActivationDescriptor(act);
	if (h)
		cudnnDestroy(h);
	if (argc > 2 && strcmp(argv[2], "stop") == 0) {
		fflush(stdout);
		raise(SIGSTOP);
	}
	return 0;
}
