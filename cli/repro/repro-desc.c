/*
 * A legacy descriptor's Set call rebuilt from the spy's one-line summary
 * (the "desc" of a descriptor argument, shim/watch/objects.c), for a traced call
 * whose descriptors' Set calls were not traced: CUDNNSPY_TRACE selecting
 * only the convolution functions, as the integration scenarios do. The
 * summary holds the whole shape of tensors, filters, convolutions and
 * activations; in older records an N-d convolution's dilations and an
 * activation's NaN option and coefficient are not in it, and the entry says
 * what was assumed ("guess").
 *
 * Summaries, word by word:
 *   tensor, filter   TYPE FORMAT DIMS  |  TYPE DIMS strides STRIDES
 *   convolution      pad P stride S dilation D MODE COMPUTE (no dilation: older N-d summaries)
 *   activation       MODE [coef C] [propagate_nan|not_propagate_nan]
 *
 * And what a tensor or filter shape Set spans (repro_shape_of), for the
 * buffers of both planners (repro.c, repro-host.c).
 */
#include "repro.h"
#include "spy-api.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 12

/* "float" -> "CUDNN_DATA_FLOAT", "int8x4" -> "CUDNN_DATA_INT8x4"; a number stays a number. */
static json_t *
enum_of(const char *prefix, const char *word)
{
	char b[96];
	size_t n = strlen(prefix), i;

	if (strspn(word, "0123456789") == strlen(word) && word[0])
		return json_integer(atoll(word));
	if (n + strlen(word) >= sizeof(b))
		return NULL;
	memcpy(b, prefix, n);
	for (i = 0; word[i]; i++) {
		char c = word[i];

		/* The vectorized types keep their lower-case x: CUDNN_DATA_INT8x32. */
		if (c == 'x' && i > 0 && word[i - 1] >= '0' && word[i - 1] <= '9')
			b[n + i] = c;
		else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
			b[n + i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
		else
			return NULL;
	}
	b[n + i] = '\0';
	return json_string(b);
}

/* "8x16x32x32" -> [8, 16, 32, 32]; NULL when it is not that. */
static json_t *
dims_of(const char *word)
{
	json_t *a = json_array();
	const char *p = word;

	while (*p) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p || (*end && *end != 'x') || json_array_size(a) >= 8) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, json_integer(v));
		p = *end ? end + 1 : end;
	}
	if (!json_array_size(a)) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *
entry(const char *fn, json_t *args, const char *desc, const char *guess)
{
	json_t *e = json_pack("{s:s, s:o, s:s}", "fn", fn, "args", args, "desc", desc);

	if (guess)
		json_object_set_new(e, "guess", json_string(guess));
	return e;
}

/* A shape with its 4 or N dimensions: NAMES for the 4-d function's arguments. */
static void
put_dims(json_t *args, json_t *dims, const char *const *names)
{
	for (int i = 0; i < 4; i++)
		json_object_set(args, names[i], json_array_get(dims, (size_t)i));
}

