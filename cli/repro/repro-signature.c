/*
 * The convolution signature of a planned call (docs/output-format.md,
 * "Signature"), as the spy writes it in its search, algo and plan records
 * and on stderr, so that `cudnnspy repro --signature TEXT` finds a call by
 * what it computes. The graph API's records carry theirs; for the legacy
 * API it is rebuilt here from the descriptors' Set calls, by the same
 * rules as shim/watch/algo.c (which cannot be shared: the CLI reads JSON, the
 * spy its own copies of the arguments).
 */
#include "repro.h"
#include "layout.h"

#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which parameters are the forward problem's x, w and y, per legacy function. */
static const struct {
	const char *fn, *op, *x, *w, *y, *act;
} sig_fns[] = {
	{ "cudnnConvolutionForward", "fwd", "xDesc", "wDesc", "yDesc", NULL },
	{ "cudnnConvolutionBackwardData", "bwd-data", "dxDesc", "wDesc", "dyDesc", NULL },
	{ "cudnnConvolutionBackwardFilter", "bwd-filter", "xDesc", "dwDesc", "dyDesc", NULL },
	{ "cudnnConvolutionBiasActivationForward", "bias-act", "xDesc", "wDesc", "yDesc", "activationDesc" },
	{ "cudnnFindConvolutionForwardAlgorithm", "fwd", "xDesc", "wDesc", "yDesc", NULL },
	{ "cudnnGetConvolutionForwardAlgorithm_v7", "fwd", "srcDesc", "filterDesc", "destDesc", NULL },
	{ "cudnnFindConvolutionBackwardDataAlgorithm", "bwd-data", "dxDesc", "wDesc", "dyDesc", NULL },
	{ "cudnnGetConvolutionBackwardDataAlgorithm_v7", "bwd-data", "gradDesc", "filterDesc", "diffDesc", NULL },
	{ "cudnnFindConvolutionBackwardFilterAlgorithm", "bwd-filter", "xDesc", "dwDesc", "dyDesc", NULL },
	{ "cudnnGetConvolutionBackwardFilterAlgorithm_v7", "bwd-filter", "srcDesc", "gradDesc", "diffDesc", NULL },
	{ "cudnnGetConvolutionForwardWorkspaceSize", "fwd", "xDesc", "wDesc", "yDesc", NULL },
	{ "cudnnGetConvolutionBackwardDataWorkspaceSize", "bwd-data", "dxDesc", "wDesc", "dyDesc", NULL },
	{ "cudnnGetConvolutionBackwardFilterWorkspaceSize", "bwd-filter", "xDesc", "gradDesc", "dyDesc", NULL },
};

struct text {
	char *p;
	size_t cap, len;
};

static void
add(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n >= t->cap)
		n = t->cap - t->len - 1;
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void
add_i64(struct text *t, long long v)
{
	char b[24];

	snprintf(b, sizeof(b), "%lld", v);
	add(t, b);
}

/* An enum's name in lower case without its prefix; "?" when it has no name. */
static void
add_lower(struct text *t, json_t *v, const char *prefix)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	char b[96];
	size_t i;

	if (!s || strncmp(s, "CUDNN_", 6) != 0) {
		add(t, "?");
		return;
	}
	if (strncmp(s, prefix, strlen(prefix)) == 0)
		s += strlen(prefix);
	for (i = 0; s[i] && i < sizeof(b) - 1; i++)
		b[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	b[i] = '\0';
	add(t, b);
}

static void
add_dims(struct text *t, int n, const long long *v)
{
	for (int i = 0; i < n; i++) {
		if (i)
			add(t, "x");
		add_i64(t, v[i]);
	}
}

static const char *
format_name(json_t *format, int nd)
{
	const char *s = json_is_string(format) ? json_string_value(format) : "";

	if (strcmp(s, "CUDNN_TENSOR_NCHW") == 0)
		return spy_layout_name(0, nd);
	if (strcmp(s, "CUDNN_TENSOR_NHWC") == 0)
		return spy_layout_name(1, nd);
	return strcmp(s, "CUDNN_TENSOR_NCHW_VECT_C") == 0 ? "NCHW_VECT_C" : "?";
}

/* An integer argument, or an element of an array argument ({"values"} or a plain list). */
static int
ints(json_t *args, const char *name, int n, long long *out)
{
	json_t *v = json_object_get(args, name);

	if (n < 0) {
		if (!json_is_integer(v))
			return -1;
		*out = json_integer_value(v);
		return 0;
	}
	if (!json_is_array(v))
		v = json_object_get(v, "values");
	if (!json_is_array(v) || (int)json_array_size(v) < n || n > 8)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!json_is_integer(json_array_get(v, (size_t)i)))
			return -1;
		out[i] = json_integer_value(json_array_get(v, (size_t)i));
	}
	return 0;
}

