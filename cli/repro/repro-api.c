/*
 * What cudnnspy repro knows of cuDNN's legacy API: a hand-written table,
 * because the generator needs the role of each parameter (which pointer is
 * data read by the call, which descriptor describes it, which size goes
 * with a workspace), and the API description does not say that. Parameter
 * names are cuDNN's, as the records carry them.
 */
#include "repro.h"

#include <string.h>

const struct repro_kind_info repro_kinds[RK_COUNT] = {
	[RK_TENSOR] = { "tensor", "cudnnTensorDescriptor_t", "cudnnCreateTensorDescriptor",
			"cudnnDestroyTensorDescriptor" },
	[RK_FILTER] = { "filter", "cudnnFilterDescriptor_t", "cudnnCreateFilterDescriptor",
			"cudnnDestroyFilterDescriptor" },
	[RK_CONVOLUTION] = { "convolution", "cudnnConvolutionDescriptor_t", "cudnnCreateConvolutionDescriptor",
			     "cudnnDestroyConvolutionDescriptor" },
	[RK_ACTIVATION] = { "activation", "cudnnActivationDescriptor_t", "cudnnCreateActivationDescriptor",
			    "cudnnDestroyActivationDescriptor" },
};

#define H { "handle", RP_HANDLE, 0, NULL }
#define D(n, k) { n, RP_DESC, k, NULL }
#define IN(n, d) { n, RP_DATA_IN, d, NULL }
#define OUT(n, d) { n, RP_DATA_OUT, d, NULL }
#define E(n, t) { n, RP_ENUM, 0, t }
#define I(n) { n, RP_INT, 0, NULL }
#define ARR(n, c) { n, RP_INT_ARRAY, c, NULL }
#define DBL(n) { n, RP_DOUBLE, 0, NULL }
#define ALPHA(n) { n, RP_ALPHA, 0, NULL }
#define BETA(n) { n, RP_BETA, 0, NULL }
#define WS(n, s) { n, RP_WORKSPACE, s, NULL }
#define SZ(n) { n, RP_SIZE, 0, NULL }

