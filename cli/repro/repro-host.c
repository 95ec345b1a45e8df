/*
 * Any other call, from the API description alone (issue 30): a failing or
 * traced call whose arguments the records hold whole: scalars, enums, host
 * arrays with their values, outputs, a handle, and descriptors of any legacy
 * kind, each recreated by replaying the Set calls the records show on it
 * (a Set that failed is replayed too: that is what the program did). Device
 * data, CUDA objects, callbacks and backend descriptors are not: repro says
 * which argument stops it.
 *
 * Everything taken from the records is checked before it lands in C, as in
 * repro-write.c: names must be the API description's, numbers numbers, and
 * text in comments is escaped.
 */
#include "repro.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-util.h"
#include "spy-api.h"
#include "g_decl8.h"

#define MAX_ARRAY 4096		/* elements of one array argument, in or out */
#define MAX_STEPS 16		/* Set calls replayed on one descriptor */

static const char *
jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const struct spy_fn_info *
info_of(const char *fn)
{
	int id = fn ? spy_fn_lookup(fn) : -1;

	return id < 0 ? NULL : &spy_fn_info[id];
}

/* The function named PREFIX + the descriptor type's middle ("Tensor" from cudnnCreateTensorDescriptor). */
static const char *
kind_fn_find(const char *kind, const char *prefix)
{
	size_t n = strlen(prefix);

	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		const struct spy_fn_info *f = &spy_fn_info[i];
		size_t len = strlen(f->name);

		/* Create takes a pointer to one (cudnnTensorDescriptor_t *), Destroy the descriptor. */
		if (strncmp(f->name, prefix, n) != 0 || len < n + 10 || strcmp(f->name + len - 10, "Descriptor") != 0 ||
		    f->nparams != 1 || !f->params[0].desc_kind || strcmp(f->params[0].desc_kind, kind) != 0 ||
		    !(f->params[0].kind == SPY_ARG_DESC ||
		      (f->params[0].kind == SPY_ARG_PTR && f->params[0].elem == SPY_ARG_DESC)))
			continue;
		return f->name;
	}
	return NULL;
}

/* kind_fn_find, remembered: it is asked for every descriptor argument of every record read. */
static const char *
kind_fn(const char *kind, const char *prefix)
{
	static struct {
		const char *kind, *prefix, *fn;
	} seen[64];
	static int nseen;

	for (int i = 0; i < nseen; i++)
		if (strcmp(seen[i].kind, kind) == 0 && strcmp(seen[i].prefix, prefix) == 0)
			return seen[i].fn;
	if (nseen == (int)(sizeof(seen) / sizeof(seen[0])))
		return kind_fn_find(kind, prefix);
	/* The kinds are the API description's strings, the prefixes repro's own: both outlive the table. */
	seen[nseen].kind = kind;
	seen[nseen].prefix = prefix;
	seen[nseen].fn = kind_fn_find(kind, prefix);
	return seen[nseen++].fn;
}

/* What repro knows how to recreate: the legacy kinds that have a Create and a Destroy function. */
static int
kind_ok(const char *kind)
{
	return kind && strcmp(kind, "backend") != 0 && kind_fn(kind, "cudnnCreate") && kind_fn(kind, "cudnnDestroy");
}

static int
refuse(char *why, size_t cap, const char *fn, const char *fmt, const char *a)
{
	if (why) {
		int n = snprintf(why, cap, "%s: ", fn);

		if (n > 0 && (size_t)n < cap)
			snprintf(why + n, cap - (size_t)n, fmt, a);
	}
	return -1;
}

/* An array counted by a descriptor that was never set (loWinIdx by an unset qDesc): cuDNN cannot read it. */
#define COUNT_UNSET (-2)

/*
 * The count the API description gives as a descriptor's dimension ([qDesc.dim0]) or an array's sum
 * ([sum(hostLabelLengths)]), from the record; -1 when it does not say, COUNT_UNSET for a descriptor never set.
 */
static long long
rule_count(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	static const char *const nchw[2][4] = { { "n", "c", "h", "w" }, { "k", "c", "h", "w" } };
	long long n = 0;

	if (q->count_desc >= 0 && q->count_desc < f->nparams) {
		json_t *d = json_object_get(args, f->params[q->count_desc].name);
		json_t *set = json_object_get(json_object_get(d, "set"), "args"), *dims = json_object_get(set, "dimA");
		json_t *v = NULL;

		if (json_is_true(json_object_get(d, "unset")) && !set)
			return COUNT_UNSET;
		if (json_is_array(dims))
			v = json_array_get(dims, (size_t)q->count_dim);
		else if (q->count_dim < 4)
			v = json_object_get(set, nchw[0][q->count_dim]) ? json_object_get(set, nchw[0][q->count_dim]) :
			    json_object_get(set, nchw[1][q->count_dim]);
		return json_is_integer(v) && json_integer_value(v) >= 0 ? (long long)json_integer_value(v) : -1;
	}
	if (q->count_sum >= 0 && q->count_sum < f->nparams) {
		json_t *vals = json_object_get(json_object_get(args, f->params[q->count_sum].name), "values");

		if (!json_is_array(vals))
			return -1;
		for (size_t k = 0; k < json_array_size(vals); k++) {
			json_t *x = json_array_get(vals, k);

			if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > MAX_ARRAY)
				return -1;
			n += (long long)json_integer_value(x);
		}
		return n;
	}
	return -1;
}

/* The number of elements an array parameter holds: its count parameter's value, else 1. */
static long long
count_of(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	json_t *c;
	long long n = 1;

	if (q->count_desc >= 0 || q->count_sum >= 0)
		return rule_count(f, q, args);

	if (q->count >= 0 && q->count < f->nparams) {
		c = json_object_get(args, f->params[q->count].name);
		if (json_is_object(c))
			c = json_object_get(c, "value");
		n = json_is_integer(c) ? (long long)json_integer_value(c) : -1;
	}
	return n;
}

/* An input array's values: {"ptr", "values"} in a call's arguments, a plain array in a "set". */
static json_t *
values_of(json_t *v)
{
	return json_is_array(v) ? v : json_object_get(v, "values");
}

/*
 * A scaling factor (alpha, beta, alpha1, betaDataDiff, ...): a host value the
 * spy read, {"ptr", "value"}. As the spy reads it (args.c), and cuDNN takes
 * it: a double when the last tensor or filter descriptor whose data type the
 * record says is double, else a float; -1 when no descriptor says.
 */
static int
scale_is(const struct spy_param_info *q, json_t *v)
{
	return q->kind == SPY_ARG_PTR && q->dir == SPY_DIR_IN && q->elem_size == 0 &&
	       (strncmp(q->name, "alpha", 5) == 0 || strncmp(q->name, "beta", 4) == 0) && json_is_object(v) &&
	       jstr(v, "ptr") && json_object_get(v, "value") && !json_object_get(v, "values");
}

/*
 * The padding fill of an RNN or sequence data Set, as the spy keeps it in a "set": the value alone, of the
 * Set's data type. "float" or "double" for the C type, NULL when it is not one or of another type.
 */
static const char *
fill_type(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	json_t *v = json_object_get(args, q->name);
	const char *dt = jstr(args, "dataType");

	/* A failure record shows it as {"ptr", "value"}. */
	if (json_is_object(v) && jstr(v, "ptr"))
		v = json_object_get(v, "value");
	if (q->kind != SPY_ARG_PTR || q->elem_size != 0 || strcmp(q->name, "paddingFill") != 0 || !dt ||
	    !(json_is_number(v) || (json_is_string(v) && strspn(json_string_value(v), "-naif") ==
				     strlen(json_string_value(v)))))
		return NULL;
	(void)f;
	return strcmp(dt, "CUDNN_DATA_FLOAT") == 0 ? "float" : strcmp(dt, "CUDNN_DATA_DOUBLE") == 0 ? "double" :
	       NULL;
}

static int
scale_double(const struct spy_fn_info *f, json_t *args)
{
	for (int k = f->nparams - 1; k >= 0; k--) {
		const struct spy_param_info *d = &f->params[k];
		json_t *v = json_object_get(args, d->name);
		const char *dt = jstr(json_object_get(json_object_get(v, "set"), "args"), "dataType");
		const char *desc = jstr(v, "desc");

		if (d->kind != SPY_ARG_DESC || !d->desc_kind ||
		    (strcmp(d->desc_kind, "tensor") != 0 && strcmp(d->desc_kind, "filter") != 0))
			continue;
		if (dt)
			return strcmp(dt, "CUDNN_DATA_DOUBLE") == 0;
		if (desc && strchr(desc, ' '))
			return strncmp(desc, "double ", 7) == 0;
	}
	return -1;
}

