/*
 * Arguments in words: enums by name, handles and descriptors by id (with
 * what was set on them), scalars by value, pointers as addresses. Memory
 * behind a pointer is read only after the call succeeded, so an argument
 * that cuDNN rejected is never followed.
 */
#include "core.h"
#include "objects.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* The backend's untyped attribute arrays: decoded by backend.c, which sets this at its start. */
static int (*backend_decoder)(struct spy_line *, unsigned, const union spy_arg *, int, unsigned);

void
spy_args_set_backend_decoder(int (*fn)(struct spy_line *l, unsigned fn, const union spy_arg *args, int i,
				       unsigned mode))
{
	__atomic_store_n(&backend_decoder, fn, __ATOMIC_RELEASE);
}

static int
backend_array(struct spy_line *l, unsigned fn, const union spy_arg *args, int i, unsigned mode)
{
	int (*f)(struct spy_line *, unsigned, const union spy_arg *, int, unsigned) =
		__atomic_load_n(&backend_decoder, __ATOMIC_ACQUIRE);

	return f && f(l, fn, args, i, mode);
}

#define MAX_VALUES 16

/*
 * A copy of the program's memory that cannot fault, for the inputs of a
 * failed call (cuDNN may have refused them for a bad pointer): through the
 * kernel, which says EFAULT where a load would crash. 0 when copied.
 */
int
spy_safe_copy(void *to, const void *from, size_t n)
{
	static int unusable;
	struct iovec local = { to, n }, remote = { (void *)from, n };

	if (__atomic_load_n(&unusable, __ATOMIC_RELAXED))
		return -1;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n)
		return 0;
	/* A kernel or sandbox without it: failed calls keep their pointers as addresses. */
	if (errno == ENOSYS || errno == EPERM)
		__atomic_store_n(&unusable, 1, __ATOMIC_RELAXED);
	return -1;
}

static int64_t
load(const void *p, unsigned size, int is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? *(const signed char *)p : *(const unsigned char *)p;
	case 2:
		return is_signed ? *(const short *)p : *(const unsigned short *)p;
	case 4:
		return is_signed ? *(const int32_t *)p : (int64_t) * (const uint32_t *)p;
	case 8:
		return *(const int64_t *)p;
	}
	return 0;
}

static void
enum_value(struct spy_line *l, int enum_id, int64_t v, int text)
{
	const char *name = spy_enum_name(enum_id, v, 0);

	if (!name)
		spy_line_i64(l, v);
	else if (text)
		spy_line_raw(l, name);
	else
		spy_line_name(l, name);
}

static void
pointer(struct spy_line *l, const void *p, int text)
{
	if (!p)
		spy_line_raw(l, text ? "NULL" : "null");
	else if (text)
		spy_line_xdigits(l, (uintptr_t)p);
	else
		spy_line_hex(l, (uintptr_t)p);
}


static void
field_value(struct spy_line *l, const struct spy_field_info *f, const void *at, int text)
{
	switch (f->kind) {
	case SPY_ARG_INT:
		spy_line_i64(l, load(at, f->size, 1));
		break;
	case SPY_ARG_UINT:
		spy_line_u64(l, (uint64_t)load(at, f->size, 0));
		break;
	case SPY_ARG_DOUBLE:
		if (f->size == sizeof(float))
			spy_line_float(l, *(const float *)at);
		else
			spy_line_double(l, *(const double *)at);
		break;
	case SPY_ARG_ENUM:
		/* A status in the numbering of either major: the value says which. */
		if (f->enum_id == _SPY_ENUM_cudnnStatus_t && spy_status_name(load(at, f->size, 1))) {
			if (text)
				spy_line_raw(l, spy_status_name(load(at, f->size, 1)));
			else
				spy_line_name(l, spy_status_name(load(at, f->size, 1)));
		} else {
			enum_value(l, f->enum_id, load(at, f->size, 1), text);
		}
		break;
	default:
		pointer(l, *(void *const *)at, text);
		break;
	}
}

