/*
 * What the program created and set: handles and descriptors, with short
 * stable ids ("tensor#3") and the last successful Set call of each
 * descriptor, so that a later call can be printed with its shapes without
 * calling back into cuDNN. Only successful calls are remembered, so no
 * memory that cuDNN rejected is ever read.
 *
 * An open-addressing table keyed by the object's address. Writers claim a
 * slot with a compare-and-swap; each slot has a sequence count so that a
 * reader on another thread never prints a half-written state.
 */
#include "core.h"
#include "objects.h"

#include <pthread.h>
#include <string.h>

#define SLOTS 16384	/* a power of two */
#define KEY_EMPTY 0
#define KEY_GONE 1	/* destroyed: keeps probe chains intact */
#define MAX_ARGS SPY_OBJ_MAX_ARGS
#define MAX_ARRAY SPY_OBJ_MAX_ARRAY
#define MAX_KINDS 32
#define AUX_ARGS 5

struct slot {
	uintptr_t key;
	unsigned seq;		/* odd while being written */
	unsigned num;
	unsigned char kind;
	unsigned short set_fn;	/* last shape-setting function + 1, or 0 */
	unsigned short failed_fn;	/* a Set that failed since, + 1: cuDNN may have changed the descriptor anyway */
	unsigned short filled_fn;	/* a function that wrote the descriptor since (cudnnDerive...), + 1 */
	/* In what was padding before args[]: the slot keeps its size. */
	signed char fill_param;	/* with set_fn an RNN or sequence data Set: its paddingFill, copied into args[], or -1 */
	unsigned char from_create;	/* seen from its Create call on: what it was never set to is cuDNN's default */
	unsigned char settings_lost;	/* a setting beside the shape failed since: its default no longer holds */
	unsigned char names;	/* what was set names other objects (handles, descriptors) by their numbers */
	signed char fill_first, fill_last;	/* with filled_fn and its call kept in args[]: the parameters it filled */
	union spy_arg args[MAX_ARGS];
	int array[3][MAX_ARRAY];
	unsigned char array_len[3];
	signed char array_param[3];	/* which parameter each copy came from, or -1 */
	unsigned short attr_fn[3];	/* single-value Set calls (math type, group count) */
	int64_t attr[3];
	unsigned short aux_fn;	/* a Set of several settings beside the shape (cudnnRNNSetClip_v9) + 1, or 0 */
	/* With filled_fn: aux[i] is the stamp of the filler's parameter i, a descriptor it filled this from. */
	union spy_arg aux[AUX_ARGS];
};

static struct slot slots[SLOTS];
/* How arguments are decoded (args.c, which describes a descriptor argument through this file): set at the start. */
static const struct spy_arg_printer *printer;

void
spy_obj_set_arg_printer(const struct spy_arg_printer *p)
{
	__atomic_store_n(&printer, p, __ATOMIC_RELEASE);
}

static const struct spy_arg_printer *
arg_printer(void)
{
	return __atomic_load_n(&printer, __ATOMIC_ACQUIRE);
}

static void
print_arg(struct spy_line *l, const struct spy_param_info *p, const union spy_arg *a, int64_t count, unsigned mode)
{
	const struct spy_arg_printer *ap = arg_printer();

	if (ap)
		ap->arg_json(l, p, a, count, mode);
	else
		spy_line_lit(l, "null");
}
/* What backend.c knows of a backend descriptor: it keeps their attributes, and sets this at its start. */
static void (*backend_describer)(struct spy_line *, const void *, unsigned);

void
spy_obj_set_backend_describer(void (*fn)(struct spy_line *l, const void *ptr, unsigned mode))
{
	__atomic_store_n(&backend_describer, fn, __ATOMIC_RELEASE);
}

/* backend.c's version of a descriptor's text (spy_backend_version), set at its start like the describer. */
static int (*backend_stamper)(const void *, uint64_t *);

void
spy_obj_set_backend_stamper(int (*fn)(const void *ptr, uint64_t *stamp))
{
	__atomic_store_n(&backend_stamper, fn, __ATOMIC_RELEASE);
}

static void
describe_backend(struct spy_line *l, const void *ptr, unsigned mode)
{
	void (*fn)(struct spy_line *, const void *, unsigned) = __atomic_load_n(&backend_describer, __ATOMIC_ACQUIRE);

	if (fn)
		fn(l, ptr, mode);
}
static const char *kinds[MAX_KINDS];
static unsigned kind_count, kind_next[MAX_KINDS];
/* The index of "backend", once added: stamp_of asks on every traced call, and a strcmp costs more than the rest. */
static unsigned backend_kind = ~0u;
static int full_said;