/* An address as the spy writes one, not NULL: "0x" and 1 to 16 hex digits. */
static int
is_address(json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	return s && strncmp(s, "0x", 2) == 0 && strlen(s) > 2 && strlen(s) <= 18 &&
	       strspn(s + 2, "0123456789abcdefABCDEF") == strlen(s) - 2;
}

/* Device data: an address given for a parameter the API description types as void. */
static int
device_is(const struct spy_param_info *q, json_t *v)
{
	return q->kind == SPY_ARG_PTR && q->dir == SPY_DIR_IN && q->elem_size == 0 && is_address(v);
}

/* A typed array the API description says is in GPU memory ("in device"), given at an address. */
static int
on_device(const struct spy_param_info *q, json_t *v)
{
	return q->kind == SPY_ARG_PTR && q->dir == SPY_DIR_IN && q->on_device && q->elem_size && is_address(v);
}

/*
 * A device array of sequence lengths (devSeqLengths, devSeqLengthsQO, ...): cuDNN requires it to hold what the
 * data descriptor beside it was set with (xDesc, qDesc, dqDesc, ...: its seqLengthArray), so that is what the
 * repro copies there. Its values as the records hold them in that descriptor's Set, or NULL.
 */
static json_t *unset_lengths;	/* [0]: for a data descriptor never set */

static json_t *
seq_lengths(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	const char *suffix = q->name + 13;
	char want[16];
	json_t *v, *set;

	if (!on_device(q, json_object_get(args, q->name)) || q->elem != SPY_ARG_INT || q->elem_size != 4 ||
	    strncmp(q->name, "devSeqLengths", 13) != 0)
		return NULL;
	if (!*suffix)
		snprintf(want, sizeof(want), "xDesc");
	else if (suffix[0] == 'D' && suffix[1])
		snprintf(want, sizeof(want), "d%cDesc", suffix[1] - 'A' + 'a');
	else
		snprintf(want, sizeof(want), "%cDesc", suffix[0] - 'A' + 'a');
	for (int k = 0; k < f->nparams; k++)
		if (f->params[k].kind == SPY_ARG_DESC && strcmp(f->params[k].name, want) == 0) {
			set = json_object_get(json_object_get(json_object_get(args, want), "set"), "args");
			/* Never set: cuDNN knows no lengths to hold it to; one zero gives the address a buffer. */
			if (!set && json_is_true(json_object_get(json_object_get(args, want), "unset"))) {
				if (!unset_lengths)
					unset_lengths = json_pack("[i]", 0);
				return unset_lengths;
			}
			v = json_object_get(set, "seqLengthArray");
			if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > MAX_ARRAY)
				return NULL;
			for (size_t i = 0; i < json_array_size(v); i++)
				if (!json_is_integer(json_array_get(v, i)) ||
				    json_integer_value(json_array_get(v, i)) != (int)json_integer_value(json_array_get(v, i)))
					return NULL;
			return v;
		}
	return NULL;
}

static long long count_of(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args);

/*
 * The bytes of such an array: as many elements as its count says, where the records hold it; a count that is
 * the sum of another device array's (CTC's labels by their lengths) is 0, as those are zeroed here. One at least.
 */
static unsigned long long
device_array_bytes(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	long long n = count_of(f, q, args);

	if (q->count_sum >= 0 && q->count_sum < f->nparams && f->params[q->count_sum].on_device)
		n = 0;
	return (unsigned long long)(n > 1 && n <= MAX_ARRAY ? n : 1) * q->elem_size;
}

/* Device data of any kind: an untyped buffer, sequence lengths the repro fills, or another device array. */
static int
dev_arg(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	return device_is(q, json_object_get(args, q->name)) || seq_lengths(f, q, args) != NULL ||
	       on_device(q, json_object_get(args, q->name));
}

/* The bytes a tensor or filter descriptor's last Set spans, as the record carries it; 0 when it does not say. */
static unsigned long long
desc_span(json_t *v)
{
	struct repro_shape sh;
	char why[256];
	unsigned long long elem;

	if (repro_shape_of(json_object_get(v, "set"), &sh, why, sizeof(why)) != 0)
		return 0;
	elem = repro_elem_size(sh.dtype);
	return sh.elems && elem && sh.elems <= (1ull << 40) / elem ? sh.elems * elem : 0;
}

/* A size no GPU holds (1 TiB): a program that gave it had no such buffer either, and the repro allocates 1 GiB. */
#define DEV_NONE (1ull << 40)
#define DEV_MAX (1ull << 30)

/*
 * The bytes device data parameter I needs: the tensor or filter descriptor named after it (x: xDesc, dy: dyDesc,
 * A: aDesc), or a byte count beside it (workSpace: workSpaceSizeInBytes). 0 when neither says.
 */
static unsigned long long
device_bytes(const struct spy_fn_info *f, int i, json_t *args)
{
	const char *name = f->params[i].name;
	char want[64];

	snprintf(want, sizeof(want), "%c%sDesc", name[0] >= 'A' && name[0] <= 'Z' ? name[0] - 'A' + 'a' : name[0],
		 name + 1);
	for (int k = 0; k < f->nparams; k++) {
		const struct spy_param_info *d = &f->params[k];

		/* Named after it, or (dkDesc, dkeys) just before it, as cuDNN writes each data's descriptor. */
		if (d->kind == SPY_ARG_DESC && (strcmp(d->name, want) == 0 || (k == i - 1 && strstr(d->name, "Desc")))) {
			json_t *v = json_object_get(args, d->name);

			/* A descriptor the records hold no Set of is made again as created, set to nothing: its data
			 * spans nothing, and the address gets a byte. */
			if (json_is_object(v) && !json_object_get(v, "set"))
				return 1;
			return desc_span(v);
		}
	}
	/* A workspace, reserve or weight space: the size the program gave with it (workSpaceSizeInBytes,
	 * weightSpaceSize), or the byte count just after it. */
	for (int k = 0; k < f->nparams; k++) {
		const struct spy_param_info *c = &f->params[k];
		size_t len = strlen(name);
		json_t *n = json_object_get(args, c->name);

		if ((c->kind != SPY_ARG_UINT && c->kind != SPY_ARG_INT) || !json_is_integer(n) ||
		    json_integer_value(n) < 0)
			continue;
		/*
		 * The size is the call's own argument, passed as recorded: the buffer behind the address is one byte
		 * where the program said none, and DEV_MAX where it said more than any GPU holds.
		 */
		if ((strncmp(c->name, name, len) == 0 && (strcmp(c->name + len, "Size") == 0 ||
							   strcmp(c->name + len, "SizeInBytes") == 0)) ||
		    (k == i + 1 && strstr(c->name, "SizeInBytes")))
			return json_integer_value(n) == 0 ? 1 : json_integer_value(n) >= (long long)DEV_NONE ? DEV_MAX :
			       (unsigned long long)json_integer_value(n);
	}
	return 0;
}

/*
 * How many elements an output array must hold: its count, or, where that is what the call returns
 * (perfResults[returnedAlgoCount]), the count the program asked for (requestedAlgoCount).
 */
static long long
out_count(const struct spy_fn_info *f, const struct spy_param_info *q, json_t *args)
{
	long long n = count_of(f, q, args);
	const char *c = q->count >= 0 && q->count < f->nparams ? f->params[q->count].name : NULL;
	char want[64];

	/*
	 * Counted by an output of the same call (cudnnGetRNNDataDescriptor's seqLengthArray[batchSize]): a
	 * failed call wrote none, and the room the program gave is its requested count (arrayLengthRequested).
	 */
	if (n < 0 && c && f->params[q->count].dir == SPY_DIR_OUT && f->params[q->count].kind == SPY_ARG_PTR)
		for (int k = 0; k < f->nparams; k++) {
			json_t *v = json_object_get(args, f->params[k].name);

			if (f->params[k].dir == SPY_DIR_IN && f->params[k].kind == SPY_ARG_INT && json_is_integer(v) &&
			    (strstr(f->params[k].name, "Requested") || strncmp(f->params[k].name, "requested", 9) == 0))
				return (long long)json_integer_value(v);
		}
	if (n >= 0 || !c || strncmp(c, "returned", 8) != 0)
		return n;
	snprintf(want, sizeof(want), "requested%s", c + 8);
	for (int k = 0; k < f->nparams; k++) {
		json_t *v = json_object_get(args, f->params[k].name);

		if (strcmp(f->params[k].name, want) == 0 && json_is_integer(v))
			return (long long)json_integer_value(v);
	}
	return -1;
}

