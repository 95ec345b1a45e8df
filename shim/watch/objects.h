/* Objects the program created (objects.c) and the argument encoder (args.c). */
#ifndef SPY_OBJECTS_H
#define SPY_OBJECTS_H

#include "buf.h"
#include "spy.h"

void spy_obj_created(const void *ptr, const char *kind);
void spy_obj_destroyed(const void *ptr);
/* Remembers a successful Set call on the descriptor `ptr`. */
void spy_obj_set(const void *ptr, const char *kind, unsigned fn, const union spy_arg *args);
/*
 * spy_obj_set of a Set's descriptor (its first argument, of its parameter's kind), then spy_obj_stamp of it: its
 * one lookup for both (a traced Set names it next).
 */
int spy_obj_set_stamp(unsigned fn, const union spy_arg *args, uint64_t *stamp);
/* After spy_obj_set of an RNN or sequence data Set: keeps its paddingFill's value. */
void spy_obj_set_fill(const void *ptr, unsigned fn, const union spy_arg *args);
/*
 * cuDNN wrote the descriptor `ptr` in call `fn` (cudnnDeriveBNTensorDescriptor, ...): what was set on it no
 * longer holds. With `args` (the call's, whose descriptors from `first` to `last` it filled), the call is kept,
 * so that a record can say how to fill it again while the descriptors it was filled from stay as they were.
 */
void spy_obj_filled(const void *ptr, unsigned fn, const union spy_arg *args, int first, int last);
/* A Set on `ptr` failed: forgets what it would have changed (cuDNN may have changed it anyway). */
void spy_obj_set_failed(const void *ptr, unsigned fn);
/*
 * Writes the object's id ("tensor#3"): as a JSON string, or with `state`
 * as an object with what was set on it; `text` writes plain text instead.
 */
void spy_obj_describe(struct spy_line *l, const void *ptr, const char *kind, int state, unsigned mode);

/* What the spy remembers of a descriptor: a copy, consistent even while another thread sets it. */
/* The most parameters of a Set function (cudnnSetAttnDescriptor); longer ones are not remembered. */
#define SPY_OBJ_MAX_ARGS 20
#define SPY_OBJ_MAX_ARRAY 8
struct spy_obj_info {
	const char *kind;	/* "tensor", "filter", ... */
	unsigned num;		/* the N of "tensor#N" */
	unsigned seq;		/* changes at every Set */
	unsigned set_fn;	/* the last shape-setting Set: function id + 1, or 0 when never set */
	union spy_arg args[SPY_OBJ_MAX_ARGS];	/* its arguments; pointers in them are stale */
	int array[3][SPY_OBJ_MAX_ARRAY];	/* the input arrays it passed, copied */
	unsigned char array_len[3];
	signed char array_param[3];	/* which parameter each copy came from, or -1 */
	unsigned short attr_fn[3];	/* single-value Set calls (math type, group count): function id + 1 */
	int64_t attr[3];
};
/* 1 and a copy in *out when the spy knows the descriptor; it is never added by asking. */
int spy_obj_get(const void *ptr, struct spy_obj_info *out);
/* 1 and the data type (cudnnDataType_t) of a tensor or filter whose Set the spy saw. */
int spy_obj_data_type(const void *ptr, int64_t *dt);
/* 1 and dimension k of a tensor, filter or sequence data descriptor as its last Set gave it (dimA[k], or n, c, h,
 * w); 0 when the spy does not know it. */
int spy_obj_dim(const void *ptr, int k, int64_t *out);
/* The value a single-value Set function (cudnnSetConvolutionMathType, ...) left, or `def`. */
int64_t spy_obj_attr(const struct spy_obj_info *o, unsigned fn, int64_t def);
/*
 * The object's number and a count that changes at each Set: together they
 * say whether what was set may have changed since. 0 when unknown, or
 * being set right now.
 */
int spy_obj_version(const void *ptr, unsigned *num, unsigned *seq);
/* The N of the object's id, or 0 when the spy does not know it. */
unsigned spy_obj_number(const void *ptr);
/* Appends the descriptor's summary text ("float NCHW 32x3x224x224"); 0 when it has none. */
int spy_obj_summary(struct spy_line *l, const void *ptr);