static unsigned
kind_index(const char *kind)
{
	static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;
	unsigned n = __atomic_load_n(&kind_count, __ATOMIC_ACQUIRE), i;

	for (i = 0; i < n; i++)
		if (strcmp(kinds[i], kind) == 0)
			return i;
	/*
	 * A new kind (a few dozen at most, from the generated tables): added under
	 * a lock, and published only once its name is in place, so that a reader
	 * never sees a slot without one (found by ThreadSanitizer).
	 */
	pthread_mutex_lock(&add_lock);
	n = __atomic_load_n(&kind_count, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && strcmp(kinds[i], kind) != 0; i++)
		;
	if (i == n && n < MAX_KINDS) {
		__atomic_store_n(&kinds[n], kind, __ATOMIC_RELAXED);
		if (strcmp(kind, "backend") == 0)
			__atomic_store_n(&backend_kind, n, __ATOMIC_RELAXED);
		__atomic_store_n(&kind_count, n + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&add_lock);
	return i < MAX_KINDS ? i : 0;
}

/*
 * Seqlock writes. A slot has one writer at a time in any sane program (the
 * thread setting that descriptor), so plain stores with fences do: no
 * locked instruction on the Set path.
 */
static void
write_begin(struct slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void
write_end(struct slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

static size_t
hash(uintptr_t p)
{
	return (size_t)((p >> 4) * 0x9E3779B97F4A7C15ull) & (SLOTS - 1);
}

static struct slot *
find(const void *ptr)
{
	uintptr_t key = (uintptr_t)ptr;

	for (size_t i = hash(key), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		uintptr_t k = __atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE);

		if (k == key)
			return &slots[i];
		if (k == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

static struct slot *
insert(const void *ptr, const char *kind)
{
	uintptr_t key = (uintptr_t)ptr;

	for (size_t i = hash(key), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		uintptr_t k = __atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE);

		if (k == key)
			return &slots[i];
		if (k == KEY_EMPTY || k == KEY_GONE) {
			if (!__atomic_compare_exchange_n(&slots[i].key, &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue;
			struct slot *s = &slots[i];
			unsigned ki = kind_index(kind);

			write_begin(s);
			s->kind = (unsigned char)ki;
			s->num = __atomic_add_fetch(&kind_next[ki], 1, __ATOMIC_RELAXED);
			s->set_fn = 0;
			s->failed_fn = 0;
			s->filled_fn = 0;
			s->fill_first = s->fill_last = -1;
			s->aux_fn = 0;
			memset(s->attr_fn, 0, sizeof(s->attr_fn));
			s->from_create = 0;
			s->settings_lost = 0;
			s->names = 0;
			write_end(s);
			return s;
		}
	}
	spy_log_once(&full_said, "more than %d live cuDNN objects: new ones get no id", SLOTS);
	return NULL;
}

/* Objects forgotten so far: each one's address may come back with another number (spy_obj_renumbered). */
static uint64_t renumbered;

uint64_t
spy_obj_renumbered(void)
{
	return __atomic_load_n(&renumbered, __ATOMIC_ACQUIRE);
}

void
spy_obj_created(const void *ptr, const char *kind)
{
	struct slot *s;

	if (!ptr)
		return;
	/* An address reused after a destroy the spy did not see: a new object all the same. */
	s = find(ptr);
	if (s) {
		__atomic_store_n(&s->key, (uintptr_t)KEY_GONE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&renumbered, 1, __ATOMIC_RELEASE);
	}
	s = insert(ptr, kind);
	if (s) {
		write_begin(s);
		s->from_create = 1;
		write_end(s);
	}
}

void
spy_obj_destroyed(const void *ptr)
{
	struct slot *s = ptr ? find(ptr) : NULL;

	if (s) {
		__atomic_store_n(&s->key, (uintptr_t)KEY_GONE, __ATOMIC_RELEASE);
		__atomic_add_fetch(&renumbered, 1, __ATOMIC_RELEASE);
	}
}

/* cudnnRNNSetClip_v8 and _v9: several settings on a descriptor, beside its shape. */
static int
aux_setter(const struct spy_fn_info *f)
{
	return (f == &spy_fn_info[_SPY_FN_cudnnRNNSetClip_v8] || f == &spy_fn_info[_SPY_FN_cudnnRNNSetClip_v9]) &&
	       f->nparams <= AUX_ARGS;
}

/* The Set's data type (its cudnnDataType_t parameter), or -1. */
static int64_t
set_data_type(const struct spy_fn_info *f, const union spy_arg *args)
{
	for (int i = 0; i < f->nparams && i < MAX_ARGS; i++)
		if (f->params[i].kind == SPY_ARG_ENUM && f->params[i].enum_id == _SPY_ENUM_cudnnDataType_t)
			return (int32_t)args[i].i;
	return -1;
}

/* How many bytes a padding fill of the Set's data type takes: 0 for a type that is not read. */
static size_t
fill_size(const struct spy_fn_info *f, const union spy_arg *args)
{
	switch (set_data_type(f, args)) {
	case CUDNN_DATA_DOUBLE:
		return sizeof(double);
	case CUDNN_DATA_FLOAT:
		return sizeof(float);
	case CUDNN_DATA_HALF:
	case CUDNN_DATA_BFLOAT16:
		return 2;
	}
	return 0;
}

/*
 * How many parameters a shape Set of words only has (none behind a pointer,
 * more than the two of a single setting, not cudnnRNNSetClip's, not a
 * tensor transform's); 0 for any other function. Worked out once per function.
 */
static signed char known_plain[_SPY_FN_COUNT];	/* 0 unknown, -1 not one, else nparams */

static __attribute__((noinline)) int
plain_set_args_first(unsigned fn)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	signed char k;

	k = f->nparams > 2 && f->nparams <= MAX_ARGS && !aux_setter(f) && fn != _SPY_FN_cudnnSetTensorTransformDescriptor
		    ? (signed char)f->nparams : -1;
	for (int i = 0; k > 0 && i < f->nparams; i++)
		if (f->params[i].is_array || f->params[i].kind == SPY_ARG_PTR)
			k = -1;
	__atomic_store_n(&known_plain[fn], k, __ATOMIC_RELAXED);
	return k > 0 ? k : 0;
}

static inline int
plain_set_args(unsigned fn)
{
	signed char k = __atomic_load_n(&known_plain[fn], __ATOMIC_RELAXED);

	return k > 0 ? k : k < 0 ? 0 : plain_set_args_first(fn);
}

/* An input array's count as args.c counts it after success; the usual one (an int argument) without the call. */
static int64_t
input_count(const struct spy_fn_info *f, unsigned fn, int i, const union spy_arg *args)
{
	const struct spy_arg_printer *ap;
	int by = spy_param_counted_by(f, i);

	if (by >= 0)
		return args[by].i;
	ap = arg_printer();
	return ap ? ap->arg_count(fn, i, args, SPY_ARGS_AFTER_SUCCESS) : -1;
}

/* 1 when a Set of `fn` with `args` would leave the slot as it is: a shape Set without arrays, or one setting. */
static int
same_set(const struct slot *s, const struct spy_fn_info *f, unsigned fn, const union spy_arg *args)
{
	/* A shape Set of words only (cudnnSetTensor4dDescriptor): the comparison is one memcmp. */
	if (s->set_fn == fn + 1 && f->params[0].kind == SPY_ARG_DESC && f->nparams == plain_set_args(fn))
		return !s->failed_fn && !s->filled_fn && !s->aux_fn &&
		       memcmp(s->args, args, (size_t)f->nparams * sizeof(args[0])) == 0;
	if (aux_setter(f) || fn == _SPY_FN_cudnnSetTensorTransformDescriptor || f->nparams > MAX_ARGS)
		return 0;
	if (f->nparams == 2 && !f->params[1].is_array && f->params[1].kind != SPY_ARG_PTR) {
		for (int i = 0; i < 3; i++)
			if (s->attr_fn[i] == fn + 1)
				return s->attr[i] == args[1].i;
		return 0;
	}
	if (s->set_fn != fn + 1 || s->failed_fn || s->filled_fn || s->aux_fn)
		return 0;
	for (int i = 0, arrays = 0; i < f->nparams; i++) {
		const struct spy_param_info *p = &f->params[i];

		if (!p->is_array) {
			if (memcmp(&s->args[i], &args[i], sizeof(args[i])) != 0)
				return 0;
			continue;
		}
		/* An array spy_obj_set keeps (cudnnSetTensorNdDescriptor's): the same values, wherever they lie now. */
		if (p->dir != SPY_DIR_IN || p->count < 0 || arrays >= 3 || !args[i].p || s->array_param[arrays] != i)
			return 0;
		{
			int64_t n = input_count(f, fn, i, args);

			if (n < 0 || n > MAX_ARRAY || n != s->array_len[arrays] ||
			    memcmp(s->array[arrays], args[i].p, (size_t)n * sizeof(int)) != 0)
				return 0;
		}
		arrays++;
	}
	return 1;
}

/*
 * Per function + 1: 2 when a parameter past the first is a handle or a descriptor, 1 when none is; 0 unknown yet.
 * Filled by whichever thread asks first: every thread writes the same value.
 */
static unsigned char names_cache[_SPY_FN_COUNT + 1];

static int
names_objects(unsigned fn1)
{
	unsigned char c;

	if (!fn1 || fn1 > _SPY_FN_COUNT)
		return 0;
	c = __atomic_load_n(&names_cache[fn1], __ATOMIC_RELAXED);
	if (!c) {
		const struct spy_fn_info *f = &spy_fn_info[fn1 - 1];

		c = 1;
		for (int i = 1; i < f->nparams; i++)
			if (f->params[i].kind == SPY_ARG_HANDLE || f->params[i].kind == SPY_ARG_DESC)
				c = 2;
		__atomic_store_n(&names_cache[fn1], c, __ATOMIC_RELAXED);
	}
	return c == 2;
}

/* spy_obj_set: the object's slot, NULL when it has none. */
static struct slot *
set(const void *ptr, const char *kind, unsigned fn, const union spy_arg *args)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	size_t home = hash((uintptr_t)ptr);
	/* Where it is most often: its home place, without the call into the probe. */
	struct slot *s = !ptr ? NULL : __atomic_load_n(&slots[home].key, __ATOMIC_ACQUIRE) == (uintptr_t)ptr
					  ? &slots[home] : insert(ptr, kind);

	if (!s)
		return NULL;
	/*
	 * The same Set again (a framework sets its descriptors before every
	 * call): nothing to write, and the state's stamp stays, so that format
	 * 2 names the descriptor by the text it wrote already.
	 */
	if (same_set(s, f, fn, args))
		return s;
	write_begin(s);
	if (aux_setter(f)) {
		/* Settings beside the shape, which a later shape Set resets (cuDNN 9.19 does for the clip). */
		s->aux_fn = (unsigned short)(fn + 1);
		for (int i = 0; i < f->nparams && i < AUX_ARGS; i++)
			s->aux[i] = args[i];
	} else if (f->nparams == 2 && !f->params[1].is_array && f->params[1].kind != SPY_ARG_PTR) {
		/* cudnnSetConvolutionMathType and the like: one attribute, kept beside the shape. */
		int i = 0;

		/* Its own entry, else the first free one (a failed Set frees one), else the last. */
		while (i < 3 && s->attr_fn[i] != fn + 1)
			i++;
		if (i == 3)
			for (i = 0; i < 2 && s->attr_fn[i]; i++)
				;
		s->attr_fn[i] = (unsigned short)(fn + 1);
		s->attr[i] = args[1].i;
	} else {
		int arrays = 0;

		s->set_fn = (unsigned short)(fn + 1);
		s->failed_fn = 0;
		s->filled_fn = 0;
		s->aux_fn = 0;
		memset(s->array_param, -1, sizeof(s->array_param));
		for (int i = 0; i < f->nparams && i < MAX_ARGS; i++) {
			const struct spy_param_info *p = &f->params[i];

			s->args[i] = args[i];
			if (p->is_array && p->dir == SPY_DIR_IN && p->count >= 0 && arrays < 3 && args[i].p) {
				int64_t n = input_count(f, fn, i, args);

				if (n < 0)
					n = 0;
				if (n > MAX_ARRAY)
					n = MAX_ARRAY;
				memcpy(s->array[arrays], args[i].p, (size_t)n * sizeof(int));
				s->array_len[arrays] = (unsigned char)n;
				s->array_param[arrays] = (signed char)i;
				arrays++;
			}
		}
		/* What the descriptor holds, as cuDNN keeps it: any direction but FOLD is UNFOLD. */
		if (fn == _SPY_FN_cudnnSetTensorTransformDescriptor)
			s->args[6].i = s->args[6].i != CUDNN_TRANSFORM_FOLD ? CUDNN_TRANSFORM_UNFOLD : CUDNN_TRANSFORM_FOLD;
	}
	s->names = (unsigned char)(names_objects(s->set_fn) || names_objects(s->aux_fn) || names_objects(s->attr_fn[0]) ||
				   names_objects(s->attr_fn[1]) || names_objects(s->attr_fn[2]));
	write_end(s);
	return s;
}

void
spy_obj_set(const void *ptr, const char *kind, unsigned fn, const union spy_arg *args)
{
	set(ptr, kind, fn, args);
}

static int stamp_slot(const struct slot *s, uint64_t *stamp, int sources);

/*
 * A Set's k arguments the same as those kept, compared inline (no call: the repeated Set's shortcut then saves
 * no registers); 0 beyond the usual counts, for the general way. The first is the descriptor itself, which the
 * slot's key has compared already (set() keeps a Set's arguments under the descriptor they name first).
 */
static inline __attribute__((always_inline)) int
same_args(const union spy_arg *kept, const union spy_arg *args, int k)
{
	uint64_t d = 0;

	/* Word by word from the last, each case falling into the one below. */
	switch (k) {
#define SAME_ARG(n) \
	case n + 1: \
		d |= kept[n].u ^ args[n].u; \
		__attribute__((fallthrough));
	SAME_ARG(7) SAME_ARG(6) SAME_ARG(5) SAME_ARG(4) SAME_ARG(3) SAME_ARG(2) SAME_ARG(1)
#undef SAME_ARG
	case 1:
		return d == 0;
	default:
		return 0;
	}
}

/* spy_obj_set_stamp's way for any Set but the same one again (out of line: that one saves no registers). */
static __attribute__((noinline)) int
set_stamped(unsigned fn, const union spy_arg *args, uint64_t *stamp)
{
	const struct slot *s;

	/* Known from now on, for the shortcut (which leaves a function not yet looked at to this way). */
	(void)plain_set_args(fn);
	s = set(args[0].p, spy_fn_info[fn].params[0].desc_kind, fn, args);
	*stamp = 0;
	/* No slot: as spy_obj_stamp says of an object it does not know. */
	return s ? stamp_slot(s, stamp, 1) : 1;
}

int
spy_obj_set_stamp(unsigned fn, const union spy_arg *args, uint64_t *stamp)
{
	const void *ptr = args[0].p;
	size_t home = hash((uintptr_t)ptr);
	const struct slot *s = &slots[home];
	int k = __atomic_load_n(&known_plain[fn], __ATOMIC_RELAXED);

	/*
	 * The same shape Set again, in its home place, naming no other object: what same_set() and stamp_slot()
	 * find, without their calls (a traced Set is packed next, and a framework repeats its Sets).
	 */
	if (ptr && k > 0 && __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == (uintptr_t)ptr && s->set_fn == fn + 1 &&
	    !s->failed_fn && !s->filled_fn && !s->aux_fn && !s->names &&
	    s->kind != __atomic_load_n(&backend_kind, __ATOMIC_RELAXED)) {
		unsigned seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (same_args(s->args, args, k) && !(seq & 1) &&
		    __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == seq) {
			*stamp = (uint64_t)(home + 1) << 32 | seq;
			return 1;
		}
	}
	return set_stamped(fn, args, stamp);
}

/*
 * The padding fill of RNN and sequence data, after spy_obj_set: the value,
 * not the pointer that may be gone by the time a record shows the
 * descriptor (cuDNN read it, so it is readable now).
 */
void
spy_obj_set_fill(const void *ptr, unsigned fn, const union spy_arg *args)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	struct slot *s = ptr ? find(ptr) : NULL;

	if (!s || s->set_fn != fn + 1)
		return;
	write_begin(s);
	s->fill_param = -1;
	for (int i = 0; i < f->nparams && i < MAX_ARGS; i++)
		if (strcmp(f->params[i].name, "paddingFill") == 0 && args[i].p) {
			s->args[i].i = 0;
			memcpy(&s->args[i], args[i].p, fill_size(f, args));
			s->fill_param = (signed char)i;
		}
	write_end(s);
}

void
spy_obj_set_failed(const void *ptr, unsigned fn)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	struct slot *s = ptr ? find(ptr) : NULL;

	if (!s)
		return;
	/*
	 * cuDNN may have written part of the call into the descriptor before
	 * refusing it (9.19 keeps the data type of a refused
	 * cudnnSetTensor4dDescriptorEx): what the spy remembers is no longer
	 * known to hold, so it is forgotten rather than shown stale.
	 */
	/* Forgotten already by the same refusal (a loop failing one call): its text, and so its stamp, stay. */
	if (!aux_setter(f) && !(f->nparams == 2 && !f->params[1].is_array && f->params[1].kind != SPY_ARG_PTR) &&
	    s->set_fn == 0 && s->failed_fn == fn + 1)
		return;
	write_begin(s);
	if (aux_setter(f)) {
		if (s->aux_fn == fn + 1)
			s->aux_fn = 0;
		s->settings_lost = 1;
	} else if (f->nparams == 2 && !f->params[1].is_array && f->params[1].kind != SPY_ARG_PTR) {
		for (int i = 0; i < 3; i++)
			if (s->attr_fn[i] == fn + 1)
				s->attr_fn[i] = 0;
		s->settings_lost = 1;
	} else {
		s->set_fn = 0;
		s->failed_fn = (unsigned short)(fn + 1);
	}
	write_end(s);
}

/* Whether the filling call kept in S can be written out: its source descriptors are as they were. */
static int fill_sources_same(const struct slot *s);

void
spy_obj_filled(const void *ptr, unsigned fn, const union spy_arg *args, int first, int last)
{
	const struct spy_fn_info *f = &spy_fn_info[fn];
	/* One the spy never saw has nothing stale. */
	struct slot *s = ptr ? find(ptr) : NULL;
	uint64_t stamps[AUX_ARGS] = { 0 };
	int keep = args && f->nparams <= MAX_ARGS;

	if (!s)
		return;
	/* The sources' versions now, each a few loads: a fill is rare (a layer's setup). */
	for (int i = 0; keep && i < f->nparams; i++) {
		if (f->params[i].kind != SPY_ARG_DESC || (i >= first && i <= last) || !args[i].p)
			continue;
		if (i >= AUX_ARGS || !spy_obj_stamp(args[i].p, &stamps[i]))
			keep = 0;
	}
	write_begin(s);
	s->set_fn = 0;
	s->failed_fn = 0;
	s->aux_fn = 0;
	s->filled_fn = (unsigned short)(fn + 1);
	s->fill_first = s->fill_last = -1;
	if (keep) {
		memcpy(s->args, args, (size_t)f->nparams * sizeof(args[0]));
		for (int i = 0; i < AUX_ARGS; i++)
			s->aux[i].u = stamps[i];
		s->fill_first = (signed char)first;
		s->fill_last = (signed char)last;
		/* What was kept names other objects: the stamp must change once any is forgotten. */
		s->names = 1;
	}
	write_end(s);
}

static int
fill_sources_same(const struct slot *s)
{
	const struct spy_fn_info *f = &spy_fn_info[s->filled_fn - 1];

	if (s->fill_first < 0)
		return 0;
	for (int i = 0; i < f->nparams; i++) {
		uint64_t now;

		if (f->params[i].kind != SPY_ARG_DESC || (i >= s->fill_first && i <= s->fill_last) || !s->args[i].p)
			continue;
		if (i >= AUX_ARGS || !spy_obj_stamp(s->args[i].p, &now) || now != s->aux[i].u)
			return 0;
	}
	return 1;
}

static void describe(struct spy_line *l, const void *ptr, const char *kind, int state, unsigned mode, int nested);

/*
 * The filling call as a Set is shown, ",\"filled\":{\"fn\":...,\"args\":{...}}": the descriptors it filled by
 * their ids, those it filled them from whole (one level: a source's own filling call is not shown), as they still
 * are. Nothing when that no longer holds.
 */
static void
filled_call(struct spy_line *l, const struct slot *s, unsigned mode)
{
	const struct spy_fn_info *f = &spy_fn_info[s->filled_fn - 1];
	size_t mark = l->len;

	if (!fill_sources_same(s))
		return;
	spy_line_lit(l, ",\"filled\":{\"fn\":");
	spy_line_name(l, f->name);
	spy_line_lit(l, ",\"args\":{");
	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *p = &f->params[i];

		if (i)
			spy_line_char(l, ',');
		spy_line_key(l, p->name);
		if (p->kind == SPY_ARG_DESC)
			describe(l, s->args[i].p, p->desc_kind, !(i >= s->fill_first && i <= s->fill_last),
				 mode & ~(unsigned)SPY_ARGS_BRIEF, 1);
		else
			print_arg(l, p, &s->args[i], -1, SPY_ARGS_STORED);
	}
	spy_line_lit(l, "}}");
	if (l->overflow)
		l->len = mark;
}

static const char *
short_enum(int enum_id, int64_t v, const char *prefix)
{
	const char *name = spy_enum_name(enum_id, v, 0);
	size_t n = strlen(prefix);

	if (!name)
		return "?";
	return strncmp(name, prefix, n) == 0 ? name + n : name;
}

static void
lower(struct spy_line *l, const char *s)
{
	for (; *s; s++)
		spy_line_char(l, (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s));
}

static void
dims(struct spy_line *l, const union spy_arg *a, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, 'x');
		spy_line_i64(l, a[i].i);
	}
}