/*
 * An output the call writes one thing into that the records cannot hold and need not: a CUDA handle
 * (cudnnGetStream's stream) or an opaque struct (cudnnQueryRuntimeError's tag). The repro gives room.
 */
static int
out_room(const struct spy_param_info *q)
{
	return q->kind == SPY_ARG_PTR && q->dir == SPY_DIR_OUT && q->count < 0 &&
	       (q->elem == SPY_ARG_CUDA || q->elem == SPY_ARG_CALLBACK || (q->elem == SPY_ARG_STRUCT && q->struct_id < 0));
}

/* Whether one argument is something the program can be given; -1 with why. */
static int
arg_ok(const struct spy_fn_info *f, int i, json_t *args, char *why, size_t cap)
{
	const struct spy_param_info *q = &f->params[i];
	json_t *v = json_object_get(args, q->name);
	long long n;

	if (!v)
		return refuse(why, cap, f->name, "no argument %s in the record", q->name);
	switch (q->kind) {
	case SPY_ARG_INT:
	case SPY_ARG_UINT:
		return json_is_integer(v) ? 0 : refuse(why, cap, f->name, "%s is not a number", q->name);
	case SPY_ARG_DOUBLE:
		return json_is_number(v) || json_is_string(v) ? 0 :
		       refuse(why, cap, f->name, "%s is not a number", q->name);
	case SPY_ARG_ENUM:
		return json_is_integer(v) || json_is_string(v) ? 0 :
		       refuse(why, cap, f->name, "%s is not a value of its enum", q->name);
	case SPY_ARG_HANDLE:
		return 0;
	case SPY_ARG_DESC:
		if (json_is_null(v))
			return 0;
		if (!kind_ok(q->desc_kind))
			return refuse(why, cap, f->name, "%s is a backend descriptor, which repro rebuilds only for "
				      "cudnnBackendExecute and a failed cudnnBackendFinalize", q->name);
		return 0;
	case SPY_ARG_PTR:
		if (json_is_null(v))
			return 0;
		if (q->elem == SPY_ARG_DESC && q->dir == SPY_DIR_OUT && kind_ok(q->desc_kind) && q->count < 0)
			return 0;
		if (scale_is(q, v))
			return scale_double(f, args) >= 0 ? 0 : refuse(why, cap, f->name, "%s: the records do not say "
								      "whether it is a float or a double", q->name);
		if (fill_type(f, q, args))
			return 0;
		if (seq_lengths(f, q, args))
			return 0;
		if (on_device(q, v))
			return q->count_sum >= 0 || ((n = count_of(f, q, args)) >= 0 && n <= MAX_ARRAY) ? 0 :
			       refuse(why, cap, f->name, "%s is device data whose size the records do not say", q->name);
		if (device_is(q, v))
			return device_bytes(f, i, args) > 0 ? 0 : refuse(why, cap, f->name, "%s is device data whose size "
								     "the records do not say", q->name);
		/* What the call writes into the program's memory: an array of a described struct, or addresses. */
		if (q->dir == SPY_DIR_OUT && ((q->elem == SPY_ARG_STRUCT && q->struct_id >= 0) || q->elem == SPY_ARG_PTR ||
					      (q->elem == SPY_ARG_OBJECT && q->count >= 0))) {
			n = out_count(f, q, args);
			return n >= 0 && n <= MAX_ARRAY ? 0 : refuse(why, cap, f->name, "%s: a count the records do "
								     "not hold, or over 4096", q->name);
		}
		/* Where the call writes a CUDA handle (cudnnGetStream) or into an opaque struct (a runtime tag). */
		if (out_room(q))
			return 0;
		if (!q->elem_size || q->elem == SPY_ARG_STRUCT || q->elem == SPY_ARG_PTR || q->elem == SPY_ARG_DESC ||
		    q->elem == SPY_ARG_OBJECT || q->elem == SPY_ARG_CUDA || q->elem == SPY_ARG_HANDLE ||
		    q->elem == SPY_ARG_CALLBACK)
			return refuse(why, cap, f->name, "%s is device data or an object the records do not hold",
				      q->name);
		n = q->dir == SPY_DIR_OUT ? out_count(f, q, args) : count_of(f, q, args);
		if (n == COUNT_UNSET && q->dir == SPY_DIR_IN)
			return 0;
		if (n < 0 || n > MAX_ARRAY)
			return refuse(why, cap, f->name, "%s: a count the records do not hold, or over 4096", q->name);
		if (q->dir == SPY_DIR_OUT)
			return 0;
		if (!json_is_array(values_of(v)) && !json_object_get(v, "value"))
			return refuse(why, cap, f->name, "%s: its values are not in the records", q->name);
		/*
		 * In a "set" the spy kept the values the call reads, which can be fewer than the
		 * description's count (cudnnSetTensorTransformDescriptor reads nbDims - 2 of foldA).
		 */
		if (json_is_object(v) && json_is_array(values_of(v)) && (long long)json_array_size(values_of(v)) < n)
			return refuse(why, cap, f->name, "%s: fewer values in the records than its count", q->name);
		return 0;
	default:
		return json_is_null(v) ? 0 : refuse(why, cap, f->name, "%s is an object the records do not hold",
						    q->name);
	}
}

int
repro_host_can(const char *fn, void *record, char *why, size_t cap)
{
	const struct spy_fn_info *f = info_of(fn);
	json_t *args = json_object_get(record, "args");

	if (why && cap)
		why[0] = 0;
	if (!f)
		return refuse(why, cap, fn ? fn : "?", "no cuDNN function%s", "");
	if (f->ret != SPY_RET_STATUS)
		return refuse(why, cap, fn, "returns no status%s", "");
	if (!json_is_object(args) && f->nparams)
		return refuse(why, cap, fn, "no arguments in the record%s", "");
	for (int i = 0; i < f->nparams; i++)
		if (arg_ok(f, i, args, why, cap) != 0)
			return -1;
	return 0;
}

int
repro_host_device_data(void *record)
{
	const struct spy_fn_info *f = info_of(jstr(record, "fn"));
	json_t *args = json_object_get(record, "args");

	for (int i = 0; f && i < f->nparams; i++)
		if (dev_arg(f, &f->params[i], args))
			return 1;
	return 0;
}

int
repro_host_needs_handle(void *record)
{
	const struct spy_fn_info *f = info_of(jstr(record, "fn"));
	json_t *args = json_object_get(record, "args");

	if (!f || (f->flags & SPY_FI_GPU))
		return 1;
	for (int i = 0; i < f->nparams; i++)
		if (f->params[i].kind == SPY_ARG_HANDLE && !json_is_null(json_object_get(args, f->params[i].name)))
			return 1;
	return 0;
}

/* ---- the plan: descriptors and the calls on them ---- */

/* While trying a plan (repro_host_try), why it cannot be made is kept, not said. */
static int quiet;
static char quiet_why[320];

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (quiet) {
		vsnprintf(quiet_why, sizeof(quiet_why), fmt, ap);
	} else {
		char b[640];

		vsnprintf(b, sizeof(b), fmt, ap);
		complain("%s", b);
	}
	va_end(ap);
}

struct hdesc {
	char id[40], var[48];
	const char *kind;
	json_t *steps;		/* [{"fn", "args", "status"?}]: the Set calls replayed, in order */
	const char *how;	/* where the steps came from, for the opening comment */
	int made;		/* the call creates it */
};

/* A device buffer: one per address the call was given, as large as its largest use needs. */
struct hdev {
	char var[48];
	unsigned long long addr, bytes;
	json_t *init;		/* the int32 values copied there (sequence lengths), else NULL: zeroed */
};

struct hplan {
	struct hdesc d[REPRO_MAX_DESCS];
	int n;
	int handle;		/* a handle is made (an argument of the call or of a step is one, not NULL) */
	struct hdev dev[REPRO_MAX_BUFS];
	int ndev;
};

static struct hdesc *
hdesc_find(struct hplan *h, const char *id)
{
	for (int i = 0; i < h->n; i++)
		if (strcmp(h->d[i].id, id) == 0)
			return &h->d[i];
	return NULL;
}

/* A parameter through which the call creates a descriptor (cudnnCreateTensorDescriptor's). */
static int
made_here(const struct spy_param_info *q)
{
	return q->kind == SPY_ARG_PTR && q->elem == SPY_ARG_DESC && q->dir == SPY_DIR_OUT;
}

