/*
 * Tables generated from the API description: functions, their parameters
 * and the enums, with lookups by name and value.
 */
#ifndef SPY_API_H
#define SPY_API_H

#include <stdint.h>

#include "g_api.h"

#define SPY_MAJOR_8 0x1
#define SPY_MAJOR_9 0x2

enum spy_ret { SPY_RET_STATUS, SPY_RET_SIZE, SPY_RET_STRING, SPY_RET_VOID, SPY_RET_UNKNOWN };
enum spy_dir { SPY_DIR_IN, SPY_DIR_OUT, SPY_DIR_INOUT };
enum spy_arg_kind {
	SPY_ARG_INT, SPY_ARG_UINT, SPY_ARG_DOUBLE, SPY_ARG_ENUM, SPY_ARG_HANDLE,
	SPY_ARG_DESC, SPY_ARG_OBJECT, SPY_ARG_CUDA, SPY_ARG_STRUCT, SPY_ARG_CALLBACK,
	SPY_ARG_PTR,
};

struct spy_param_info {
	const char *name;
	unsigned char kind;	/* enum spy_arg_kind */
	unsigned char dir;	/* enum spy_dir */
	signed char count;	/* index of the parameter counting this array, or -1 */
	short enum_id;		/* enum spy_enum_id, or -1 */
	const char *desc_kind;	/* "tensor", "filter", ... for descriptors */
	unsigned char is_array;
	unsigned char elem;	/* for pointers: what one element is (enum spy_arg_kind) */
	unsigned char elem_size;	/* and its size in bytes; 0 when opaque */
	short struct_id;	/* for arrays of a described struct: enum spy_struct_id, or -1 */
	/* A count no argument holds (the description's [desc.dimN] and [sum(array)]), else -1: */
	signed char count_desc;	/* the descriptor parameter whose dimension count_dim it is, */
	signed char count_dim;
	signed char count_sum;	/* or the array parameter whose elements add up to it */
	unsigned char on_device;	/* an array in GPU memory (the description's "device"): never read */
};

/* One field of a struct from the description's `struct` blocks. */
struct spy_field_info {
	const char *name;
	unsigned char kind;	/* enum spy_arg_kind */
	short enum_id;		/* enum spy_enum_id, or -1 */
	unsigned short offset;	/* offsetof */
	unsigned char size;	/* of one element */
	unsigned char count;	/* elements: 1, or N for a field declared NAME[N] */
};

struct spy_struct_info {
	const char *name;
	unsigned size;
	unsigned nfields;
	const struct spy_field_info *fields;
};

struct spy_fn_info {
	const char *name;
	const char *lib;	/* 9.x sub-library that defines it */
	unsigned char majors;	/* SPY_MAJOR_* where the function exists */
	unsigned char ret;	/* enum spy_ret */
	unsigned char nparams;
	unsigned char flags;	/* SPY_FI_* from the description */
	const struct spy_param_info *params;
};

/* What the description says of a function. */
enum spy_fn_info_flag {
	SPY_FI_GPU = 1 << 0,		/* enqueues work on the handle's CUDA stream */
	SPY_FI_DEPRECATED = 1 << 1,
};

struct spy_enum_value {
	long long value;
	unsigned char majors;
	const char *name;
};

struct spy_enum_info {
	const char *name;
	unsigned count;
	const struct spy_enum_value *values;	/* sorted by value */
};

extern const struct spy_fn_info spy_fn_info[_SPY_FN_COUNT];

/*
 * The parameter whose value alone is the count of input array parameter i
 * (cudnnSetTensorNdDescriptor's nbDims for dimA): an int argument, not a
 * descriptor's dimension, a sum, a pointer, and not a tensor transform's
 * folded array (two fewer); -1 for any other array. The one rule of args.c's
 * counts that the library's per-call paths (objects.c, recbin.c) use inline.
 */
static inline int
spy_param_counted_by(const struct spy_fn_info *f, int i)
{
	const struct spy_param_info *p = &f->params[i];

	if (!p->is_array || p->dir != SPY_DIR_IN || p->on_device || p->count_desc >= 0 || p->count_sum >= 0 ||
	    p->count < 0 || p->count >= f->nparams ||
	    (f->params[p->count].kind != SPY_ARG_INT && f->params[p->count].kind != SPY_ARG_UINT) ||
	    f == &spy_fn_info[_SPY_FN_cudnnSetTensorTransformDescriptor])
		return -1;
	return p->count;
}

/* A Set parameter's value in a new descriptor (the description's default=). */
struct spy_setting_default {
	unsigned short fn;	/* enum spy_fn_id */
	unsigned char param;
	double value;
	const char *name;	/* the enum value's name, or NULL for a number */
};
extern const struct spy_setting_default spy_setting_defaults[];
extern const unsigned spy_setting_default_count;
extern const struct spy_enum_info spy_enum_info[_SPY_ENUM_COUNT];
extern const struct spy_struct_info spy_struct_info[_SPY_STRUCT_COUNT];

/* The function id of a cuDNN name, or -1. */
int spy_fn_lookup(const char *name);

/*
 * The name of an enum value, preferring the spelling of cuDNN major `major`
 * (8 or 9; 0 for either), or NULL when the value has no name.
 */
/* `major` 0: this thread's spy_names_major, the major of the copy whose call is being decoded (0: either). */
const char *spy_enum_name(int enum_id, long long value, int major);
/*
 * Initial-exec in the spy (SPY_TLS_IE): its slow path sets it on every call, and a dynamic TLS lookup costs
 * more than the store. Not in the fake cuDNN, which tests load as many copies as they like with dlopen:
 * each would take static TLS, of which a process has little to spare.
 */
#ifdef SPY_TLS_IE
extern __thread int spy_names_major __attribute__((tls_model("initial-exec")));
#else
extern __thread int spy_names_major;
#endif

/* The name of a cudnnStatus_t value in either numbering, or NULL. */
const char *spy_status_name(long long status);

#endif