/* The last entry of the descriptor's Set calls made by FN (a shape Set when FN is NULL). */
static json_t *
set_of(const struct repro_desc *d, const char *fn)
{
	json_t *found = NULL;

	for (size_t i = 0; d && i < json_array_size(d->sets); i++) {
		json_t *e = json_array_get(d->sets, i);
		const char *name = json_string_value(json_object_get(e, "fn"));
		const struct repro_fn *f = repro_fn_find(name);

		if (fn ? strcmp(name, fn) == 0 : f && f->cls == RF_SET)
			found = e;
	}
	return found;
}

static void
tensor(struct text *t, const struct repro_desc *d)
{
	json_t *e = set_of(d, NULL);
	json_t *a = json_object_get(e, "args");
	const char *fn = json_string_value(json_object_get(e, "fn"));
	long long dims[8], strides[8], nd = 4;
	static const char *const tn[] = { "n", "c", "h", "w" }, *const fk[] = { "k", "c", "h", "w" };
	static const char *const ts[] = { "nStride", "cStride", "hStride", "wStride" };
	int ok = 0, have_strides = 0;
	const char *layout = NULL;

	if (!fn) {
		add(t, "?");
		return;
	}
	if (strcmp(fn, "cudnnSetTensor4dDescriptor") == 0 || strcmp(fn, "cudnnSetFilter4dDescriptor") == 0 ||
	    strcmp(fn, "cudnnSetTensor4dDescriptorEx") == 0) {
		int filter = fn[8] == 'F', ex = strstr(fn, "Ex") != NULL;

		ok = 1;
		for (int i = 0; i < 4 && ok; i++) {
			ok = ints(a, filter ? fk[i] : tn[i], -1, &dims[i]) == 0;
			if (ex && ok)
				ok = ints(a, ts[i], -1, &strides[i]) == 0;
		}
		have_strides = ex;
		if (!ex)
			layout = format_name(json_object_get(a, "format"), 4);
	} else if (strcmp(fn, "cudnnSetTensorNdDescriptor") == 0 || strcmp(fn, "cudnnSetTensorNdDescriptorEx") == 0 ||
		   strcmp(fn, "cudnnSetFilterNdDescriptor") == 0) {
		ok = ints(a, "nbDims", -1, &nd) == 0 && nd >= 1 && nd <= 8 &&
		     ints(a, fn[8] == 'F' ? "filterDimA" : "dimA", (int)nd, dims) == 0;
		if (strcmp(fn, "cudnnSetTensorNdDescriptor") == 0) {
			ok = ok && ints(a, "strideA", (int)nd, strides) == 0;
			have_strides = 1;
		} else {
			layout = format_name(json_object_get(a, "format"), (int)nd);
		}
	}
	if (!ok) {
		add(t, "?");
		return;
	}
	add_lower(t, json_object_get(a, "dataType"), "CUDNN_DATA_");
	add(t, ":");
	add_dims(t, (int)nd, dims);
	if (layout) {
		add(t, ":");
		add(t, layout);
	} else if (have_strides) {
		add(t, ":");
		int64_t d64[SPY_LAYOUT_MAX_DIMS], s64[SPY_LAYOUT_MAX_DIMS];
		const char *named = NULL;

		if (nd >= 1 && nd <= SPY_LAYOUT_MAX_DIMS) {
			for (int i = 0; i < nd; i++) {
				d64[i] = dims[i];
				s64[i] = strides[i];
			}
			named = spy_layout_of((int)nd, d64, s64);
		}
		if (named)
			add(t, named);
		else {
			add(t, "strides=");
			add_dims(t, (int)nd, strides);
		}
	}
}

