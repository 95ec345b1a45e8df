/*
 * cudnnspy repro, the graph API: a cudnnBackendExecute replayed from the
 * traced backend calls before it (CUDNNSPY_TRACE must select
 * cudnnBackend*). The calls replayed are those on the descriptors the
 * execution needs: its plan and variant pack, every descriptor named in
 * their attributes, again and again (engine config, engine, operation
 * graph, operations, tensors), and the descriptors a GetAttribute filled
 * for them (the engine configs of a heuristics query, and the query
 * itself). They run in the order the program made them, so that the
 * attributes and finalize order are the program's; each Finalize ends a
 * step of its own, a function named after what it finalized.
 *
 * The variant pack's data pointers become buffers of the sizes of the
 * tensors with the same unique ids; those an operation writes (its Y, DX,
 * DW) are outputs.
 */
#include "repro.h"

#include <float.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli-util.h"

/* Records no repro needs more of; past it the closure stops growing (and says so). */
#define MAX_NEED 4096

static const char *
jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The descriptor a backend call is on: args.descriptor.id, or for a Create the one it made. */
static const char *
call_desc(json_t *call)
{
	json_t *d = json_object_get(json_object_get(call, "args"), "descriptor");

	if (strcmp(jstr(call, "fn"), "cudnnBackendCreateDescriptor") == 0)
		return jstr(d, "value");
	return jstr(d, "id");
}

static json_t *
call_values(json_t *call)
{
	json_t *v = json_object_get(json_object_get(json_object_get(call, "args"), "arrayOfElements"), "values");

	return json_is_array(v) ? v : NULL;
}

static int
is_desc_type(json_t *call)
{
	const char *t = jstr(json_object_get(call, "args"), "attributeType");

	return t && strcmp(t, "CUDNN_TYPE_BACKEND_DESCRIPTOR") == 0;
}

/* The C type of an attribute type's elements; NULL when repro does not know it. */
static const struct {
	const char *type, *ctype;
	char kind;	/* e enum, i integer, f floating, d descriptor, h handle, p pointer, c char, b bool, r fraction */
} attr_types[] = {
	{ "CUDNN_TYPE_HANDLE", "cudnnHandle_t", 'h' },
	{ "CUDNN_TYPE_DATA_TYPE", "cudnnDataType_t", 'e' },
	{ "CUDNN_TYPE_BOOLEAN", "bool", 'b' },
	{ "CUDNN_TYPE_INT64", "int64_t", 'i' },
	{ "CUDNN_TYPE_FLOAT", "float", 'f' },
	{ "CUDNN_TYPE_DOUBLE", "double", 'f' },
	{ "CUDNN_TYPE_VOID_PTR", "void *", 'p' },
	{ "CUDNN_TYPE_CONVOLUTION_MODE", "cudnnConvolutionMode_t", 'e' },
	{ "CUDNN_TYPE_HEUR_MODE", "cudnnBackendHeurMode_t", 'e' },
	{ "CUDNN_TYPE_KNOB_TYPE", "cudnnBackendKnobType_t", 'e' },
	{ "CUDNN_TYPE_NAN_PROPOGATION", "cudnnNanPropagation_t", 'e' },
	{ "CUDNN_TYPE_NUMERICAL_NOTE", "cudnnBackendNumericalNote_t", 'e' },
	{ "CUDNN_TYPE_LAYOUT_TYPE", "cudnnBackendLayoutType_t", 'e' },
	{ "CUDNN_TYPE_ATTRIB_NAME", "cudnnBackendAttributeName_t", 'e' },
	{ "CUDNN_TYPE_POINTWISE_MODE", "cudnnPointwiseMode_t", 'e' },
	{ "CUDNN_TYPE_BACKEND_DESCRIPTOR", "cudnnBackendDescriptor_t", 'd' },
	{ "CUDNN_TYPE_GENSTATS_MODE", "cudnnGenStatsMode_t", 'e' },
	{ "CUDNN_TYPE_BN_FINALIZE_STATS_MODE", "cudnnBnFinalizeStatsMode_t", 'e' },
	{ "CUDNN_TYPE_REDUCTION_OPERATOR_TYPE", "cudnnReduceTensorOp_t", 'e' },
	{ "CUDNN_TYPE_BEHAVIOR_NOTE", "cudnnBackendBehaviorNote_t", 'e' },
	{ "CUDNN_TYPE_TENSOR_REORDERING_MODE", "cudnnBackendTensorReordering_t", 'e' },
	{ "CUDNN_TYPE_RESAMPLE_MODE", "cudnnResampleMode_t", 'e' },
	{ "CUDNN_TYPE_PADDING_MODE", "cudnnPaddingMode_t", 'e' },
	{ "CUDNN_TYPE_INT32", "int32_t", 'i' },
	{ "CUDNN_TYPE_CHAR", "char", 'c' },
	{ "CUDNN_TYPE_SIGNAL_MODE", "cudnnSignalMode_t", 'e' },
	{ "CUDNN_TYPE_FRACTION", "cudnnFraction_t", 'r' },
	{ "CUDNN_TYPE_NORM_MODE", "cudnnBackendNormMode_t", 'e' },
	{ "CUDNN_TYPE_NORM_FWD_PHASE", "cudnnBackendNormFwdPhase_t", 'e' },
	{ "CUDNN_TYPE_RNG_DISTRIBUTION", "cudnnRngDistribution_t", 'e' },
};

static int
attr_type(const char *type)
{
	for (size_t i = 0; type && i < sizeof(attr_types) / sizeof(attr_types[0]); i++)
		if (strcmp(attr_types[i].type, type) == 0)
			return (int)i;
	return -1;
}

/* backend#12 -> backend_12; NULL for an id that is not one. */
static int
desc_var(char *out, size_t cap, const char *id)
{
	const char *n = id && strncmp(id, "backend#", 8) == 0 ? id + 8 : NULL;

	if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 12)
		return -1;
	snprintf(out, cap, "backend_%s", n);
	return 0;
}

static int
need_add(json_t *need, const char *id)
{
	if (!id || json_object_get(need, id))
		return 0;
	if (json_object_size(need) >= MAX_NEED)
		return 0;
	json_object_set_new(need, id, json_true());
	return 1;
}

/*
 * The tensor with this unique id: among the needed descriptors, else the last
 * one set with it (a variant pack alone names no tensors).
 */
static const char *
tensor_of_uid(json_t *calls, json_t *need, long long uid)
{
	const char *last = NULL;
	size_t i;
	json_t *c;

	json_array_foreach(calls, i, c) {
		json_t *a = json_object_get(c, "args");
		json_t *v = call_values(c);

		if (strcmp(jstr(c, "fn"), "cudnnBackendSetAttribute") == 0 && jstr(a, "attributeName") &&
		    strcmp(jstr(a, "attributeName"), "CUDNN_ATTR_TENSOR_UNIQUE_ID") == 0 && v &&
		    json_integer_value(json_array_get(v, 0)) == uid && call_desc(c)) {
			if (json_object_get(need, call_desc(c)))
				return call_desc(c);
			last = call_desc(c);
		}
	}
	return last;
}

/* The last value set for ATTR on descriptor ID. */
static json_t *
attr_of(json_t *calls, const char *id, const char *attr)
{
	json_t *found = NULL, *c;
	size_t i;

	json_array_foreach(calls, i, c) {
		json_t *a = json_object_get(c, "args");

		if (strcmp(jstr(c, "fn"), "cudnnBackendSetAttribute") == 0 && call_desc(c) &&
		    strcmp(call_desc(c), id) == 0 && jstr(a, "attributeName") &&
		    strcmp(jstr(a, "attributeName"), attr) == 0)
			found = call_values(c);
	}
	return found;
}