static void
dims_array(struct spy_line *l, const int *a, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, 'x');
		spy_line_i64(l, a[i]);
	}
}

/* The one-glance summary of the common descriptors ("float NCHW 32x3x224x224"). */
static void
summary(struct spy_line *l, const struct slot *s)
{
	unsigned fn = s->set_fn - 1u;
	const union spy_arg *a = s->args;
	const char *dt = "CUDNN_DATA_";

	if (fn == _SPY_FN_cudnnSetTensor4dDescriptor) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[2].i, dt));
		spy_line_char(l, ' ');
		spy_line_raw(l, short_enum(_SPY_ENUM_cudnnTensorFormat_t, a[1].i, "CUDNN_TENSOR_"));
		spy_line_char(l, ' ');
		dims(l, a + 3, 4);
	} else if (fn == _SPY_FN_cudnnSetTensor4dDescriptorEx) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[1].i, dt));
		spy_line_char(l, ' ');
		dims(l, a + 2, 4);
		spy_line_lit(l, " strides ");
		dims(l, a + 6, 4);
	} else if (fn == _SPY_FN_cudnnSetTensorNdDescriptor) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[1].i, dt));
		spy_line_char(l, ' ');
		dims_array(l, s->array[0], s->array_len[0]);
		spy_line_lit(l, " strides ");
		dims_array(l, s->array[1], s->array_len[1]);
	} else if (fn == _SPY_FN_cudnnSetTensorNdDescriptorEx) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[2].i, dt));
		spy_line_char(l, ' ');
		spy_line_raw(l, short_enum(_SPY_ENUM_cudnnTensorFormat_t, a[1].i, "CUDNN_TENSOR_"));
		spy_line_char(l, ' ');
		dims_array(l, s->array[0], s->array_len[0]);
	} else if (fn == _SPY_FN_cudnnSetFilter4dDescriptor) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[1].i, dt));
		spy_line_char(l, ' ');
		spy_line_raw(l, short_enum(_SPY_ENUM_cudnnTensorFormat_t, a[2].i, "CUDNN_TENSOR_"));
		spy_line_char(l, ' ');
		dims(l, a + 3, 4);
	} else if (fn == _SPY_FN_cudnnSetFilterNdDescriptor) {
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[1].i, dt));
		spy_line_char(l, ' ');
		spy_line_raw(l, short_enum(_SPY_ENUM_cudnnTensorFormat_t, a[2].i, "CUDNN_TENSOR_"));
		spy_line_char(l, ' ');
		dims_array(l, s->array[0], s->array_len[0]);
	} else if (fn == _SPY_FN_cudnnSetConvolution2dDescriptor) {
		spy_line_lit(l, "pad ");
		dims(l, a + 1, 2);
		spy_line_lit(l, " stride ");
		dims(l, a + 3, 2);
		spy_line_lit(l, " dilation ");
		dims(l, a + 5, 2);
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnConvolutionMode_t, a[7].i, "CUDNN_"));
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[8].i, dt));
	} else if (fn == _SPY_FN_cudnnSetConvolutionNdDescriptor) {
		spy_line_lit(l, "pad ");
		dims_array(l, s->array[0], s->array_len[0]);
		spy_line_lit(l, " stride ");
		dims_array(l, s->array[1], s->array_len[1]);
		if (s->array_param[2] >= 0) {
			spy_line_lit(l, " dilation ");
			dims_array(l, s->array[2], s->array_len[2]);
		}
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnConvolutionMode_t, a[5].i, "CUDNN_"));
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnDataType_t, a[6].i, dt));
	} else if (fn == _SPY_FN_cudnnSetActivationDescriptor) {
		/* Traced calls show only this text: the coefficient and NaN option belong in it. */
		lower(l, short_enum(_SPY_ENUM_cudnnActivationMode_t, a[1].i, "CUDNN_ACTIVATION_"));
		spy_line_lit(l, " coef ");
		spy_line_double(l, a[3].d);
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnNanPropagation_t, a[2].i, "CUDNN_"));
	} else if (fn == _SPY_FN_cudnnSetPooling2dDescriptor) {
		lower(l, short_enum(_SPY_ENUM_cudnnPoolingMode_t, a[1].i, "CUDNN_POOLING_"));
		spy_line_lit(l, " window ");
		dims(l, a + 3, 2);
		spy_line_lit(l, " pad ");
		dims(l, a + 5, 2);
		spy_line_lit(l, " stride ");
		dims(l, a + 7, 2);
		spy_line_char(l, ' ');
		lower(l, short_enum(_SPY_ENUM_cudnnNanPropagation_t, a[2].i, "CUDNN_"));
	}
}

