/*
 * The graph API driven the way cudnn-frontend drives it: each operation's
 * tensors and convolution descriptor destroyed once the operation is
 * finalized, the operations once the graph is; heuristics asked for every
 * config; each config's engine and knobs read with no count pointer
 * (elementCount NULL, one element asked), its shared-memory use asked
 * (NOT_SUPPORTED), and plans finalized in rank order until one is supported
 * (the others answer NOT_SUPPORTED: the probing); the plan that works is
 * executed. usage: graph-frontend [CONFIGS [MODE]]
 *   MODE sweep: the first three supported plans each executed twice (the
 *               framework timing them), then the fastest kept: a tuning sweep
 *   MODE replan: the plan that works finalized again, 20 times (a cache that misses)
 *   MODE all:   a plan finalized for every config, each once (cudnn-frontend's
 *               BuildPlanPolicy_t::ALL, what autotuning asks for), then the
 *               first that works executed
 *   MODE after: as without a mode, then, once it ran, a plan finalized for
 *               each config after it (a plan cache that forgot the graph ran)
 *   MODE fallback: the heuristics asked in CUDNN_HEUR_MODE_FALLBACK, as
 *               cudnn-frontend does once mode A offers nothing that works
 *   MODE stop:  as without a mode, then SIGSTOP to itself before it returns (a
 *               test copies the record file then: what a process killed there leaves);
 *               replan-stop: replan, then the same
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"

#define S(x) cudnnBackendSetAttribute x
#define D CUDNN_TYPE_BACKEND_DESCRIPTOR
#define MAX_CFGS 64

static cudnnBackendDescriptor_t
create(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d = NULL;

	cudnnBackendCreateDescriptor(type, &d);
	return d;
}

static cudnnBackendDescriptor_t
tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w)
{
	cudnnBackendDescriptor_t t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t dims[4] = { n, c, h, w }, strides[4] = { c * h * w, h * w, w, 1 }, align = 4;
	cudnnDataType_t dt = CUDNN_DATA_FLOAT;

	S((t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
	S((t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
	S((t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
	S((t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
	S((t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
	cudnnBackendFinalize(t);
	return t;
}

/* The convolution and a ReLU after it, as one graph; every part but the graph destroyed early. */
static cudnnBackendDescriptor_t
build_graph(cudnnHandle_t h)
{
	cudnnBackendDescriptor_t x = tensor(1, 8, 16, 32, 32), w = tensor(2, 32, 16, 3, 3), y = tensor(3, 8, 32, 32, 32);
	cudnnBackendDescriptor_t z = tensor(4, 8, 32, 32, 32), conv, op, pw, act, ops[2], graph;
	int64_t two = 2, pad[2] = { 1, 1 }, one2[2] = { 1, 1 };
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	cudnnPointwiseMode_t relu = CUDNN_POINTWISE_RELU_FWD;
	float alpha = 1.0f, beta = 0.0f;

	conv = create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
	S((conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two));
	S((conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp));
	S((conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
	S((conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
	S((conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
	S((conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2));
	S((conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2));
	cudnnBackendFinalize(conv);
	op = create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, D, 1, &x));
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, D, 1, &w));
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, D, 1, &y));
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, D, 1, &conv));
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
	S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
	cudnnBackendFinalize(op);
	pw = create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
	S((pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &relu));
	S((pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &comp));
	cudnnBackendFinalize(pw);
	act = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
	S((act, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, D, 1, &pw));
	S((act, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, D, 1, &y));
	S((act, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, D, 1, &z));
	cudnnBackendFinalize(act);
	/* What cudnn-frontend does once an operation is finalized: its parts go. */
	cudnnBackendDestroyDescriptor(x);
	cudnnBackendDestroyDescriptor(w);
	cudnnBackendDestroyDescriptor(y);
	cudnnBackendDestroyDescriptor(z);
	cudnnBackendDestroyDescriptor(conv);
	cudnnBackendDestroyDescriptor(pw);
	ops[0] = op;
	ops[1] = act;
	graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	S((graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, D, 2, ops));
	if (h)
		S((graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
	printf("graph finalize %d\n", (int)cudnnBackendFinalize(graph));
	cudnnBackendDestroyDescriptor(op);
	cudnnBackendDestroyDescriptor(act);
	return graph;
}

int
main(int argc, char **argv)
{
	int64_t want = argc > 1 ? atoll(argv[1]) : 40, n = 0, index = -1, shared = 0, ws = 0, first = -1;
	const char *mode = argc > 2 ? argv[2] : NULL;
	cudnnBackendDescriptor_t graph, heur, cfgs[MAX_CFGS], plan = NULL, pack, built[MAX_CFGS] = { NULL };
	int all = mode && strcmp(mode, "all") == 0;
	cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
	cudnnHandle_t h = NULL;
	int64_t uids[4] = { 1, 2, 3, 4 };
	void *ptrs[4] = { (void *)0x1000, (void *)0x2000, (void *)0x3000, (void *)0x4000 }, *wsp = (void *)0x5000;

	if (want > MAX_CFGS)
		want = MAX_CFGS;
	if (mode && strcmp(mode, "fallback") == 0)
		heur_mode = CUDNN_HEUR_MODE_FALLBACK;
	printf("create handle %d\n", (int)cudnnCreate(&h));
	graph = build_graph(h);
	heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	S((heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, 1, &graph));
	S((heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode));
	printf("heur finalize %d\n", (int)cudnnBackendFinalize(heur));
	for (int64_t i = 0; i < want; i++)
		cfgs[i] = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, want, &n, cfgs);
	printf("heuristics returned %lld\n", (long long)n);
	for (int64_t i = 0; i < n; i++) {
		cudnnBackendDescriptor_t engine = create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
		cudnnStatus_t st;

		/* One element asked, no count: how cudnn-frontend reads a config's engine and its index. */
		cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, D, 1, NULL, &engine);
		cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, NULL, &index);
		st = cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED, CUDNN_TYPE_INT64, 1, NULL,
					      &shared);
		printf("config %lld engine %lld shared-memory %d", (long long)i, (long long)index, (int)st);
		cudnnBackendDestroyDescriptor(engine);
		plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
		if (h)
			S((plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
		S((plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[i]));
		st = cudnnBackendFinalize(plan);
		printf(" plan %d\n", (int)st);
		if (st == 0 && all) {
			built[i] = plan;
			first = first < 0 ? i : first;
			plan = NULL;
			continue;
		}
		if (st == 0) {
			first = i;
			break;
		}
		cudnnBackendDestroyDescriptor(plan);
		plan = NULL;
	}
	if (all && first >= 0) {
		plan = built[first];
		built[first] = NULL;
	}
	if (plan) {
		cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, NULL, &ws);
		pack = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
		S((pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 4, uids));
		S((pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 4, ptrs));
		S((pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsp));
		cudnnBackendFinalize(pack);
		if (mode && strcmp(mode, "sweep") == 0) {
			/* The candidates after this one, each planned and timed twice; then this one is kept. */
			for (int64_t i = first + 1, tried = 0; i < n && tried < 2; i++) {
				cudnnBackendDescriptor_t other = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);

				if (h)
					S((other, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
				S((other, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[i]));
				if (cudnnBackendFinalize(other) == 0) {
					tried++;
					for (int k = 0; k < 2; k++)
						printf("sweep %lld %d\n", (long long)i, (int)cudnnBackendExecute(h, other, pack));
				}
				cudnnBackendDestroyDescriptor(other);
			}
		}
		if (mode && (strcmp(mode, "replan") == 0 || strcmp(mode, "replan-stop") == 0)) {
			for (int k = 0; k < 20; k++) {
				cudnnBackendDescriptor_t again = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);

				if (h)
					S((again, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
				S((again, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[first]));
				printf("replan %d\n", (int)cudnnBackendFinalize(again));
				cudnnBackendDestroyDescriptor(again);
			}
		}
		for (int i = 0; i < 3; i++)
			printf("execute %d\n", (int)cudnnBackendExecute(h, plan, pack));
		if (mode && strcmp(mode, "after") == 0) {
			for (int64_t i = first + 1; i < n; i++) {
				cudnnBackendDescriptor_t later = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);

				if (h)
					S((later, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h));
				S((later, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfgs[i]));
				printf("after %d\n", (int)cudnnBackendFinalize(later));
				cudnnBackendDestroyDescriptor(later);
			}
		}
		cudnnBackendDestroyDescriptor(pack);
		cudnnBackendDestroyDescriptor(plan);
	}
	for (int64_t i = 0; i < want; i++) {
		if (built[i])
			cudnnBackendDestroyDescriptor(built[i]);
		cudnnBackendDestroyDescriptor(cfgs[i]);
	}
	cudnnBackendDestroyDescriptor(heur);
	cudnnBackendDestroyDescriptor(graph);
	if (h)
		cudnnDestroy(h);
	if (mode && (strcmp(mode, "stop") == 0 || strcmp(mode, "replan-stop") == 0)) {
		fflush(stdout);
		raise(SIGSTOP);
	}
	return 0;
}