/* Whether an operation writes the tensor: named by an attribute for an output. */
static int
is_output(json_t *calls, const char *tensor)
{
	static const char *const ends[] = { "_Y", "_DX", "_DW", "_YDESC", "_DXDESC", "_DWDESC", "_CDESC" };
	json_t *c;
	size_t i;

	json_array_foreach(calls, i, c) {
		const char *name = jstr(json_object_get(c, "args"), "attributeName");
		json_t *v = call_values(c);
		size_t len = name ? strlen(name) : 0;

		if (strcmp(jstr(c, "fn"), "cudnnBackendSetAttribute") != 0 || !is_desc_type(c) || !v || !name ||
		    strncmp(name, "CUDNN_ATTR_OPERATION_", 21) != 0 || !json_is_string(json_array_get(v, 0)) ||
		    strcmp(json_string_value(json_array_get(v, 0)), tensor) != 0)
			continue;
		for (size_t k = 0; k < sizeof(ends) / sizeof(ends[0]); k++)
			if (len > strlen(ends[k]) && strcmp(name + len - strlen(ends[k]), ends[k]) == 0)
				return 1;
	}
	return 0;
}

int
repro_graph_execution(const char *fn)
{
	return fn && (strcmp(fn, "cudnnBackendExecute") == 0 || strcmp(fn, "cudnnBackendPopulateCudaGraph") == 0 ||
		      strcmp(fn, "cudnnBackendUpdateCudaGraph") == 0);
}

int
repro_graph_on_desc(const char *fn)
{
	return fn && (strcmp(fn, "cudnnBackendFinalize") == 0 || strcmp(fn, "cudnnBackendSetAttribute") == 0 ||
		      strcmp(fn, "cudnnBackendGetAttribute") == 0 || strcmp(fn, "cudnnBackendInitialize") == 0);
}

/*
 * A variant pack the failure record holds whole (all its attributes, none dropped) with neither unique ids nor
 * data pointers: the program gave it no buffers, and neither does the repro.
 */
static int
pack_never_given(json_t *pack)
{
	json_t *attrs = json_object_get(pack, "attrs");

	return json_is_object(attrs) && json_integer_value(json_object_get(pack, "attrs_dropped")) <= 0 &&
	       !json_object_get(attrs, "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS") &&
	       !json_object_get(attrs, "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS");
}

int
repro_graph_plan(struct repro_plan *p, void *calls_v, void *target_v)
{
	json_t *calls = calls_v, *target = target_v;
	json_t *args = json_object_get(target, "args");
	/* A failed Finalize, SetAttribute or GetAttribute: what its descriptor needs, and no buffers. */
	int finalize = repro_graph_on_desc(jstr(target, "fn"));
	const char *plan = finalize ? jstr(json_object_get(args, "descriptor"), "id") :
			   jstr(json_object_get(args, "executionPlan"), "id");
	const char *pack = jstr(json_object_get(args, "variantPack"), "id");
	json_t *need = json_object(), *chosen = json_array(), *types = json_object(), *c;
	json_t *uids = NULL, *ptrs = NULL, *ws = NULL;
	int changed = 1;
	size_t i;

	if (!plan || (!pack && !finalize)) {
		complain("repro: %s without its descriptors in the record", jstr(target, "fn"));
		goto fail;
	}
	need_add(need, plan);
	if (pack)
		need_add(need, pack);
	/* The descriptors a failed SetAttribute gives, or a failed GetAttribute was given to fill. */
	if (is_desc_type(target)) {
		json_t *given = call_values(target), *x;
		size_t k;

		json_array_foreach(given, k, x)
			if (json_is_string(x))
				need_add(need, json_string_value(x));
	}
	/* Everything the plan and pack name, and what filled those, to a fixed point. */
	while (changed) {
		changed = 0;
		json_array_foreach(calls, i, c) {
			const char *fn = jstr(c, "fn"), *d = call_desc(c);
			json_t *v = call_values(c), *x;
			size_t k;
			int in = d && json_object_get(need, d);
			int fills = 0;

			if (!d || strcmp(fn, "cudnnBackendCreateDescriptor") == 0 || !is_desc_type(c) || !v)
				continue;
			json_array_foreach(v, k, x)
				fills |= strcmp(fn, "cudnnBackendGetAttribute") == 0 && json_is_string(x) &&
					 json_object_get(need, json_string_value(x));
			if (fills)
				changed |= need_add(need, d);
			if (in || fills)
				json_array_foreach(v, k, x)
					if (json_is_string(x))
						changed |= need_add(need, json_string_value(x));
		}
	}
	json_array_foreach(calls, i, c) {
		const char *fn = jstr(c, "fn"), *d = call_desc(c);

		if (!d || !json_object_get(need, d) || strcmp(fn, "cudnnBackendDestroyDescriptor") == 0 || c == target)
			continue;
		if (strcmp(fn, "cudnnBackendCreateDescriptor") == 0) {
			const char *type = jstr(json_object_get(c, "args"), "descriptorType");

			if (!repro_cudnn_word(type)) {
				complain("repro: %s: created with a type that is no cuDNN descriptor type", d);
				goto fail;
			}
			json_object_set_new(types, d, json_string(type));
		} else if (!json_object_get(types, d)) {
			/* A call on a descriptor whose creation was not recorded: nothing to replay it on. */
			continue;
		}
		json_array_append(chosen, c);
	}
	json_object_foreach(need, plan, c) {
		char var[32];

		if (desc_var(var, sizeof(var), plan) != 0 || !json_object_get(types, plan)) {
			complain("repro: %s: the records hold no cudnnBackendCreateDescriptor of it (trace cudnnBackend*"
				 " from the start)", plan);
			goto fail;
		}
	}
	plan = finalize ? jstr(json_object_get(args, "descriptor"), "id") : jstr(json_object_get(args, "executionPlan"),
										 "id");
	/* A variant pack that would not finalize still needs its buffers; anything else needs none. */
	if (finalize && !pack && json_object_get(types, plan) && strcmp(jstr(target, "fn"), "cudnnBackendFinalize") == 0 &&
	    strcmp(json_string_value(json_object_get(types, plan)), "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR") == 0)
		pack = plan;
	else if (finalize)
		goto done;
	/* The buffers: the pack's pointers, sized by the tensors with the same unique ids. */
	uids = attr_of(calls, pack, "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS");
	ptrs = attr_of(calls, pack, "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS");
	ws = attr_of(calls, pack, "CUDNN_ATTR_VARIANT_PACK_WORKSPACE");
	if (!uids && !ptrs && pack_never_given(json_object_get(args, "variantPack")))
		goto done;
	if (!uids || !ptrs || json_array_size(uids) != json_array_size(ptrs)) {
		complain("repro: %s: the variant pack's unique ids and data pointers are not in the records", pack);
		goto fail;
	}
	for (i = 0; i < json_array_size(uids); i++) {
		long long uid = json_integer_value(json_array_get(uids, i));
		const char *t = tensor_of_uid(calls, need, uid);
		json_t *dims = t ? attr_of(calls, t, "CUDNN_ATTR_TENSOR_DIMENSIONS") : NULL;
		json_t *strides = t ? attr_of(calls, t, "CUDNN_ATTR_TENSOR_STRIDES") : NULL;
		json_t *dt = t ? attr_of(calls, t, "CUDNN_ATTR_TENSOR_DATA_TYPE") : NULL;
		const char *dtype = dt ? json_string_value(json_array_get(dt, 0)) : NULL;
		const char *s = json_string_value(json_array_get(ptrs, i));
		unsigned long long span = 1, addr = s && strncmp(s, "0x", 2) == 0 ? strtoull(s + 2, NULL, 16) : 0;
		char name[48];

		if (!t || !dims || !strides || json_array_size(dims) != json_array_size(strides) || !dtype) {
			complain("repro: unique id %lld of %s: no tensor with its dimensions, strides and type in the"
				 " records", uid, pack);
			goto fail;
		}
		for (size_t k = 0; k < json_array_size(dims); k++) {
			long long n = json_integer_value(json_array_get(dims, k));
			long long st = json_integer_value(json_array_get(strides, k));

			if (n <= 0 || st < 0 || span > (1ull << 40)) {
				span = 0;
				break;
			}
			span += (unsigned long long)(n - 1) * (unsigned long long)st;
		}
		snprintf(name, sizeof(name), "uid_%lld", uid);
		if (repro_add_buffer(p, name, addr, span * repro_elem_size(dtype), !is_output(calls, t), dtype,
				     span) != 0) {
			complain("repro: too many buffers in %s", pack);
			goto fail;
		}
	}
	if (ws) {
		const char *s = json_string_value(json_array_get(ws, 0));
		json_t *size = json_object_get(json_object_get(args, "executionPlan"), "workspace");

		if (repro_add_buffer(p, "workspace", s && strncmp(s, "0x", 2) == 0 ? strtoull(s + 2, NULL, 16) : 0,
				     json_is_integer(size) && json_integer_value(size) > 0 ?
				     (unsigned long long)json_integer_value(size) : 0, 0, NULL, 0) != 0)
			goto fail;
	}
done:
	json_decref(need);
	/* A handle only where a call names one: a descriptor's attributes are set and finalized without. */
	p->graph_no_handle = 1;
	json_array_foreach(chosen, i, c) {
		json_t *x;
		size_t k;

		json_array_foreach(call_values(c), k, x)
			p->graph_no_handle &= !(json_is_string(x) && strncmp(json_string_value(x), "handle#", 7) == 0);
	}
	if (repro_graph_execution(jstr(target, "fn")))
		p->graph_no_handle = 0;
	p->graph_calls = chosen;
	p->graph_types = types;
	return 0;
fail:
	json_decref(need);
	json_decref(chosen);
	json_decref(types);
	return -1;
}

