/*
 * Deviceless planning with the real cuDNN (9.8 and later), the way
 * cudnn-frontend's DeviceProperties / Graph::set_device_properties do it:
 * no cudnnHandle_t at all (there is no GPU), a CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR
 * made from its JSON representation instead, set on the engine heuristics
 * (CUDNN_ATTR_ENGINEHEUR_DEVICEPROP); the operation graph has no handle, and
 * neither has the plan (its device comes with the engine config).
 *
 * Three graphs: a half-precision convolution with a ReLU after it, a matmul,
 * and a scaled-dot-product attention forward expanded into matmuls,
 * pointwise and reduction operations with a causal mask, as cudnn-frontend
 * lowers it. Each graph's parts are destroyed right after what uses them is
 * finalized (tensors and the convolution once their operation is, the
 * operations once the graph is). For each graph, heuristics in
 * CUDNN_HEUR_MODE_A and CUDNN_HEUR_MODE_FALLBACK; for every config returned,
 * its engine's global index and its knob choices are read and a plan is
 * finalized (many answer NOT_SUPPORTED), its workspace read when it works.
 *
 * One line per plan finalized:
 *   graph=conv mode=a rank=0 engine=N knobs=T:V,... status=S workspace=W
 * and a summary per graph. Exit status 0 when the device properties and
 * every graph finalized and each heuristics query answered, 1 otherwise.
 *
 * usage: real-graph [JSON-FILE [GRAPH]]
 *   JSON-FILE  the device properties ("-": an H100 SXM, the default)
 *   GRAPH      conv, matmul, sdpa, layernorm or rmsnorm: that graph alone (the
 *              norms only when named)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"

#define D CUDNN_TYPE_BACKEND_DESCRIPTOR
#define MAX_CFGS 64
#define MAX_KNOBS 16

/*
 * The device's properties as cuDNN 9.19 parses them: every one of these 23
 * keys is required (finalize answers BAD_PARAM naming the first missing key,
 * or "Is<T>" for a value of the wrong JSON type: the flags are numbers, not
 * booleans). deviceVer is the compute capability times 100, driverVer the
 * CUDA driver version. The values are those of an H100 SXM5.
 */
static const char default_props[] =
	"{\"deviceName\":\"NVIDIA H100 80GB HBM3\",\"cudaDeviceId\":0,\"deviceVer\":900,\"driverVer\":13000,"
	"\"multiProcessorCount\":132,\"totalGlobalMem\":85520809984,"
	"\"maxGridSize\":[2147483647,65535,65535],\"maxBlockSize\":[1024,1024,64],"
	"\"regsPerBlock\":65536,\"warpSize\":32,\"maxSharedMemoryPerBlock\":49152,"
	"\"maxSharedMemoryPerBlockOptin\":232448,\"reservedSharedMemoryPerBlock\":1024,"
	"\"maxRegistersPerSM\":65536,\"maxCtasPerSM\":32,\"maxThreadsPerBlock\":1024,\"maxThreadsPerSM\":2048,"
	"\"pciDeviceId\":0,\"isTccDriver\":0,\"supportCoopLaunch\":1,"
	"\"smClockRateKHz\":1980000,\"memClockRateKHz\":2619000,\"l2CacheSize\":52428800}";

static int failed;

static cudnnStatus_t
check(const char *what, cudnnStatus_t st)
{
	if (st != CUDNN_STATUS_SUCCESS) {
		char msg[512] = "";

		cudnnGetLastErrorString(msg, sizeof(msg));
		fprintf(stderr, "real-graph: %s: status %d (%s)\n", what, (int)st, msg);
	}
	return st;
}

static void
set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n,
    const void *v)
{
	if (check("set attribute", cudnnBackendSetAttribute(d, name, type, n, v)) != 0) {
		fprintf(stderr, "real-graph: (attribute %d)\n", (int)name);
		failed = 1;
	}
}