/* A consistent copy of a slot that another thread may be rewriting; 0 when it never settled. */
static int
snapshot(const struct slot *s, struct slot *copy)
{
	unsigned seq;
	int tries = 0;

	do {
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		memcpy(copy, s, sizeof(*copy));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1 || seq != __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE)) && ++tries < 8);
	if (tries >= 8) {
		/* Being rewritten all along: the id is still right, the state may not be. */
		copy->set_fn = 0;
		copy->aux_fn = 0;
		memset(copy->attr_fn, 0, sizeof(copy->attr_fn));
		copy->from_create = 0;	/* nor is it known to be unset */
		return 0;
	}
	return 1;
}

/* SOURCES: a filled descriptor's version takes in its sources' (one level, whatever fills what). */
static int
stamp_of(const void *ptr, uint64_t *stamp, int sources)
{
	const struct slot *s = ptr ? find(ptr) : NULL;

	*stamp = 0;
	return s ? stamp_slot(s, stamp, sources) : 1;
}

/* stamp_of of the slot found. */
static int
stamp_slot(const struct slot *s, uint64_t *stamp, int sources)
{
	unsigned seq;
	int names;

	seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return 0;	/* being written */
	/*
	 * A backend descriptor's text is backend.c's, which changes without a Set here; what this file adds to it
	 * changes only when the address is taken again, and so does backend.c's version.
	 */
	if (s->kind == __atomic_load_n(&backend_kind, __ATOMIC_RELAXED)) {
		int (*fn)(const void *, uint64_t *) = __atomic_load_n(&backend_stamper, __ATOMIC_ACQUIRE);

		return fn && fn((const void *)s->key, stamp);
	}
	/*
	 * What was set may name other objects by their numbers (an RNN
	 * descriptor its dropout descriptor): once any object was forgotten,
	 * another may have its address and a new number, and the text says so.
	 */
	names = s->names;
	/* A filling call kept in the text shows its sources as they are now: their versions are part of this one. */
	if (s->filled_fn && s->fill_first >= 0 && sources) {
		const struct spy_fn_info *f = &spy_fn_info[s->filled_fn - 1];
		const void *src[AUX_ARGS] = { NULL };

		for (int i = 0; i < f->nparams && i < AUX_ARGS; i++)
			if (f->params[i].kind == SPY_ARG_DESC && (i < s->fill_first || i > s->fill_last))
				src[i] = s->args[i].p;
		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq)
			return 0;
		for (int i = 0; i < AUX_ARGS; i++) {
			uint64_t st;

			if (src[i] && !stamp_of(src[i], &st, 0))
				return 0;
			if (src[i])
				*stamp = (*stamp ^ st) * 0x9E3779B97F4A7C15ull;
		}
	}
	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != seq)
		return 0;
	*stamp ^= (uint64_t)(s - slots + 1) << 32 | seq;
	if (names)
		*stamp ^= spy_obj_renumbered() * 0xc2b2ae3d27d4eb4full;
	return 1;
}