/* The buffer recorded at the pointer text S. */
static const struct repro_buffer *
buffer_at(const struct repro_plan *p, const char *s)
{
	unsigned long long addr = s && strncmp(s, "0x", 2) == 0 ? strtoull(s + 2, NULL, 16) : 0;

	for (int i = 0; addr && i < p->nbufs; i++)
		if (p->bufs[i].addr == addr)
			return &p->bufs[i];
	return NULL;
}

/* One element of an attribute's values as C; -1 when it is not what the type takes. */
static int
element(FILE *out, const struct repro_plan *p, int t, json_t *x)
{
	char var[32];

	switch (attr_types[t].kind) {
	case 'e':
		if (json_is_string(x) && repro_enum_word(attr_types[t].ctype, json_string_value(x)))
			return fputs(json_string_value(x), out) < 0 ? -1 : 0;
		if (json_is_integer(x)) {
			fprintf(out, "(%s)", attr_types[t].ctype);
			repro_int(out, (long long)json_integer_value(x));
			return 0;
		}
		return -1;
	case 'i':
		/* INT32 attributes take what an int32_t holds. */
		if (!json_is_integer(x) || (strcmp(attr_types[t].ctype, "int32_t") == 0 &&
					    (json_integer_value(x) > INT32_MAX || json_integer_value(x) < INT32_MIN)))
			return -1;
		repro_int(out, (long long)json_integer_value(x));
		return 0;
	case 'f':
		/* A float attribute past FLT_MAX would not be the value recorded. */
		if (json_is_number(x) && (strcmp(attr_types[t].ctype, "float") != 0 ||
					  (json_number_value(x) <= FLT_MAX && json_number_value(x) >= -FLT_MAX)))
			return fprintf(out, "%.17g", json_number_value(x)) < 0;
		if (json_is_string(x)) {
			const char *s = json_string_value(x);

			if (strcmp(s, "nan") == 0)
				return fputs("NAN", out) < 0;
			if (strcmp(s, "inf") == 0 || strcmp(s, "-inf") == 0)
				return fputs(s[0] == '-' ? "-INFINITY" : "INFINITY", out) < 0;
		}
		return -1;
	case 'b':
		return json_is_boolean(x) ? fputs(json_is_true(x) ? "true" : "false", out) < 0 : -1;
	case 'r':
		if (json_is_array(x) && json_array_size(x) == 2 && json_is_integer(json_array_get(x, 0)) &&
		    json_is_integer(json_array_get(x, 1))) {
			fputs("{ ", out);
			repro_int(out, (long long)json_integer_value(json_array_get(x, 0)));
			fputs(", ", out);
			repro_int(out, (long long)json_integer_value(json_array_get(x, 1)));
			fputs(" }", out);
			return 0;
		}
		return -1;
	case 'h':
		return json_is_string(x) && strncmp(json_string_value(x), "handle#", 7) == 0 ?
		       fputs("handle", out) < 0 : -1;
	case 'd':
		if (json_is_string(x) && desc_var(var, sizeof(var), json_string_value(x)) == 0 &&
		    json_object_get(p->graph_types, json_string_value(x)))
			return fputs(var, out) < 0;
		return -1;
	case 'p': {
		const struct repro_buffer *b = json_is_string(x) ? buffer_at(p, json_string_value(x)) : NULL;

		if (json_is_null(x) || (json_is_string(x) && strcmp(json_string_value(x), "0x0") == 0))
			return fputs("NULL", out) < 0;
		return b ? fprintf(out, "%s.ptr", b->var) < 0 : -1;
	}
	}
	return -1;
}

/* The recorded call as a comment, in the records' own spelling. */
static void
comment_call(FILE *out, json_t *c)
{
	json_t *a = json_object_get(c, "args"), *v;
	const char *key;
	int first = 1;

	fputs("\t/* recorded: ", out);
	repro_comment(out, jstr(c, "fn"));
	fputs("(", out);
	json_object_foreach(a, key, v) {
		char *text;

		fputs(first ? "" : ", ", out);
		first = 0;
		if (json_is_object(v) && (json_object_get(v, "id") || json_object_get(v, "value")) &&
		    !json_object_get(v, "values")) {
			repro_comment(out, jstr(v, "id") ? jstr(v, "id") : jstr(v, "value"));
			continue;
		}
		if (json_is_object(v) && json_object_get(v, "values"))
			v = json_object_get(v, "values");
		else if (json_is_object(v) && json_object_get(v, "string"))
			v = json_object_get(v, "string");
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		if (json_is_string(v))
			repro_comment(out, json_string_value(v));
		else
			repro_comment(out, text);
		free(text);
	}
	fputs(") */\n", out);
}

/* The check around a replayed call: stop when it worked in the program and not here. */
static void
checked(FILE *out, json_t *c, const char *what_fmt, const char *id)
{
	long long st = json_integer_value(json_object_get(c, "status"));

	if (st == 0) {
		fprintf(out, "\tcheck_cudnn(status, \"%s", jstr(c, "fn"));
		fprintf(out, what_fmt, id);
		fputs("\");\n", out);
	} else {
		fprintf(out, "\tprintf(\"%s", jstr(c, "fn"));
		fprintf(out, what_fmt, id);
		fprintf(out, ": %%s (%%d), recorded %lld\\n\", cudnnGetErrorString(status), (int)status);\n", st);
	}
}