void *
repro_set_from_desc(int kind, const char *id, const char *desc)
{
	char buf[512], *w[MAX_WORDS], *save = NULL;
	int n = 0;
	json_t *args = json_object(), *a = NULL, *b = NULL, *t = NULL, *f = NULL, *dil = NULL, *res = NULL;

	if (!desc || strlen(desc) >= sizeof(buf))
		goto fail;
	snprintf(buf, sizeof(buf), "%s", desc);
	for (char *p = strtok_r(buf, " ", &save); p && n < MAX_WORDS; p = strtok_r(NULL, " ", &save))
		w[n++] = p;
	if (kind == RK_TENSOR || kind == RK_FILTER) {
		int strided = n == 4 && strcmp(w[2], "strides") == 0;
		const char *key = kind == RK_TENSOR ? "tensorDesc" : "filterDesc";
		static const char *const tn[] = { "n", "c", "h", "w" }, *const fk[] = { "k", "c", "h", "w" };
		static const char *const ts[] = { "nStride", "cStride", "hStride", "wStride" };
		size_t nd;

		if (n != 3 && !strided)
			goto fail;
		t = enum_of("CUDNN_DATA_", w[0]);
		a = dims_of(strided ? w[1] : w[2]);
		b = strided ? dims_of(w[3]) : NULL;
		f = strided ? NULL : enum_of("CUDNN_TENSOR_", w[1]);
		if (!t || !a || (strided ? !b || json_array_size(b) != json_array_size(a) || kind != RK_TENSOR : !f))
			goto fail;
		nd = json_array_size(a);
		json_object_set_new(args, key, json_string(id));
		json_object_set(args, "dataType", t);
		if (strided && nd == 4) {
			put_dims(args, a, tn);
			put_dims(args, b, ts);
			res = entry("cudnnSetTensor4dDescriptorEx", args, desc, NULL);
			goto out;
		}
		if (strided) {
			json_object_set_new(args, "nbDims", json_integer((json_int_t)nd));
			json_object_set(args, "dimA", a);
			json_object_set(args, "strideA", b);
			res = entry("cudnnSetTensorNdDescriptor", args, desc, NULL);
			goto out;
		}
		json_object_set(args, "format", f);
		if (nd == 4) {
			put_dims(args, a, kind == RK_TENSOR ? tn : fk);
			res = entry(kind == RK_TENSOR ? "cudnnSetTensor4dDescriptor" : "cudnnSetFilter4dDescriptor", args,
				    desc, NULL);
			goto out;
		}
		json_object_set_new(args, "nbDims", json_integer((json_int_t)nd));
		json_object_set(args, kind == RK_TENSOR ? "dimA" : "filterDimA", a);
		res = entry(kind == RK_TENSOR ? "cudnnSetTensorNdDescriptorEx" : "cudnnSetFilterNdDescriptor", args,
			    desc, NULL);
		goto out;
	}
	if (kind == RK_CONVOLUTION) {
		/* "pad P stride S dilation D MODE COMPUTE"; older Nd summaries had no dilation. */
		int with_dil = n == 8, two;
		size_t nd;

		if ((n != 8 && n != 6) || strcmp(w[0], "pad") != 0 || strcmp(w[2], "stride") != 0 ||
		    (with_dil && strcmp(w[4], "dilation") != 0))
			goto fail;
		a = dims_of(w[1]);
		b = dims_of(w[3]);
		dil = with_dil ? dims_of(w[5]) : NULL;
		t = enum_of("CUDNN_", w[with_dil ? 6 : 4]);
		f = enum_of("CUDNN_DATA_", w[with_dil ? 7 : 5]);
		if (!a || !b || !t || !f || json_array_size(a) != json_array_size(b) || (with_dil && !dil) ||
		    (with_dil && json_array_size(dil) != json_array_size(a)))
			goto fail;
		nd = json_array_size(a);
		two = with_dil && nd == 2;
		json_object_set_new(args, "convDesc", json_string(id));
		if (two) {
			json_object_set(args, "pad_h", json_array_get(a, 0));
			json_object_set(args, "pad_w", json_array_get(a, 1));
			json_object_set(args, "u", json_array_get(b, 0));
			json_object_set(args, "v", json_array_get(b, 1));
			json_object_set(args, "dilation_h", json_array_get(dil, 0));
			json_object_set(args, "dilation_w", json_array_get(dil, 1));
			json_object_set(args, "mode", t);
			json_object_set(args, "computeType", f);
			res = entry("cudnnSetConvolution2dDescriptor", args, desc, NULL);
			goto out;
		}
		if (!dil) {
			dil = json_array();
			for (size_t i = 0; i < nd; i++)
				json_array_append_new(dil, json_integer(1));
		}
		json_object_set_new(args, "arrayLength", json_integer((json_int_t)nd));
		json_object_set(args, "padA", a);
		json_object_set(args, "filterStrideA", b);
		json_object_set(args, "dilationA", dil);
		json_object_set(args, "mode", t);
		json_object_set(args, "computeType", f);
		res = entry("cudnnSetConvolutionNdDescriptor", args, desc,
			    with_dil ? NULL : "the dilations are not in the summary: 1 each");
		goto out;
	}
	if (kind == RK_ACTIVATION && n >= 1 && (t = enum_of("CUDNN_ACTIVATION_", w[0]))) {
		/* "relu coef 6 not_propagate_nan"; older summaries had the mode alone. */
		const char *nan = "CUDNN_NOT_PROPAGATE_NAN";
		double coef = 0;
		int have_coef = 0, have_nan = 0;

		for (int i = 1; i < n; i++) {
			if (strcmp(w[i], "coef") == 0 && i + 1 < n) {
				coef = strtod(w[++i], NULL);
				have_coef = 1;
			} else if (strcmp(w[i], "propagate_nan") == 0 || strcmp(w[i], "not_propagate_nan") == 0) {
				nan = w[i][0] == 'p' ? "CUDNN_PROPAGATE_NAN" : "CUDNN_NOT_PROPAGATE_NAN";
				have_nan = 1;
			}
		}
		json_object_set_new(args, "activationDesc", json_string(id));
		json_object_set(args, "mode", t);
		json_object_set_new(args, "reluNanOpt", json_string(nan));
		json_object_set_new(args, "coef", json_real(coef));
		res = entry("cudnnSetActivationDescriptor", args, desc,
			    have_coef && have_nan ? NULL
					      : "the NaN option and the coefficient are not in the summary: "
						"CUDNN_NOT_PROPAGATE_NAN, 0");
		goto out;
	}
fail:
	json_decref(args);
out:
	json_decref(a);
	json_decref(b);
	json_decref(t);
	json_decref(f);
	json_decref(dil);
	return res;
}

static long long
int_of(json_t *args, const char *name, int *ok)
{
	json_t *v = json_object_get(args, name);

	if (!json_is_integer(v)) {
		*ok = 0;
		return 0;
	}
	return json_integer_value(v);
}

