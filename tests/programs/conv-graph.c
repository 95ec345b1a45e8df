/*
 * A convolution through the graph (backend) API: tensors, a convolution,
 * a forward convolution operation and an operation graph, built and
 * finalized; engine heuristics; then, when the heuristics return configs
 * (the fake cuDNN; the real one needs a GPU), their engines and knobs read
 * back, a plan from the first one, its workspace size, and three
 * executions; and a plan from an engine and knob the program chose itself,
 * executed twice. Every status is printed, and failures do not stop it.
 * usage: conv-graph [LIBCUDART]
 */
#include <dlfcn.h>
#include <stdio.h>

#include "g_prototypes.h"

#define S(x) cudnnBackendSetAttribute x
#define D CUDNN_TYPE_BACKEND_DESCRIPTOR

static int fails;

static cudnnStatus_t
check(const char *what, cudnnStatus_t st)
{
	if (st != 0) {
		printf("%s: %d\n", what, (int)st);
		fails++;
	}
	return st;
}

static cudnnBackendDescriptor_t
create(cudnnBackendDescriptorType_t type)
{
	cudnnBackendDescriptor_t d = NULL;

	check("create", cudnnBackendCreateDescriptor(type, &d));
	return d;
}

static cudnnBackendDescriptor_t
tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w)
{
	cudnnBackendDescriptor_t t = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
	int64_t dims[4] = { n, c, h, w }, strides[4] = { c * h * w, h * w, w, 1 }, align = 4;
	cudnnDataType_t dt = CUDNN_DATA_FLOAT;

	check("tensor type", S((t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt)));
	check("tensor dims", S((t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims)));
	check("tensor strides", S((t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides)));
	check("tensor uid", S((t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)));
	check("tensor align", S((t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align)));
	check("tensor finalize", cudnnBackendFinalize(t));
	return t;
}

static void
plan_and_run(cudnnHandle_t h, cudnnBackendDescriptor_t cfg, int runs)
{
	cudnnBackendDescriptor_t plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
	cudnnBackendDescriptor_t pack = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
	int64_t ws = -1, n = 0, uids[3] = { 1, 2, 3 };
	void *ptrs[3] = { (void *)0x1000, (void *)0x2000, (void *)0x3000 }, *wsp = (void *)0x4000;

	if (h)
		check("plan handle", S((plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)));
	check("plan config", S((plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, 1, &cfg)));
	check("plan finalize", cudnnBackendFinalize(plan));
	check("plan workspace", cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
							 CUDNN_TYPE_INT64, 1, &n, &ws));
	printf("workspace %lld\n", (long long)ws);
	check("pack uids", S((pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids)));
	check("pack ptrs", S((pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs)));
	check("pack workspace", S((pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &wsp)));
	check("pack finalize", cudnnBackendFinalize(pack));
	for (int i = 0; i < runs; i++)
		check("execute", cudnnBackendExecute(h, plan, pack));
	cudnnBackendDestroyDescriptor(pack);
	cudnnBackendDestroyDescriptor(plan);
}

int
main(int argc, char **argv)
{
	cudnnHandle_t h = NULL;
	cudnnBackendDescriptor_t x, w, y, conv, op, graph, heur, cfgs[4], engines[2], knobs[8];
	cudnnBackendDescriptor_t engine, knob, cfg;
	int64_t two = 2, pad[2] = { 1, 1 }, one2[2] = { 1, 1 }, n = 0, count = -1, index = -1;
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
	cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
	cudnnBackendKnobType_t knob_type = CUDNN_KNOB_TYPE_SPLIT_K;
	float alpha = 1.0f, beta = 0.0f;

	if (argc > 1 && !dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
		printf("cannot load %s\n", argv[1]);
		return 2;
	}
	printf("create handle %d\n", (int)cudnnCreate(&h));
	if (h)
		cudnnSetStream(h, (cudaStream_t)0x5eed);
	x = tensor(1, 8, 16, 32, 32);
	w = tensor(2, 32, 16, 3, 3);
	y = tensor(3, 8, 32, 32, 32);
	conv = create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
	check("conv dims", S((conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &two)));
	check("conv comp", S((conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp)));
	check("conv mode", S((conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)));
	check("conv pre", S((conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad)));
	check("conv post", S((conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad)));
	check("conv strides", S((conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, one2)));
	check("conv dilations", S((conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, one2)));
	check("conv finalize", cudnnBackendFinalize(conv));
	op = create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
	check("op x", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, D, 1, &x)));
	check("op w", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, D, 1, &w)));
	check("op y", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, D, 1, &y)));
	check("op conv", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, D, 1, &conv)));
	check("op alpha", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha)));
	check("op beta", S((op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta)));
	check("op finalize", cudnnBackendFinalize(op));
	graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
	check("graph ops", S((graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, D, 1, &op)));
	if (h)
		check("graph handle", S((graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)));
	printf("graph finalize %d\n", (int)check("graph finalize", cudnnBackendFinalize(graph)));

	heur = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
	check("heur graph", S((heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, 1, &graph)));
	check("heur mode", S((heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode)));
	printf("heur finalize %d\n", (int)check("heur finalize", cudnnBackendFinalize(heur)));
	for (int i = 0; i < 4; i++)
		cfgs[i] = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	check("heur results", cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, 4, &n, cfgs));
	printf("heuristics returned %lld\n", (long long)n);
	if (n > 0) {
		/* What the first two configs are, read back as cudnn-frontend does. */
		for (int i = 0; i < 2 && i < n; i++) {
			engines[i] = create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
			check("cfg engine", cudnnBackendGetAttribute(cfgs[i], CUDNN_ATTR_ENGINECFG_ENGINE, D, 1, &count,
								     &engines[i]));
			check("engine index", cudnnBackendGetAttribute(engines[i], CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
								       CUDNN_TYPE_INT64, 1, &count, &index));
			printf("config %d engine %lld\n", i, (long long)index);
		}
		for (int i = 0; i < 8; i++)
			knobs[i] = create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
		check("cfg knobs", cudnnBackendGetAttribute(cfgs[0], CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, D, 8, &count,
							    knobs));
		for (int64_t k = 0; k < count && k < 8; k++) {
			cudnnBackendKnobType_t type = 0;
			int64_t value = 0, c;

			check("knob type", cudnnBackendGetAttribute(knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
								    CUDNN_TYPE_KNOB_TYPE, 1, &c, &type));
			check("knob value", cudnnBackendGetAttribute(knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
								     CUDNN_TYPE_INT64, 1, &c, &value));
			printf("knob %d = %lld\n", (int)type, (long long)value);
		}
		plan_and_run(h, cfgs[0], 3);
	}

	/* An engine and a knob the program chose itself. */
	engine = create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
	index = 5;
	check("engine graph", S((engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, D, 1, &graph)));
	check("engine index", S((engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index)));
	check("engine finalize", cudnnBackendFinalize(engine));
	knob = create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
	check("knob type", S((knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &knob_type)));
	check("knob value", S((knob, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &two)));
	check("knob finalize", cudnnBackendFinalize(knob));
	cfg = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
	check("cfg engine", S((cfg, CUDNN_ATTR_ENGINECFG_ENGINE, D, 1, &engine)));
	check("cfg knobs", S((cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, D, 1, &knob)));
	check("cfg finalize", cudnnBackendFinalize(cfg));
	plan_and_run(h, cfg, 2);
	printf("failed calls %d\n", fails);
	if (h)
		cudnnDestroy(h);
	return 0;
}