/*
 * Such a parameter of a failed call, which wrote no descriptor there (a Create that failed, or a Get of the
 * dropout descriptor an RNN or attention descriptor holds): the record has its address alone, and the repro
 * gives room for one.
 */
static int
made_nothing(const struct spy_param_info *q, json_t *v)
{
	return made_here(q) && is_address(v);
}

static int plan_descs(struct repro_plan *p, struct hplan *h, const struct spy_fn_info *f, json_t *args,
		      json_t *states, int depth);

/* 1 when the reader holds the failed Set FN that was the last on descriptor ID (STATES, plan_one). */
static int
failed_set_held(json_t *states, const char *id, const char *fn)
{
	json_t *known = json_object_get(json_object_get(states, id), "sets");
	json_t *last = json_array_get(known, json_array_size(known) - 1);

	return last && json_is_integer(json_object_get(last, "status")) && jstr(last, "fn") &&
	       strcmp(jstr(last, "fn"), fn) == 0;
}

/* The RK_* of a kind that has single values beside its shape in the records (mathType), or -1. */
static int
legacy_kind(const char *kind)
{
	for (int k = 0; k < RK_COUNT; k++)
		if (strcmp(repro_kinds[k].prefix, kind) == 0)
			return k;
	return -1;
}

/* The single values a record shows beside a descriptor's shape, as the Set calls that make them. */
static void
add_settings(json_t *steps, const char *kind, const char *id, json_t *v)
{
	int rk = legacy_kind(kind);
	const char *key;
	json_t *x;

	if (rk < 0) {
		/*
		 * Other kinds: the Set function whose other parameters are exactly values the
		 * record shows beside the shape (an RNN descriptor's clip: cudnnRNNSetClip_v8).
		 */
		const struct spy_fn_info *best = NULL;

		for (int i = 0; i < _SPY_FN_COUNT; i++) {
			const struct spy_fn_info *f = &spy_fn_info[i];
			int all = f->nparams > 1 && strstr(f->name, "Set") && f->params[0].kind == SPY_ARG_DESC &&
				  f->params[0].desc_kind && strcmp(f->params[0].desc_kind, kind) == 0;

			for (int k = 1; all && k < f->nparams; k++)
				all = json_object_get(v, f->params[k].name) != NULL;
			if (all && (!best || f->nparams > best->nparams))
				best = f;
		}
		/* Every value cuDNN's own for a new descriptor: a call the program need not have made. */
		for (int k = 1, dflt = 1; best && k < best->nparams; k++) {
			dflt &= repro_is_default(best->name, best->params[k].name,
						 json_object_get(v, best->params[k].name));
			if (dflt && k == best->nparams - 1)
				best = NULL;
		}
		if (best) {
			json_t *args = json_pack("{s:s}", best->params[0].name, id);

			for (int k = 1; k < best->nparams; k++)
				json_object_set(args, best->params[k].name, json_object_get(v, best->params[k].name));
			json_array_append_new(steps, json_pack("{s:s, s:o}", "fn", best->name, "args", args));
		}
		return;
	}
	json_object_foreach(v, key, x) {
		const struct repro_fn *s = repro_setting_for(rk, key);

		if (s && s->nparams == 2 && !repro_is_default(s->name, s->params[1].name, x))
			json_array_append_new(steps, json_pack("{s:s, s:{s:s, s:O}}", "fn", s->name, "args",
							       s->params[0].name, id, s->params[1].name, x));
	}
}

/*
 * The descriptor's Set calls, from what the record says of it (V: its
 * argument object, or its id inside another Set call) and what the reader
 * saw (STATES: each id's traced and failed Set calls). MADE: the call
 * creates it.
 */
static int
plan_one(struct repro_plan *p, struct hplan *h, const char *kind, json_t *v, json_t *states, int depth, int made)
{
	const char *id = json_is_string(v) ? json_string_value(v) : jstr(v, "id");
	json_t *state = id ? json_object_get(states, id) : NULL, *steps = NULL;
	json_t *known = json_object_get(state, "sets");
	const char *fn = jstr(p->record, "fn");
	struct hdesc *d;
	const char *how = NULL;

	if (!id || !repro_id_ok(id) || strlen(id) >= sizeof(d->id) || strncmp(id, kind, strlen(kind)) != 0 ||
	    id[strlen(kind)] != '#') {
		say("repro: %s: a descriptor id that is not one the spy writes", fn);
		return -1;
	}
	if (hdesc_find(h, id))
		return 0;
	if (h->n >= REPRO_MAX_DESCS) {
		say("repro: %s: more than %d descriptors", fn, REPRO_MAX_DESCS);
		return -1;
	}
	if (made) {
		steps = json_array();
		how = "made by the call";
	} else if (json_is_object(v) && json_is_object(json_object_get(v, "set"))) {
		steps = json_array();
		json_array_append(steps, json_object_get(v, "set"));
		add_settings(steps, kind, id, v);
		how = "its last Set call and the values beside it, as the record carries them";
	} else if (json_is_object(v) && jstr(v, "set_failed")) {
		/* cuDNN may change a descriptor before refusing a Set: replay the calls as the program made them. */
		if (!failed_set_held(states, id, jstr(v, "set_failed"))) {
			say("repro: %s: %s: its last Set, %s, failed, and the records do not hold that call", fn,
				 id, jstr(v, "set_failed"));
			return -1;
		}
		steps = json_incref(known);
		how = "the Set calls the program made on it, the failed one last";
	} else if (json_is_object(v) && jstr(v, "filled_by")) {
		json_t *call = json_object_get(v, "filled");

		/* The record keeps the filling call while what it filled this from stays as it was. */
		if (!json_is_object(call) || !jstr(call, "fn") || strcmp(jstr(call, "fn"), jstr(v, "filled_by")) != 0 ||
		    !json_is_object(json_object_get(call, "args"))) {
			say("repro: %s: %s was filled by %s from descriptors that changed since (or the records do not"
			    " say from which)", fn, id, jstr(v, "filled_by"));
			return -1;
		}
		steps = json_array();
		json_array_append(steps, call);
		how = "filled by cuDNN, as the program had it filled, from the descriptors as they were";
	} else if (json_array_size(known)) {
		steps = json_incref(known);
		how = "the traced Set calls on it";
	} else if (json_is_object(v) && json_is_true(json_object_get(v, "unset"))) {
		steps = json_array();
		add_settings(steps, kind, id, v);
		how = json_is_true(json_object_get(v, "untraced")) ? "new: what was set on it before this Set was not "
			"traced (a Set gives it its shape whole)" : "created, never set";
	} else if (json_is_true(json_object_get(state, "created"))) {
		/* Its Create was traced, and no Set after it. */
		steps = json_array();
		how = "created, never set (its traced Create, no Set after it)";
	} else {
		say("repro: %s: the records do not say how %s was set (trace cudnnSet* to replay it)", fn, id);
		return -1;
	}
	if (json_array_size(steps) > MAX_STEPS) {
		json_decref(steps);
		say("repro: %s: %s: more than %d Set calls", fn, id, MAX_STEPS);
		return -1;
	}
	d = &h->d[h->n++];
	snprintf(d->id, sizeof(d->id), "%s", id);
	snprintf(d->var, sizeof(d->var), "%s", id);
	*strchr(d->var, '#') = '_';
	d->kind = kind;
	d->steps = steps;
	d->how = how;
	d->made = made;
	/* The descriptors and handles its Set calls name, first. */
	for (size_t k = 0; k < json_array_size(steps); k++) {
		json_t *s = json_array_get(steps, k);
		const struct spy_fn_info *sf = info_of(jstr(s, "fn"));
		char why[256];

		if (!sf || repro_host_can(sf->name, s, why, sizeof(why)) != 0) {
			say("repro: %s: %s: a Set call repro cannot replay: %s", fn, id,
				 sf ? why : "no cuDNN function");
			return -1;
		}
		if (depth >= 4) {
			say("repro: %s: %s: descriptors nested too deep", fn, id);
			return -1;
		}
		if (plan_descs(p, h, sf, json_object_get(s, "args"), states, depth + 1) != 0)
			return -1;
	}
	return 0;
}

