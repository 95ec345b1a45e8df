/*
 * For the oracle test: calls every function of the API description that
 * the loaded cuDNN 9 exports, by name, with arguments built from the
 * description's parameter kinds: a NULL handle (so that work on the GPU is
 * refused at once), descriptors of each kind created and set beforehand,
 * small counts, the first value of each enum, scaling factors, input
 * arrays of small numbers, and zeroed scratch memory for every output.
 * Creates and destroys are called in pairs on objects of their own. Left
 * out: stubs (no prototype), cudnnSetCallback (it would move cuDNN's own
 * log), cudnnCreate and cudnnDestroy (a handle needs a GPU), functions of
 * 8.x only, and the one that crashes cuDNN 9.19 with a NULL argument.
 * Prints each name and status.
 * usage: call-every
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g_prototypes.h"
#include "spy-api.h"

/* As in all-functions.c: int-class arguments from general registers and the stack, doubles from xmm. */
typedef long (*any_fn)(double, double, double, double, double, double, double, double,
		       long, long, long, long, long, long, long, long, long, long, long, long,
		       long, long, long, long, long, long, long, long, long, long, long, long);

static struct {
	const char *kind;
	void *desc;
} descs[24];
static int ndescs;
static long long scratch[32][512];
static int small[64];
static float scale[4] = { 1.5f, 0.25f, 2.0f, 0.5f };

static void *
desc_of(const char *kind)
{
	for (int i = 0; i < ndescs; i++)
		if (strcmp(descs[i].kind, kind) == 0)
			return descs[i].desc;
	return NULL;
}

static void
keep(const char *kind, void *d)
{
	descs[ndescs].kind = kind;
	descs[ndescs++].desc = d;
}

/* The shared tensor, filter and convolution back as prepare() set them, after a Set changed them. */
static void
restore(void)
{
	cudnnSetTensor4dDescriptor(desc_of("tensor"), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5);
	cudnnSetFilter4dDescriptor(desc_of("filter"), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3);
	cudnnSetConvolution2dDescriptor(desc_of("convolution"), 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
					CUDNN_DATA_FLOAT);
}