void
spy_struct_json(struct spy_line *l, int struct_id, const void *at, unsigned mode)
{
	const struct spy_struct_info *s = &spy_struct_info[struct_id];
	int text = (mode & SPY_ARGS_TEXT) != 0;

	spy_line_char(l, '{');
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct spy_field_info *f = &s->fields[i];
		const char *p = (const char *)at + f->offset;

		if (i)
			spy_line_char(l, ',');
		if (text) {
			spy_line_raw(l, f->name);
			spy_line_char(l, '=');
		} else {
			spy_line_key(l, f->name);
		}
		if (f->count == 1) {
			field_value(l, f, p, text);
			continue;
		}
		spy_line_char(l, '[');
		for (unsigned k = 0; k < f->count; k++) {
			if (k)
				spy_line_char(l, ',');
			field_value(l, f, p + k * f->size, text);
		}
		spy_line_char(l, ']');
	}
	spy_line_char(l, '}');
}

/* One element behind a pointer, by the parameter's element kind. */
static void
element(struct spy_line *l, const struct spy_param_info *p, const void *at, unsigned mode)
{
	int text = (mode & SPY_ARGS_TEXT) != 0;

	switch (p->elem) {
	case SPY_ARG_STRUCT:
		spy_struct_json(l, p->struct_id, at, mode);
		break;
	case SPY_ARG_INT:
		spy_line_i64(l, load(at, p->elem_size, 1));
		break;
	case SPY_ARG_UINT:
		spy_line_u64(l, (uint64_t)load(at, p->elem_size, 0));
		break;
	case SPY_ARG_DOUBLE:
		spy_line_double(l, p->elem_size == sizeof(float) ? *(const float *)at : *(const double *)at);
		break;
	case SPY_ARG_ENUM:
		enum_value(l, p->enum_id, load(at, p->elem_size, 1), text);
		break;
	case SPY_ARG_HANDLE:
		spy_obj_describe(l, *(void *const *)at, "handle", 0, mode);
		break;
	case SPY_ARG_DESC:
		spy_obj_describe(l, *(void *const *)at, p->desc_kind ? p->desc_kind : "descriptor", 0, mode);
		break;
	default:
		pointer(l, *(void *const *)at, text);
		break;
	}
}

static int
readable_elements(const struct spy_param_info *p)
{
	if (p->elem == SPY_ARG_STRUCT)
		return p->elem_size && p->struct_id >= 0 && p->struct_id < _SPY_STRUCT_COUNT;
	return p->elem_size && p->elem != SPY_ARG_PTR && p->elem != SPY_ARG_CALLBACK && p->elem != SPY_ARG_OBJECT &&
	       p->elem != SPY_ARG_CUDA;
}

void
spy_arg_json(struct spy_line *l, const struct spy_param_info *p, const union spy_arg *a, int64_t count,
	     unsigned mode)
{
	int text = (mode & SPY_ARGS_TEXT) != 0, failed_input;
	int64_t copy[MAX_VALUES];

	switch (p->kind) {
	case SPY_ARG_INT:
		spy_line_i64(l, a->i);
		return;
	case SPY_ARG_UINT:
		spy_line_u64(l, a->u);
		return;
	case SPY_ARG_DOUBLE:
		spy_line_double(l, a->d);
		return;
	case SPY_ARG_ENUM:
		/*
		 * An enum is an int in the C ABI, but one with no negative value is
		 * unsigned to the compiler: (cudnnStatus_t)-1 arrives as 4294967295.
		 */
		enum_value(l, p->enum_id, (int32_t)a->i, text);
		return;
	case SPY_ARG_HANDLE:
		spy_obj_describe(l, a->p, "handle", 0, mode);
		return;
	case SPY_ARG_DESC:
		spy_obj_describe(l, a->p, p->desc_kind ? p->desc_kind : "descriptor", !(mode & SPY_ARGS_STORED), mode);
		return;
	case SPY_ARG_PTR:
		break;
	default:
		pointer(l, a->p, text);
		return;
	}
	/*
	 * A pointer: followed after success, and only for plain values; the input
	 * arrays of a failed call through a copy that cannot fault.
	 */
	failed_input = !(mode & SPY_ARGS_AFTER_SUCCESS) && p->is_array && p->dir == SPY_DIR_IN &&
		       p->elem != SPY_ARG_STRUCT && p->elem_size <= 8;
	if (!a->p || (mode & SPY_ARGS_STORED) || (!(mode & SPY_ARGS_AFTER_SUCCESS) && !failed_input) ||
	    !readable_elements(p)) {
		pointer(l, a->p, text);
		return;
	}
	if (p->is_array) {
		int64_t n = count;
		const void *from = a->p;

		if (n < 0) {
			pointer(l, a->p, text);
			return;
		}
		if (n > MAX_VALUES)
			n = MAX_VALUES;
		if (failed_input) {
			if (spy_safe_copy(copy, a->p, (size_t)n * p->elem_size) != 0) {
				pointer(l, a->p, text);
				return;
			}
			from = copy;
		}
		if (!text) {
			spy_line_lit(l, "{\"ptr\":");
			spy_line_hex(l, (uintptr_t)a->p);
			spy_line_lit(l, ",\"values\":");
		}
		spy_line_char(l, '[');
		for (int64_t i = 0; i < n; i++) {
			if (i)
				spy_line_char(l, ',');
			element(l, p, (const char *)from + i * p->elem_size, mode);
		}
		spy_line_char(l, ']');
		if (!text)
			spy_line_char(l, '}');
		return;
	}
	if (p->dir == SPY_DIR_IN) {
		pointer(l, a->p, text);
		return;
	}
	if (text) {
		element(l, p, a->p, mode);
		return;
	}
	spy_line_lit(l, "{\"ptr\":");
	spy_line_hex(l, (uintptr_t)a->p);
	spy_line_lit(l, ",\"value\":");
	element(l, p, a->p, mode);
	spy_line_char(l, '}');
}