/* The values of an array argument, at least n of them. */
static json_t *
values_of(json_t *args, const char *name, long long n)
{
	json_t *v = json_object_get(args, name);

	/* {"ptr", "values"} in call records; a plain list in a failure record's "set". */
	if (!json_is_array(v))
		v = json_object_get(v, "values");
	return json_is_array(v) && n >= 0 && (long long)json_array_size(v) >= n ? v : NULL;
}

/* Elements past which a repro does not allocate. */
#define SHAPE_MAX (1ull << 40)

int
repro_shape_of(void *set_v, struct repro_shape *sh, char *why, size_t cap)
{
	json_t *set = set_v, *a = json_object_get(set, "args");
	const char *fn = json_string_value(json_object_get(set, "fn"));
	unsigned long long span = 1;
	long long strides[8];
	int nd = 0, ok = 1, strided = 0;

	memset(sh, 0, sizeof(*sh));
	if (!fn)
		return 1;
	sh->dtype = json_string_value(json_object_get(a, "dataType"));
	if (strcmp(fn, "cudnnSetTensor4dDescriptor") == 0 || strcmp(fn, "cudnnSetFilter4dDescriptor") == 0 ||
	    strcmp(fn, "cudnnSetTensor4dDescriptorEx") == 0) {
		static const char *const t[4] = { "n", "c", "h", "w" }, *const f[4] = { "k", "c", "h", "w" };
		static const char *const s[4] = { "nStride", "cStride", "hStride", "wStride" };
		int filter = strcmp(fn, "cudnnSetFilter4dDescriptor") == 0;

		nd = 4;
		strided = strcmp(fn, "cudnnSetTensor4dDescriptorEx") == 0;
		for (int i = 0; i < 4; i++) {
			sh->dims[i] = int_of(a, filter ? f[i] : t[i], &ok);
			if (strided)
				strides[i] = int_of(a, s[i], &ok);
		}
	} else if (strcmp(fn, "cudnnSetTensorNdDescriptor") == 0 || strcmp(fn, "cudnnSetTensorNdDescriptorEx") == 0 ||
		   strcmp(fn, "cudnnSetFilterNdDescriptor") == 0) {
		json_t *dv, *sv = NULL;

		nd = (int)int_of(a, "nbDims", &ok);
		if (!ok || nd < 1 || nd > 8) {
			snprintf(why, cap, "%s has an nbDims out of 1..8", fn);
			return -1;
		}
		dv = values_of(a, strcmp(fn, "cudnnSetFilterNdDescriptor") == 0 ? "filterDimA" : "dimA", nd);
		strided = strcmp(fn, "cudnnSetTensorNdDescriptor") == 0;
		if (strided)
			sv = values_of(a, "strideA", nd);
		if (!dv || (strided && !sv)) {
			snprintf(why, cap, "%s without all its dimensions in the records", fn);
			return -1;
		}
		for (int i = 0; i < nd; i++) {
			json_t *x = json_array_get(dv, (size_t)i), *y = sv ? json_array_get(sv, (size_t)i) : NULL;

			if (!json_is_integer(x) || (sv && !json_is_integer(y)))
				ok = 0;
			sh->dims[i] = json_integer_value(x);
			strides[i] = y ? json_integer_value(y) : 0;
		}
	} else {
		return 1;
	}
	if (!ok) {
		snprintf(why, cap, "%s without all its arguments in the records", fn);
		return -1;
	}
	sh->nd = nd;
	/* Elements spanned: the product, or with strides the last element's offset plus one. */
	if (strided) {
		for (int i = 0; i < nd; i++) {
			if (sh->dims[i] <= 0 || strides[i] < 0) {
				span = 0;
				break;
			}
			span += (unsigned long long)(sh->dims[i] - 1) * (unsigned long long)strides[i];
			if (span > SHAPE_MAX)
				break;
		}
	} else {
		for (int i = 0; i < nd && span <= SHAPE_MAX; i++)
			span = sh->dims[i] > 0 ? span * (unsigned long long)sh->dims[i] : 0;
	}
	if (span > SHAPE_MAX) {
		snprintf(why, cap, "%s spans more than 2^40 elements", fn);
		return -1;
	}
	sh->elems = span;
	return 0;
}

int
repro_is_default(const char *fn, const char *param, const void *value)
{
	const json_t *v = value;
	int id = fn ? spy_fn_lookup(fn) : -1;

	if (id < 0 || !param)
		return 0;
	for (unsigned k = 0; k < spy_setting_default_count; k++) {
		const struct spy_setting_default *sd = &spy_setting_defaults[k];

		if (sd->fn != (unsigned)id || sd->param >= spy_fn_info[id].nparams ||
		    strcmp(spy_fn_info[id].params[sd->param].name, param) != 0)
			continue;
		if (sd->name)
			return json_is_string(v) && strcmp(json_string_value(v), sd->name) == 0;
		return json_is_number(v) && json_number_value(v) == sd->value;
	}
	return 0;
}