int
spy_obj_stamp(const void *ptr, uint64_t *stamp)
{
	return stamp_of(ptr, stamp, 1);
}

int
spy_obj_id_stamp(const void *ptr, uint64_t *stamp)
{
	const struct slot *s = ptr ? find(ptr) : NULL;
	struct slot copy;

	*stamp = 0;
	if (!s)
		return 1;
	if (!snapshot(s, &copy) || copy.key != (uintptr_t)ptr)
		return 0;
	*stamp = (uint64_t)(s - slots + 1) << 40 | (uint64_t)copy.kind << 32 | copy.num;
	return 1;
}

int
spy_obj_get(const void *ptr, struct spy_obj_info *out)
{
	const struct slot *s = ptr ? find(ptr) : NULL;
	struct slot copy;

	if (!s)
		return 0;
	snapshot(s, &copy);
	if (copy.key != (uintptr_t)ptr)
		return 0;	/* destroyed meanwhile */
	out->kind = kinds[copy.kind];
	out->num = copy.num;
	out->seq = copy.seq;
	out->set_fn = copy.set_fn;
	memcpy(out->args, copy.args, sizeof(out->args));
	memcpy(out->array, copy.array, sizeof(out->array));
	memcpy(out->array_len, copy.array_len, sizeof(out->array_len));
	memcpy(out->array_param, copy.array_param, sizeof(out->array_param));
	memcpy(out->attr_fn, copy.attr_fn, sizeof(out->attr_fn));
	memcpy(out->attr, copy.attr, sizeof(out->attr));
	return 1;
}

