/*
 * A sweep of the host-side API for the oracle test: every legacy descriptor
 * kind created, set with odd values, read back with its Get, used in the
 * size and output-dimension queries that need no handle or fail without
 * one, and destroyed; the library queries; every status through
 * cudnnGetErrorString. Each status and each value read back is printed.
 * Runs on the real cuDNN without a GPU (the handle is NULL there).
 * usage: host-sweep
 */
#include <stdbool.h>
#include <stdio.h>

#include "g_prototypes.h"

static void
st(const char *what, cudnnStatus_t s)
{
	printf("%s: %d\n", what, (int)s);
}

static void
library(void)
{
	static const int statuses[] = { 0, 1000, 1001, 1002, 2000, 2002, 3000, 4000, 5000, 5003, -1, 77 };
	int v = -1;

	printf("version %zu cudart %zu max device %zu\n", cudnnGetVersion(), cudnnGetCudartVersion(),
	       cudnnGetMaxDeviceVersion());
	for (int t = 0; t < 3; t++) {
		st("property", cudnnGetProperty((libraryPropertyType)t, &v));
		printf("  = %d\n", v);
	}
	for (unsigned i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		printf("%d: %s\n", statuses[i], cudnnGetErrorString((cudnnStatus_t)statuses[i]));
}

static void
tensors(void)
{
	cudnnTensorDescriptor_t a, b, c;
	cudnnFilterDescriptor_t f, g;
	cudnnDataType_t dt;
	cudnnTensorFormat_t fmt;
	int n, ch, h, w, ns, cs, hs, ws, nb, dims[8], strides[8];
	int d5[5] = { 2, 3, 4, 5, 6 }, s5[5] = { 360, 120, 30, 6, 1 }, f5[5] = { 8, 3, 3, 3, 3 };
	size_t size = 0;

	st("create a", cudnnCreateTensorDescriptor(&a));
	st("create b", cudnnCreateTensorDescriptor(&b));
	st("create c", cudnnCreateTensorDescriptor(&c));
	st("set a", cudnnSetTensor4dDescriptor(a, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 3, 5, 7, 9));
	st("get a", cudnnGetTensor4dDescriptor(a, &dt, &n, &ch, &h, &w, &ns, &cs, &hs, &ws));
	printf("  = %d %d %d %d %d / %d %d %d %d\n", (int)dt, n, ch, h, w, ns, cs, hs, ws);
	st("size a", cudnnGetTensorSizeInBytes(a, &size));
	printf("  = %zu\n", size);
	st("set b", cudnnSetTensorNdDescriptor(b, CUDNN_DATA_INT32, 5, d5, s5));
	st("get b", cudnnGetTensorNdDescriptor(b, 8, &dt, &nb, dims, strides));
	printf("  = %d %d: %d %d %d %d %d\n", (int)dt, nb, dims[0], dims[1], dims[2], dims[3], dims[4]);
	st("set c", cudnnSetTensorNdDescriptorEx(c, CUDNN_TENSOR_NCHW, CUDNN_DATA_INT8, 5, d5));
	st("get c 3", cudnnGetTensorNdDescriptor(c, 3, &dt, &nb, dims, strides));
	st("set c bad", cudnnSetTensor4dDescriptor(c, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, -2, 3, 4));

	st("create f", cudnnCreateFilterDescriptor(&f));
	st("create g", cudnnCreateFilterDescriptor(&g));
	st("set f", cudnnSetFilter4dDescriptor(f, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC, 64, 32, 1, 7));
	st("get f", cudnnGetFilter4dDescriptor(f, &dt, &fmt, &n, &ch, &h, &w));
	printf("  = %d %d %d %d %d %d\n", (int)dt, (int)fmt, n, ch, h, w);
	st("size f", cudnnGetFilterSizeInBytes(f, &size));
	st("set g", cudnnSetFilterNdDescriptor(g, CUDNN_DATA_DOUBLE, CUDNN_TENSOR_NCHW, 5, f5));
	st("get g", cudnnGetFilterNdDescriptor(g, 8, &dt, &fmt, &nb, dims));
	printf("  = %d %d %d: %d %d\n", (int)dt, (int)fmt, nb, dims[0], dims[4]);
	cudnnDestroyFilterDescriptor(g);
	cudnnDestroyFilterDescriptor(f);
	cudnnDestroyTensorDescriptor(c);
	cudnnDestroyTensorDescriptor(b);
	cudnnDestroyTensorDescriptor(a);
}

static void
convolutions(void)
{
	cudnnConvolutionDescriptor_t c2, cn;
	cudnnTensorDescriptor_t x;
	cudnnFilterDescriptor_t w;
	cudnnConvolutionMode_t mode;
	cudnnDataType_t dt;
	cudnnMathType_t math;
	cudnnReorderType_t reorder;
	int ph, pw, u, v, dh, dw, groups, len, pad[3], str[3], dil[3], out[4] = { 0 }, count = -1;
	int p3[3] = { 0, 1, 2 }, s3[3] = { 1, 2, 3 }, d3[3] = { 2, 1, 1 };

	st("create c2", cudnnCreateConvolutionDescriptor(&c2));
	st("create cn", cudnnCreateConvolutionDescriptor(&cn));
	st("set c2", cudnnSetConvolution2dDescriptor(c2, 3, 2, 2, 1, 1, 2, CUDNN_CONVOLUTION, CUDNN_DATA_HALF));
	st("math", cudnnSetConvolutionMathType(c2, CUDNN_FMA_MATH));
	st("groups", cudnnSetConvolutionGroupCount(c2, 2));
	st("reorder", cudnnSetConvolutionReorderType(c2, CUDNN_NO_REORDER));
	st("get c2", cudnnGetConvolution2dDescriptor(c2, &ph, &pw, &u, &v, &dh, &dw, &mode, &dt));
	printf("  = %d %d %d %d %d %d %d %d\n", ph, pw, u, v, dh, dw, (int)mode, (int)dt);
	st("get math", cudnnGetConvolutionMathType(c2, &math));
	st("get groups", cudnnGetConvolutionGroupCount(c2, &groups));
	st("get reorder", cudnnGetConvolutionReorderType(c2, &reorder));
	printf("  = %d %d %d\n", (int)math, groups, (int)reorder);
	st("set cn", cudnnSetConvolutionNdDescriptor(cn, 3, p3, s3, d3, CUDNN_CROSS_CORRELATION, CUDNN_DATA_DOUBLE));
	st("get cn", cudnnGetConvolutionNdDescriptor(cn, 3, &len, pad, str, dil, &mode, &dt));
	printf("  = %d: %d %d %d / %d %d %d / %d %d %d\n", len, pad[0], pad[1], pad[2], str[0], str[1], str[2], dil[0],
	       dil[1], dil[2]);
	st("create x", cudnnCreateTensorDescriptor(&x));
	st("create w", cudnnCreateFilterDescriptor(&w));
	st("set x", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 2, 4, 17, 13));
	st("set w", cudnnSetFilter4dDescriptor(w, CUDNN_DATA_HALF, CUDNN_TENSOR_NCHW, 6, 2, 3, 3));
	st("out dim", cudnnGetConvolution2dForwardOutputDim(c2, x, w, &out[0], &out[1], &out[2], &out[3]));
	printf("  = %d %d %d %d\n", out[0], out[1], out[2], out[3]);
	st("fwd max", cudnnGetConvolutionForwardAlgorithmMaxCount(NULL, &count));
	st("bwd data max", cudnnGetConvolutionBackwardDataAlgorithmMaxCount(NULL, &count));
	st("bwd filter max", cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(NULL, &count));
	cudnnDestroyFilterDescriptor(w);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyConvolutionDescriptor(cn);
	cudnnDestroyConvolutionDescriptor(c2);
}