static cudnnBackendDescriptor_t
create(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d = NULL;

	if (check("create descriptor", cudnnBackendCreateDescriptor(type, &d)) != 0)
		failed = 1;
	return d;
}

static void
finalize(const char *what, cudnnBackendDescriptor_t d)
{
	if (check(what, cudnnBackendFinalize(d)) != 0)
		failed = 1;
}

enum { REAL = 0, VIRTUAL = 1, BY_VALUE = 2 };

/* A tensor of `nd` dimensions; strides NULL means packed, the last dimension innermost. */
static cudnnBackendDescriptor_t
tensor(int64_t uid, cudnnDataType_t dt, int nd, const int64_t *dims, const int64_t *strides, int how)
{
	cudnnBackendDescriptor_t t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t packed[8], align = 16;
	bool yes = true;

	if (!strides) {
		packed[nd - 1] = 1;
		for (int i = nd - 2; i >= 0; i--)
			packed[i] = packed[i + 1] * dims[i + 1];
		strides = packed;
	}
	set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
	set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims);
	set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides);
	set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	if (how == VIRTUAL)
		set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
	if (how == BY_VALUE)
		set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
	finalize("tensor", t);
	return t;
}

/* Descriptors to destroy once the next thing that uses them is finalized. */
struct parts {
	cudnnBackendDescriptor_t d[32];
	int n;
};

static cudnnBackendDescriptor_t
keep(struct parts *p, cudnnBackendDescriptor_t d)
{
	if (p->n < (int)(sizeof(p->d) / sizeof(p->d[0])))
		p->d[p->n++] = d;
	return d;
}

static void
drop(struct parts *p)
{
	for (int i = 0; i < p->n; i++)
		cudnnBackendDestroyDescriptor(p->d[i]);
	p->n = 0;
}

/*
 * A pointwise operation y = mode(x[, b[, t]]), its pointwise descriptor
 * destroyed once the operation is finalized; axis >= 0 for GEN_INDEX.
 */
static cudnnBackendDescriptor_t
pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t prec, int64_t axis, cudnnBackendDescriptor_t x,
	  cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR), op;

	set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
	set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
	if (axis >= 0)
		set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
	finalize("pointwise descriptor", pw);
	op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, D, 1, &pw);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, D, 1, &x);
	if (b)
		set(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, D, 1, &b);
	if (t)
		set(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, D, 1, &t);
	set(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, D, 1, &y);
	finalize("pointwise operation", op);
	cudnnBackendDestroyDescriptor(pw);
	return op;
}

static cudnnBackendDescriptor_t
matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c)
{
	cudnnBackendDescriptor_t mm = create(CUDNN_BACKEND_MATMUL_DESCRIPTOR), op;
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	set(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
	finalize("matmul descriptor", mm);
	op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, D, 1, &a);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, D, 1, &b);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, D, 1, &c);
	set(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, D, 1, &mm);
	finalize("matmul operation", op);
	cudnnBackendDestroyDescriptor(mm);
	return op;
}

static cudnnBackendDescriptor_t
reduction(cudnnReduceTensorOp_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t red = create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR), op;
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	set(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
	set(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
	finalize("reduction descriptor", red);
	op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, D, 1, &x);
	set(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, D, 1, &y);
	set(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, D, 1, &red);
	finalize("reduction operation", op);
	cudnnBackendDestroyDescriptor(red);
	return op;
}

/* The graph of `n` operations, without a handle; the operations destroyed once it is finalized. */
static cudnnBackendDescriptor_t
graph_of(const char *name, cudnnBackendDescriptor_t *ops, int n)
{
	cudnnBackendDescriptor_t g = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	cudnnStatus_t st;

	set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, D, n, ops);
	st = check("operation graph", cudnnBackendFinalize(g));
	printf("graph=%s ops=%d finalize=%d\n", name, n, (int)st);
	for (int i = 0; i < n; i++)
		cudnnBackendDestroyDescriptor(ops[i]);
	if (st != 0) {
		failed = 1;
		cudnnBackendDestroyDescriptor(g);
		return NULL;
	}
	return g;
}