int
spy_obj_data_type(const void *ptr, int64_t *dt)
{
	const struct slot *s = ptr ? find(ptr) : NULL;
	struct slot copy;
	const struct spy_fn_info *f;

	if (!s || !snapshot(s, &copy) || copy.key != (uintptr_t)ptr || !copy.set_fn)
		return 0;
	f = &spy_fn_info[copy.set_fn - 1];
	for (int i = 0; i < f->nparams && i < MAX_ARGS; i++)
		if (f->params[i].kind == SPY_ARG_ENUM && f->params[i].enum_id == _SPY_ENUM_cudnnDataType_t) {
			*dt = (int32_t)copy.args[i].i;
			return 1;
		}
	return 0;
}

int
spy_obj_dim(const void *ptr, int k, int64_t *out)
{
	static const char *const nchw[2][4] = { { "n", "c", "h", "w" }, { "k", "c", "h", "w" } };
	const struct slot *s = ptr ? find(ptr) : NULL;
	struct slot copy;
	const struct spy_fn_info *f;

	if (!s || !snapshot(s, &copy) || copy.key != (uintptr_t)ptr || !copy.set_fn || k < 0)
		return 0;
	f = &spy_fn_info[copy.set_fn - 1];
	for (int i = 0; i < f->nparams && i < MAX_ARGS; i++) {
		/* An Nd Set (tensor, filter, sequence data): its dimA, as copied. */
		if (strcmp(f->params[i].name, "dimA") == 0) {
			for (int j = 0; j < 3; j++)
				if (copy.array_param[j] == i && k < copy.array_len[j]) {
					*out = copy.array[j][k];
					return 1;
				}
			return 0;
		}
		/* A 4d Set: n, c, h, w (k for a filter's output channels) by name. */
		if (k < 4 && f->params[i].kind == SPY_ARG_INT &&
		    (strcmp(f->params[i].name, nchw[0][k]) == 0 || strcmp(f->params[i].name, nchw[1][k]) == 0)) {
			*out = (int32_t)copy.args[i].i;
			return 1;
		}
	}
	return 0;
}