static void
others(void)
{
	cudnnActivationDescriptor_t act;
	cudnnPoolingDescriptor_t p2, pn;
	cudnnLRNDescriptor_t lrn;
	cudnnOpTensorDescriptor_t op;
	cudnnReduceTensorDescriptor_t red;
	cudnnCTCLossDescriptor_t ctc;
	cudnnTensorDescriptor_t x;
	cudnnActivationMode_t am;
	cudnnNanPropagation_t nan;
	cudnnPoolingMode_t pm;
	cudnnOpTensorOp_t oo;
	cudnnReduceTensorOp_t ro;
	cudnnReduceTensorIndices_t ri;
	cudnnIndicesType_t it;
	cudnnDataType_t dt;
	cudnnLossNormalizationMode_t norm;
	cudnnCTCGradMode_t grad;
	double coef = 0, beta = 0, la = 0, lb = 0, lk = 0;
	unsigned ln = 0;
	int wh, ww, vp, hp, vs, hs, nb, win[3], pad[3], str[3], out[4] = { 0 }, maxlen = 0;
	int w3[3] = { 2, 3, 2 }, p3[3] = { 1, 0, 1 }, s3[3] = { 2, 2, 1 };

	st("create act", cudnnCreateActivationDescriptor(&act));
	st("set act", cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_ELU, CUDNN_NOT_PROPAGATE_NAN, 0.25));
	st("get act", cudnnGetActivationDescriptor(act, &am, &nan, &coef));
	printf("  = %d %d %g\n", (int)am, (int)nan, coef);
	st("swish", cudnnSetActivationDescriptorSwishBeta(act, 1.75));
	st("get swish", cudnnGetActivationDescriptorSwishBeta(act, &beta));
	printf("  = %g\n", beta);

	st("create p2", cudnnCreatePoolingDescriptor(&p2));
	st("create pn", cudnnCreatePoolingDescriptor(&pn));
	st("set p2", cudnnSetPooling2dDescriptor(p2, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, CUDNN_PROPAGATE_NAN,
						 3, 2, 1, 0, 2, 1));
	st("get p2", cudnnGetPooling2dDescriptor(p2, &pm, &nan, &wh, &ww, &vp, &hp, &vs, &hs));
	printf("  = %d %d %d %d %d %d %d %d\n", (int)pm, (int)nan, wh, ww, vp, hp, vs, hs);
	st("set pn", cudnnSetPoolingNdDescriptor(pn, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 3, w3,
						 p3, s3));
	st("get pn", cudnnGetPoolingNdDescriptor(pn, 3, &pm, &nan, &nb, win, pad, str));
	printf("  = %d %d %d: %d %d %d\n", (int)pm, (int)nan, nb, win[0], pad[0], str[0]);
	st("create x", cudnnCreateTensorDescriptor(&x));
	st("set x", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 11, 8));
	st("pool out", cudnnGetPooling2dForwardOutputDim(p2, x, &out[0], &out[1], &out[2], &out[3]));
	printf("  = %d %d %d %d\n", out[0], out[1], out[2], out[3]);

	st("create lrn", cudnnCreateLRNDescriptor(&lrn));
	st("set lrn", cudnnSetLRNDescriptor(lrn, 7, 2e-4, 0.5, 1.5));
	st("get lrn", cudnnGetLRNDescriptor(lrn, &ln, &la, &lb, &lk));
	printf("  = %u %g %g %g\n", ln, la, lb, lk);

	st("create op", cudnnCreateOpTensorDescriptor(&op));
	st("set op", cudnnSetOpTensorDescriptor(op, CUDNN_OP_TENSOR_SQRT, CUDNN_DATA_DOUBLE, CUDNN_PROPAGATE_NAN));
	st("get op", cudnnGetOpTensorDescriptor(op, &oo, &dt, &nan));
	printf("  = %d %d %d\n", (int)oo, (int)dt, (int)nan);

	st("create red", cudnnCreateReduceTensorDescriptor(&red));
	st("set red", cudnnSetReduceTensorDescriptor(red, CUDNN_REDUCE_TENSOR_AMAX, CUDNN_DATA_FLOAT,
						     CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
						     CUDNN_64BIT_INDICES));
	st("get red", cudnnGetReduceTensorDescriptor(red, &ro, &dt, &nan, &ri, &it));
	printf("  = %d %d %d %d %d\n", (int)ro, (int)dt, (int)nan, (int)ri, (int)it);

	st("create ctc", cudnnCreateCTCLossDescriptor(&ctc));
	st("set ctc v9", cudnnSetCTCLossDescriptor_v9(ctc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_SOFTMAX,
						      CUDNN_CTC_SKIP_OOB_GRADIENTS, 33));
	st("get ctc v9", cudnnGetCTCLossDescriptor_v9(ctc, &dt, &norm, &grad, &maxlen));
	printf("  = %d %d %d %d\n", (int)dt, (int)norm, (int)grad, maxlen);
	st("get ctc", cudnnGetCTCLossDescriptor(ctc, &dt));
	st("set ctc ex", cudnnSetCTCLossDescriptorEx(ctc, CUDNN_DATA_FLOAT, CUDNN_LOSS_NORMALIZATION_NONE,
						     CUDNN_PROPAGATE_NAN));
	st("get ctc ex", cudnnGetCTCLossDescriptorEx(ctc, &dt, &norm, &nan));
	printf("  = %d %d %d\n", (int)dt, (int)norm, (int)nan);

	cudnnDestroyCTCLossDescriptor(ctc);
	cudnnDestroyReduceTensorDescriptor(red);
	cudnnDestroyOpTensorDescriptor(op);
	cudnnDestroyLRNDescriptor(lrn);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyPoolingDescriptor(pn);
	cudnnDestroyPoolingDescriptor(p2);
	cudnnDestroyActivationDescriptor(act);
}