/* Convolution forward, half NHWC, float compute, then a ReLU: cudnn-frontend's deviceless sample, smaller. */
static cudnnBackendDescriptor_t
conv_graph(void)
{
	enum { N = 8, C = 64, H = 56, W = 56, K = 64, R = 3 };
	int64_t xd[4] = { N, C, H, W }, xs[4] = { C * H * W, 1, C * W, C };
	int64_t wd[4] = { K, C, R, R }, ws[4] = { C * R * R, 1, C * R, C };
	int64_t yd[4] = { N, K, H, W }, ys[4] = { K * H * W, 1, K * W, K };
	int64_t two = 2, pad[2] = { 1, 1 }, one2[2] = { 1, 1 };
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	float alpha = 1.0f, beta = 0.0f;
	struct parts p = { .n = 0 };
	cudnnBackendDescriptor_t x, w, y, z, conv, ops[2];

	x = keep(&p, tensor(1, CUDNN_DATA_HALF, 4, xd, xs, REAL));
	w = keep(&p, tensor(2, CUDNN_DATA_HALF, 4, wd, ws, REAL));
	y = keep(&p, tensor(3, CUDNN_DATA_FLOAT, 4, yd, ys, VIRTUAL));
	z = keep(&p, tensor(4, CUDNN_DATA_HALF, 4, yd, ys, REAL));
	conv = keep(&p, create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR));
	set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two);
	set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
	set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
	set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
	set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
	set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2);
	set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2);
	finalize("convolution descriptor", conv);
	ops[0] = create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, D, 1, &x);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, D, 1, &w);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, D, 1, &y);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, D, 1, &conv);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
	set(ops[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
	finalize("convolution operation", ops[0]);
	ops[1] = pointwise(CUDNN_POINTWISE_RELU_FWD, CUDNN_DATA_FLOAT, -1, y, NULL, NULL, z);
	drop(&p);
	return graph_of("conv", ops, 2);
}

/* A batched half matmul, float compute: [4,256,512] x [4,512,1024]. */
static cudnnBackendDescriptor_t
matmul_graph(void)
{
	int64_t ad[3] = { 4, 256, 512 }, bd[3] = { 4, 512, 1024 }, cd[3] = { 4, 256, 1024 };
	struct parts p = { .n = 0 };
	cudnnBackendDescriptor_t a, b, c, op;

	a = keep(&p, tensor(11, CUDNN_DATA_HALF, 3, ad, NULL, REAL));
	b = keep(&p, tensor(12, CUDNN_DATA_HALF, 3, bd, NULL, REAL));
	c = keep(&p, tensor(13, CUDNN_DATA_HALF, 3, cd, NULL, REAL));
	op = matmul(a, b, c);
	drop(&p);
	return graph_of("matmul", &op, 1);
}

/*
 * A normalization forward as cudnn-frontend's layernorm and rmsnorm samples
 * build it: x [b*s, hidden, 1, 1] in float, scale (and for the layer norm a
 * bias) [1, hidden, 1, 1], epsilon by value; training also writes the mean
 * (layer norm) and the inverse variance [b*s, 1, 1, 1].
 */
static cudnnBackendDescriptor_t
norm_graph(const char *name, cudnnBackendNormMode_t mode, cudnnBackendNormFwdPhase_t phase)
{
	enum { ROWS = 4 * 1024, HIDDEN = 128 };
	int64_t xd[4] = { ROWS, HIDDEN, 1, 1 }, xs[4] = { HIDDEN, 1, HIDDEN, HIDDEN };
	int64_t sd[4] = { 1, HIDDEN, 1, 1 }, ss[4] = { HIDDEN, 1, HIDDEN, HIDDEN };
	int64_t md[4] = { ROWS, 1, 1, 1 }, ms[4] = { 1, 1, 1, 1 }, one[4] = { 1, 1, 1, 1 };
	struct parts p = { .n = 0 };
	cudnnBackendDescriptor_t x, scale, bias, eps, y, mean, inv, op;
	int layer = mode == CUDNN_LAYER_NORM, training = phase == CUDNN_NORM_FWD_TRAINING;

	x = keep(&p, tensor(21, CUDNN_DATA_FLOAT, 4, xd, xs, REAL));
	scale = keep(&p, tensor(22, CUDNN_DATA_FLOAT, 4, sd, ss, REAL));
	bias = layer ? keep(&p, tensor(23, CUDNN_DATA_FLOAT, 4, sd, ss, REAL)) : NULL;
	eps = keep(&p, tensor(24, CUDNN_DATA_FLOAT, 4, one, one, BY_VALUE));
	y = keep(&p, tensor(25, CUDNN_DATA_FLOAT, 4, xd, xs, REAL));
	mean = training && layer ? keep(&p, tensor(26, CUDNN_DATA_FLOAT, 4, md, ms, REAL)) : NULL;
	inv = training ? keep(&p, tensor(27, CUDNN_DATA_FLOAT, 4, md, ms, REAL)) : NULL;
	op = create(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, D, 1, &x);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, D, 1, &scale);
	if (bias)
		set(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, D, 1, &bias);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, D, 1, &eps);
	set(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, D, 1, &y);
	if (mean)
		set(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, D, 1, &mean);
	if (inv)
		set(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, D, 1, &inv);
	finalize("norm operation", op);
	drop(&p);
	return graph_of(name, &op, 1);
}