static int64_t array_count(const struct spy_fn_info *f, const struct spy_param_info *p, const union spy_arg *args,
			   unsigned mode);

/*
 * The sum of the int array parameter i's elements (CTC's label lengths: how many labels there are), read so
 * that a bad pointer cannot fault; -1 when unknown, negative or past what a record holds of an array anyway.
 */
static int64_t
sum_count(const struct spy_fn_info *f, int i, const union spy_arg *args, unsigned mode)
{
	int32_t v[64];
	int64_t n = array_count(f, &f->params[i], args, mode), sum = 0;

	if (n < 0 || n > (int64_t)(sizeof(v) / sizeof(v[0])) || (mode & SPY_ARGS_STORED) || !args[i].p ||
	    spy_safe_copy(v, args[i].p, (size_t)n * sizeof(v[0])) != 0)
		return -1;
	for (int64_t k = 0; k < n; k++) {
		if (v[k] < 0)
			return -1;
		sum += v[k];
	}
	return sum;
}

/*
 * How many elements an array argument holds: its count parameter's value,
 * read through the pointer for an out-count, and never more than a
 * "...Requested" capacity the caller passed (cuDNN writes no further).
 */
static int64_t
array_count(const struct spy_fn_info *f, const struct spy_param_info *p, const union spy_arg *args,
	    unsigned mode)
{
	const struct spy_param_info *cp;
	int by = spy_param_counted_by(f, (int)(p - f->params));
	int64_t n;

	if (by >= 0)
		return args[by].i;
	/* GPU memory: reading it from the host would fault, or migrate managed memory under the program. */
	if (p->on_device)
		return -1;
	if (p->count_desc >= 0 && p->count_desc < f->nparams)
		return spy_obj_dim(args[p->count_desc].p, p->count_dim, &n) && n >= 0 ? n : -1;
	if (p->count_sum >= 0 && p->count_sum < f->nparams && f->params[p->count_sum].count_sum < 0 &&
	    f->params[p->count_sum].elem == SPY_ARG_INT && f->params[p->count_sum].elem_size == 4)
		return sum_count(f, p->count_sum, args, mode);
	if (p->count < 0 || p->count >= f->nparams)
		return -1;
	cp = &f->params[p->count];
	if (cp->kind == SPY_ARG_PTR) {
		if (!(mode & SPY_ARGS_AFTER_SUCCESS) || !args[p->count].p || cp->elem != SPY_ARG_INT)
			return -1;
		n = load(args[p->count].p, cp->elem_size, 1);
	} else if (cp->kind == SPY_ARG_INT || cp->kind == SPY_ARG_UINT) {
		n = args[p->count].i;
	} else {
		return -1;
	}
	/* Only outputs are capped (cuDNN writes no further); an input is what it is, and Set calls stay cheap. */
	for (int i = 0; p->dir != SPY_DIR_IN && i < f->nparams; i++)
		if (strstr(f->params[i].name, "Requested") && f->params[i].kind == SPY_ARG_INT && args[i].i < n)
			n = args[i].i;
	/* A tensor transform folds the spatial dimensions only: its foldA has two fewer elements. */
	if ((f == &spy_fn_info[_SPY_FN_cudnnSetTensorTransformDescriptor] ||
	     f == &spy_fn_info[_SPY_FN_cudnnGetTensorTransformDescriptor]) && strcmp(p->name, "foldA") == 0)
		n = n > 2 ? n - 2 : 0;
	return n;
}