/* One descriptor of each kind, set to something cuDNN accepts. */
static void
prepare(void)
{
	cudnnTensorDescriptor_t t;
	cudnnFilterDescriptor_t f;
	cudnnConvolutionDescriptor_t c;
	cudnnActivationDescriptor_t a;
	cudnnPoolingDescriptor_t p;
	cudnnLRNDescriptor_t l;
	cudnnOpTensorDescriptor_t o;
	cudnnReduceTensorDescriptor_t r;
	cudnnCTCLossDescriptor_t ctc;
	cudnnSpatialTransformerDescriptor_t st;
	cudnnTensorTransformDescriptor_t tr;
	cudnnDropoutDescriptor_t dr;
	cudnnRNNDescriptor_t rnn;
	cudnnRNNDataDescriptor_t rd;
	cudnnSeqDataDescriptor_t sd;
	cudnnAttnDescriptor_t at;
	cudnnBackendDescriptor_t be;
	int dims[4] = { 2, 3, 4, 5 }, seq[2] = { 2, 1 };
	int32_t pads[4] = { 0, 0, 0, 0 };
	uint32_t folds[2] = { 1, 1 };
	float fill = 0;

	for (int i = 0; i < 64; i++)
		small[i] = 2;
	cudnnCreateTensorDescriptor(&t);
	cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5);
	keep("tensor", t);
	cudnnCreateFilterDescriptor(&f);
	cudnnSetFilter4dDescriptor(f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3);
	keep("filter", f);
	cudnnCreateConvolutionDescriptor(&c);
	cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
	keep("convolution", c);
	cudnnCreateActivationDescriptor(&a);
	cudnnSetActivationDescriptor(a, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
	keep("activation", a);
	cudnnCreatePoolingDescriptor(&p);
	cudnnSetPooling2dDescriptor(p, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2, 2);
	keep("pooling", p);
	cudnnCreateLRNDescriptor(&l);
	keep("lrn", l);
	cudnnCreateOpTensorDescriptor(&o);
	cudnnSetOpTensorDescriptor(o, CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN);
	keep("optensor", o);
	cudnnCreateReduceTensorDescriptor(&r);
	cudnnSetReduceTensorDescriptor(r, CUDNN_REDUCE_TENSOR_ADD, CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN,
				       CUDNN_REDUCE_TENSOR_NO_INDICES, CUDNN_32BIT_INDICES);
	keep("reducetensor", r);
	cudnnCreateCTCLossDescriptor(&ctc);
	cudnnSetCTCLossDescriptor(ctc, CUDNN_DATA_FLOAT);
	keep("ctcloss", ctc);
	cudnnCreateSpatialTransformerDescriptor(&st);
	cudnnSetSpatialTransformerNdDescriptor(st, CUDNN_SAMPLER_BILINEAR, CUDNN_DATA_FLOAT, 4, dims);
	keep("spatialtransformer", st);
	cudnnCreateTensorTransformDescriptor(&tr);
	cudnnSetTensorTransformDescriptor(tr, 4, CUDNN_TENSOR_NHWC, pads, pads, folds, CUDNN_TRANSFORM_FOLD);
	keep("tensortransform", tr);
	cudnnCreateDropoutDescriptor(&dr);
	keep("dropout", dr);
	cudnnCreateRNNDescriptor(&rnn);
	cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
				 CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, 8, 8, 8, 1, NULL,
				 0);
	keep("rnn", rnn);
	cudnnCreateRNNDataDescriptor(&rd);
	cudnnSetRNNDataDescriptor(rd, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2, 2, 8, seq, &fill);
	keep("rnndata", rd);
	cudnnCreateSeqDataDescriptor(&sd);
	keep("seqdata", sd);
	cudnnCreateAttnDescriptor(&at);
	cudnnSetAttnDescriptor(at, 0, 1, 1.0, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, NULL, NULL, 8, 8, 8,
			       0, 0, 0, 0, 4, 4, 2, 1);
	keep("attn", at);
	cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &be);
	keep("backend", be);
	cudnnCreateTensorDescriptor(&t);
	keep("tensor-out", t);
	cudnnCreateFilterDescriptor(&f);
	keep("filter-out", f);
	cudnnCreateConvolutionDescriptor(&c);
	keep("convolution-out", c);
	cudnnCreateTensorTransformDescriptor(&tr);
	keep("tensortransform-out", tr);
}