/*
 * Scaled-dot-product attention forward, b=2 h=4 s=128 d=64, half, as
 * cudnn-frontend expands it: S = Q*K^T; S *= scale; causal mask (row index
 * >= column index, else -inf); softmax as max, sub, exp, sum, its statistics
 * (log, add) and div, P in half; O = P*V.
 */
static cudnnBackendDescriptor_t
sdpa_graph(void)
{
	enum { B = 2, NH = 4, S = 128, DH = 64 };
	int64_t qd[4] = { B, NH, S, DH }, kd[4] = { B, NH, DH, S }, ks[4] = { NH * S * DH, S * DH, 1, DH };
	int64_t sd[4] = { B, NH, S, S }, rd[4] = { B, NH, S, 1 }, one[4] = { 1, 1, 1, 1 };
	struct parts p = { .n = 0 };
	cudnnBackendDescriptor_t q, k, v, o, scale, ninf, s1, s2, row, col, mask, s3, mx, sub, e, sum, lg, stats, prob;
	cudnnBackendDescriptor_t ops[14];
	int n = 0;

	q = keep(&p, tensor(21, CUDNN_DATA_HALF, 4, qd, NULL, REAL));
	k = keep(&p, tensor(22, CUDNN_DATA_HALF, 4, kd, ks, REAL));
	v = keep(&p, tensor(23, CUDNN_DATA_HALF, 4, qd, NULL, REAL));
	o = keep(&p, tensor(24, CUDNN_DATA_HALF, 4, qd, NULL, REAL));
	scale = keep(&p, tensor(25, CUDNN_DATA_FLOAT, 4, one, one, BY_VALUE));
	ninf = keep(&p, tensor(26, CUDNN_DATA_FLOAT, 4, one, one, BY_VALUE));
	s1 = keep(&p, tensor(101, CUDNN_DATA_FLOAT, 4, sd, NULL, VIRTUAL));
	s2 = keep(&p, tensor(102, CUDNN_DATA_FLOAT, 4, sd, NULL, VIRTUAL));
	row = keep(&p, tensor(103, CUDNN_DATA_INT32, 4, sd, NULL, VIRTUAL));
	col = keep(&p, tensor(104, CUDNN_DATA_INT32, 4, sd, NULL, VIRTUAL));
	mask = keep(&p, tensor(105, CUDNN_DATA_BOOLEAN, 4, sd, NULL, VIRTUAL));
	s3 = keep(&p, tensor(106, CUDNN_DATA_FLOAT, 4, sd, NULL, VIRTUAL));
	mx = keep(&p, tensor(107, CUDNN_DATA_FLOAT, 4, rd, NULL, VIRTUAL));
	sub = keep(&p, tensor(108, CUDNN_DATA_FLOAT, 4, sd, NULL, VIRTUAL));
	e = keep(&p, tensor(109, CUDNN_DATA_FLOAT, 4, sd, NULL, VIRTUAL));
	sum = keep(&p, tensor(110, CUDNN_DATA_FLOAT, 4, rd, NULL, VIRTUAL));
	lg = keep(&p, tensor(112, CUDNN_DATA_FLOAT, 4, rd, NULL, VIRTUAL));
	stats = keep(&p, tensor(113, CUDNN_DATA_FLOAT, 4, rd, NULL, VIRTUAL));
	prob = keep(&p, tensor(111, CUDNN_DATA_HALF, 4, sd, NULL, VIRTUAL));
	ops[n++] = matmul(q, k, s1);
	ops[n++] = pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, s1, scale, NULL, s2);
	ops[n++] = pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 2, s2, NULL, NULL, row);
	ops[n++] = pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 3, s2, NULL, NULL, col);
	ops[n++] = pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row, col, NULL, mask);
	ops[n++] = pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, s2, ninf, mask, s3);
	ops[n++] = reduction(CUDNN_REDUCE_TENSOR_MAX, s3, mx);
	ops[n++] = pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, -1, s3, mx, NULL, sub);
	ops[n++] = pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, -1, sub, NULL, NULL, e);
	ops[n++] = reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
	/* The softmax statistics, max + log(sum): cudnn-frontend adds them (virtual) even for inference, and
	 * cuDNN's attention matcher wants them (without, every engine says "Dropout set of ops not
	 * configured correctly" and the heuristics offer nothing). */
	ops[n++] = pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, -1, sum, NULL, NULL, lg);
	ops[n++] = pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, -1, mx, lg, NULL, stats);
	ops[n++] = pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, -1, e, sum, NULL, prob);
	ops[n++] = matmul(prob, v, o);
	drop(&p);
	return graph_of("sdpa", ops, n);
}