/* One SetAttribute; CHECK: followed by its check (a build step), else its status is the call's (run_call). */
static int
write_set(FILE *out, const struct repro_plan *p, json_t *c, const char *var, const char *id, int check)
{
	json_t *a = json_object_get(c, "args");
	const char *name = jstr(a, "attributeName"), *type = jstr(a, "attributeType");
	json_t *count = json_object_get(a, "elementCount");
	json_t *arr = json_object_get(a, "arrayOfElements");
	json_t *v = json_object_get(arr, "values"), *x;
	int t = attr_type(type);
	size_t k;

	if (!repro_cudnn_word(name) || t < 0 || !json_is_integer(count) ||
	    (json_integer_value(count) < 0 && !json_is_null(arr) && !json_is_string(arr))) {
		complain("repro: %s: cudnnBackendSetAttribute of an attribute repro cannot replay (%s)", id,
			 type ? type : "no type");
		return -1;
	}
	if (json_is_null(arr)) {
		/* The program passed no array: so does the repro. */
		fputs("\t{\n", out);
	} else if (json_integer_value(count) < 0) {
		/* A negative count, which cuDNN refuses before it reads the array: an array of nothing in particular. */
		fputs("\t{\n\t\tstatic char values[64];\n\n", out);
	} else if (attr_types[t].kind == 'c') {
		const char *s = jstr(arr, "string");

		if (!s || json_object_get(arr, "cut")) {
			complain("repro: %s: %s: the string is not in the records", id, name);
			return -1;
		}
		fputs("\t{\n\t\tconst char values[] = \"", out);
		for (const char *q = s; *q; q++)
			fprintf(out, (*q >= 0x20 && *q <= 0x7e && *q != '"' && *q != '\\' && *q != '?') ? "%c" : "\\%03o",
				(unsigned char)*q);
		fputs("\";\n\n", out);
	} else {
		if (!json_is_array(v) || (long long)json_array_size(v) != json_integer_value(count) ||
		    json_object_get(arr, "count")) {
			complain("repro: %s: %s: not all of its %lld values are in the records", id, name,
				 (long long)json_integer_value(count));
			return -1;
		}
		fprintf(out, "\t{\n\t\t%s%s%svalues[%zu] = { ", strchr("eifbr", attr_types[t].kind) ? "const " : "",
			attr_types[t].ctype, attr_types[t].kind == 'p' ? "" : " ", json_array_size(v) ? json_array_size(v) : 1);
		json_array_foreach(v, k, x) {
			fputs(k ? ", " : "", out);
			if (element(out, p, t, x) != 0) {
				complain("repro: %s: %s: a value that is not what %s takes", id, name, type);
				return -1;
			}
		}
		if (!json_array_size(v))
			fputs("0", out);
		fputs(" };\n\n", out);
	}
	fputs("\t", out);
	comment_call(out, c);
	fprintf(out, "\t\tstatus = cudnnBackendSetAttribute(%s, %s, %s, %lld, %s);\n", var, name, type,
		(long long)json_integer_value(count), json_is_null(arr) ? "NULL" : "values");
	if (check) {
		fputs("\t", out);
		checked(out, c, " (%s)", id);
	}
	fputs("\t}\n", out);
	return 0;
}

/*
 * The descriptors an attribute holds, by their type: a Get of it takes as many made by the caller as it asks
 * for, each of that type, though none came back filled.
 */
static const char *
element_type(const char *attr)
{
	static const char *const of[][2] = {
		{ "CUDNN_ATTR_ENGINEHEUR_RESULTS", "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR" },
		{ "CUDNN_ATTR_ENGINECFG_ENGINE", "CUDNN_BACKEND_ENGINE_DESCRIPTOR" },
		{ "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES", "CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR" },
		{ "CUDNN_ATTR_ENGINE_KNOB_INFO", "CUDNN_BACKEND_KNOB_INFO_DESCRIPTOR" },
		{ "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG", "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR" },
	};

	for (size_t i = 0; attr && i < sizeof(of) / sizeof(of[0]); i++)
		if (strcmp(of[i][0], attr) == 0)
			return of[i][1];
	return NULL;
}

static int
write_get(FILE *out, const struct repro_plan *p, json_t *c, const char *var, const char *id, int check)
{
	json_t *a = json_object_get(c, "args");
	const char *name = jstr(a, "attributeName"), *type = jstr(a, "attributeType");
	json_t *req = json_object_get(a, "requestedElementCount");
	json_t *v = json_object_get(json_object_get(a, "arrayOfElements"), "values");
	json_t *got = json_object_get(json_object_get(a, "elementCount"), "value");
	int t = attr_type(type);
	long long n = json_integer_value(req);
	const char *more;

	if (!repro_cudnn_word(name) || t < 0 || !json_is_integer(req) || n < 0 || n > 4096) {
		complain("repro: %s: cudnnBackendGetAttribute that repro cannot replay", id);
		return -1;
	}
	fprintf(out, "\t{\n\t\tint64_t count = 0;\n\t\t%s%svalues[%lld]", attr_types[t].ctype,
		attr_types[t].kind == 'p' ? "" : " ", n ? n : 1);
	if (attr_types[t].kind == 'd') {
		size_t k;
		json_t *x;

		/* The descriptors the program passed to be filled: those it got back, and more of their kind. */
		fputs(" = { ", out);
		json_array_foreach(v, k, x) {
			fputs(k ? ", " : "", out);
			if ((long long)k >= n || element(out, p, t, x) != 0) {
				complain("repro: %s: %s: the descriptors it filled are not all in the records", id, name);
				return -1;
			}
		}
		fputs(json_array_size(v) ? " };\n" : "NULL };\n", out);
		more = json_array_size(v) ? json_string_value(json_object_get(p->graph_types,
									   json_string_value(json_array_get(v, 0)))) :
		       element_type(name);
		if ((long long)json_array_size(v) < n && more) {
			fprintf(out, "\t\tcudnnBackendDescriptorType_t more = %s;\n\n", more);
			fprintf(out, "\t\t/* the program passed %lld, %zu came back filled: the rest are more of the same"
				" kind */\n"
				"\t\tfor (int i = %zu; i < %lld; i++)\n"
				"\t\t\tcheck_cudnn(cudnnBackendCreateDescriptor(more, &values[i]),"
				" \"cudnnBackendCreateDescriptor\");\n",
				n, json_array_size(v), json_array_size(v), n);
		} else {
			fputs("\n", out);
		}
	} else {
		fputs(";\n\n", out);
	}
	fputs("\t", out);
	comment_call(out, c);
	/* The program may pass no array or no count (asking the count alone, or probing): so does the repro. */
	fprintf(out, "\t\tstatus = cudnnBackendGetAttribute(%s, %s, %s, %lld, %s, %s);\n", var, name, type, n,
		json_is_null(json_object_get(a, "elementCount")) ? "NULL" : "&count",
		json_is_null(json_object_get(a, "arrayOfElements")) ? "NULL" : "values");
	fputs("\t\t(void)count;\n\t\t(void)values;\n", out);
	if (check) {
		fputs("\t", out);
		checked(out, c, " (%s)", id);
	}
	if (attr_types[t].kind == 'i' && json_is_integer(json_array_get(v, 0)))
		fprintf(out, "\t\tprintf(\"%s of %s: %%lld (recorded: %lld)\\n\", count ? (long long)values[0] : -1LL);\n",
			name + (strncmp(name, "CUDNN_ATTR_", 11) == 0 ? 11 : 0), id,
			(long long)json_integer_value(json_array_get(v, 0)));
	else if (json_is_integer(got))
		fprintf(out, "\t\tprintf(\"%s of %s: %%lld elements (recorded: %lld)\\n\", (long long)count);\n",
			name + (strncmp(name, "CUDNN_ATTR_", 11) == 0 ? 11 : 0), id, (long long)json_integer_value(got));
	fputs("\t}\n", out);
	return 0;
}