static const struct repro_fn fns[] = {
	/* The shapes. */
	{ "cudnnSetTensor4dDescriptor", RF_SET, RK_TENSOR, NULL, NULL, NULL, 7,
	  { D("tensorDesc", RK_TENSOR), E("format", "cudnnTensorFormat_t"), E("dataType", "cudnnDataType_t"),
	    I("n"), I("c"), I("h"), I("w") } },
	{ "cudnnSetTensor4dDescriptorEx", RF_SET, RK_TENSOR, NULL, NULL, NULL, 10,
	  { D("tensorDesc", RK_TENSOR), E("dataType", "cudnnDataType_t"), I("n"), I("c"), I("h"), I("w"),
	    I("nStride"), I("cStride"), I("hStride"), I("wStride") } },
	{ "cudnnSetTensorNdDescriptor", RF_SET, RK_TENSOR, NULL, NULL, NULL, 5,
	  { D("tensorDesc", RK_TENSOR), E("dataType", "cudnnDataType_t"), I("nbDims"), ARR("dimA", 2),
	    ARR("strideA", 2) } },
	{ "cudnnSetTensorNdDescriptorEx", RF_SET, RK_TENSOR, NULL, NULL, NULL, 5,
	  { D("tensorDesc", RK_TENSOR), E("format", "cudnnTensorFormat_t"), E("dataType", "cudnnDataType_t"),
	    I("nbDims"), ARR("dimA", 3) } },
	{ "cudnnSetFilter4dDescriptor", RF_SET, RK_FILTER, NULL, NULL, NULL, 7,
	  { D("filterDesc", RK_FILTER), E("dataType", "cudnnDataType_t"), E("format", "cudnnTensorFormat_t"),
	    I("k"), I("c"), I("h"), I("w") } },
	{ "cudnnSetFilterNdDescriptor", RF_SET, RK_FILTER, NULL, NULL, NULL, 5,
	  { D("filterDesc", RK_FILTER), E("dataType", "cudnnDataType_t"), E("format", "cudnnTensorFormat_t"),
	    I("nbDims"), ARR("filterDimA", 3) } },
	{ "cudnnSetConvolution2dDescriptor", RF_SET, RK_CONVOLUTION, NULL, NULL, NULL, 9,
	  { D("convDesc", RK_CONVOLUTION), I("pad_h"), I("pad_w"), I("u"), I("v"), I("dilation_h"),
	    I("dilation_w"), E("mode", "cudnnConvolutionMode_t"), E("computeType", "cudnnDataType_t") } },
	{ "cudnnSetConvolutionNdDescriptor", RF_SET, RK_CONVOLUTION, NULL, NULL, NULL, 7,
	  { D("convDesc", RK_CONVOLUTION), I("arrayLength"), ARR("padA", 1), ARR("filterStrideA", 1),
	    ARR("dilationA", 1), E("mode", "cudnnConvolutionMode_t"), E("computeType", "cudnnDataType_t") } },
	{ "cudnnSetActivationDescriptor", RF_SET, RK_ACTIVATION, NULL, NULL, NULL, 4,
	  { D("activationDesc", RK_ACTIVATION), E("mode", "cudnnActivationMode_t"),
	    E("reluNanOpt", "cudnnNanPropagation_t"), DBL("coef") } },

	/* Single values beside the shape. */
	{ "cudnnSetConvolutionMathType", RF_SETTING, RK_CONVOLUTION, "mathType", NULL, NULL, 2,
	  { D("convDesc", RK_CONVOLUTION), E("mathType", "cudnnMathType_t") } },
	{ "cudnnSetConvolutionGroupCount", RF_SETTING, RK_CONVOLUTION, "groupCount", NULL, NULL, 2,
	  { D("convDesc", RK_CONVOLUTION), I("groupCount") } },
	{ "cudnnSetConvolutionReorderType", RF_SETTING, RK_CONVOLUTION, "reorderType", NULL, NULL, 2,
	  { D("convDesc", RK_CONVOLUTION), E("reorderType", "cudnnReorderType_t") } },
	{ "cudnnSetActivationDescriptorSwishBeta", RF_SETTING, RK_ACTIVATION, "swish_beta", NULL, NULL, 2,
	  { D("activationDesc", RK_ACTIVATION), DBL("swish_beta") } },

	/* The calls. */
	{ "cudnnConvolutionForward", RF_CALL, 0, NULL, NULL, "fwd", 13,
	  { H, ALPHA("alpha"), D("xDesc", RK_TENSOR), IN("x", 2), D("wDesc", RK_FILTER), IN("w", 4),
	    D("convDesc", RK_CONVOLUTION), E("algo", "cudnnConvolutionFwdAlgo_t"), WS("workSpace", 9),
	    SZ("workSpaceSizeInBytes"), BETA("beta"), D("yDesc", RK_TENSOR), OUT("y", 11) } },
	{ "cudnnConvolutionBackwardData", RF_CALL, 0, NULL, NULL, "bwd-data", 13,
	  { H, ALPHA("alpha"), D("wDesc", RK_FILTER), IN("w", 2), D("dyDesc", RK_TENSOR), IN("dy", 4),
	    D("convDesc", RK_CONVOLUTION), E("algo", "cudnnConvolutionBwdDataAlgo_t"), WS("workSpace", 9),
	    SZ("workSpaceSizeInBytes"), BETA("beta"), D("dxDesc", RK_TENSOR), OUT("dx", 11) } },
	{ "cudnnConvolutionBackwardFilter", RF_CALL, 0, NULL, NULL, "bwd-filter", 13,
	  { H, ALPHA("alpha"), D("xDesc", RK_TENSOR), IN("x", 2), D("dyDesc", RK_TENSOR), IN("dy", 4),
	    D("convDesc", RK_CONVOLUTION), E("algo", "cudnnConvolutionBwdFilterAlgo_t"), WS("workSpace", 9),
	    SZ("workSpaceSizeInBytes"), BETA("beta"), D("dwDesc", RK_FILTER), OUT("dw", 11) } },
	{ "cudnnConvolutionBiasActivationForward", RF_CALL, 0, NULL, NULL, "fwd", 18,
	  { H, ALPHA("alpha1"), D("xDesc", RK_TENSOR), IN("x", 2), D("wDesc", RK_FILTER), IN("w", 4),
	    D("convDesc", RK_CONVOLUTION), E("algo", "cudnnConvolutionFwdAlgo_t"), WS("workSpace", 9),
	    SZ("workSpaceSizeInBytes"), BETA("alpha2"), D("zDesc", RK_TENSOR), IN("z", 11),
	    D("biasDesc", RK_TENSOR), IN("bias", 13), D("activationDesc", RK_ACTIVATION), D("yDesc", RK_TENSOR),
	    OUT("y", 16) } },
	{ "cudnnConvolutionBackwardBias", RF_CALL, 0, NULL, NULL, NULL, 7,
	  { H, ALPHA("alpha"), D("dyDesc", RK_TENSOR), IN("dy", 2), BETA("beta"), D("dbDesc", RK_TENSOR),
	    OUT("db", 5) } },
	{ "cudnnActivationForward", RF_CALL, 0, NULL, NULL, NULL, 8,
	  { H, D("activationDesc", RK_ACTIVATION), ALPHA("alpha"), D("xDesc", RK_TENSOR), IN("x", 3),
	    BETA("beta"), D("yDesc", RK_TENSOR), OUT("y", 6) } },
	{ "cudnnAddTensor", RF_CALL, 0, NULL, NULL, NULL, 7,
	  { H, ALPHA("alpha"), D("aDesc", RK_TENSOR), IN("A", 2), BETA("beta"), D("cDesc", RK_TENSOR),
	    IN("C", 5) } },
	{ "cudnnFindConvolutionForwardAlgorithm", RF_CALL, 0, NULL, "fwd", NULL, 8,
	  { H, D("xDesc", RK_TENSOR), D("wDesc", RK_FILTER), D("convDesc", RK_CONVOLUTION), D("yDesc", RK_TENSOR),
	    I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionFwdAlgoPerf_t" } } },
	{ "cudnnGetConvolutionForwardAlgorithm_v7", RF_CALL, 0, NULL, "fwd", NULL, 8,
	  { H, D("srcDesc", RK_TENSOR), D("filterDesc", RK_FILTER), D("convDesc", RK_CONVOLUTION),
	    D("destDesc", RK_TENSOR), I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionFwdAlgoPerf_t" } } },
	{ "cudnnFindConvolutionBackwardDataAlgorithm", RF_CALL, 0, NULL, "bwd-data", NULL, 8,
	  { H, D("wDesc", RK_FILTER), D("dyDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION), D("dxDesc", RK_TENSOR),
	    I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionBwdDataAlgoPerf_t" } } },
	{ "cudnnGetConvolutionBackwardDataAlgorithm_v7", RF_CALL, 0, NULL, "bwd-data", NULL, 8,
	  { H, D("filterDesc", RK_FILTER), D("diffDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION),
	    D("gradDesc", RK_TENSOR), I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionBwdDataAlgoPerf_t" } } },
	{ "cudnnFindConvolutionBackwardFilterAlgorithm", RF_CALL, 0, NULL, "bwd-filter", NULL, 8,
	  { H, D("xDesc", RK_TENSOR), D("dyDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION),
	    D("dwDesc", RK_FILTER), I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionBwdFilterAlgoPerf_t" } } },
	{ "cudnnGetConvolutionBackwardFilterAlgorithm_v7", RF_CALL, 0, NULL, "bwd-filter", NULL, 8,
	  { H, D("srcDesc", RK_TENSOR), D("diffDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION),
	    D("gradDesc", RK_FILTER), I("requestedAlgoCount"), { "returnedAlgoCount", RP_OUT_INT, 0, NULL },
	    { "perfResults", RP_PERF, 5, "cudnnConvolutionBwdFilterAlgoPerf_t" } } },
	{ "cudnnGetConvolutionForwardWorkspaceSize", RF_CALL, 0, NULL, NULL, NULL, 7,
	  { H, D("xDesc", RK_TENSOR), D("wDesc", RK_FILTER), D("convDesc", RK_CONVOLUTION), D("yDesc", RK_TENSOR),
	    E("algo", "cudnnConvolutionFwdAlgo_t"), { "sizeInBytes", RP_OUT_SIZE, 0, NULL } } },
	{ "cudnnGetConvolutionBackwardDataWorkspaceSize", RF_CALL, 0, NULL, NULL, NULL, 7,
	  { H, D("wDesc", RK_FILTER), D("dyDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION),
	    D("dxDesc", RK_TENSOR), E("algo", "cudnnConvolutionBwdDataAlgo_t"),
	    { "sizeInBytes", RP_OUT_SIZE, 0, NULL } } },
	{ "cudnnGetConvolutionBackwardFilterWorkspaceSize", RF_CALL, 0, NULL, NULL, NULL, 7,
	  { H, D("xDesc", RK_TENSOR), D("dyDesc", RK_TENSOR), D("convDesc", RK_CONVOLUTION),
	    D("gradDesc", RK_FILTER), E("algo", "cudnnConvolutionBwdFilterAlgo_t"),
	    { "sizeInBytes", RP_OUT_SIZE, 0, NULL } } },
	/* The graph API: what it needs comes from the backend calls before it (repro-graph.c). */
	{ "cudnnBackendExecute", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	/* Executions too: the plan and pack as cudnnBackendExecute's, and a CUDA graph the repro makes. */
	{ "cudnnBackendPopulateCudaGraph", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	{ "cudnnBackendUpdateCudaGraph", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	/* Only as a failure (repro.c): a descriptor, most often a plan, that cuDNN would not finalize. */
	{ "cudnnBackendFinalize", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	/* Only as failures: an attribute cuDNN would not take or give, on a descriptor the records rebuild. */
	{ "cudnnBackendSetAttribute", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	{ "cudnnBackendGetAttribute", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	{ "cudnnBackendInitialize", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
	/* A failed handle creation: the call is the handle step itself. */
	{ "cudnnCreate", RF_CALL, 0, NULL, NULL, NULL, 0, { { NULL, RP_HANDLE, 0, NULL } } },
};

const struct repro_fn *
repro_fn_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (strcmp(fns[i].name, name) == 0)
			return &fns[i];
	return NULL;
}

const struct repro_fn *
repro_setting_for(int kind, const char *beside)
{
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (fns[i].cls == RF_SETTING && fns[i].kind == kind && strcmp(fns[i].beside, beside) == 0)
			return &fns[i];
	return NULL;
}

/* Per cudnnDataType_t name: element bytes, and how the program fills one. */
static const struct {
	const char *name;
	size_t size;
	const char *kind;
} types[] = {
	{ "CUDNN_DATA_FLOAT", 4, "ELEM_F32" },
	{ "CUDNN_DATA_DOUBLE", 8, "ELEM_F64" },
	{ "CUDNN_DATA_HALF", 2, "ELEM_F16" },
	{ "CUDNN_DATA_BFLOAT16", 2, "ELEM_BF16" },
	{ "CUDNN_DATA_INT8", 1, "ELEM_I8" },
	{ "CUDNN_DATA_UINT8", 1, "ELEM_U8" },
	{ "CUDNN_DATA_INT32", 4, "ELEM_I32" },
	{ "CUDNN_DATA_INT64", 8, "ELEM_I64" },
	/* Vectorized types count each channel as one element of a byte. */
	{ "CUDNN_DATA_INT8x4", 1, "ELEM_I8" },
	{ "CUDNN_DATA_UINT8x4", 1, "ELEM_U8" },
	{ "CUDNN_DATA_INT8x32", 1, "ELEM_I8" },
	{ "CUDNN_DATA_BOOLEAN", 1, "ELEM_U8" },
	{ "CUDNN_DATA_FP8_E4M3", 1, "ELEM_U8" },
	{ "CUDNN_DATA_FP8_E5M2", 1, "ELEM_U8" },
};

size_t
repro_elem_size(const char *name)
{
	for (size_t i = 0; name && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].name, name) == 0)
			return types[i].size;
	return 0;
}

const char *
repro_elem_kind(const char *name)
{
	for (size_t i = 0; name && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(types[i].name, name) == 0)
			return types[i].kind;
	return "ELEM_U8";
}