/* The engine's global index and the knob choices of a config, as cudnn-frontend reads them. */
static int64_t
config_engine(cudnnBackendDescriptor_t cfg, char *knobs, size_t size)
{
	cudnnBackendDescriptor_t engine = create(CUDNN_BACKEND_ENGINE_DESCRIPTOR), kc[MAX_KNOBS];
	int64_t index = -1, n = 0, c = 0;
	size_t used = 0;
	int made;

	knobs[0] = 0;
	if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, D, 1, &c, &engine) == 0)
		cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &c, &index);
	cudnnBackendDestroyDescriptor(engine);
	for (made = 0; made < MAX_KNOBS; made++)
		if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &kc[made]) != 0)
			break;
	if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, D, made, &n, kc) == 0) {
		for (int64_t i = 0; i < n && i < made; i++) {
			cudnnBackendKnobType_t type = 0;
			int64_t value = 0;

			cudnnBackendGetAttribute(kc[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c,
						 &type);
			cudnnBackendGetAttribute(kc[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &c,
						 &value);
			if (used < size)
				used += (size_t)snprintf(knobs + used, size - used, "%s%d:%lld", i ? "," : "",
							 (int)type, (long long)value);
		}
	}
	for (int i = 0; i < made; i++)
		cudnnBackendDestroyDescriptor(kc[i]);
	if (!knobs[0])
		snprintf(knobs, size, "-");
	return index;
}

/* Heuristics in `mode`, every config planned. */
static void
plan_all(const char *name, cudnnBackendDescriptor_t graph, cudnnBackendDescriptor_t props,
	 cudnnBackendHeurMode_t mode, const char *mode_name)
{
	cudnnBackendDescriptor_t heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR), cfgs[MAX_CFGS];
	int64_t count = 0, n = 0;
	int ok = 0, tried = 0;
	cudnnStatus_t st;

	set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, 1, &graph);
	set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
	set(heur, CUDNN_ATTR_ENGINEHEUR_DEVICEPROP, D, 1, &props);
	st = check("heuristics", cudnnBackendFinalize(heur));
	if (st == 0)
		/* How many first, as cudnn-frontend asks. */
		st = check("heuristics count",
			   cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, 0, &count, NULL));
	if (count > MAX_CFGS)
		count = MAX_CFGS;
	for (int64_t i = 0; i < count; i++)
		cfgs[i] = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	if (st == 0 && count > 0)
		st = check("heuristics results",
			   cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, count, &n, cfgs));
	printf("graph=%s mode=%s heuristics=%d configs=%lld\n", name, mode_name, (int)st, (long long)n);
	if (st != 0)
		failed = 1;
	for (int64_t i = 0; i < n; i++) {
		cudnnBackendDescriptor_t plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		char knobs[256];
		int64_t engine = config_engine(cfgs[i], knobs, sizeof(knobs)), ws = -1;

		set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[i]);
		st = cudnnBackendFinalize(plan);
		tried++;
		if (st == 0) {
			ok++;
			cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
						 NULL, &ws);
		}
		printf("graph=%s mode=%s rank=%lld engine=%lld knobs=%s status=%d workspace=%lld\n", name, mode_name,
		       (long long)i, (long long)engine, knobs, (int)st, (long long)ws);
		cudnnBackendDestroyDescriptor(plan);
	}
	printf("graph=%s mode=%s plans=%d finalized=%d\n", name, mode_name, tried, ok);
	for (int64_t i = 0; i < count; i++)
		cudnnBackendDestroyDescriptor(cfgs[i]);
	cudnnBackendDestroyDescriptor(heur);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