int
repro_graph_write(const struct repro_plan *p, FILE *out)
{
	json_t *calls = p->graph_calls, *c;
	const char *id;
	json_t *type;
	size_t i;
	int step = 0, open = 0;
	char var[32];
	struct repro_plan *mp = (struct repro_plan *)p;

	fputs("/* The backend descriptors, named after their ids in the records. */\n", out);
	json_object_foreach((json_t *)p->graph_types, id, type) {
		desc_var(var, sizeof(var), id);
		fprintf(out, "static cudnnBackendDescriptor_t %s;\t/* ", var);
		repro_comment(out, json_string_value(type));
		fputs(" */\n", out);
	}
	fputs("\n", out);
	/* Each Finalize closes a step; the calls before it, back to the last one, are that step. */
	json_array_foreach(calls, i, c) {
		const char *fn = jstr(c, "fn");
		const char *d = call_desc(c);
		json_t *a = json_object_get(c, "args");

		desc_var(var, sizeof(var), d);
		if (!open) {
			size_t k = i;
			json_t *e;
			const char *fin = NULL;

			while ((e = json_array_get(calls, k)) && !fin) {
				if (strcmp(jstr(e, "fn"), "cudnnBackendFinalize") == 0)
					fin = call_desc(e);
				k++;
			}
			step++;
			fprintf(out, "/* Step 2.%d: ", step);
			if (fin) {
				fputs("up to the finalizing of ", out);
				repro_comment(out, fin);
				fputs(", a ", out);
				repro_comment(out, json_string_value(json_object_get(p->graph_types, fin)));
			} else {
				fputs("the calls after the last finalizing", out);
			}
			fprintf(out, ". */\nstatic void\nbuild_step_%d(void)\n{\n\tcudnnStatus_t status;\n\n", step);
			open = 1;
		}
		if (strcmp(fn, "cudnnBackendCreateDescriptor") == 0) {
			comment_call(out, c);
			fprintf(out, "\tstatus = cudnnBackendCreateDescriptor(%s, &%s);\n",
				json_string_value(json_object_get(p->graph_types, d)), var);
			checked(out, c, " (%s)", d);
		} else if (strcmp(fn, "cudnnBackendSetAttribute") == 0) {
			if (write_set(out, p, c, var, d, 1) != 0)
				return -1;
		} else if (strcmp(fn, "cudnnBackendGetAttribute") == 0) {
			if (write_get(out, p, c, var, d, 1) != 0)
				return -1;
		} else if (strcmp(fn, "cudnnBackendFinalize") == 0) {
			comment_call(out, c);
			fprintf(out, "\tstatus = cudnnBackendFinalize(%s);\n", var);
			checked(out, c, " (%s)", d);
			fputs("}\n\n", out);
			open = 0;
		} else {
			fputs("\t/* not replayed: ", out);
			repro_comment(out, fn);
			fputs(" */\n", out);
		}
		(void)a;
	}
	if (open)
		fputs("}\n\n", out);
	mp->graph_steps = step;
	if (strcmp(p->fn->name, "cudnnBackendFinalize") == 0) {
		const char *fin = jstr(json_object_get(json_object_get(p->record, "args"), "descriptor"), "id");

		if (desc_var(var, sizeof(var), fin) != 0)
			return -1;
		fprintf(out, "/* Step 6: the call. */\nstatic cudnnStatus_t\nrun_call(void)\n{\n"
			"\t/* recorded: cudnnBackendFinalize(%s) */\n\treturn cudnnBackendFinalize(%s);\n}\n\n", fin, var);
		return 0;
	}
	if (repro_graph_on_desc(p->fn->name)) {
		json_t *rec = p->record;
		const char *on = call_desc(rec);
		int set = strcmp(p->fn->name, "cudnnBackendSetAttribute") == 0;

		if (desc_var(var, sizeof(var), on) != 0 || !json_object_get(p->graph_types, on)) {
			complain("repro: %s: its descriptor is not among those the repro builds", p->fn->name);
			return -1;
		}
		if (strcmp(p->fn->name, "cudnnBackendInitialize") == 0) {
			fprintf(out, "/* Step 6: the call. */\nstatic cudnnStatus_t\nrun_call(void)\n{\n"
				"\t/* recorded: cudnnBackendInitialize(%s) */\n\treturn cudnnBackendInitialize(%s);\n}\n\n",
				on, var);
			return 0;
		}
		fputs("/* Step 6: the call. */\nstatic cudnnStatus_t\nrun_call(void)\n{\n\tcudnnStatus_t status;\n\n", out);
		if ((set ? write_set(out, p, rec, var, on, 0) : write_get(out, p, rec, var, on, 0)) != 0)
			return -1;
		fputs("\treturn status;\n}\n\n", out);
		return 0;
	}
	{
		json_t *args = json_object_get(p->record, "args");
		json_t *pl = json_object_get(args, "executionPlan");
		char plan[32], pack[32];

		if (desc_var(plan, sizeof(plan), jstr(pl, "id")) != 0 ||
		    desc_var(pack, sizeof(pack), jstr(json_object_get(args, "variantPack"), "id")) != 0)
			return -1;
		fputs("/* Step 6: the call. */\nstatic cudnnStatus_t\nrun_call(void)\n{\n", out);
		if (json_is_integer(json_object_get(pl, "engine"))) {
			char *knobs = json_dumps(json_object_get(pl, "knobs"), JSON_COMPACT | JSON_ENCODE_ANY);

			fprintf(out, "\t/* the program's plan ran engine %lld, knobs ",
				(long long)json_integer_value(json_object_get(pl, "engine")));
			repro_comment(out, knobs ? knobs : "null");
			fputs(" */\n", out);
			free(knobs);
		}
		if (strcmp(p->fn->name, "cudnnBackendExecute") == 0) {
			fprintf(out, "\t/* recorded: cudnnBackendExecute(%s, %s, %s) */\n",
				json_is_null(json_object_get(args, "handle")) ? "NULL" : "handle", jstr(pl, "id"),
				jstr(json_object_get(args, "variantPack"), "id"));
			fprintf(out, "\treturn cudnnBackendExecute(handle, %s, %s);\n}\n\n", plan, pack);
			return 0;
		}
		/*
		 * Into a CUDA graph: a new one, as the program's was before cudnnBackendPopulateCudaGraph; for an
		 * update, one the same plan and pack populated first (what cuDNN updates).
		 */
		fprintf(out, "\t/* recorded: %s(%s, %s, %s, %s) */\n", p->fn->name,
			json_is_null(json_object_get(args, "handle")) ? "NULL" : "handle", jstr(pl, "id"),
			jstr(json_object_get(args, "variantPack"), "id"), json_is_null(json_object_get(args, "graph")) ?
			"NULL" : "a CUDA graph");
		if (json_is_null(json_object_get(args, "graph"))) {
			fprintf(out, "\treturn %s(handle, %s, %s, NULL);\n}\n\n", p->fn->name, plan, pack);
			return 0;
		}
		fputs("\tcudaGraph_t graph;\n\n\tif (cudaGraphCreate(&graph, 0) != cudaSuccess) {\n"
		      "\t\tfprintf(stderr, \"repro: cudaGraphCreate failed: is there a GPU, and its driver?\\n\");\n"
		      "\t\texit(2);\n\t}\n", out);
		if (strcmp(p->fn->name, "cudnnBackendUpdateCudaGraph") == 0)
			fprintf(out, "\tcheck_cudnn(cudnnBackendPopulateCudaGraph(handle, %s, %s, graph), "
				"\"cudnnBackendPopulateCudaGraph (the graph an update needs)\");\n", plan, pack);
		fprintf(out, "\treturn %s(handle, %s, %s, graph);\n}\n\n", p->fn->name, plan, pack);
	}
	return 0;
}