static int
plan_descs(struct repro_plan *p, struct hplan *h, const struct spy_fn_info *f, json_t *args, json_t *states,
	   int depth)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *q = &f->params[i];
		json_t *v = json_object_get(args, q->name);

		if (q->kind == SPY_ARG_HANDLE && !json_is_null(v))
			h->handle = 1;
		if (!made_here(q) && (q->kind != SPY_ARG_DESC || json_is_null(v) || !v))
			continue;
		if (!v || json_is_null(v))
			continue;
		if (made_nothing(q, v))
			continue;
		/* Created by the call itself (a Create): no state before it. */
		if (made_here(q)) {
			const char *id = jstr(v, "value") ? jstr(v, "value") : jstr(v, "id");
			json_t *made = json_string(id ? id : "");

			if (plan_one(p, h, q->desc_kind, made, NULL, depth, 1) != 0) {
				json_decref(made);
				return -1;
			}
			json_decref(made);
			continue;
		}
		/*
		 * The descriptor a Set's own record shows, where what it was before is not that: a traced Set's
		 * shows it as the Set left it, and what it was before is what the reader saw before (STATES), or,
		 * not traced, a new one; a failed Set's may name a failed Set before it that the records lost
		 * (written by a thread the exit cut short), and the Set's own arguments being whole, a new
		 * descriptor is what a replay of it can have.
		 */
		if (depth == 0 && i == 0 && strncmp(f->name, "cudnnSet", 8) == 0 && jstr(v, "id")) {
			const char *id = jstr(v, "id");
			int traced = jstr(p->record, "event") && strcmp(jstr(p->record, "event"), "call") == 0;
			json_t *as = NULL;
			int rc;

			if (traced && json_array_size(json_object_get(json_object_get(states, id), "sets")))
				as = json_string(id);
			else if (traced || (jstr(v, "set_failed") && !failed_set_held(states, id, jstr(v, "set_failed"))))
				as = json_pack("{s:s, s:b, s:b}", "id", id, "unset", 1, "untraced", 1);
			if (as) {
				rc = plan_one(p, h, q->desc_kind, as, states, depth, 0);
				json_decref(as);
				if (rc != 0)
					return -1;
				continue;
			}
		}
		if (plan_one(p, h, q->desc_kind, v, states, depth, 0) != 0)
			return -1;
	}
	return 0;
}

/* ---- writing it ---- */

static const char *
elem_ctype(const struct spy_param_info *q)
{
	switch (q->elem) {
	case SPY_ARG_STRUCT:
		return q->struct_id >= 0 ? spy_struct_info[q->struct_id].name : "char";
	case SPY_ARG_PTR:
		return "void *";
	case SPY_ARG_DOUBLE:
		return q->elem_size == 4 ? "float" : "double";
	case SPY_ARG_UINT:
		return q->elem_size == 1 ? "unsigned char" : q->elem_size == 2 ? "unsigned short" :
		       q->elem_size == 4 ? "unsigned" : "unsigned long long";
	case SPY_ARG_ENUM:
		return "int";
	default:
		return q->elem_size == 1 ? "char" : q->elem_size == 2 ? "short" : q->elem_size == 4 ? "int" : "long long";
	}
}

/* One scalar of the records as C; -1 (after a message) when it is not one. */
static int
c_scalar(FILE *out, unsigned kind, int enum_id, json_t *v, const char *fn, const char *name)
{
	if (json_is_object(v) && json_object_get(v, "value"))
		v = json_object_get(v, "value");
	if ((kind == SPY_ARG_INT || kind == SPY_ARG_UINT || kind == SPY_ARG_ENUM) && json_is_integer(v)) {
		if (kind == SPY_ARG_ENUM && enum_id >= 0)
			fprintf(out, "(%s)", spy_enum_info[enum_id].name);
		repro_int(out, (long long)json_integer_value(v));
		return 0;
	}
	if (kind == SPY_ARG_ENUM && json_is_string(v) && enum_id >= 0 &&
	    repro_enum_word(spy_enum_info[enum_id].name, json_string_value(v))) {
		fputs(json_string_value(v), out);
		return 0;
	}
	if (kind == SPY_ARG_DOUBLE && json_is_number(v)) {
		double d = json_number_value(v);

		if (isfinite(d)) {
			fprintf(out, "%.17g", d);
			return 0;
		}
	}
	if (kind == SPY_ARG_DOUBLE && json_is_string(v)) {
		const char *s = json_string_value(v);

		if (strcmp(s, "nan") == 0 || strcmp(s, "inf") == 0 || strcmp(s, "-inf") == 0) {
			fputs(s[0] == 'n' ? "NAN" : s[0] == '-' ? "-INFINITY" : "INFINITY", out);
			return 0;
		}
	}
	complain("repro: %s: argument %s is not what cuDNN takes there", fn, name);
	return -1;
}

/* The arrays a call's arguments need, before it: inputs with their values, outputs zeroed. */
static int
write_arrays(FILE *out, const struct spy_fn_info *f, json_t *args, const char *pre, const char *indent)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *q = &f->params[i];
		json_t *v = json_object_get(args, q->name), *vals;
		long long n;

		if (made_nothing(q, v)) {
			fprintf(out, "%sstatic void *%s%s[1];\t/* room for the descriptor the call writes */\n", indent, pre,
				q->name);
			continue;
		}
		if (q->kind != SPY_ARG_PTR || json_is_null(v) || made_here(q) || dev_arg(f, q, args))
			continue;
		if (scale_is(q, v) || fill_type(f, q, args)) {
			fprintf(out, "%s%s %s%s[1] = { ", indent, fill_type(f, q, args) ? fill_type(f, q, args) :
				scale_double(f, args) == 1 ? "double" : "float", pre, q->name);
			if (c_scalar(out, SPY_ARG_DOUBLE, -1, json_is_object(v) ? json_object_get(v, "value") : v, f->name,
				     q->name) != 0)
				return -1;
			fputs(" };\n", out);
			continue;
		}
		if (out_room(q)) {
			/* Room for a handle or an opaque struct, aligned for either; its contents are cuDNN's. */
			fprintf(out, "%sstatic long long %s%s[%d];\t/* room for the %s the call writes */\n", indent, pre,
				q->name, q->elem == SPY_ARG_STRUCT ? 32 : 1, q->elem == SPY_ARG_CUDA ? "CUDA handle" :
				q->elem == SPY_ARG_CALLBACK ? "function pointer" : "opaque struct");
			continue;
		}
		n = q->dir == SPY_DIR_OUT ? out_count(f, q, args) : count_of(f, q, args);
		if (n == COUNT_UNSET) {
			fprintf(out, "%s%s %s%s[1] = { 0 };\t/* counted by %s, never set: a place, no values */\n", indent,
				elem_ctype(q), pre, q->name, f->params[q->count_desc].name);
			continue;
		}
		if (n < 1)
			n = 1;
		if (q->dir == SPY_DIR_OUT) {
			fprintf(out, "%sstatic %s %s%s[%lld];\n", indent, elem_ctype(q), pre, q->name, n);
			continue;
		}
		vals = values_of(v);
		fprintf(out, "%s%s %s%s[%lld] = { ", indent, elem_ctype(q), pre, q->name, n);
		for (long long k = 0; k < n && (!vals || k < (long long)json_array_size(vals)); k++) {
			json_t *x = vals ? json_array_get(vals, (size_t)k) : json_object_get(v, "value");

			fputs(k ? ", " : "", out);
			if (c_scalar(out, q->elem, q->enum_id, x, f->name, q->name) != 0)
				return -1;
		}
		fputs(" };\n", out);
	}
	return 0;
}

/*
 * An array cuDNN cannot read (counted by a descriptor never set), at the address the program gave: where that
 * was also device data's or another such array's, the same place, so that what aliased aliases here too.
 */
static void
write_unset(FILE *out, const struct hplan *h, const struct spy_fn_info *f, int i, json_t *args, const char *pre)
{
	const char *a = jstr(args, f->params[i].name);
	unsigned long long addr = is_address(json_object_get(args, f->params[i].name)) ? strtoull(a + 2, NULL, 16) : 0;

	for (int k = 0; addr && k < h->ndev; k++)
		if (h->dev[k].addr == addr) {
			fputs(h->dev[k].var, out);
			return;
		}
	for (int k = 0; addr && k < i; k++) {
		const char *b = jstr(args, f->params[k].name);

		if (b && strcmp(a, b) == 0 && f->params[k].kind == SPY_ARG_PTR && f->params[k].dir == SPY_DIR_IN &&
		    count_of(f, &f->params[k], args) == COUNT_UNSET) {
			fprintf(out, "(void *)%s%s", pre, f->params[k].name);
			return;
		}
	}
	fprintf(out, "(void *)%s%s", pre, f->params[i].name);
}

/* The type of parameter I of FN when it is a `value` type passed by value, else NULL. */
static const char *
value_type(const char *fn, int i)
{
	for (size_t k = 0; k < sizeof(spy_value_params) / sizeof(spy_value_params[0]); k++)
		if (spy_value_params[k].param == i && strcmp(spy_value_params[k].fn, fn) == 0)
			return spy_value_params[k].type;
	return NULL;
}