int
main(int argc, char **argv)
{
	/* The first three by default; the norms when named. */
	cudnnBackendDescriptor_t props, graphs[5];
	const char *names[5] = { "conv", "matmul", "sdpa", "layernorm", "rmsnorm" };
	char *json = NULL;
	size_t len = strlen(default_props);
	cudnnStatus_t st;

	if (argc > 1 && strcmp(argv[1], "-") != 0 && !(json = slurp(argv[1], &len))) {
		perror(argv[1]);
		return 2;
	}
	printf("cudnn version %zu\n", cudnnGetVersion());
	props = create(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR);
	set(props, CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, (int64_t)len,
	    json ? json : default_props);
	st = check("device properties", cudnnBackendFinalize(props));
	printf("deviceprop finalize=%d\n", (int)st);
	free(json);
	if (st != 0)
		return 1;
	for (int g = 0; g < 5; g++)
		if (argc > 2 ? strcmp(argv[2], names[g]) != 0 : g >= 3)
			graphs[g] = NULL;
		else if (g == 3)
			graphs[g] = norm_graph(names[g], CUDNN_LAYER_NORM, CUDNN_NORM_FWD_TRAINING);
		else if (g == 4)
			graphs[g] = norm_graph(names[g], CUDNN_RMS_NORM, CUDNN_NORM_FWD_INFERENCE);
		else
			graphs[g] = g == 0 ? conv_graph() : g == 1 ? matmul_graph() : sdpa_graph();
	for (int g = 0; g < 5; g++) {
		if (!graphs[g])
			continue;
		plan_all(names[g], graphs[g], props, CUDNN_HEUR_MODE_A, "a");
		plan_all(names[g], graphs[g], props, CUDNN_HEUR_MODE_FALLBACK, "fallback");
		cudnnBackendDestroyDescriptor(graphs[g]);
	}
	cudnnBackendDestroyDescriptor(props);
	return failed;
}