void
repro_graph_write_main(const struct repro_plan *p, FILE *out)
{
	for (int i = 1; i <= p->graph_steps; i++)
		fprintf(out, "\tbuild_step_%d();\n", i);
}

/* ---- An execution from its failure record alone ---- */

/*
 * When the backend calls were not traced, a failure record of
 * cudnnBackendExecute still holds the plan's engine and knobs, and the
 * graph record its operations with their tensors and descriptors, attribute
 * by attribute (values only: their types come from the table below). From
 * them the calls are made up in an order that builds each descriptor after
 * those it names: descriptors inside the operations, operations, operation
 * graph, engine, knob choices, engine config, plan, variant pack. The
 * pointers are not in the records: each tensor that is not virtual gets a
 * buffer of its own at a 256-byte boundary.
 */

/* The attribute type of a value the records hold without one. */
static const char *
value_type(const char *attr, json_t *x, int double_scale)
{
	static const struct {
		const char *suffix, *type;
	} by_name[] = {
		{ "_DATA_TYPE", "CUDNN_TYPE_DATA_TYPE" }, { "_COMP_TYPE", "CUDNN_TYPE_DATA_TYPE" },
		{ "_MATH_PREC", "CUDNN_TYPE_DATA_TYPE" }, { "_CONV_MODE", "CUDNN_TYPE_CONVOLUTION_MODE" },
		{ "POINTWISE_MODE", "CUDNN_TYPE_POINTWISE_MODE" }, { "_NAN_PROPAGATION", "CUDNN_TYPE_NAN_PROPOGATION" },
		{ "_IS_VIRTUAL", "CUDNN_TYPE_BOOLEAN" }, { "_IS_BY_VALUE", "CUDNN_TYPE_BOOLEAN" },
		{ "_IS_DETERMINISTIC", "CUDNN_TYPE_BOOLEAN" }, { "_REDUCTION_OPERATOR", "CUDNN_TYPE_REDUCTION_OPERATOR_TYPE" },
		{ "_REORDERING_MODE", "CUDNN_TYPE_TENSOR_REORDERING_MODE" },
		{ "_CLIP", "CUDNN_TYPE_DOUBLE" }, { "_CLIP_SLOPE", "CUDNN_TYPE_DOUBLE" }, { "_ELU_ALPHA", "CUDNN_TYPE_DOUBLE" },
		{ "_SOFTPLUS_BETA", "CUDNN_TYPE_DOUBLE" }, { "_SWISH_BETA", "CUDNN_TYPE_DOUBLE" },
		{ "_PADDING_VALUE", "CUDNN_TYPE_DOUBLE" },
	};
	size_t len = strlen(attr);
	const char *s = json_is_string(x) ? json_string_value(x) : NULL;

	if (s && strncmp(s, "backend#", 8) == 0)
		return "CUDNN_TYPE_BACKEND_DESCRIPTOR";
	if (s && strncmp(s, "handle#", 7) == 0)
		return "CUDNN_TYPE_HANDLE";
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		size_t n = strlen(by_name[i].suffix);

		if (len > n && strcmp(attr + len - n, by_name[i].suffix) == 0)
			return by_name[i].type;
	}
	/* The scaling factors of operations take FLOAT or DOUBLE: the compute type's. */
	if (len > 6 && (strcmp(attr + len - 6, "_ALPHA") == 0 || strcmp(attr + len - 5, "_BETA") == 0 ||
			strcmp(attr + len - 7, "_ALPHA2") == 0))
		return double_scale ? "CUDNN_TYPE_DOUBLE" : "CUDNN_TYPE_FLOAT";
	if (json_is_integer(x))
		return "CUDNN_TYPE_INT64";
	if (json_is_boolean(x))
		return "CUDNN_TYPE_BOOLEAN";
	return NULL;
}

static json_t *
synth_call(const char *fn, const char *id)
{
	json_t *c = json_pack("{s:s, s:s, s:i, s:{}}", "event", "call", "fn", fn, "status", 0, "args");

	if (strcmp(fn, "cudnnBackendCreateDescriptor") != 0)
		json_object_set_new(json_object_get(c, "args"), "descriptor", json_pack("{s:s}", "id", id));
	return c;
}

static void
synth_create(json_t *out, const char *id, const char *type)
{
	json_t *c = synth_call("cudnnBackendCreateDescriptor", id);

	json_object_set_new(json_object_get(c, "args"), "descriptorType", json_string(type));
	json_object_set_new(json_object_get(c, "args"), "descriptor", json_pack("{s:s}", "value", id));
	json_array_append_new(out, c);
}

static void
synth_set(json_t *out, const char *id, const char *attr, const char *type, json_t *values)
{
	json_t *c = synth_call("cudnnBackendSetAttribute", id), *a = json_object_get(c, "args");

	json_object_set_new(a, "attributeName", json_string(attr));
	json_object_set_new(a, "attributeType", json_string(type));
	json_object_set_new(a, "elementCount", json_integer((json_int_t)json_array_size(values)));
	json_object_set_new(a, "arrayOfElements", json_pack("{s:O}", "values", values));
	json_array_append_new(out, c);
}

static void
synth_finalize(json_t *out, const char *id)
{
	json_array_append_new(out, synth_call("cudnnBackendFinalize", id));
}

/* One descriptor of the graph record and its attributes; those it names first. -1 after a message. */
static int
synth_desc(json_t *out, json_t *done, json_t *d, int double_scale, int depth)
{
	const char *id = jstr(d, "id"), *type = jstr(d, "type"), *attr;
	json_t *attrs = json_object_get(d, "attrs"), *v;

	if (!id || !type || !repro_cudnn_word(type)) {
		complain("repro: a descriptor of the graph record without its id or type");
		return -1;
	}
	if (json_object_get(done, id))
		return 0;
	if (!json_is_object(attrs) || json_integer_value(json_object_get(d, "attrs_dropped")) > 0) {
		complain("repro: %s (%s): the records do not hold all its attributes; trace cudnnBackend* to replay"
			 " this execution", id, type);
		return -1;
	}
	/* Nested descriptors (one level, as the graph record keeps them) come first. */
	json_object_foreach(attrs, attr, v) {
		json_t *list = json_is_array(v) ? v : NULL, *x;
		size_t k;

		if (json_is_object(v) && json_object_get(v, "id") && depth < 3 && synth_desc(out, done, v, double_scale,
											 depth + 1) != 0)
			return -1;
		json_array_foreach(list, k, x)
			if (json_is_object(x) && depth < 3 && synth_desc(out, done, x, double_scale, depth + 1) != 0)
				return -1;
	}
	json_object_set_new(done, id, json_true());
	synth_create(out, id, type);
	json_object_foreach(attrs, attr, v) {
		json_t *values = json_array(), *x;
		const char *t;
		size_t k;

		if (json_is_object(v) && json_object_get(v, "count")) {
			complain("repro: %s: %s has more values than the records keep", id, attr);
			json_decref(values);
			return -1;
		}
		if (json_is_object(v) && json_object_get(v, "id"))
			json_array_append_new(values, json_string(jstr(v, "id")));
		else if (json_is_array(v))
			json_array_foreach(v, k, x)
				json_array_append_new(values, json_is_object(x) && jstr(x, "id") ? json_string(jstr(x, "id")) :
						      json_incref(x));
		else
			json_array_append(values, v);
		t = repro_cudnn_word(attr) ? value_type(attr, json_array_get(values, 0), double_scale) : NULL;
		if (!t) {
			complain("repro: %s: the type of %s is not known to repro; trace cudnnBackend* to replay this"
				 " execution", id, repro_cudnn_word(attr) ? attr : "an attribute");
			json_decref(values);
			return -1;
		}
		synth_set(out, id, attr, t, values);
		json_decref(values);
	}
	/* A graph record's descriptors were all finalized; a failure's says whether it was. */
	if (!json_is_false(json_object_get(d, "finalized")))
		synth_finalize(out, id);
	return 0;
}

