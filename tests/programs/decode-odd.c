/*
 * The odd cases of decoding, each set up with known values and then shown
 * by a call that fails on purpose (a NULL handle, or a finalized backend
 * descriptor), so that its failure record carries the remembered state:
 * the 20 parameters of cudnnSetAttnDescriptor; a backend tensor whose
 * strides are read back in part; a tensor transform with its fold array
 * (two fewer elements than dimensions) and an out-of-range direction; a
 * Set that fails after cuDNN rewrote the descriptor, then cuDNN's own Get;
 * scaling factors of both types, and input arrays of a failed call; an RNN
 * data descriptor's sequence lengths and padding fill of two types; an RNN
 * descriptor's clip, set before and after its shape; a
 * descriptor cuDNN writes (cudnnDeriveBNTensorDescriptor); a negative enum
 * value; cuDNN's message of the last failure. Every status
 * and every value read back is printed, so that stdout shows what cuDNN
 * itself did. Runs on the real cuDNN without a GPU, and on the fake.
 * usage: decode-odd
 */
#include <stdio.h>

#include "g_prototypes.h"

static void
status(const char *what, cudnnStatus_t st)
{
	printf("%s: %d\n", what, (int)st);
}

static void
attention(void)
{
	cudnnAttnDescriptor_t attn = NULL;
	size_t w = 0, ws = 0, rs = 0;

	status("create attn", cudnnCreateAttnDescriptor(&attn));
	/* Distinct values in every position: a parameter read from the wrong place shows. */
	status("set attn", cudnnSetAttnDescriptor(attn, 1, 2, 0.125, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
						  CUDNN_DEFAULT_MATH, NULL, NULL, 16, 24, 32, 8, 8, 12, 4, 101, 102,
						  103, 1));
	cudnnGetMultiHeadAttnBuffers(NULL, attn, &w, &ws, &rs);
	cudnnDestroyAttnDescriptor(attn);
}

static void
partial_read_back(void)
{
	cudnnBackendDescriptor_t t = NULL;
	int64_t dims[4] = { 2, 3, 4, 5 }, strides[4] = { 60, 20, 5, 1 }, uid = 7, align = 16, got[4] = { 0 }, n = -1;
	cudnnDataType_t dt = CUDNN_DATA_FLOAT;

	status("create tensor", cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	status("finalize tensor", cudnnBackendFinalize(t));
	/* Two of the four strides. */
	status("get strides 2", cudnnBackendGetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 2, &n, got));
	printf("strides read: count %lld, %lld %lld %lld %lld\n", (long long)n, (long long)got[0], (long long)got[1],
	       (long long)got[2], (long long)got[3]);
	/* Finalized: cuDNN refuses, and the failure record shows what the spy remembers. */
	cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	cudnnBackendDestroyDescriptor(t);
}

static void
transform(void)
{
	cudnnTensorTransformDescriptor_t tr = NULL;
	int32_t before[4] = { 0, 1, 2, 3 }, after[4] = { 4, 5, 6, 7 }, gbefore[4] = { -1, -1, -1, -1 };
	int32_t gafter[4] = { -1, -1, -1, -1 };
	/* Two elements only, as cuDNN reads: a third would be past the array. */
	uint32_t fold[2] = { 2, 3 }, gfold[4] = { 9, 9, 9, 9 };
	cudnnTensorFormat_t fmt = (cudnnTensorFormat_t)-1;
	cudnnFoldingDirection_t dir = (cudnnFoldingDirection_t)-1;

	status("create transform", cudnnCreateTensorTransformDescriptor(&tr));
	status("set transform", cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NHWC, before, after, fold,
								  (cudnnFoldingDirection_t)2));
	status("get transform", cudnnGetTensorTransformDescriptor(tr, 4, &fmt, gbefore, gafter, gfold, &dir));
	printf("transform read: format %d pads %d %d %d %d / %d %d %d %d fold %u %u %u %u direction %d\n", (int)fmt,
	       gbefore[0], gbefore[1], gbefore[2], gbefore[3], gafter[0], gafter[1], gafter[2], gafter[3], gfold[0],
	       gfold[1], gfold[2], gfold[3], (int)dir);
	cudnnTransformTensorEx(NULL, tr, NULL, NULL, NULL, NULL, NULL, NULL);
	cudnnDestroyTensorTransformDescriptor(tr);
}

static void
failed_set(void)
{
	cudnnTensorDescriptor_t t = NULL;
	cudnnDataType_t dt = (cudnnDataType_t)-1;
	int n = -1, c = -1, h = -1, w = -1, ns = -1, cs = -1, hs = -1, ws = -1;

	status("create tensor4d", cudnnCreateTensorDescriptor(&t));
	status("set 4d", cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4));
	/* n = 0: refused, after cuDNN has written the new data type into the descriptor (9.19). */
	status("set 4d ex", cudnnSetTensor4dDescriptorEx(t, CUDNN_DATA_HALF, 0, 4, 2, 2, 16, 4, 2, 1));
	status("get 4d", cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
	printf("tensor read: %d %dx%dx%dx%d strides %dx%dx%dx%d\n", (int)dt, n, c, h, w, ns, cs, hs, ws);
	cudnnAddTensor(NULL, NULL, t, NULL, NULL, t, NULL);
	status("set 4d again", cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4));
	cudnnActivationForward(NULL, NULL, NULL, t, NULL, NULL, t, NULL);
	cudnnDestroyTensorDescriptor(t);
}