static int
write_args(FILE *out, const struct hplan *h, const struct spy_fn_info *f, json_t *args, const char *pre)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *q = &f->params[i];
		json_t *v = json_object_get(args, q->name);
		const char *id;

		fputs(i ? ", " : "", out);
		switch (q->kind) {
		case SPY_ARG_HANDLE:
			fputs(json_is_null(v) ? "NULL" : q->dir == SPY_DIR_OUT ? "&handle" : "handle", out);
			break;
		case SPY_ARG_DESC:
			id = json_is_string(v) ? json_string_value(v) : jstr(v, "id") ? jstr(v, "id") : jstr(v, "value");
			if (json_is_null(v) || !id) {
				fputs("NULL", out);
			} else {
				const struct hdesc *d = hdesc_find((struct hplan *)h, id);

				if (!d) {
					complain("repro: %s: %s names a descriptor repro did not make", f->name, q->name);
					return -1;
				}
				fprintf(out, "%s%s", q->dir == SPY_DIR_OUT ? "&" : "", d->var);
			}
			break;
		case SPY_ARG_PTR:
			if (json_is_null(v)) {
				fputs("NULL", out);
			} else if (made_nothing(q, v)) {
				fprintf(out, "(void *)%s%s", pre, q->name);
			} else if (made_here(q)) {
				const struct hdesc *d = NULL;

				id = jstr(v, "value") ? jstr(v, "value") : jstr(v, "id");
				d = id ? hdesc_find((struct hplan *)h, id) : NULL;
				if (!d) {
					complain("repro: %s: %s names a descriptor repro did not make", f->name, q->name);
					return -1;
				}
				fprintf(out, "&%s", d->var);
			} else if (dev_arg(f, q, args)) {
				unsigned long long addr = strtoull(json_string_value(v) + 2, NULL, 16);
				int k;

				for (k = 0; k < h->ndev && h->dev[k].addr != addr; k++)
					;
				if (k == h->ndev) {
					complain("repro: %s: %s is device data repro did not allocate", f->name, q->name);
					return -1;
				}
				fputs(h->dev[k].var, out);
			} else if (q->dir == SPY_DIR_IN && count_of(f, q, args) == COUNT_UNSET) {
				write_unset(out, h, f, i, args, pre);
			} else {
				fprintf(out, "(void *)%s%s", pre, q->name);
			}
			break;
		case SPY_ARG_INT:
		case SPY_ARG_UINT:
		case SPY_ARG_DOUBLE:
		case SPY_ARG_ENUM:
			/* A struct around the scalar (cudnnAlgorithm_t): its first member, in either major's type. */
			if (value_type(f->name, i))
				fprintf(out, "(%s){ ", value_type(f->name, i));
			if (c_scalar(out, q->kind, q->enum_id, v, f->name, q->name) != 0)
				return -1;
			if (value_type(f->name, i))
				fputs(" }", out);
			break;
		default:
			fputs("NULL", out);
		}
	}
	return 0;
}

/* The recorded call as a comment, in the records' own spelling. */
static void
comment_call(FILE *out, const char *indent, const struct spy_fn_info *f, json_t *args)
{
	fprintf(out, "%s/* recorded: %s(", indent, f->name);
	for (int i = 0; i < f->nparams; i++) {
		json_t *v = json_object_get(args, f->params[i].name);
		char *text;

		fputs(i ? ", " : "", out);
		if (json_is_object(v) && (jstr(v, "id") || jstr(v, "value")) && f->params[i].kind == SPY_ARG_DESC) {
			repro_comment(out, jstr(v, "id") ? jstr(v, "id") : jstr(v, "value"));
			continue;
		}
		if (json_is_object(v) && json_object_get(v, "values"))
			v = json_object_get(v, "values");
		else if (json_is_object(v) && json_object_get(v, "ptr") && f->params[i].dir == SPY_DIR_OUT)
			v = NULL;
		if (!v) {
			fputs("&", out);
			repro_comment(out, f->params[i].name);
			continue;
		}
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		if (text && json_is_string(v)) {
			repro_comment(out, json_string_value(v));
		} else {
			for (char *c = text; c && *c; c++)
				*c = *c == '[' ? '{' : *c == ']' ? '}' : *c;
			repro_comment(out, text);
		}
		free(text);
	}
	fputs(") */\n", out);
}

static const char host_prelude[] =
	"#include <math.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"\n"
	"#include <cudnn.h>\n"
	"\n"
	"";

/* What follows print_status (repro_print_status, repro-write.c). */
static const char host_checks[] =
	"/* A step the call needs: it must work, else the setup failed (exit 2). */\n"
	"static __attribute__((unused)) void\n"
	"check_cudnn(cudnnStatus_t status, const char *what)\n"
	"{\n"
	"\tif (status == CUDNN_STATUS_SUCCESS)\n"
	"\t\treturn;\n"
	"\tprint_status(stderr, what, status);\n"
	"\tfputc('\\n', stderr);\n"
	"\texit(2);\n"
	"}\n"
	"\n"
	"/* A step that failed in the program too: it must fail the same way here. */\n"
	"static __attribute__((unused)) void\n"
	"check_recorded(cudnnStatus_t status, int recorded, const char *what)\n"
	"{\n"
	"\tprint_status(stdout, what, status);\n"
	"\tprintf(\"%s\\n\", (int)status == recorded ? \", as recorded\" : \", NOT as recorded\");\n"
	"\tif ((int)status != recorded)\n"
	"\t\texit(2);\n"
	"}\n"
	"\n";

/* Text for a C string literal: printable ASCII without quotes or backslashes (names the API knows). */
static void
str_text(FILE *out, const char *s)
{
	for (const char *c = s ? s : "?"; *c; c++)
		fputc(*c >= 0x20 && *c <= 0x7e && *c != '"' && *c != '\\' && *c != '%' && *c != '?' ? *c : '_', out);
}

static int
write_step(FILE *out, const struct hplan *h, const struct hdesc *d, json_t *s, int k)
{
	const struct spy_fn_info *f = info_of(jstr(s, "fn"));
	json_t *args = json_object_get(s, "args"), *st = json_object_get(s, "status");
	char pre[64];

	snprintf(pre, sizeof(pre), "s%d_", k);
	fputs("\t{\n", out);
	if (write_arrays(out, f, args, pre, "\t\t") != 0)
		return -1;
	comment_call(out, "\t\t", f, args);
	if (json_is_integer(st) && json_integer_value(st) != 0) {
		fprintf(out, "\t\tcheck_recorded(%s(", f->name);
		if (write_args(out, h, f, args, pre) != 0)
			return -1;
		fprintf(out, "), %lld, \"%s (", (long long)json_integer_value(st), f->name);
	} else {
		fprintf(out, "\t\tcheck_cudnn(%s(", f->name);
		if (write_args(out, h, f, args, pre) != 0)
			return -1;
		fprintf(out, "), \"%s (", f->name);
	}
	str_text(out, d->id);
	fputs(")\");\n\t}\n", out);
	return 0;
}

/* The outputs the call gives back beside its status, printed after it. */
static int
is_output(const struct spy_param_info *q, json_t *v)
{
	return q->kind == SPY_ARG_PTR && q->dir != SPY_DIR_IN && !json_is_null(v) && !made_here(q);
}

static int
outputs(const struct spy_fn_info *f, json_t *args)
{
	int n = 0;

	for (int i = 0; i < f->nparams; i++)
		n += is_output(&f->params[i], json_object_get(args, f->params[i].name));
	return n;
}

static void
write_outputs(FILE *out, const struct spy_fn_info *f, json_t *args)
{
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *q = &f->params[i];
		json_t *v = json_object_get(args, q->name), *rec;
		long long n = count_of(f, q, args);
		char *text;

		/* Structs and addresses are the call's to fill: the status says what it did with them. */
		if (!is_output(q, v) || q->elem == SPY_ARG_STRUCT || q->elem == SPY_ARG_PTR || out_room(q))
			continue;
		n = n < 1 ? 1 : n > 16 ? 16 : n;
		rec = json_object_get(v, "values") ? json_object_get(v, "values") : json_object_get(v, "value");
		text = rec ? json_dumps(rec, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		fputs("\tprintf(\"", out);
		str_text(out, q->name);
		fputs(":\");\n", out);
		fprintf(out, "\tfor (int i = 0; i < %lld; i++)\n", n);
		if (q->elem == SPY_ARG_DOUBLE)
			fprintf(out, "\t\tprintf(\" %%g\", (double)out_%s[i]);\n", q->name);
		else
			fprintf(out, "\t\tprintf(\" %%lld\", (long long)out_%s[i]);\n", q->name);
		fputs("\tprintf(\"", out);
		if (text) {
			fputs(" (recorded: ", out);
			str_text(out, text);
			fputs(")", out);
		}
		fputs("\\n\");\n", out);
		free(text);
	}
}