static void
conv(struct text *t, const struct repro_desc *d)
{
	json_t *e = set_of(d, NULL), *a = json_object_get(e, "args"), *g, *m;
	const char *fn = json_string_value(json_object_get(e, "fn"));
	long long pad[8], stride[8], dil[8], nd = 2;
	int ok = 0;

	if (fn && strcmp(fn, "cudnnSetConvolution2dDescriptor") == 0) {
		ok = ints(a, "pad_h", -1, &pad[0]) == 0 && ints(a, "pad_w", -1, &pad[1]) == 0 &&
		     ints(a, "u", -1, &stride[0]) == 0 && ints(a, "v", -1, &stride[1]) == 0 &&
		     ints(a, "dilation_h", -1, &dil[0]) == 0 && ints(a, "dilation_w", -1, &dil[1]) == 0;
	} else if (fn && strcmp(fn, "cudnnSetConvolutionNdDescriptor") == 0) {
		ok = ints(a, "arrayLength", -1, &nd) == 0 && nd >= 1 && nd <= 8 && ints(a, "padA", (int)nd, pad) == 0 &&
		     ints(a, "filterStrideA", (int)nd, stride) == 0 && ints(a, "dilationA", (int)nd, dil) == 0;
	}
	if (!ok) {
		add(t, "conv=?");
		return;
	}
	add(t, "pad=");
	add_dims(t, (int)nd, pad);
	add(t, " stride=");
	add_dims(t, (int)nd, stride);
	add(t, " dilation=");
	add_dims(t, (int)nd, dil);
	add(t, " mode=");
	add_lower(t, json_object_get(a, "mode"), "CUDNN_");
	add(t, " compute=");
	add_lower(t, json_object_get(a, "computeType"), "CUDNN_DATA_");
	add(t, " groups=");
	g = json_object_get(json_object_get(set_of(d, "cudnnSetConvolutionGroupCount"), "args"), "groupCount");
	add_i64(t, json_is_integer(g) ? json_integer_value(g) : 1);
	add(t, " math=");
	m = json_object_get(json_object_get(set_of(d, "cudnnSetConvolutionMathType"), "args"), "mathType");
	if (m)
		add_lower(t, m, "CUDNN_");
	else
		add(t, "default_math");
}

static const struct repro_desc *
desc_of(const struct repro_plan *p, const char *param)
{
	json_t *v = json_object_get(json_object_get((json_t *)p->record, "args"), param);
	json_t *id = json_object_get(v, "id");

	for (int i = 0; json_is_string(id) && i < p->ndescs; i++)
		if (strcmp(p->descs[i].id, json_string_value(id)) == 0)
			return &p->descs[i];
	return NULL;
}

int
repro_sig_params(const char *fn, const char **op, const char **x, const char **w, const char **y)
{
	for (size_t i = 0; i < sizeof(sig_fns) / sizeof(sig_fns[0]); i++) {
		if (strcmp(sig_fns[i].fn, fn) != 0)
			continue;
		*op = sig_fns[i].op;
		*x = sig_fns[i].x;
		*w = sig_fns[i].w;
		*y = sig_fns[i].y;
		return 0;
	}
	return -1;
}

int
repro_signature(const struct repro_plan *p, char *out, size_t cap)
{
	struct text t = { out, cap, 0 };
	const char *sig;

	out[0] = '\0';
	if (p->graph_calls) {
		sig = json_string_value(json_object_get(json_object_get(json_object_get((json_t *)p->record, "args"),
									 "executionPlan"), "signature"));
		if (!sig)
			return -1;
		snprintf(out, cap, "%s", sig);
		return 0;
	}
	for (size_t i = 0; i < sizeof(sig_fns) / sizeof(sig_fns[0]); i++) {
		if (strcmp(sig_fns[i].fn, p->fn->name) != 0)
			continue;
		add(&t, sig_fns[i].op);
		add(&t, " x=");
		tensor(&t, desc_of(p, sig_fns[i].x));
		add(&t, " w=");
		tensor(&t, desc_of(p, sig_fns[i].w));
		add(&t, " y=");
		tensor(&t, desc_of(p, sig_fns[i].y));
		add(&t, " ");
		conv(&t, desc_of(p, "convDesc"));
		if (sig_fns[i].act) {
			const struct repro_desc *d = desc_of(p, sig_fns[i].act);
			json_t *e = set_of(d, "cudnnSetActivationDescriptor");

			add(&t, " act=");
			if (e)
				add_lower(&t, json_object_get(json_object_get(e, "args"), "mode"), "CUDNN_ACTIVATION_");
			else
				add(&t, "?");
		}
		return 0;
	}
	return -1;
}

int
repro_signature_matches(const char *sig, const char *pattern)
{
	/* "..." stands for anything, as in the spy's shortened summary lines; the rest is literal. */
	size_t n = strlen(pattern);
	char *glob = malloc(2 * n + 1), *g = glob;
	int rc;

	if (!glob)
		return 0;
	while (*pattern == ' ')
		pattern++;
	for (const char *c = pattern; *c; c++) {
		if (strncmp(c, "...", 3) == 0) {
			*g++ = '*';
			c += 2;
			continue;
		}
		if (strchr("*?[\\", *c))
			*g++ = '\\';
		*g++ = *c;
	}
	while (g > glob && g[-1] == ' ')
		g--;
	*g = '\0';
	rc = fnmatch(glob, sig, 0) == 0;
	free(glob);
	return rc;
}