int64_t
spy_arg_count(unsigned fn, int i, const union spy_arg *args, unsigned mode)
{
	return array_count(&spy_fn_info[fn], &spy_fn_info[fn].params[i], args, mode);
}

/*
 * An out `char *` that is no array is a text buffer (cudnnGetLastErrorString's
 * message): after success, the NUL-terminated string in it, read no further
 * than the size the caller gave (a size_t parameter after it) or 1024 bytes.
 * 0 when the parameter is not one.
 */
static int
text_buffer(struct spy_line *l, const struct spy_fn_info *f, int i, const union spy_arg *args, unsigned mode)
{
	const struct spy_param_info *p = &f->params[i];
	char text[1025];
	size_t max = sizeof(text) - 1, n;

	if (p->kind != SPY_ARG_PTR || p->is_array || p->dir == SPY_DIR_IN || p->elem != SPY_ARG_INT ||
	    p->elem_size != 1 || !args[i].p || (mode & SPY_ARGS_STORED) || !(mode & SPY_ARGS_AFTER_SUCCESS))
		return 0;
	for (int k = i + 1; k < f->nparams; k++)
		if (f->params[k].kind == SPY_ARG_UINT && strstr(f->params[k].name, "size") && args[k].u < max)
			max = (size_t)args[k].u;
	n = strnlen(args[i].p, max);
	memcpy(text, args[i].p, n);
	text[n] = 0;
	if (mode & SPY_ARGS_TEXT) {
		spy_line_str(l, text);
		return 1;
	}
	spy_line_lit(l, "{\"ptr\":");
	spy_line_hex(l, (uintptr_t)args[i].p);
	spy_line_lit(l, ",\"string\":");
	spy_line_str(l, text);
	if (n == max)
		spy_line_lit(l, ",\"cut\":true");
	spy_line_char(l, '}');
	return 1;
}

/* An IEEE half, or the top half of a float (bfloat16), as a float. */
static float
half_value(uint16_t h, int bfloat)
{
	unsigned e = (h >> 10) & 31, m = h & 1023;
	uint32_t bits = (uint32_t)h << 16;
	float v;

	if (bfloat) {
		memcpy(&v, &bits, sizeof(v));
		return v;
	}
	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m + 1024), (int)e - 25);
	return h & 0x8000 ? -v : v;
}

/*
 * One value of cuDNN data type `dt` behind `at`, as {"ptr", "value"} (or the
 * value alone in text, or for a remembered value), read through a copy that
 * cannot fault. 0 for a type the spy does not read or memory it cannot.
 */
int
spy_typed_value(struct spy_line *l, int64_t dt, const void *at, unsigned mode)
{
	double d = 0;
	float f = 0;
	uint16_t h = 0;
	int ok;

	switch (dt) {
	case CUDNN_DATA_DOUBLE:
		ok = spy_safe_copy(&d, at, sizeof(d)) == 0;
		break;
	case CUDNN_DATA_HALF:
	case CUDNN_DATA_BFLOAT16:
		ok = spy_safe_copy(&h, at, sizeof(h)) == 0;
		f = half_value(h, dt == CUDNN_DATA_BFLOAT16);
		break;
	case CUDNN_DATA_FLOAT:
		ok = spy_safe_copy(&f, at, sizeof(f)) == 0;
		break;
	default:
		return 0;	/* integer and narrower types: not read */
	}
	if (!ok)
		return 0;
	/* A remembered value has no pointer left to show. */
	if (!(mode & (SPY_ARGS_TEXT | SPY_ARGS_STORED))) {
		spy_line_lit(l, "{\"ptr\":");
		spy_line_hex(l, (uintptr_t)at);
		spy_line_lit(l, ",\"value\":");
	}
	if (dt == CUDNN_DATA_DOUBLE)
		spy_line_double(l, d);
	else
		spy_line_float(l, f);
	if (!(mode & (SPY_ARGS_TEXT | SPY_ARGS_STORED)))
		spy_line_char(l, '}');
	return 1;
}