enum spy_args_mode {
	SPY_ARGS_AFTER_SUCCESS = 1 << 0,	/* out-parameters hold values worth reading */
	SPY_ARGS_STORED = 1 << 1,		/* remembered arguments: never follow a pointer */
	SPY_ARGS_TEXT = 1 << 2,			/* name=value for stderr instead of JSON */
	SPY_ARGS_BRIEF = 1 << 3,		/* descriptors: id and summary, the Set call only without one */
};

/* All of a call's arguments: a JSON object, or name=value text. */
void spy_args_json(struct spy_line *l, unsigned fn, const union spy_arg *args, unsigned mode);
/* One argument; `count` is an array's element count, or -1 when unknown. */
void spy_arg_json(struct spy_line *l, const struct spy_param_info *p, const union spy_arg *a, int64_t count,
		  unsigned mode);
/* One value of cuDNN data type `dt` at `at` (float, double, half, bfloat16); 0 for another type. */
int spy_typed_value(struct spy_line *l, int64_t dt, const void *at, unsigned mode);
/* A copy of the program's memory that cannot fault (process_vm_readv): 0 when copied. */
int spy_safe_copy(void *to, const void *from, size_t n);
/* How many elements the array parameter i holds in this call, or -1 when unknown. */
int64_t spy_arg_count(unsigned fn, int i, const union spy_arg *args, unsigned mode);
/* One struct of the description's `struct` blocks, as a JSON object (or name=value text). */
void spy_struct_json(struct spy_line *l, int struct_id, const void *at, unsigned mode);

/*
 * args.c, at the start (spy_args_init): how this file prints a remembered
 * Set call's arguments when it describes a descriptor. args.c describes a
 * descriptor argument through this file, so the printing is handed in
 * rather than called: no circle.
 */
struct spy_arg_printer {
	void (*args_json)(struct spy_line *l, unsigned fn, const union spy_arg *args, unsigned mode);
	void (*arg_json)(struct spy_line *l, const struct spy_param_info *p, const union spy_arg *a, int64_t count,
			 unsigned mode);
	int (*typed_value)(struct spy_line *l, int64_t dt, const void *at, unsigned mode);
	int64_t (*arg_count)(unsigned fn, int i, const union spy_arg *args, unsigned mode);
};
void spy_obj_set_arg_printer(const struct spy_arg_printer *p);
/* slowpath.c, at the start: hands args.c's printer to objects.c. */
void spy_args_init(void);

/*
 * How many objects were forgotten (destroyed, or their address created
 * again): a text that names other objects by their numbers ("backend#3")
 * may be out of date once this moves.
 */
uint64_t spy_obj_renumbered(void);
/* backend.c, at its start: which version of a backend descriptor's text is current (spy_obj_stamp). */
void spy_obj_set_backend_stamper(int (*fn)(const void *ptr, uint64_t *stamp));
/* backend.c, at its start: how a backend descriptor is described (its attributes are kept there). */
void spy_obj_set_backend_describer(void (*fn)(struct spy_line *l, const void *ptr, unsigned mode));
/* backend.c, at its start: how cudnnBackendSet/GetAttribute's untyped array is decoded; 0 when not handled. */
void spy_args_set_backend_decoder(int (*fn)(struct spy_line *l, unsigned fn, const union spy_arg *args, int i,
					    unsigned mode));

/*
 * What the description of `ptr` depends on, as a number that changes
 * whenever it does (its slot and that slot's write count; a backend
 * descriptor's: backend.c's version of it; 0 for an object the spy does not
 * know). 0 when the description cannot be kept: the slot is being written,
 * or backend.c does not know the descriptor.
 */
int spy_obj_stamp(const void *ptr, uint64_t *stamp);
/* The same for the object's id alone ("tensor#3"), which changes only when its address is taken again. */
int spy_obj_id_stamp(const void *ptr, uint64_t *stamp);

#endif