int64_t
spy_obj_attr(const struct spy_obj_info *o, unsigned fn, int64_t def)
{
	for (int i = 0; i < 3; i++)
		if (o->attr_fn[i] == fn + 1)
			return o->attr[i];
	return def;
}

int
spy_obj_version(const void *ptr, unsigned *num, unsigned *seq)
{
	const struct slot *s = ptr ? find(ptr) : NULL;

	if (!s)
		return 0;
	*seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	*num = __atomic_load_n(&s->num, __ATOMIC_RELAXED);
	/* Odd: a Set is being written now. */
	return !(*seq & 1) && __atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == (uintptr_t)ptr;
}

unsigned
spy_obj_number(const void *ptr)
{
	const struct slot *s = ptr ? find(ptr) : NULL;

	return s ? __atomic_load_n(&s->num, __ATOMIC_RELAXED) : 0;
}

int
spy_obj_summary(struct spy_line *l, const void *ptr)
{
	const struct slot *s = ptr ? find(ptr) : NULL;
	struct slot copy;
	size_t mark = l->len;

	if (!s || !snapshot(s, &copy) || !copy.set_fn)
		return 0;
	summary(l, &copy);
	return l->len != mark;
}

/* A default's value as the spy stores an argument of the parameter's kind. */
static union spy_arg
default_arg(const struct spy_param_info *p, double value)
{
	union spy_arg v;

	if (p->kind == SPY_ARG_DOUBLE)
		v.d = value;
	else
		v.i = (int64_t)value;
	return v;
}

/*
 * The settings beside a descriptor's shape that cuDNN documents a default
 * for (the description's default=), and that the program never made:
 * cuDNN's log shows them always.
 */
static void
settings_defaults(struct spy_line *l, const struct slot *s)
{
	int have;

	/* Only for a descriptor seen from its creation, with no failed setting since (state unknown). */
	if (!s->from_create || s->settings_lost)
		return;
	for (unsigned k = 0; k < spy_setting_default_count; k++) {
		const struct spy_setting_default *sd = &spy_setting_defaults[k];
		const struct spy_fn_info *f = &spy_fn_info[sd->fn];
		union spy_arg v;

		/* One value per Set (a convolution's math type); the RNN clip's four come below. */
		if (f->nparams != 2 || !f->params[0].desc_kind || strcmp(kinds[s->kind], f->params[0].desc_kind) != 0)
			continue;
		have = 0;
		for (int i = 0; i < 3; i++)
			have |= s->attr_fn[i] == sd->fn + 1u;
		if (have)
			continue;
		v = default_arg(&f->params[1], sd->value);
		spy_line_char(l, ',');
		spy_line_key(l, f->params[1].name);
		print_arg(l, &f->params[1], &v, -1, SPY_ARGS_STORED);
	}
	/* An RNN descriptor's clip: none until cudnnRNNSetClip, and again after each shape Set (as cuDNN resets it). */
	if (!s->aux_fn && strcmp(kinds[s->kind], "rnn") == 0) {
		const struct spy_fn_info *f = &spy_fn_info[_SPY_FN_cudnnRNNSetClip_v8];

		for (unsigned k = 0; k < spy_setting_default_count; k++) {
			const struct spy_setting_default *sd = &spy_setting_defaults[k];
			union spy_arg v;

			if (sd->fn != _SPY_FN_cudnnRNNSetClip_v8 || sd->param >= f->nparams)
				continue;
			v = default_arg(&f->params[sd->param], sd->value);
			spy_line_char(l, ',');
			spy_line_key(l, f->params[sd->param].name);
			print_arg(l, &f->params[sd->param], &v, -1, SPY_ARGS_STORED);
		}
	}
}