static void
write_header(FILE *out, const struct repro_plan *p, const struct hplan *h)
{
	int before = 0;

	fputs("/*\n * A standalone reproduction of one recorded cuDNN call: ", out);
	repro_comment(out, jstr(p->record, "fn"));
	fputs(",\n * which returned ", out);
	repro_comment(out, p->status_name ? p->status_name : "status");
	fprintf(out, " (%lld) in the recorded program.\n *\n * Written by cudnnspy repro from ", p->status);
	repro_comment(out, p->file);
	fprintf(out, ",\n * line %lld (call %lld", p->record_no, p->call_no);
	if (p->failure)
		fprintf(out, ", failure %lld", p->failure_no);
	fputs("): the records of ", out);
	repro_comment(out, p->program);
	fprintf(out, " (pid %lld) on ", p->pid);
	repro_comment(out, p->host);
	fprintf(out, ",\n * which ran cuDNN %lld from ", p->lib_version);
	repro_comment(out, p->lib_path);
	fputs(".\n", out);
	for (int i = 0; i < h->n; i++)
		for (size_t k = 0; k < json_array_size(h->d[i].steps); k++) {
			const char *sfn = jstr(json_array_get(h->d[i].steps, k), "fn");

			before += sfn && strcmp(sfn, jstr(p->record, "fn")) == 0;
		}
	repro_write_message(out, p, before);
	repro_write_python(out, json_object_get(p->record, "python"));
	fputs(" *\n * The records hold every argument of this call (it takes no device data,\n"
	      " * not its data). What this program replays from them:\n", out);
	for (int i = 0; i < h->n; i++) {
		fputs(" *   ", out);
		repro_comment(out, h->d[i].id);
		fputs(": ", out);
		repro_comment(out, h->d[i].how);
		for (size_t k = 0; k < json_array_size(h->d[i].steps); k++) {
			fputs(k ? ", " : " (", out);
			repro_comment(out, jstr(json_array_get(h->d[i].steps, k), "fn"));
		}
		fputs(json_array_size(h->d[i].steps) ? ")\n" : "\n", out);
	}
	fputs(" *   the call's own arguments, as recorded\n", out);
	if (h->handle)
		fputs(" *   a handle: cudnnCreate needs a GPU and its driver\n", out);
	else
		fputs(" * It needs no handle, so it runs where there is no GPU.\n", out);
	fputs(" *\n * Build:\n *   ", out);
	repro_comment(out, p->build);
	fputs(strchr(p->exe, '/') ? "\n * Run:\n *   " : "\n * Run:\n *   ./", out);
	repro_comment(out, p->exe);
	fputs("\n * Exit status: 0 when the call returns the recorded status, 1 when it\n"
	      " * returns another, 2 when the setup failed (no GPU, a descriptor cuDNN refused).\n */\n", out);
}

int
repro_host_plan(struct repro_plan *p, void *states)
{
	struct hplan *h = calloc(1, sizeof(*h));
	const struct spy_fn_info *f = info_of(jstr(p->record, "fn"));
	char why[256];

	if (!h) {
		say("repro: out of memory");
		return -1;
	}
	p->hplan = h;
	if (!f || repro_host_can(f->name, p->record, why, sizeof(why)) != 0) {
		say("repro: %s", why);
		return -1;
	}
	/* Device data: a buffer per address, so that what aliased in the program aliases here. */
	for (int i = 0; i < f->nparams; i++) {
		json_t *args = json_object_get(p->record, "args"), *v = json_object_get(args, f->params[i].name);
		unsigned long long addr, bytes;
		int k;

		json_t *init = seq_lengths(f, &f->params[i], args);

		if (!dev_arg(f, &f->params[i], args))
			continue;
		addr = strtoull(json_string_value(v) + 2, NULL, 16);
		bytes = init ? 4 * json_array_size(init) : on_device(&f->params[i], v) ?
			device_array_bytes(f, &f->params[i], args) : device_bytes(f, i, args);
		for (k = 0; k < h->ndev && h->dev[k].addr != addr; k++)
			;
		if (k == h->ndev) {
			if (h->ndev == REPRO_MAX_BUFS) {
				say("repro: %s: more than %d device buffers", f->name, REPRO_MAX_BUFS);
				return -1;
			}
			h->ndev++;
			h->dev[k].addr = addr;
			snprintf(h->dev[k].var, sizeof(h->dev[k].var), "dev_%s", f->params[i].name);
		}
		if (bytes > h->dev[k].bytes)
			h->dev[k].bytes = bytes;
		if (init && !h->dev[k].init)
			h->dev[k].init = init;
	}
	return plan_descs(p, h, f, json_object_get(p->record, "args"), states, 0);
}

int
repro_host_try(void *record, void *states, char *why, size_t cap)
{
	struct repro_plan scratch;
	int rc;

	memset(&scratch, 0, sizeof(scratch));
	scratch.record = record;
	quiet = 1;
	quiet_why[0] = 0;
	rc = repro_host_plan(&scratch, states);
	quiet = 0;
	/* "repro: " leads each message: the list line says that already. */
	if (rc != 0 && why)
		snprintf(why, cap, "%s", strncmp(quiet_why, "repro: ", 7) == 0 ? quiet_why + 7 : quiet_why);
	repro_host_free(&scratch);
	return rc;
}

void
repro_host_free(struct repro_plan *p)
{
	struct hplan *h = p->hplan;

	for (int i = 0; h && i < h->n; i++)
		json_decref(h->d[i].steps);
	free(h);
	p->hplan = NULL;
}

/* The declaration of FN when only cuDNN 8 has it, else NULL. */
static const char *
decl8_of(const char *fn)
{
	for (size_t i = 0; fn && i < sizeof(spy_decl8) / sizeof(spy_decl8[0]); i++)
		if (strcmp(spy_decl8[i].name, fn) == 0)
			return spy_decl8[i].decl;
	return NULL;
}

/* FN into SEEN (N of CAP) when only cuDNN 8 has it, once. */
static void
add_decl8(const char **seen, int *n, int cap, const char *fn)
{
	for (int j = 0; j < *n; j++)
		if (strcmp(seen[j], fn) == 0)
			return;
	if (*n < cap && decl8_of(fn))
		seen[(*n)++] = fn;
}

/*
 * A repro of a function only cuDNN 8 has (the call, a Set, Create or Destroy of a descriptor it names) is built
 * against whichever headers are installed, cuDNN 9's most likely, which do not declare it: it declares those
 * itself, from the API description, as the program had them. Weak, so that it links against a cuDNN without
 * them too, where the program's call can only have been answered by the spy (NOT_INITIALIZED, the function
 * missing from its copy): run_call says so.
 */
static void
write_decl8(FILE *out, const struct spy_fn_info *f, const struct hplan *h)
{
	const char *seen[64];
	int n = 0;

	add_decl8(seen, &n, 64, f->name);
	for (int i = 0; i < h->n; i++) {
		add_decl8(seen, &n, 64, kind_fn(h->d[i].kind, "cudnnCreate"));
		add_decl8(seen, &n, 64, kind_fn(h->d[i].kind, "cudnnDestroy"));
		for (size_t k = 0; k < json_array_size(h->d[i].steps); k++) {
			const char *fn = jstr(json_array_get(h->d[i].steps, k), "fn");

			if (fn)
				add_decl8(seen, &n, 64, fn);
		}
	}
	/* Only cuDNN 9 has the call's function: weak too, so that this links against the cuDNN 8 it reached. */
	if (!(f->majors & SPY_MAJOR_8))
		fprintf(out, "/* Only cuDNN 9 has it: weak, so that this links against a cuDNN 8 too. */\n#pragma weak %s\n\n",
			f->name);
	if (!n)
		return;
	fputs("/* Only cuDNN 8 has these, and cuDNN 9's headers do not declare them: as cudnnspy's API description\n"
	      " * has them. Weak: this links against a cuDNN without them too. */\n#if CUDNN_MAJOR >= 9\n", out);
	fputs(spy_types8_text, out);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s\n", decl8_of(seen[i]));
	fputs("#endif\n", out);
	for (int i = 0; i < n; i++)
		fprintf(out, "#pragma weak %s\n", seen[i]);
	fputs("\n", out);
}