/*
 * A scaling factor (alpha, beta, alpha1, betaDataDiff, ...): a float, or a
 * double when the call's output is double, which cuDNN takes to be the last
 * tensor or filter descriptor. Read in a failed call too. 0 when the
 * parameter is not one or its type is unknown.
 */
static int
scaling_factor(struct spy_line *l, const struct spy_fn_info *f, int i, const union spy_arg *args, unsigned mode)
{
	const struct spy_param_info *p = &f->params[i];
	int64_t dt = -1;

	if (p->kind != SPY_ARG_PTR || p->dir != SPY_DIR_IN || p->elem_size != 0 || !args[i].p ||
	    (mode & SPY_ARGS_STORED) || (strncmp(p->name, "alpha", 5) != 0 && strncmp(p->name, "beta", 4) != 0))
		return 0;
	for (int k = f->nparams - 1; k >= 0; k--) {
		const struct spy_param_info *d = &f->params[k];

		if (d->kind == SPY_ARG_DESC && d->desc_kind &&
		    (strcmp(d->desc_kind, "tensor") == 0 || strcmp(d->desc_kind, "filter") == 0) &&
		    spy_obj_data_type(args[k].p, &dt))
			break;
	}
	if (dt < 0)
		return 0;
	return spy_typed_value(l, dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, args[i].p, mode);
}

/*
 * The padding fill of an RNN or sequence data descriptor's Set: one value of
 * the data type passed beside it, as cuDNN reads it. 0 when not one.
 */
static int
padding_fill(struct spy_line *l, const struct spy_fn_info *f, int i, const union spy_arg *args, unsigned mode)
{
	const struct spy_param_info *p = &f->params[i];

	if (p->kind != SPY_ARG_PTR || p->elem_size != 0 || !args[i].p || (mode & SPY_ARGS_STORED) ||
	    strcmp(p->name, "paddingFill") != 0)
		return 0;
	for (int k = 0; k < f->nparams; k++)
		if (f->params[k].kind == SPY_ARG_ENUM && f->params[k].enum_id == _SPY_ENUM_cudnnDataType_t)
			return spy_typed_value(l, (int32_t)args[k].i, args[i].p, mode);
	return 0;
}

void
spy_args_json(struct spy_line *l, unsigned fn, const union spy_arg *args, unsigned mode)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	int text = (mode & SPY_ARGS_TEXT) != 0;
	int first = 1;

	spy_line_char(l, text ? '(' : '{');
	for (int i = 0; args && i < f->nparams; i++) {
		const struct spy_param_info *p = &f->params[i];

		/* Remembered pointers may point at memory long gone. */
		if ((mode & SPY_ARGS_STORED) && (p->kind == SPY_ARG_PTR || p->is_array))
			continue;
		if (!first)
			spy_line_raw(l, text ? ", " : ",");
		first = 0;
		if (text) {
			spy_line_raw(l, p->name);
			spy_line_char(l, '=');
		} else {
			spy_line_key(l, p->name);
		}
		/* The backend's untyped arrays: their type is another argument's value. */
		if ((fn == _SPY_FN_cudnnBackendSetAttribute || fn == _SPY_FN_cudnnBackendGetAttribute) &&
		    backend_array(l, fn, args, i, mode))
			continue;
		if (text_buffer(l, f, i, args, mode) || scaling_factor(l, f, i, args, mode) ||
		    padding_fill(l, f, i, args, mode))
			continue;
		spy_arg_json(l, p, &args[i], p->is_array ? array_count(f, p, args, mode) : -1, mode);
	}
	spy_line_char(l, text ? ')' : '}');
}

void
spy_args_init(void)
{
	static const struct spy_arg_printer printer = {
		spy_args_json, spy_arg_json, spy_typed_value, spy_arg_count,
	};

	spy_obj_set_arg_printer(&printer);
}
