/*
 * Scaled dot-product attention through the graph API, built from
 * operations the way cudnn-frontend's SDPA node builds it for PyTorch's
 * scaled_dot_product_attention: S = Q.K^T, times a scale, an optional
 * causal mask (row and column indices generated, compared, and a select),
 * the softmax (max, sub, exp, sum, div), optional dropout (random numbers,
 * two multiplies), then O = P.V. Q, K, V and O in half precision, laid out
 * [b, s, h, d] in memory as PyTorch's are, with dims [b, h, s, d]; the
 * intermediates virtual, in float. Each operation's pointwise, matmul,
 * reduction and RNG descriptors destroyed once it is finalized, every
 * tensor once the last operation is (before the graph is finalized), the
 * operations once the graph is. Then heuristics, the first plan that finalizes, and two
 * executions. usage: attention-graph [causal] [dropout] [gqa] [stats] [bwd] [sdpa-op]
 *   gqa: K and V with 2 heads for Q's 8 (grouped-query attention)
 *   bwd: the backward graph instead (five matmuls, from the saved statistics)
 *   sdpa-op: cuDNN's own SDPA forward operation instead of the composite graph
 *   no-softmax: the forward graph without its softmax (not attention: a
 *               graph of matmuls and pointwise operations, a long signature)
 *   stats: the softmax statistics written out for the backward pass
 *          (max + log(sum)), as training does: 17 operations with the rest
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"

#define S(x) cudnnBackendSetAttribute x
#define D CUDNN_TYPE_BACKEND_DESCRIPTOR
#define MAX_OPS 24
#define MAX_DEAD 64

static cudnnBackendDescriptor_t ops[MAX_OPS], dead[MAX_DEAD], tensors[MAX_DEAD];
static int nops, ndead, ntensors;
static int64_t next_uid = 1;

static cudnnBackendDescriptor_t
create(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d = NULL;

	cudnnBackendCreateDescriptor(type, &d);
	return d;
}

/* Destroyed once the operation that uses it is finalized. */
static cudnnBackendDescriptor_t
later(cudnnBackendDescriptor_t d)
{
	if (ndead < MAX_DEAD)
		dead[ndead++] = d;
	return d;
}

static void
bury(void)
{
	for (int i = 0; i < ndead; i++)
		cudnnBackendDestroyDescriptor(dead[i]);
	ndead = 0;
}