static void
sequences(void)
{
	cudnnRNNDescriptor_t rnn;
	cudnnRNNDataDescriptor_t rd;
	cudnnSeqDataDescriptor_t sd;
	cudnnDropoutDescriptor_t drop;
	cudnnTensorDescriptor_t x, bn, nsb, nmv;
	cudnnRNNAlgo_t algo;
	cudnnRNNMode_t cell;
	cudnnRNNBiasMode_t bias;
	cudnnDirectionMode_t dir;
	cudnnRNNInputMode_t in;
	cudnnDataType_t dt, mp;
	cudnnMathType_t math;
	cudnnRNNClipMode_t clip;
	cudnnRNNDataLayout_t layout;
	cudnnDropoutDescriptor_t dd = NULL;
	int32_t is, hs, ps, nl;
	uint32_t aux;
	double lc = 0, rc = 0;
	int msl = 0, bs = 0, vs = 0, seq[4] = { 0 }, nb = 0, dims[4] = { 0 };
	int sdims[4] = { 3, 2, 5, 8 }, slen[6] = { 5, 4, 3, 5, 2, 1 };
	cudnnSeqDataAxis_t axes[4] = { CUDNN_SEQDATA_BEAM_DIM, CUDNN_SEQDATA_BATCH_DIM, CUDNN_SEQDATA_TIME_DIM,
				       CUDNN_SEQDATA_VECT_DIM };
	cudnnSeqDataAxis_t gaxes[4];
	size_t nlen = 0, states = 0;
	float fill = 0.5f, gfill = 0;

	st("create rnn", cudnnCreateRNNDescriptor(&rnn));
	st("set rnn", cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_GRU, CUDNN_RNN_SINGLE_INP_BIAS,
					       CUDNN_BIDIRECTIONAL, CUDNN_SKIP_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
					       CUDNN_TENSOR_OP_MATH, 24, 24, 24, 3, NULL, 1u));
	st("get rnn", cudnnGetRNNDescriptor_v8(rnn, &algo, &cell, &bias, &dir, &in, &dt, &mp, &math, &is, &hs, &ps, &nl,
					       &dd, &aux));
	printf("  = %d %d %d %d %d %d %d %d %d %d %d %d %u\n", (int)algo, (int)cell, (int)bias, (int)dir, (int)in,
	       (int)dt, (int)mp, (int)math, is, hs, ps, nl, aux);
	st("clip", cudnnRNNSetClip_v9(rnn, CUDNN_RNN_CLIP_MINMAX, -4.5, 4.5));
	st("get clip", cudnnRNNGetClip_v9(rnn, &clip, &lc, &rc));
	printf("  = %d %g %g\n", (int)clip, lc, rc);

	st("create rnn data", cudnnCreateRNNDataDescriptor(&rd));
	st("set rnn data", cudnnSetRNNDataDescriptor(rd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_BATCH_MAJOR_UNPACKED,
						     6, 4, 24, slen, &fill));
	st("get rnn data", cudnnGetRNNDataDescriptor(rd, &dt, &layout, &msl, &bs, &vs, 4, seq, &gfill));
	printf("  = %d %d %d %d %d: %d %d %d %d %g\n", (int)dt, (int)layout, msl, bs, vs, seq[0], seq[1], seq[2],
	       seq[3], gfill);

	st("create seq", cudnnCreateSeqDataDescriptor(&sd));
	st("set seq", cudnnSetSeqDataDescriptor(sd, CUDNN_DATA_FLOAT, 4, sdims, axes, 6, slen, NULL));
	st("get seq", cudnnGetSeqDataDescriptor(sd, &dt, &nb, 4, dims, gaxes, &nlen, 0, NULL, NULL));
	printf("  = %d %d: %d %d %d %d %zu\n", (int)dt, nb, dims[0], dims[1], dims[2], dims[3], nlen);

	st("create dropout", cudnnCreateDropoutDescriptor(&drop));
	st("dropout states", cudnnDropoutGetStatesSize(NULL, &states));

	st("create x", cudnnCreateTensorDescriptor(&x));
	st("create bn", cudnnCreateTensorDescriptor(&bn));
	st("create nsb", cudnnCreateTensorDescriptor(&nsb));
	st("create nmv", cudnnCreateTensorDescriptor(&nmv));
	st("set x", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 4, 6, 5, 3));
	st("derive bn", cudnnDeriveBNTensorDescriptor(bn, x, CUDNN_BATCHNORM_SPATIAL));
	st("derive norm", cudnnDeriveNormTensorDescriptor(nsb, nmv, x, CUDNN_NORM_PER_CHANNEL, 1));

	cudnnDestroyTensorDescriptor(nmv);
	cudnnDestroyTensorDescriptor(nsb);
	cudnnDestroyTensorDescriptor(bn);
	cudnnDestroyTensorDescriptor(x);
	cudnnDestroyDropoutDescriptor(drop);
	cudnnDestroySeqDataDescriptor(sd);
	cudnnDestroyRNNDataDescriptor(rd);
	cudnnDestroyRNNDescriptor(rnn);
}