/* Whether the descriptors hold double data anywhere: then the operations' scaling factors are doubles. */
static int
holds_double(json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	int yes = text && strstr(text, "\"CUDNN_DATA_DOUBLE\"") != NULL;

	free(text);
	return yes;
}

/* The greatest N of the backend#N ids in the record: new ids go after it. */
static long long
max_id(json_t *v, long long m)
{
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_string(v) && strncmp(json_string_value(v), "backend#", 8) == 0) {
		long long n = atoll(json_string_value(v) + 8);

		return n > m ? n : m;
	}
	if (json_is_object(v))
		json_object_foreach(v, key, x)
			m = max_id(x, m);
	if (json_is_array(v))
		json_array_foreach(v, i, x)
			m = max_id(x, m);
	return m;
}

/*
 * The operation graph's operations, the graph, an engine of index ENGINE on it, its knob choices (KNOBS, an array
 * of {"type", "value"}) and an engine config of them, id CFG (a new one when CFG is no backend id), finalized
 * unless FINALIZE is 0. New ids from *NEXT on. -1 after a message.
 */
static int
synth_config(json_t *out, json_t *done, json_t *graph, const char *handle, json_t *engine, json_t *knobs, char *cfg,
	     size_t cfg_cap, long long *next, int finalize)
{
	const char *graph_id = jstr(graph, "id");
	json_t *ops = json_object_get(graph, "ops"), *op, *k, *ids;
	int double_scale = holds_double(graph);
	char eng[32], id[32];
	size_t i;

	json_array_foreach(ops, i, op)
		if (synth_desc(out, done, op, double_scale, 0) != 0)
			return -1;
	synth_create(out, graph_id, "CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR");
	ids = json_array();
	json_array_foreach(ops, i, op)
		json_array_append_new(ids, json_string(jstr(op, "id")));
	synth_set(out, graph_id, "CUDNN_ATTR_OPERATIONGRAPH_OPS", "CUDNN_TYPE_BACKEND_DESCRIPTOR", ids);
	json_decref(ids);
	if (handle) {
		ids = json_pack("[s]", handle);
		synth_set(out, graph_id, "CUDNN_ATTR_OPERATIONGRAPH_HANDLE", "CUDNN_TYPE_HANDLE", ids);
		json_decref(ids);
	}
	synth_finalize(out, graph_id);
	/* The engine and knobs, in an engine config of the program's id. */
	snprintf(eng, sizeof(eng), "backend#%lld", (*next)++);
	synth_create(out, eng, "CUDNN_BACKEND_ENGINE_DESCRIPTOR");
	ids = json_pack("[s]", graph_id);
	synth_set(out, eng, "CUDNN_ATTR_ENGINE_OPERATION_GRAPH", "CUDNN_TYPE_BACKEND_DESCRIPTOR", ids);
	json_decref(ids);
	ids = json_pack("[O]", engine);
	synth_set(out, eng, "CUDNN_ATTR_ENGINE_GLOBAL_INDEX", "CUDNN_TYPE_INT64", ids);
	json_decref(ids);
	synth_finalize(out, eng);
	ids = json_array();
	json_array_foreach(knobs, i, k) {
		json_t *v;

		if (!jstr(k, "type") || !repro_cudnn_word(jstr(k, "type")) ||
		    !json_is_integer(json_object_get(k, "value"))) {
			complain("repro: %s: a knob without its type or value", cfg[0] ? cfg : graph_id);
			json_decref(ids);
			return -1;
		}
		snprintf(id, sizeof(id), "backend#%lld", (*next)++);
		synth_create(out, id, "CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR");
		v = json_pack("[s]", jstr(k, "type"));
		synth_set(out, id, "CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE", "CUDNN_TYPE_KNOB_TYPE", v);
		json_decref(v);
		v = json_pack("[O]", json_object_get(k, "value"));
		synth_set(out, id, "CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE", "CUDNN_TYPE_INT64", v);
		json_decref(v);
		synth_finalize(out, id);
		json_array_append_new(ids, json_string(id));
	}
	if (strncmp(cfg, "backend#", 8) != 0)
		snprintf(cfg, cfg_cap, "backend#%lld", (*next)++);
	synth_create(out, cfg, "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR");
	{
		json_t *e = json_pack("[s]", eng);

		synth_set(out, cfg, "CUDNN_ATTR_ENGINECFG_ENGINE", "CUDNN_TYPE_BACKEND_DESCRIPTOR", e);
		json_decref(e);
	}
	if (json_array_size(ids))
		synth_set(out, cfg, "CUDNN_ATTR_ENGINECFG_KNOB_CHOICES", "CUDNN_TYPE_BACKEND_DESCRIPTOR", ids);
	json_decref(ids);
	if (finalize)
		synth_finalize(out, cfg);
	return 0;
}