static void
scaling(void)
{
	cudnnTensorDescriptor_t f = NULL, d = NULL;
	float alpha = 1.5f, beta = 0.25f;
	double dalpha = 2.5, dbeta = -0.125;
	int dims[3] = { 2, 3, 4 }, strides[3] = { 12, 4, 1 }, bad[3] = { 2, 0, 4 };

	status("create float", cudnnCreateTensorDescriptor(&f));
	status("create double", cudnnCreateTensorDescriptor(&d));
	status("set float", cudnnSetTensor4dDescriptor(f, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4));
	status("set double", cudnnSetTensorNdDescriptor(d, CUDNN_DATA_DOUBLE, 3, dims, strides));
	/* Scaling factors are double for a double output, float otherwise. */
	cudnnAddTensor(NULL, &alpha, d, NULL, &beta, f, NULL);
	cudnnAddTensor(NULL, &dalpha, f, NULL, &dbeta, d, NULL);
	/* Refused with the dimensions it was given, which its failure record shows. */
	status("set nd 0", cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 3, bad, strides));
	cudnnDestroyTensorDescriptor(f);
	cudnnDestroyTensorDescriptor(d);
}

static void
rnn_data(void)
{
	cudnnRNNDataDescriptor_t d = NULL;
	int seq[3] = { 5, 3, 2 };
	float fill = -1.5f;
	double dfill = 2.25;

	status("create rnn data", cudnnCreateRNNDataDescriptor(&d));
	/* The padding fill is a value of the descriptor's own data type. */
	status("set rnn data float", cudnnSetRNNDataDescriptor(d, CUDNN_DATA_FLOAT,
							       CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 4, seq,
							       &fill));
	status("set rnn data double", cudnnSetRNNDataDescriptor(d, CUDNN_DATA_DOUBLE,
								CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 5, 3, 4, seq,
								&dfill));
	cudnnDestroyRNNDataDescriptor(d);
}

static void
rnn_clip(void)
{
	cudnnRNNDescriptor_t r = NULL;
	size_t ws = 0;

	status("create rnn", cudnnCreateRNNDescriptor(&r));
	/* A clip set before the shape: the shape's Set resets it (9.19). */
	status("clip before", cudnnRNNSetClip_v8(r, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -1.0, 1.0));
	status("set rnn", cudnnSetRNNDescriptor_v8(r, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
						   CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
						   CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, 16, 32, 32, 2, NULL, 0));
	cudnnGetRNNWeightSpaceSize(NULL, r, &ws);
	status("clip", cudnnRNNSetClip_v8(r, CUDNN_RNN_CLIP_MINMAX, CUDNN_PROPAGATE_NAN, -2.5, 3.5));
	cudnnGetRNNWeightSpaceSize(NULL, r, &ws);
	cudnnDestroyRNNDescriptor(r);
}

static void
derived(void)
{
	cudnnTensorDescriptor_t x = NULL, d = NULL;

	status("create x", cudnnCreateTensorDescriptor(&x));
	status("create derived", cudnnCreateTensorDescriptor(&d));
	status("set x", cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_HALF, 4, 6, 5, 3));
	status("set derived", cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_DOUBLE, 1, 1, 1, 1));
	/* cuDNN writes the derived shape (1x6x1x1) into d: what the spy remembered of d no longer holds. */
	status("derive", cudnnDeriveBNTensorDescriptor(d, x, CUDNN_BATCHNORM_SPATIAL));
	cudnnActivationForward(NULL, NULL, NULL, d, NULL, NULL, d, NULL);
	cudnnDestroyTensorDescriptor(d);
	cudnnDestroyTensorDescriptor(x);
}

static void
negative_enum(void)
{
	const char *s = cudnnGetErrorString((cudnnStatus_t)-1);
	cudnnTensorDescriptor_t t = NULL;

	printf("error string of -1: %s\n", s ? s : "(null)");
	status("create tensor -1", cudnnCreateTensorDescriptor(&t));
	status("set 4d format -1", cudnnSetTensor4dDescriptor(t, (cudnnTensorFormat_t)-1, CUDNN_DATA_FLOAT, 1, 1, 1, 1));
	cudnnDestroyTensorDescriptor(t);
}

static void
last_error(void)
{
	char message[256] = "untouched";

	cudnnGetLastErrorString(message, sizeof(message));
	printf("last error: [%s]\n", message);
}

int
main(void)
{
	attention();
	partial_read_back();
	transform();
	failed_set();
	scaling();
	rnn_data();
	rnn_clip();
	derived();
	negative_enum();
	last_error();
	printf("done\n");
	return 0;
}