static void
id_text(struct spy_line *l, const struct slot *s)
{
	spy_line_raw(l, kinds[s->kind]);
	spy_line_char(l, '#');
	spy_line_u64(l, s->num);
}

void
spy_obj_describe(struct spy_line *l, const void *ptr, const char *kind, int state, unsigned mode)
{
	describe(l, ptr, kind, state, mode, 0);
}

static void
describe(struct spy_line *l, const void *ptr, const char *kind, int state, unsigned mode, int nested)
{
	int text = (mode & SPY_ARGS_TEXT) != 0;
	const struct spy_arg_printer *ap = arg_printer();
	struct slot copy, *s;
	int backend;

	if (!ptr) {
		spy_line_raw(l, text ? "NULL" : "null");
		return;
	}
	s = find(ptr);
	if (!s)
		s = insert(ptr, kind);
	if (!s) {
		spy_line_hex(l, (uintptr_t)ptr);
		return;
	}
	snapshot(s, &copy);
	/* Backend descriptors keep their attributes in backend.c, not in a Set call. */
	backend = strcmp(kinds[copy.kind], "backend") == 0;
	if (text) {
		id_text(l, &copy);
		if (state && backend)
			describe_backend(l, ptr, mode);
		if (state && copy.set_fn) {
			size_t mark = l->len;

			spy_line_char(l, '[');
			summary(l, &copy);
			if (l->len == mark + 1)
				l->len = mark;
			else
				spy_line_char(l, ']');
		}
		return;
	}
	if (!state) {
		spy_line_char(l, '"');
		id_text(l, &copy);
		spy_line_char(l, '"');
		return;
	}
	spy_line_lit(l, "{\"id\":\"");
	id_text(l, &copy);
	spy_line_char(l, '"');
	if (copy.set_fn) {
		size_t mark = l->len;
		int described;

		spy_line_lit(l, ",\"desc\":\"");
		summary(l, &copy);
		described = l->len != mark + 9;
		if (!described)
			l->len = mark;	/* no summary for this kind */
		else
			spy_line_char(l, '"');
		if (described && (mode & SPY_ARGS_BRIEF))
			goto attrs;
		spy_line_lit(l, ",\"set\":{\"fn\":");
		spy_line_name(l, spy_fn_info[copy.set_fn - 1].name);
		spy_line_lit(l, ",\"args\":");
		if (ap)
			ap->args_json(l, copy.set_fn - 1, copy.args, SPY_ARGS_STORED);
		/* The arrays were copied at the Set call: add them inside the args object. */
		for (int i = 0; i < 3 && !l->overflow; i++) {
			if (copy.array_param[i] < 0)
				continue;
			l->len--;
			if (l->data[l->len - 1] != '{')
				spy_line_char(l, ',');
			spy_line_key(l, spy_fn_info[copy.set_fn - 1].params[(int)copy.array_param[i]].name);
			spy_line_char(l, '[');
			for (int k = 0; k < copy.array_len[i]; k++) {
				if (k)
					spy_line_char(l, ',');
				spy_line_i64(l, copy.array[i][k]);
			}
			spy_line_lit(l, "]}");
		}
		if ((copy.set_fn - 1u == _SPY_FN_cudnnSetRNNDataDescriptor ||
		     copy.set_fn - 1u == _SPY_FN_cudnnSetSeqDataDescriptor) && copy.fill_param >= 0 && !l->overflow) {
			size_t at = l->len;
			const struct spy_fn_info *f = &spy_fn_info[copy.set_fn - 1];

			l->len--;
			spy_line_char(l, ',');
			spy_line_key(l, f->params[(int)copy.fill_param].name);
			if (ap && ap->typed_value(l, set_data_type(f, copy.args), &copy.args[(int)copy.fill_param],
					    SPY_ARGS_STORED))
				spy_line_char(l, '}');
			else
				l->len = at;
		}
		spy_line_char(l, '}');
	} else if (copy.failed_fn) {
		spy_line_lit(l, ",\"set_failed\":");
		spy_line_name(l, spy_fn_info[copy.failed_fn - 1].name);
	} else if (copy.filled_fn) {
		spy_line_lit(l, ",\"filled_by\":");
		spy_line_name(l, spy_fn_info[copy.filled_fn - 1].name);
		if (!nested)
			filled_call(l, &copy, mode);
	} else if (copy.from_create && !backend) {
		/* Created and never set: it holds what cuDNN gives a new descriptor, which the spy does not guess. */
		spy_line_lit(l, ",\"unset\":true");
	}
attrs:
	if (backend)
		describe_backend(l, ptr, mode);
	for (int i = 0; i < 3; i++) {
		const struct spy_fn_info *f;
		union spy_arg v = { .i = copy.attr[i] };

		if (!copy.attr_fn[i])
			continue;
		f = &spy_fn_info[copy.attr_fn[i] - 1];

		spy_line_char(l, ',');
		spy_line_key(l, f->params[1].name);
		print_arg(l, &f->params[1], &v, -1, SPY_ARGS_STORED);
	}
	if (copy.aux_fn) {
		const struct spy_fn_info *f = &spy_fn_info[copy.aux_fn - 1];

		for (int i = 1; i < f->nparams && i < AUX_ARGS; i++) {
			spy_line_char(l, ',');
			spy_line_key(l, f->params[i].name);
			print_arg(l, &f->params[i], &copy.aux[i], -1, SPY_ARGS_STORED);
		}
	}
	if (!backend)
		settings_defaults(l, &copy);
	spy_line_char(l, '}');
}