static cudnnBackendDescriptor_t
tensor(const int64_t dims[4], const int64_t strides[4], cudnnDataType_t dt, int is_virtual, int by_value)
{
	cudnnBackendDescriptor_t t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t uid = next_uid++, align = 16;
	bool v = is_virtual != 0, bv = by_value != 0;

	S((t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
	S((t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
	S((t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
	S((t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
	S((t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
	S((t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v));
	if (by_value)
		S((t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &bv));
	cudnnBackendFinalize(t);
	if (ntensors < MAX_DEAD)
		tensors[ntensors++] = t;
	return t;
}

/* A packed virtual float tensor of dims b x h x r x c. */
static cudnnBackendDescriptor_t
virt(int64_t b, int64_t h, int64_t r, int64_t c)
{
	int64_t dims[4] = { b, h, r, c }, strides[4] = { h * r * c, r * c, c, 1 };

	return tensor(dims, strides, CUDNN_DATA_FLOAT, 1, 0);
}

static cudnnBackendDescriptor_t
scalar(void)
{
	int64_t one[4] = { 1, 1, 1, 1 };

	return tensor(one, one, CUDNN_DATA_FLOAT, 0, 1);
}

static void
add_op(cudnnBackendDescriptor_t op)
{
	cudnnBackendFinalize(op);
	bury();
	if (nops < MAX_OPS)
		ops[nops++] = op;
}

/* y = mode(x [, b [, t]]); axis >= 0 for GEN_INDEX. */
static cudnnBackendDescriptor_t
pointwise(cudnnPointwiseMode_t mode, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
	  cudnnBackendDescriptor_t t, cudnnBackendDescriptor_t y, int64_t axis)
{
	cudnnBackendDescriptor_t pw = later(create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR));
	cudnnBackendDescriptor_t op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	cudnnDataType_t prec = CUDNN_DATA_FLOAT;

	S((pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
	S((pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
	if (axis >= 0)
		S((pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis));
	cudnnBackendFinalize(pw);
	S((op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, D, 1, &pw));
	S((op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, D, 1, &x));
	if (b)
		S((op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, D, 1, &b));
	if (t)
		S((op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, D, 1, &t));
	S((op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, D, 1, &y));
	add_op(op);
	return y;
}

static void
matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c)
{
	cudnnBackendDescriptor_t mm = later(create(CUDNN_BACKEND_MATMUL_DESCRIPTOR));
	cudnnBackendDescriptor_t op = create(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	S((mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
	cudnnBackendFinalize(mm);
	S((op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, D, 1, &a));
	S((op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, D, 1, &b));
	S((op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, D, 1, &c));
	S((op, CUDNN_ATTR_OPERATION_MATMUL_DESC, D, 1, &mm));
	add_op(op);
}

static void
reduction(cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t r = later(create(CUDNN_BACKEND_REDUCTION_DESCRIPTOR));
	cudnnBackendDescriptor_t op = create(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	S((r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how));
	S((r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
	cudnnBackendFinalize(r);
	S((op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, D, 1, &x));
	S((op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, D, 1, &y));
	S((op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, D, 1, &r));
	add_op(op);
}

static void
random_mask(cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t rng = later(create(CUDNN_BACKEND_RNG_DESCRIPTOR));
	cudnnBackendDescriptor_t op = create(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR);
	cudnnBackendDescriptor_t seed = scalar(), offset = scalar();
	cudnnRngDistribution_t dist = CUDNN_RNG_DISTRIBUTION_BERNOULLI;
	double keep = 0.9;

	S((rng, CUDNN_ATTR_RNG_DISTRIBUTION, CUDNN_TYPE_RNG_DISTRIBUTION, 1, &dist));
	S((rng, CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY, CUDNN_TYPE_DOUBLE, 1, &keep));
	cudnnBackendFinalize(rng);
	S((op, CUDNN_ATTR_OPERATION_RNG_YDESC, D, 1, &y));
	S((op, CUDNN_ATTR_OPERATION_RNG_SEED, D, 1, &seed));
	S((op, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, D, 1, &offset));
	S((op, CUDNN_ATTR_OPERATION_RNG_DESC, D, 1, &rng));
	add_op(op);
}

static int64_t b = 2, h = 8, hkv = 8, sq = 128, skv = 128, d = 64;

/* [b, s, h, d] in memory, as PyTorch lays out q, k, v: dims b, h, s, d (Kt: b, h, d, s, the transposed view). */
static cudnnBackendDescriptor_t
bshd(int64_t heads, int64_t seq, int transposed)
{
	int64_t dims[4] = { b, heads, seq, d }, strides[4] = { seq * heads * d, d, heads * d, 1 };

	if (transposed) {
		dims[2] = d;
		dims[3] = seq;
		strides[2] = 1;
		strides[3] = heads * d;
	}
	return tensor(dims, strides, CUDNN_DATA_HALF, 0, 0);
}

static cudnnBackendDescriptor_t
stats_tensor(void)
{
	int64_t sd[4] = { b, h, sq, 1 }, ss[4] = { h * sq, sq, 1, 1 };

	return tensor(sd, ss, CUDNN_DATA_FLOAT, 0, 0);
}

static void
forward(int causal, int dropout, int stats, int softmax)
{
	cudnnBackendDescriptor_t q = bshd(h, sq, 0), k = bshd(hkv, skv, 1), v = bshd(hkv, skv, 0), o = bshd(h, sq, 0);
	cudnnBackendDescriptor_t s = virt(b, h, sq, skv), p;

	matmul(q, k, s);
	s = pointwise(CUDNN_POINTWISE_MUL, s, scalar(), NULL, virt(b, h, sq, skv), -1);
	if (causal) {
		cudnnBackendDescriptor_t row = pointwise(CUDNN_POINTWISE_GEN_INDEX, s, NULL, NULL, virt(b, h, sq, skv), 2);
		cudnnBackendDescriptor_t col = pointwise(CUDNN_POINTWISE_GEN_INDEX, s, NULL, NULL, virt(b, h, sq, skv), 3);
		cudnnBackendDescriptor_t keep = pointwise(CUDNN_POINTWISE_CMP_GE, row, col, NULL, virt(b, h, sq, skv), -1);

		s = pointwise(CUDNN_POINTWISE_BINARY_SELECT, s, scalar(), keep, virt(b, h, sq, skv), -1);
	}
	p = s;
	if (softmax) {
		cudnnBackendDescriptor_t max = virt(b, h, sq, 1), sum = virt(b, h, sq, 1);

		reduction(CUDNN_REDUCE_TENSOR_MAX, s, max);
		s = pointwise(CUDNN_POINTWISE_SUB, s, max, NULL, virt(b, h, sq, skv), -1);
		s = pointwise(CUDNN_POINTWISE_EXP, s, NULL, NULL, virt(b, h, sq, skv), -1);
		reduction(CUDNN_REDUCE_TENSOR_ADD, s, sum);
		p = pointwise(CUDNN_POINTWISE_DIV, s, sum, NULL, virt(b, h, sq, skv), -1);
		if (stats) {
			cudnnBackendDescriptor_t lse = pointwise(CUDNN_POINTWISE_LOG, sum, NULL, NULL, virt(b, h, sq, 1), -1);

			pointwise(CUDNN_POINTWISE_ADD, max, lse, NULL, stats_tensor(), -1);
		}
	}
	if (dropout) {
		cudnnBackendDescriptor_t mask = virt(b, h, sq, skv);

		random_mask(mask);
		p = pointwise(CUDNN_POINTWISE_MUL, p, mask, NULL, virt(b, h, sq, skv), -1);
		p = pointwise(CUDNN_POINTWISE_MUL, p, scalar(), NULL, virt(b, h, sq, skv), -1);
	}
	matmul(p, v, o);
}

/* The backward pass from the saved statistics: S again, P, then dV, dP, dS, dQ and dK (five matmuls). */
static void
backward(void)
{
	cudnnBackendDescriptor_t q = bshd(h, sq, 0), kt = bshd(hkv, skv, 1), k = bshd(hkv, skv, 0);
	cudnnBackendDescriptor_t vt = bshd(hkv, skv, 1), o = bshd(h, sq, 0), dout = bshd(h, sq, 0);
	cudnnBackendDescriptor_t dq = bshd(h, sq, 0), dk = bshd(hkv, skv, 0), dv = bshd(hkv, skv, 0);
	cudnnBackendDescriptor_t s = virt(b, h, sq, skv), p, pt, dp, dsum, ds, dst;

	matmul(q, kt, s);
	s = pointwise(CUDNN_POINTWISE_MUL, s, scalar(), NULL, virt(b, h, sq, skv), -1);
	s = pointwise(CUDNN_POINTWISE_SUB, s, stats_tensor(), NULL, virt(b, h, sq, skv), -1);
	p = pointwise(CUDNN_POINTWISE_EXP, s, NULL, NULL, virt(b, h, sq, skv), -1);
	pt = virt(b, h, skv, sq);
	matmul(pt, dout, dv);
	dp = virt(b, h, sq, skv);
	matmul(dout, vt, dp);
	dsum = virt(b, h, sq, 1);
	reduction(CUDNN_REDUCE_TENSOR_ADD, pointwise(CUDNN_POINTWISE_MUL, dout, o, NULL, virt(b, h, sq, d), -1), dsum);
	ds = pointwise(CUDNN_POINTWISE_SUB, dp, dsum, NULL, virt(b, h, sq, skv), -1);
	ds = pointwise(CUDNN_POINTWISE_MUL, ds, p, NULL, virt(b, h, sq, skv), -1);
	matmul(ds, k, dq);
	dst = virt(b, h, skv, sq);
	matmul(dst, q, dk);
}

/* cuDNN's own SDPA operation (what newer cudnn-frontend builds): Q, K, V, O, the statistics and the scale. */
static void
sdpa_operation(void)
{
	cudnnBackendDescriptor_t q = bshd(h, sq, 0), k = bshd(hkv, skv, 0), v = bshd(hkv, skv, 0), o = bshd(h, sq, 0);
	cudnnBackendDescriptor_t st = stats_tensor(), scale = scalar();
	cudnnBackendDescriptor_t op = create(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);

	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, D, 1, &q));
	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, D, 1, &k));
	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, D, 1, &v));
	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, D, 1, &o));
	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, D, 1, &st));
	S((op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, D, 1, &scale));
	add_op(op);
}

int
main(int argc, char **argv)
{
	int causal = 0, dropout = 0, stats = 0, bwd = 0, unified = 0, softmax = 1;
	int64_t n = 0, ws = 0;
	cudnnHandle_t handle = NULL;
	cudnnBackendDescriptor_t graph, heur, cfgs[8], plan = NULL, pack;
	cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
	int64_t uids[4] = { 1, 2, 3, 4 };
	void *ptrs[4] = { (void *)0x1000, (void *)0x2000, (void *)0x3000, (void *)0x4000 }, *wsp = (void *)0x5000;

	for (int i = 1; i < argc; i++) {
		causal |= strcmp(argv[i], "causal") == 0;
		dropout |= strcmp(argv[i], "dropout") == 0;
		stats |= strcmp(argv[i], "stats") == 0;
		bwd |= strcmp(argv[i], "bwd") == 0;
		unified |= strcmp(argv[i], "sdpa-op") == 0;
		softmax &= strcmp(argv[i], "no-softmax") != 0;
		if (strcmp(argv[i], "gqa") == 0)
			hkv = 2;
	}
	printf("create handle %d\n", (int)cudnnCreate(&handle));
	if (unified)
		sdpa_operation();
	else if (bwd)
		backward();
	else
		forward(causal, dropout, stats, softmax);
	for (int i = 0; i < ntensors; i++)
		cudnnBackendDestroyDescriptor(tensors[i]);
	printf("operations %d, tensors %d\n", nops, ntensors);

	graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	S((graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, D, nops, ops));
	if (handle)
		S((graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
	printf("graph finalize %d\n", (int)cudnnBackendFinalize(graph));
	for (int i = 0; i < nops; i++)
		cudnnBackendDestroyDescriptor(ops[i]);

	heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	S((heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, 1, &graph));
	S((heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode));
	printf("heur finalize %d\n", (int)cudnnBackendFinalize(heur));
	for (int i = 0; i < 8; i++)
		cfgs[i] = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, 8, &n, cfgs);
	printf("heuristics returned %lld\n", (long long)n);
	for (int64_t i = 0; i < n && !plan; i++) {
		plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		if (handle)
			S((plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
		S((plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[i]));
		if (cudnnBackendFinalize(plan) != 0) {
			cudnnBackendDestroyDescriptor(plan);
			plan = NULL;
		}
	}
	printf("plan %s\n", plan ? "finalized" : "none");
	if (plan) {
		cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, &ws);
		pack = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
		S((pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 4, uids));
		S((pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 4, ptrs));
		S((pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsp));
		cudnnBackendFinalize(pack);
		for (int i = 0; i < 2; i++)
			printf("execute %d\n", (int)cudnnBackendExecute(handle, plan, pack));
		cudnnBackendDestroyDescriptor(pack);
		cudnnBackendDestroyDescriptor(plan);
	}
	for (int i = 0; i < 8; i++)
		cudnnBackendDestroyDescriptor(cfgs[i]);
	cudnnBackendDestroyDescriptor(heur);
	cudnnBackendDestroyDescriptor(graph);
	if (handle)
		cudnnDestroy(handle);
	return 0;
}