int
repro_host_write(const struct repro_plan *p, FILE *out)
{
	const struct hplan *h = p->hplan;
	const struct spy_fn_info *f = info_of(jstr(p->record, "fn"));
	json_t *args = json_object_get(p->record, "args");
	int destroys = strncmp(f->name, "cudnnDestroy", 12) == 0;

	write_header(out, p, h);
	fputs(host_prelude, out);
	write_decl8(out, f, h);
	fputs(repro_print_status, out);
	fputs(host_checks, out);
	fprintf(out, "#define RECORDED_STATUS %lld\t/* ", p->status);
	repro_comment(out, p->status_name);
	/* A repro of cudnnDestroy(NULL) never uses it. */
	fputs(" */\n\n/* The handle and the descriptors, named after their ids in the records. */\n"
	      "static __attribute__((unused)) cudnnHandle_t handle;\n", out);
	for (int i = 0; i < h->n; i++) {
		const char *create = kind_fn(h->d[i].kind, "cudnnCreate");

		/* cudnnCreateTensorDescriptor: cudnnTensorDescriptor_t, a name the API description holds. */
		fprintf(out, "static cudnn%.*s_t %s;\t/* ", (int)strlen(create) - 11, create + 11, h->d[i].var);
		repro_comment(out, h->d[i].id);
		fputs(" */\n", out);
	}
	fputs("\n", out);
	for (int i = 0; i < h->n; i++) {
		const struct hdesc *d = &h->d[i];

		if (d->made)
			continue;
		fputs("/* ", out);
		repro_comment(out, d->id);
		fputs(": ", out);
		repro_comment(out, d->how);
		fprintf(out, ". */\nstatic void\ncreate_%s(void)\n{\n", d->var);
		fprintf(out, "\tcheck_cudnn(%s(&%s), \"%s\");\n", kind_fn(d->kind, "cudnnCreate"), d->var,
			kind_fn(d->kind, "cudnnCreate"));
		for (size_t k = 0; k < json_array_size(d->steps); k++)
			if (write_step(out, h, d, json_array_get(d->steps, k), (int)k) != 0)
				return -1;
		fputs("}\n\n", out);
	}
	if (h->ndev) {
		/* The records hold where the program's device data was and how large, not what it held. */
		fputs("/* The device data, one buffer per address the program gave, as large as the descriptor (or the\n"
		      " * size) beside it says (a byte for a size of 0, 1 GiB for one no GPU holds), at the recorded\n"
		      " * offset from a 256-byte boundary, zeroed: the records hold no data. */\n", out);
		for (int i = 0; i < h->ndev; i++) {
			fprintf(out, "static void *%s, *%s_base;\t/* at 0x%llx in the program, %llu bytes */\n",
				h->dev[i].var, h->dev[i].var, h->dev[i].addr, h->dev[i].bytes);
			if (!h->dev[i].init)
				continue;
			/* seq_lengths checked each is an int. */
			fprintf(out, h->dev[i].init == unset_lengths ? "/* %s: its data descriptor was never set, so "
				"cuDNN holds it to no lengths: one zero. */\nstatic const int %s_init[] = { " : "/* What cuDNN "
				"requires %s to hold: the seqLengthArray its data descriptor was set with. */\n"
				"static const int %s_init[] = { ", h->dev[i].var + 4, h->dev[i].var);
			for (size_t k = 0; k < json_array_size(h->dev[i].init); k++)
				fprintf(out, "%s%lld", k ? ", " : "",
					(long long)json_integer_value(json_array_get(h->dev[i].init, k)));
			fputs(" };\n", out);
		}
		fputs("\nstatic void\nallocate_device(void)\n{\n", out);
		for (int i = 0; i < h->ndev; i++)
			fprintf(out, "\tif (cudaMalloc(&%s_base, %lluu) != cudaSuccess || cudaMemset(%s_base, 0, %lluu) !="
				" cudaSuccess) {\n"
				"\t\tfprintf(stderr, \"repro: cudaMalloc of %llu bytes failed: is there a GPU, and its "
				"driver?\\n\");\n\t\texit(2);\n\t}\n\t%s = (char *)%s_base + %llu;\n",
				h->dev[i].var, h->dev[i].bytes + 256, h->dev[i].var, h->dev[i].bytes + 256,
				h->dev[i].bytes + 256, h->dev[i].var, h->dev[i].var, h->dev[i].addr % 256);
		for (int i = 0; i < h->ndev; i++)
			if (h->dev[i].init)
				fprintf(out, "\tif (cudaMemcpy(%s, %s_init, sizeof(%s_init), cudaMemcpyHostToDevice) != "
					"cudaSuccess) {\n\t\tfprintf(stderr, \"repro: cudaMemcpy to the GPU failed\\n\");\n"
					"\t\texit(2);\n\t}\n", h->dev[i].var, h->dev[i].var, h->dev[i].var);
		fputs("}\n\n", out);
	}
	fputs("/* The call. */\n", out);
	if (write_arrays(out, f, args, "out_", "") != 0)
		return -1;
	fputs("\nstatic cudnnStatus_t\nrun_call(void)\n{\n", out);
	comment_call(out, "\t", f, args);
	if (decl8_of(f->name) || !(f->majors & SPY_MAJOR_8))
		fprintf(out, "\tif (!%s) {\n\t\tprintf(\"%s is not in the cuDNN this runs against; where the program's copy "
			"lacked it too, the spy answered its call with CUDNN_STATUS_NOT_INITIALIZED\\n\");\n"
			"\t\t/* In the numbering of the cuDNN this runs against: 8.x's is 1. */\n"
			"\t\treturn cudnnGetVersion() < 9000 ? (cudnnStatus_t)1 : CUDNN_STATUS_NOT_INITIALIZED;\n\t}\n",
			f->name, f->name);
	fprintf(out, "\treturn %s(", f->name);
	if (write_args(out, h, f, args, "out_") != 0)
		return -1;
	fputs(");\n}\n\nint\nmain(void)\n{\n\tcudnnStatus_t status;\n\n", out);
	fprintf(out, "\tprintf(\"replaying %s (recorded: ", f->name);
	str_text(out, p->status_name ? p->status_name : "status");
	fprintf(out, ", %lld), cuDNN %%zu\\n\", cudnnGetVersion());\n", p->status);
	if (h->handle)
		fputs("\tcheck_cudnn(cudnnCreate(&handle), \"cudnnCreate (the recorded call ran on a handle: is there a "
		      "GPU, and its driver?)\");\n", out);
	/* Those a descriptor's Set names come first: made in the order planned, each after what it names. */
	for (int i = h->n - 1; i >= 0; i--)
		if (!h->d[i].made)
			fprintf(out, "\tcreate_%s();\n", h->d[i].var);
	if (h->ndev)
		fputs("\tallocate_device();\n", out);
	fputs("\tstatus = run_call();\n", out);
	if (h->ndev)
		fputs("\tif (status == CUDNN_STATUS_SUCCESS && cudaDeviceSynchronize() != cudaSuccess)\n"
		      "\t\tfprintf(stderr, \"repro: the GPU failed after the call\\n\");\n", out);
	fprintf(out, "\tprint_status(stdout, \"%s\", status);\n", f->name);
	fputs("\tif ((int)status == RECORDED_STATUS)\n"
	      "\t\tprintf(\", the same status as recorded\\n\");\n"
	      "\telse\n"
	      "\t\tprintf(\", NOT the recorded status, %d\\n\", RECORDED_STATUS);\n", out);
	if (outputs(f, args)) {
		fputs("\tif (status == CUDNN_STATUS_SUCCESS) {\n", out);
		write_outputs(out, f, args);
		fputs("\t}\n", out);
	}
	/* What the call destroyed is not destroyed again; what it made, only when it made it. */
	for (int i = 0; i < h->n; i++)
		if (!destroys)
			fprintf(out, h->d[i].made ? "\tif (status == CUDNN_STATUS_SUCCESS)\n\t\t%s(%s);\n" :
				"\t%s(%s);\n", kind_fn(h->d[i].kind, "cudnnDestroy"), h->d[i].var);
	for (int i = 0; i < h->ndev; i++)
		fprintf(out, "\tcudaFree(%s_base);\n", h->dev[i].var);
	if (strcmp(f->name, "cudnnDestroy") != 0)
		fputs("\tif (handle)\n\t\tcudnnDestroy(handle);\n", out);
	fputs("\treturn (int)status == RECORDED_STATUS ? 0 : 1;\n}\n", out);
	return 0;
}