static int
skipped(const struct spy_fn_info *f)
{
	/* cudnnFusedOpsExecute dereferences its NULL plan in 9.19. */
	static const char *const never[] = { "cudnnSetCallback", "cudnnCreate", "cudnnDestroy",
					     "cudnnFusedOpsExecute" };

	if (f->ret == SPY_RET_UNKNOWN || !(f->majors & SPY_MAJOR_9))
		return 1;
	for (unsigned i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (strcmp(f->name, never[i]) == 0)
			return 1;
	return 0;
}

static int
fills(const struct spy_fn_info *f, const struct spy_param_info *p)
{
	if (strncmp(f->name, "cudnnDerive", 11) == 0)
		return strncmp(p->name, "derived", 7) == 0;
	if (strcmp(f->name, "cudnnInitTransformDest") == 0)
		return strcmp(p->name, "destDesc") == 0;
	if (strcmp(f->name, "cudnnGetFoldedConvBackwardDataDescriptors") == 0)
		return strncmp(p->name, "folded", 6) == 0 || strncmp(p->name, "padded", 6) == 0 ||
		       strstr(p->name, "TransDesc") != NULL;
	return 0;
}

/* The arguments of one call, from the kinds of its parameters. */
static void
build(const struct spy_fn_info *f, long *ints, int *nint, void *const *created)
{
	int out = 0;

	*nint = 0;
	memset(scratch, 0, sizeof(scratch));
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *p = &f->params[i];
		long v = 0;

		switch (p->kind) {
		case SPY_ARG_INT:
		case SPY_ARG_UINT:
			v = 2;
			break;
		case SPY_ARG_DESC:
			v = (long)desc_of(p->desc_kind ? p->desc_kind : "");
			/* Descriptors cuDNN writes get ones of their own: the shared ones keep their shapes. */
			if (fills(f, p) && p->desc_kind) {
				char own[64];

				snprintf(own, sizeof(own), "%s-out", p->desc_kind);
				v = (long)desc_of(own);
			}
			break;
		case SPY_ARG_PTR:
			if (p->dir == SPY_DIR_IN && (p->elem == SPY_ARG_INT || p->elem == SPY_ARG_UINT ||
						     p->elem == SPY_ARG_ENUM))
				v = (long)small;
			else if (p->elem_size == 0 && (strncmp(p->name, "alpha", 5) == 0 ||
						       strncmp(p->name, "beta", 4) == 0))
				v = (long)scale;
			else if (p->dir != SPY_DIR_IN && out < 32)
				v = (long)scratch[out++];
			break;
		default:
			/* Handles, CUDA streams, callbacks, opaque objects, doubles: zero. */
			break;
		}
		if (i == 0 && created)
			v = (long)*created;	/* the object a Destroy is for */
		if (p->kind != SPY_ARG_DOUBLE)
			ints[(*nint)++] = v;
	}
}

static int
call(void *lib, const struct spy_fn_info *f, void *const *created)
{
	long a[24] = { 0 };
	int n, r;
	any_fn fn;

	*(void **)&fn = dlsym(RTLD_DEFAULT, f->name);
	if (!fn || !dlsym(lib, f->name) || f->nparams > 24)
		return 0;
	build(f, a, &n, created);
	printf("%s: ", f->name);
	fflush(stdout);
	r = (int)fn(0, 0, 0, 0, 0, 0, 0, 0, a[0], a[1], a[2], a[3], a[4], a[5],
							a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
							a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23]);
	/* Only a status says something: other returns are pointers or sizes that differ from run to run. */
	if (f->ret == SPY_RET_STATUS)
		printf("%d\n", r);
	else
		printf("called\n");
	return 1;
}

int
main(int argc, char **argv)
{
	void *lib = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
	int called = 0;

	if (!lib) {
		printf("no cuDNN: %s\n", dlerror());
		return 2;
	}
	prepare();
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		const struct spy_fn_info *f = &spy_fn_info[i];

		if (skipped(f) || strncmp(f->name, "cudnnDestroy", 12) == 0 ||
		    strcmp(f->name, "cudnnBackendDestroyDescriptor") == 0)
			continue;
		if ((strncmp(f->name, "cudnnCreate", 11) == 0 || strcmp(f->name, "cudnnBackendCreateDescriptor") == 0) &&
		    f->nparams >= 1) {
			/* Its own object, then the matching Destroy on it. */
			char destroy[128];
			const struct spy_fn_info *d;
			void *obj;
			int id;

			if (!call(lib, f, NULL))
				continue;
			called++;
			obj = (void *)scratch[0][0];
			if (strcmp(f->name, "cudnnBackendCreateDescriptor") == 0)
				snprintf(destroy, sizeof(destroy), "cudnnBackendDestroyDescriptor");
			else
				snprintf(destroy, sizeof(destroy), "cudnnDestroy%s", f->name + 11);
			id = spy_fn_lookup(destroy);
			d = id >= 0 ? &spy_fn_info[id] : NULL;
			if (d && obj && call(lib, d, &obj))
				called++;
			continue;
		}
		called += call(lib, f, NULL);
		if (strncmp(f->name, "cudnnSet", 8) == 0)
			restore();
	}
	printf("%d functions called\n", called);
	return 0;
}