void *
repro_graph_rebuild(void *target_v, void *graph_v)
{
	json_t *target = target_v, *graph = graph_v;
	json_t *args = json_object_get(target, "args"), *plan = json_object_get(args, "executionPlan");
	const char *plan_id = jstr(plan, "id"), *pack = jstr(json_object_get(args, "variantPack"), "id");
	const char *graph_id = jstr(graph, "id"), *handle = jstr(args, "handle");
	json_t *ops = json_object_get(graph, "ops"), *knobs = json_object_get(plan, "knobs");
	json_t *out = json_array(), *done = json_object(), *k, *ids, *uids, *ptrs;
	json_t *engine = json_object_get(plan, "engine"), *ws = json_object_get(plan, "workspace");
	long long next = max_id(target, max_id(graph, 0)) + 1, addr = 0x10000000;
	char cfg[32];
	int double_scale = holds_double(graph);
	size_t i;

	if (plan_id && pack && !json_is_integer(engine) && jstr(plan, "type") &&
	    json_is_object(json_object_get(plan, "attrs")) && jstr(json_object_get(args, "variantPack"), "type") &&
	    json_is_object(json_object_get(json_object_get(args, "variantPack"), "attrs"))) {
		/*
		 * No plan the spy saw built (it never finalized, or is no plan at all): the failure record holds the
		 * plan and the pack whole, type and attributes, and they are made again as they were.
		 */
		if (synth_desc(out, done, plan, double_scale, 0) != 0 ||
		    synth_desc(out, done, json_object_get(args, "variantPack"), double_scale, 0) != 0)
			goto fail;
		json_decref(done);
		return out;
	}
	if (!plan_id || !pack || !graph_id || !json_is_array(ops) || !json_is_integer(engine) ||
	    !json_is_array(knobs)) {
		complain("repro: %s: the records hold neither the backend calls (trace cudnnBackend*)"
			 " nor the plan's engine and knobs and its graph's operations", jstr(target, "fn"));
		goto fail;
	}
	snprintf(cfg, sizeof(cfg), "%s", jstr(plan, "config") ? jstr(plan, "config") : "");
	if (synth_config(out, done, graph, handle, engine, knobs, cfg, sizeof(cfg), &next, 1) != 0)
		goto fail;
	synth_create(out, plan_id, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR");
	if (handle) {
		ids = json_pack("[s]", handle);
		synth_set(out, plan_id, "CUDNN_ATTR_EXECUTION_PLAN_HANDLE", "CUDNN_TYPE_HANDLE", ids);
		json_decref(ids);
	}
	ids = json_pack("[s]", cfg);
	synth_set(out, plan_id, "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG", "CUDNN_TYPE_BACKEND_DESCRIPTOR", ids);
	json_decref(ids);
	synth_finalize(out, plan_id);
	if (json_is_integer(ws)) {
		/* The program had asked for the plan's workspace size: so does the repro, and says what it got. */
		json_t *c = synth_call("cudnnBackendGetAttribute", plan_id), *a = json_object_get(c, "args");

		json_object_set_new(a, "attributeName", json_string("CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE"));
		json_object_set_new(a, "attributeType", json_string("CUDNN_TYPE_INT64"));
		json_object_set_new(a, "requestedElementCount", json_integer(1));
		json_object_set_new(a, "elementCount", json_pack("{s:i}", "value", 1));
		json_object_set_new(a, "arrayOfElements", json_pack("{s:[O]}", "values", ws));
		json_array_append_new(out, c);
	}
	/* The variant pack: a made-up address for each tensor that is not virtual. */
	uids = json_array();
	ptrs = json_array();
	json_array_foreach(out, i, k) {
		json_t *a = json_object_get(k, "args");
		const char *name = jstr(a, "attributeName");
		const char *d = call_desc(k);
		char p[32];

		if (!name || strcmp(name, "CUDNN_ATTR_TENSOR_UNIQUE_ID") != 0)
			continue;
		{
			json_t *virt = attr_of(out, d, "CUDNN_ATTR_TENSOR_IS_VIRTUAL");

			if (virt && json_is_true(json_array_get(virt, 0)))
				continue;
		}
		json_array_append(uids, json_array_get(call_values(k), 0));
		snprintf(p, sizeof(p), "0x%llx", (unsigned long long)addr);
		addr += 0x10000000;
		json_array_append_new(ptrs, json_string(p));
	}
	synth_create(out, pack, "CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR");
	synth_set(out, pack, "CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS", "CUDNN_TYPE_INT64", uids);
	synth_set(out, pack, "CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS", "CUDNN_TYPE_VOID_PTR", ptrs);
	json_decref(uids);
	json_decref(ptrs);
	if (json_is_integer(ws) && json_integer_value(ws) > 0) {
		char p[32];

		snprintf(p, sizeof(p), "0x%llx", (unsigned long long)addr);
		ids = json_pack("[s]", p);
		synth_set(out, pack, "CUDNN_ATTR_VARIANT_PACK_WORKSPACE", "CUDNN_TYPE_VOID_PTR", ids);
		json_decref(ids);
	}
	synth_finalize(out, pack);
	json_decref(done);
	return out;
fail:
	json_decref(done);
	json_decref(out);
	return NULL;
}

/*
 * An engine config the failed call names with its engine by id alone: one cuDNN filled from a heuristics query,
 * or the one a plan that did not finalize was given. From CONFIGS (repro.c's config_pass: its engine, the knobs
 * a plan of it had, its graph) or the plan's own record, it is made again from its engine's index and those knobs
 * on its operation graph (GRAPHS), with the config's own id; then the plan, as the record has it. NULL, nothing
 * said, when the records do not hold them.
 */
static json_t *
rebuild_filled_config(json_t *d, json_t *configs, json_t *graphs, long long next)
{
	const char *type = jstr(d, "type"), *id, *handle;
	json_t *attrs = json_object_get(d, "attrs"), *c, *graph, *out, *done, *none, *engine, *knobs;
	int is_plan = type && strcmp(type, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR") == 0;
	char cfg[32];

	if (!type || (!is_plan && strcmp(type, "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR") != 0) || !json_is_object(attrs))
		return NULL;
	id = is_plan ? jstr(attrs, "CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG") : jstr(d, "id");
	if (!id || (!is_plan && !jstr(attrs, "CUDNN_ATTR_ENGINECFG_ENGINE")) || strlen(id) >= sizeof(cfg) ||
	    !repro_id_ok(id))
		return NULL;
	c = json_object_get(configs, id);
	engine = json_object_get(c, "engine");
	knobs = json_object_get(c, "knobs");
	graph = json_object_get(graphs, jstr(c, "graph") ? jstr(c, "graph") : "");
	if (is_plan) {
		if (!json_is_integer(engine))
			engine = json_object_get(d, "engine");
		if (!json_is_array(knobs))
			knobs = json_object_get(d, "knobs");
		if (!graph && jstr(d, "graph"))
			graph = json_object_get(graphs, jstr(d, "graph"));
	}
	if (!graph || !json_is_array(json_object_get(graph, "ops")) || !json_is_integer(engine))
		return NULL;
	out = json_array();
	done = json_object();
	none = json_array();
	snprintf(cfg, sizeof(cfg), "%s", id);
	/*
	 * The graph's handle, as its record says (null: none, a device-properties build); records before the
	 * field do not say: the plan's, or the repro's own.
	 */
	handle = json_object_get(graph, "handle") ? jstr(graph, "handle") :
		 jstr(attrs, "CUDNN_ATTR_EXECUTION_PLAN_HANDLE") ? jstr(attrs, "CUDNN_ATTR_EXECUTION_PLAN_HANDLE") :
		 "handle#1";
	if (handle && (strncmp(handle, "handle#", 7) != 0 || !repro_id_ok(handle)))
		handle = "handle#1";
	if (synth_config(out, done, graph, handle, engine,
			 json_is_array(knobs) ? knobs : none, cfg, sizeof(cfg), &next,
			 is_plan ? !json_is_true(json_object_get(c, "unfinalized")) :
			 !json_is_false(json_object_get(d, "finalized"))) != 0) {
		json_decref(out);
		out = NULL;
	} else if (is_plan) {
		/* The plan itself, its attributes as recorded: the config is made. */
		json_object_set_new(done, cfg, json_true());
		if (synth_desc(out, done, d, holds_double(graph), 0) != 0) {
			json_decref(out);
			out = NULL;
		}
	}
	json_decref(none);
	json_decref(done);
	return out;
}

void *
repro_graph_rebuild_desc(void *target_v, void *configs, void *graphs)
{
	json_t *target = target_v, *d = json_object_get(json_object_get(target, "args"), "descriptor");
	json_t *out, *done;
	int double_scale = holds_double(d);

	if ((out = rebuild_filled_config(d, configs, graphs, max_id(target, max_id(graphs, 0)) + 1)))
		return out;
	out = json_array();
	done = json_object();
	if (!jstr(d, "type") || !json_is_object(json_object_get(d, "attrs"))) {
		complain("repro: %s: the records hold neither the backend calls on its descriptor (trace cudnnBackend*)"
			 " nor the descriptor's type and attributes", jstr(target, "fn"));
		goto fail;
	}
	if (synth_desc(out, done, d, double_scale, 0) != 0)
		goto fail;
	json_decref(done);
	return out;
fail:
	json_decref(done);
	json_decref(out);
	return NULL;
}