#define SET(d, name, type, n, p) st(#name, cudnnBackendSetAttribute(d, name, type, n, p))

static void
backend(void)
{
	cudnnBackendDescriptor_t pw = NULL, mm = NULL, red = NULL, t = NULL;
	cudnnPointwiseMode_t mode = CUDNN_POINTWISE_RELU_FWD, gmode = CUDNN_POINTWISE_ADD;
	cudnnDataType_t half = CUDNN_DATA_HALF, flt = CUDNN_DATA_FLOAT;
	cudnnNanPropagation_t nan = CUDNN_PROPAGATE_NAN;
	cudnnReduceTensorOp_t rop = CUDNN_REDUCE_TENSOR_MAX;
	double lower = -0.5, upper = 6.0, slope = 0.125, pad = 1.0;
	int64_t axis = 3, dims[5] = { 1, 2, 3, 4, 5 }, strides[5] = { 120, 60, 20, 5, 1 }, uid = 42, align = 8;
	int64_t n = -1, vect = 1, vdim = -1, got[5] = { 0 };
	bool virt = true, byval = false;

	st("create pw", cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &pw));
	SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
	SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &flt);
	SET(pw, CUDNN_ATTR_POINTWISE_NAN_PROPAGATION, CUDNN_TYPE_NAN_PROPOGATION, 1, &nan);
	SET(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_DOUBLE, 1, &lower);
	SET(pw, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE, 1, &upper);
	SET(pw, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_DOUBLE, 1, &slope);
	SET(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
	st("finalize pw", cudnnBackendFinalize(pw));
	st("get pw mode", cudnnBackendGetAttribute(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &n,
						   &gmode));
	printf("  = %lld %d\n", (long long)n, (int)gmode);

	st("create mm", cudnnBackendCreateDescriptor(CUDNN_BACKEND_MATMUL_DESCRIPTOR, &mm));
	SET(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &half);
	SET(mm, CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &pad);
	st("finalize mm", cudnnBackendFinalize(mm));

	st("create red", cudnnBackendCreateDescriptor(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &red));
	SET(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &rop);
	SET(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &flt);
	st("finalize red", cudnnBackendFinalize(red));

	st("create t", cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
	SET(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &half);
	SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 5, dims);
	SET(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 5, strides);
	SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	SET(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	SET(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
	SET(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval);
	SET(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, CUDNN_TYPE_INT64, 1, &vect);
	SET(t, CUDNN_ATTR_TENSOR_VECTORIZED_DIMENSION, CUDNN_TYPE_INT64, 1, &vdim);
	/* A wrong type and a negative count: refused, and logged all the same. */
	SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_FLOAT, 1, &lower);
	SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, -1, dims);
	st("finalize t", cudnnBackendFinalize(t));
	st("get dims", cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 5, &n, got));
	printf("  = %lld: %lld %lld\n", (long long)n, (long long)got[0], (long long)got[4]);
	cudnnBackendDestroyDescriptor(t);
	cudnnBackendDestroyDescriptor(red);
	cudnnBackendDestroyDescriptor(mm);
	cudnnBackendDestroyDescriptor(pw);
}

int
main(void)
{
	library();
	tensors();
	convolutions();
	others();
	sequences();
	backend();
	printf("done\n");
	return 0;
}
