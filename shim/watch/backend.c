/*
 * The graph (backend) API as the program built it: each descriptor's type
 * (from cudnnBackendCreateDescriptor) and the attributes set on it
 * (cudnnBackendSetAttribute) or read back (cudnnBackendGetAttribute),
 * decoded by attribute name and type. From those: the operation graph's
 * operations and tensors, the engine and knobs of an engine config, what
 * an execution plan runs, and the ranked configs of a heuristics query.
 *
 * A fixed table keyed by the descriptor's address, under one mutex, with a
 * bounded number of attributes and values per descriptor: nothing is
 * allocated. Arrays are read only after the call succeeded, within the
 * count the call carried. The spy calls cuDNN itself only for read-only
 * queries of a plan just finalized: what its config runs (engine, numerical
 * notes, knobs) when the program did not ask, and its JSON representation
 * when cudnnBackendFinalize is traced.
 */
#include "core.h"
#include "algo.h"
#include "backend.h"
#include "objects.h"
#include "battr.h"
#include "sink.h"
#include "kept.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 4096		/* a power of two */
#define KEY_EMPTY 0
#define KEY_GONE 1
#define ATTRS 12		/* attributes kept per descriptor */
#define VALUES SPY_BATTR_VALUES	/* values kept per attribute */
#define QUERIES 256		/* heuristics queries kept for the exit records */
#define JSON_MAX 6144		/* a plan's JSON representation, at most, in a record */
#define STRING_MAX SPY_BATTR_STRING_MAX	/* CUDNN_TYPE_CHAR arrays in call records, at most */
#define DEPTH 2			/* descriptors nested in a graph record: op, then its tensors */
#define GRAPH_OPS 256		/* operations kept per graph (past VALUES, in `more`) */
#define MM_DIMS 8		/* dimensions kept per matmul tensor */
#define DESTROYED 1024		/* destroyed descriptors kept for what names them (a power of two) */

/* How the elements of each cudnnBackendAttributeType_t are laid out and named (common/battr.c). */
#define types spy_battr_types
#define NTYPES ((int64_t)SPY_BATTR_NTYPES)

struct attr {
	int name;		/* cudnnBackendAttributeName_t */
	unsigned char type;	/* cudnnBackendAttributeType_t */
	unsigned char got;	/* read back with GetAttribute rather than set */
	unsigned short stored;	/* values kept (a fraction takes two) */
	int64_t count;		/* elements the call carried */
	unsigned born;		/* the newest backend#N when it was set: a descriptor it names is no newer */
	int64_t v[VALUES];	/* integers, enum values, pointers; floats and doubles by their double's bits */
};

struct slot {
	uintptr_t key;
	/*
	 * Moves on with every change its JSON text shows: format 2 keeps texts by
	 * it. The slot's generation (a new one each time it is taken) above bit
	 * 32, its changes below.
	 */
	uint64_t version;
	unsigned num;		/* backend#N */
	int type;		/* cudnnBackendDescriptorType_t, -1 when the spy missed its creation */
	unsigned char finalized, nattrs;
	unsigned char destroyed;	/* by the program: kept (find_named) for the descriptors that name it */
	unsigned char refs;	/* an attribute names other objects (descriptors, handles): its text shows their numbers */
	unsigned short dropped;	/* attributes that found no room */
	short query, rank;	/* engine configs (and their engines, knob choices): the heuristics query that returned it */
	short knob;		/* a ranked config's knob choice: which of its knobs, -1 */
	unsigned cache_epoch;	/* plans: the choice they ran as, valid while `epoch` stays this */
	int cache_choice;
	/*
	 * Captured at finalize, while what it names is alive: cudnn-frontend
	 * destroys an operation's tensors once the operation is finalized, and a
	 * graph's operations once the graph is. Operations: their fragment
	 * (sig_kind the convolution kind, or -1) and their short name; graphs
	 * and engines: the graph's signature (sig_kind its spy_conv_op).
	 */
	char *sig, *short_sig;
	int sig_kind;
	/* Plans: the engine and knobs the spy read itself after finalize, when the program never asked. */
	struct self_read *self;
	/* Graphs: the operations past the first VALUES (attention graphs have more). */
	int64_t *more;
	int nmore;
	/* Matmul and SDPA operations: their tensors, captured at finalize (attention signatures need the numbers). */
	struct op_facts *mm;
	struct attr attrs[ATTRS];
};

/* A matmul's A, B and C tensors, or an SDPA operation's Q, K, V and O, as numbers. */
struct op_facts {
	struct {
		int known, nd, virt;
		int64_t dtype, dims[MM_DIMS], strides[MM_DIMS];
	} t[4];
};

struct self_read {
	int64_t engine;
	int nknobs;
	int nondet;		/* the engine's numerical notes say NONDETERMINISTIC: 1, they do not: 0, unread: -1 */
	int64_t knob_type[SPY_KNOBS_MAX], knob_value[SPY_KNOBS_MAX];
};

/* A ranked config's knob choices as the program read them, kept when their descriptors are gone. */
struct qknobs {
	int n;			/* how many the config has, -1 unknown */
	unsigned known;		/* which of them the program read whole (type and value) */
	int64_t type[SPY_KNOBS_MAX], value[SPY_KNOBS_MAX];
};

struct query {
	unsigned heur, graph;
	struct qknobs *knobs;	/* ncfg of them, allocated when the program first reads a config's knobs */
	/* Every ranked config a query returned (cudnn-frontend asks for all of them): allocated, n of each. */
	unsigned *cfg;
	int64_t *engine;
	int64_t ncfg;
	int tid;
	uint64_t t_ns;
	int64_t mode, requested, returned;
	int op;
	char sig[SPY_SIG_LEN];
	struct spy_kept kept;	/* its record in the mapped file, for an ending without exit (query_keep) */
};

static void query_keep(struct query *h);
static void query_fields(struct spy_line *l, const struct query *h);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t json_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot slots[SLOTS];
static struct query queries[QUERIES];
static int nqueries;
static unsigned newest;		/* the highest backend#N seen created */
static uint64_t generations;	/* slots taken so far (lock held) */
/* This thread's last traced cudnnBackendSetAttribute that kept its attribute (format 2 packs it as a change). */
static __thread struct {
	const void *ptr;
	uint64_t before, after;
} last_set;
/* Counts changes that could change what a plan resolves to: every one but a variant pack's. */
static unsigned epoch = 1;
static char json[JSON_MAX + 1];
static int full_said, queries_said;
/*
 * cudnn-frontend destroys an operation's tensors once the operation is finalized, and a graph's operations once
 * the graph is: the last DESTROYED destroyed descriptors stay in the table, found only through what names them
 * (target), so that a graph record and a failure's descriptor show them whole (what repro rebuilds a graph
 * from). The oldest goes first, and any when the table is full.
 */
static struct {
	struct slot *s;
	unsigned num;
} destroyed_ring[DESTROYED];
static unsigned destroyed_next, destroyed_first;
static int queries_from;	/* in a forked child: the queries before the fork are the parent's to record */

/* ---- The table (lock held) ---- */

/*
 * Not an atomic add: a descriptor not finalized yet changes in its own
 * thread only (spy_backend_call), and a finalized one under the lock; a
 * shared counter cost a contended cache line on every attribute set.
 */
static void
changed(struct slot *s)
{
	__atomic_store_n(&s->version, __atomic_load_n(&s->version, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
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

	if (key <= KEY_GONE)
		return NULL;
	/*
	 * Atomic: a descriptor's attributes are set without the lock (spy_backend_call), while another thread may
	 * insert or forget one; a key is stored last, with release, once its slot is ready.
	 */
	for (size_t i = hash(key), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		uintptr_t k = __atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE);

		if (k == key && !__atomic_load_n(&slots[i].destroyed, __ATOMIC_ACQUIRE))
			return &slots[i];
		if (k == KEY_EMPTY)
			return NULL;
	}
	return NULL;
}

/* The descriptor at PTR, destroyed or not, that is no newer than backend#BORN (lock held). */
static struct slot *
find_named(const void *ptr, unsigned born)
{
	uintptr_t key = (uintptr_t)ptr;
	struct slot *best = NULL;

	if (key <= KEY_GONE)
		return NULL;
	for (size_t i = hash(key), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		uintptr_t k = __atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE);

		if (k == KEY_EMPTY)
			break;
		if (k == key && slots[i].num <= born && (!best || slots[i].num > best->num))
			best = &slots[i];
	}
	return best;
}

static void forget(struct slot *s);

/* Forgets the oldest destroyed descriptor still kept; 0 when there is none (lock held). */
static int
forget_destroyed(void)
{
	while (destroyed_first != destroyed_next) {
		unsigned k = destroyed_first++ & (DESTROYED - 1);
		struct slot *s = destroyed_ring[k].s;

		/* Not taken again since: still that destroyed descriptor. */
		if (s->destroyed && s->num == destroyed_ring[k].num && s->key > KEY_GONE) {
			forget(s);
			return 1;
		}
	}
	return 0;
}

/* The program destroyed S: kept, found by what names it only (lock held). */
static void
keep_destroyed(struct slot *s)
{
	if (destroyed_next - destroyed_first >= DESTROYED)
		forget_destroyed();
	__atomic_store_n(&s->destroyed, 1, __ATOMIC_RELEASE);
	destroyed_ring[destroyed_next & (DESTROYED - 1)].s = s;
	destroyed_ring[destroyed_next & (DESTROYED - 1)].num = s->num;
	destroyed_next++;
}

static struct slot *
insert(const void *ptr, int type)
{
	uintptr_t key = (uintptr_t)ptr;
	struct slot *s = find(ptr);

	if (s || key <= KEY_GONE)
		return s;
again:
	for (size_t i = hash(key), n = 0; n < SLOTS; i = (i + 1) & (SLOTS - 1), n++) {
		if (slots[i].key != KEY_EMPTY && slots[i].key != KEY_GONE)
			continue;
		s = &slots[i];
		/* All but the key, which a lock-free find() reads: it still says empty or gone until the slot is ready. */
		memset((char *)s + sizeof(s->key), 0, sizeof(*s) - sizeof(s->key));
		s->type = type;
		s->query = -1;
		s->rank = -1;
		s->knob = -1;
		s->cache_choice = -1;
		s->version = ++generations << 32;
		s->num = spy_obj_number(ptr);
		if (s->num > newest)
			__atomic_store_n(&newest, s->num, __ATOMIC_RELAXED);
		__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
		return s;
	}
	/* Full: the destroyed descriptors kept make room first. */
	if (forget_destroyed())
		goto again;
	spy_log_once(&full_said, "more than %d live backend descriptors: the others are not decoded", SLOTS);
	return NULL;
}

/* Forgets a descriptor; tombstones just before an empty slot become empty, so that misses stay short. */
static void
forget(struct slot *s)
{
	size_t i = (size_t)(s - slots);

	__atomic_store_n(&s->key, (uintptr_t)KEY_GONE, __ATOMIC_RELEASE);
	__atomic_store_n(&s->destroyed, 0, __ATOMIC_RELEASE);
	free(s->sig);
	free(s->short_sig);
	free(s->self);
	free(s->more);
	free(s->mm);
	s->sig = s->short_sig = NULL;
	s->self = NULL;
	s->more = NULL;
	s->mm = NULL;
	s->nmore = 0;
	if (slots[(i + 1) & (SLOTS - 1)].key != KEY_EMPTY)
		return;
	while (slots[i].key == KEY_GONE) {
		__atomic_store_n(&slots[i].key, (uintptr_t)KEY_EMPTY, __ATOMIC_RELEASE);
		i = (i - 1) & (SLOTS - 1);
	}
}

static struct attr *
attr_of(const struct slot *s, int name)
{
	for (int i = 0; s && i < s->nattrs; i++)
		if (s->attrs[i].name == name)
			return (struct attr *)&s->attrs[i];
	return NULL;
}

/* The descriptor an attribute names (value k), if it is still the one that was named. */
static struct slot *
target(const struct slot *s, int name, int k)
{
	const struct attr *a = attr_of(s, name);
	struct slot *t;

	if (!a || a->type != CUDNN_TYPE_BACKEND_DESCRIPTOR || k < 0)
		return NULL;
	/* Destroyed since, it is still what was named; an address given to a newer descriptor since is not. */
	if (k < a->stored)
		t = find_named((const void *)(uintptr_t)a->v[k], a->born);
	else if (name == CUDNN_ATTR_OPERATIONGRAPH_OPS && k - VALUES < s->nmore && a->stored == VALUES)
		t = find_named((const void *)(uintptr_t)s->more[k - VALUES], a->born);
	else
		return NULL;
	return t;
}

static int
int_attr(const struct slot *s, int name, int64_t *out)
{
	const struct attr *a = attr_of(s, name);

	if (!a || a->stored < 1 || types[a->type].kind == SPY_BV_FLOAT || types[a->type].kind == SPY_BV_DOUBLE)
		return 0;
	*out = a->v[0];
	return 1;
}

static int64_t
load(const void *at, unsigned size, int kind)
{
	switch (kind) {
	case SPY_BV_FLOAT: {
		double d = *(const float *)at;
		int64_t bits;

		memcpy(&bits, &d, sizeof(bits));
		return bits;
	}
	case SPY_BV_BOOL:
		return *(const unsigned char *)at != 0;
	}
	switch (size) {
	case 1:
		return *(const signed char *)at;
	case 4:
		return *(const int32_t *)at;
	default:
		return *(const int64_t *)at;
	}
}

/* Keeps what a successful Set (or Get) carried: `count` elements at `array`. */
static struct attr *
remember(struct slot *s, int64_t name, int64_t type, int64_t count, const void *array, int got)
{
	struct attr *a;
	unsigned per, size;

	if (!s || type < 0 || type >= NTYPES || types[type].kind == SPY_BV_CHAR)
		return NULL;
	a = attr_of(s, (int)name);
	if (!a) {
		if (s->nattrs >= ATTRS) {
			s->dropped++;
			changed(s);
			return NULL;
		}
		a = &s->attrs[s->nattrs++];
	}
	if (types[type].kind == SPY_BV_DESC || types[type].kind == SPY_BV_HANDLE)
		__atomic_store_n(&s->refs, 1, __ATOMIC_RELAXED);
	a->name = (int)name;
	a->type = (unsigned char)type;
	a->got = (unsigned char)got;
	a->count = count;
	a->born = __atomic_load_n(&newest, __ATOMIC_RELAXED);
	a->stored = 0;
	per = types[type].kind == SPY_BV_FRACTION ? 2 : 1;
	size = types[type].size / per;
	for (int64_t i = 0; array && i < count * per && a->stored < VALUES; i++)
		a->v[a->stored++] = load((const char *)array + i * size, size, types[type].kind);
	if (name == CUDNN_ATTR_OPERATIONGRAPH_OPS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
		int64_t extra = count > GRAPH_OPS ? GRAPH_OPS - VALUES : count - VALUES;

		free(s->more);
		s->more = NULL;
		s->nmore = 0;
		if (array && extra > 0 && (s->more = malloc((size_t)extra * sizeof(*s->more)))) {
			for (int64_t i = 0; i < extra; i++)
				s->more[i] = (int64_t)(uintptr_t)((void *const *)array)[VALUES + i];
			s->nmore = (int)extra;
		}
	}
	changed(s);
	return a;
}

/* How many operations of graph `g` the spy kept: the first VALUES in its attribute, the rest in `more`. */
static int
ops_kept(const struct slot *g, const struct attr *ops)
{
	return ops ? ops->stored + (ops->stored == VALUES ? g->nmore : 0) : 0;
}

/* ---- Heuristics ---- */

/* When a config's engine index becomes known, its query learns it too. */
static void
query_learn(const struct slot *engine_or_cfg)
{
	const struct slot *s = engine_or_cfg, *e = s;
	int64_t index;

	if (s->query < 0 || s->query >= nqueries || s->rank < 0 || s->rank >= queries[s->query].ncfg)
		return;
	if (s->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)
		e = target(s, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
	if (e && int_attr(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &index) && queries[s->query].engine[s->rank] != index) {
		queries[s->query].engine[s->rank] = index;
		query_keep(&queries[s->query]);
	}
}

/* ---- Signatures ---- */

static int
conv_roles(int optype, int *x, int *w, int *y, int *conv)
{
	switch (optype) {
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
		*x = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
		*w = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
		*y = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
		*conv = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC;
		return SPY_OP_FWD;
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
		*x = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
		*w = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
		*y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
		*conv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
		return SPY_OP_BWD_DATA;
	case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
		*x = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
		*w = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
		*y = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
		*conv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
		return SPY_OP_BWD_FILTER;
	}
	return -1;
}

static void
text_lower(struct spy_text *t, const char *s, const char *prefix, const char *suffix)
{
	char b[96];
	size_t n = strlen(prefix), i;

	if (!s) {
		spy_text_add(t, "?");
		return;
	}
	if (strncmp(s, prefix, n) == 0)
		s += n;
	for (i = 0; s[i] && i < sizeof(b) - 1; i++)
		b[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	b[i] = 0;
	n = strlen(suffix);
	if (i > n && strcmp(b + i - n, suffix) == 0)
		b[i - n] = 0;
	spy_text_add(t, b);
}

/* A backend tensor as "float:8x16x32x32:NCHW" (the layout from its strides). */
static void
tensor_text(struct spy_text *t, const struct slot *s, int64_t *channels)
{
	const struct attr *d = attr_of(s, CUDNN_ATTR_TENSOR_DIMENSIONS), *st = attr_of(s, CUDNN_ATTR_TENSOR_STRIDES);
	int64_t dtype = -1;

	*channels = -1;
	if (!s || !d || !int_attr(s, CUDNN_ATTR_TENSOR_DATA_TYPE, &dtype)) {
		spy_text_add(t, "?");
		return;
	}
	if (d->stored >= 2)
		*channels = d->v[1];
	spy_text_tensor(t, dtype, d->stored, d->v, st && st->stored == d->stored ? st->v : NULL, NULL);
}

static void
conv_text(struct spy_text *t, const struct slot *s)
{
	const struct attr *pre = attr_of(s, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
	const struct attr *post = attr_of(s, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS);
	const struct attr *stride = attr_of(s, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
	const struct attr *dil = attr_of(s, CUDNN_ATTR_CONVOLUTION_DILATIONS);
	int64_t mode = -1, comp = -1;

	if (!s || !pre || !stride || !dil || stride->stored != pre->stored || dil->stored != pre->stored ||
	    (post && post->stored != pre->stored) || !int_attr(s, CUDNN_ATTR_CONVOLUTION_CONV_MODE, &mode) ||
	    !int_attr(s, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, &comp)) {
		spy_text_add(t, "conv=?");
		return;
	}
	spy_text_conv(t, pre->stored, pre->v, post ? post->v : NULL, stride->v, dil->v, mode, comp);
}

static const char *
type_name(int type)
{
	return spy_enum_name(_SPY_ENUM_cudnnBackendDescriptorType_t, type, 0);
}

/* One operation besides the convolution: "pointwise(relu_fwd)", "matmul". */
static void
op_text(struct spy_text *t, const struct slot *op)
{
	const struct slot *pw;
	int64_t mode;

	text_lower(t, type_name(op->type), "CUDNN_BACKEND_OPERATION_", "_descriptor");
	pw = target(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, 0);
	if (op->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && pw &&
	    int_attr(pw, CUDNN_ATTR_POINTWISE_MODE, &mode)) {
		spy_text_add(t, "(");
		text_lower(t, spy_enum_name(_SPY_ENUM_cudnnPointwiseMode_t, mode, 0), "CUDNN_POINTWISE_", "");
		spy_text_add(t, ")");
	} else if (op->type == CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR ||
		   op->type == CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR) {
		/* A layer norm and an RMS norm are one operation type: the mode and the phase tell them apart. */
		int fwd = op->type == CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR;
		int64_t phase;

		spy_text_add(t, "(");
		if (int_attr(op, fwd ? CUDNN_ATTR_OPERATION_NORM_FWD_MODE : CUDNN_ATTR_OPERATION_NORM_BWD_MODE, &mode))
			text_lower(t, spy_enum_name(_SPY_ENUM_cudnnBackendNormMode_t, mode, 0), "CUDNN_", "");
		else
			spy_text_add(t, "?");
		if (fwd) {
			spy_text_add(t, ",");
			if (int_attr(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, &phase))
				text_lower(t, spy_enum_name(_SPY_ENUM_cudnnBackendNormFwdPhase_t, phase, 0),
					   "CUDNN_NORM_FWD_", "");
			else
				spy_text_add(t, "?");
		}
		spy_text_add(t, ")");
	}
}

/*
 * The prefix an operation's attributes share: its type's name, or with
 * ABBREV that name as cuDNN abbreviates it for some types
 * ("CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR" has
 * "CUDNN_ATTR_OPERATION_NORM_FWD_XDESC"). 0 when none is known.
 */
static int
attr_prefix(const char *type, int abbrev, char *out, size_t size)
{
	static const char *const words[][2] = { { "FORWARD", "FWD" }, { "BACKWARD", "BWD" } };
	size_t n = strlen(type), len;
	char *w;

	if (strncmp(type, "CUDNN_BACKEND_OPERATION_", 24) != 0 || n <= 24 + 11 ||
	    strcmp(type + n - 11, "_DESCRIPTOR") != 0 || n + 8 >= size)
		return 0;
	snprintf(out, size, "CUDNN_ATTR_OPERATION_%.*s_", (int)(n - 24 - 11), type + 24);
	for (size_t i = 0; abbrev && i < sizeof(words) / sizeof(words[0]); i++) {
		w = strstr(out, words[i][0]);
		if (!w)
			continue;
		len = strlen(words[i][0]);
		memcpy(w, words[i][1], strlen(words[i][1]));
		memmove(w + strlen(words[i][1]), w + len, strlen(w + len) + 1);
	}
	return 1;
}

/*
 * An operation's attribute without what its name repeats: "adesc" for
 * CUDNN_ATTR_OPERATION_MATMUL_ADESC of a matmul, "xdesc" for a pointwise
 * operation's XDESC; the rest in lower case where the names differ.
 */
static void
attr_short(struct spy_text *t, int optype, int name)
{
	const char *a = spy_enum_name(_SPY_ENUM_cudnnBackendAttributeName_t, name, 0), *o = type_name(optype);
	char prefix[96];

	/* "CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR" -> "CUDNN_ATTR_OPERATION_MATMUL_" */
	for (int abbrev = 0; abbrev < 2; abbrev++) {
		if (a && o && attr_prefix(o, abbrev, prefix, sizeof(prefix)) &&
		    strncmp(a, prefix, strlen(prefix)) == 0 && a[strlen(prefix)]) {
			text_lower(t, a, prefix, "");
			return;
		}
	}
	text_lower(t, a, "CUDNN_ATTR_OPERATION_", "");
}

/* An operation that is not a convolution, with its tensors: "matmul adesc=half:1x64x32:NCW ...". */
static void
op_text_tensors(struct spy_text *t, const struct slot *op)
{
	op_text(t, op);
	for (int i = 0; i < op->nattrs; i++) {
		const struct attr *a = &op->attrs[i];
		const struct slot *ts = target(op, a->name, 0);
		int64_t ch;

		if (!ts || ts->type != CUDNN_BACKEND_TENSOR_DESCRIPTOR)
			continue;
		spy_text_add(t, " ");
		attr_short(t, op->type, a->name);
		spy_text_add(t, "=");
		tensor_text(t, ts, &ch);
	}
}

/* The convolution operation `op` as a signature; its enum spy_conv_op, or -1 when it is none. */
static int
conv_signature(struct spy_text *t, const struct slot *op)
{
	int xa, wa, ya, ca, kind = conv_roles(op->type, &xa, &wa, &ya, &ca);
	int64_t cx = -1, cw = -1, cy;

	if (kind < 0)
		return -1;
	spy_text_add(t, spy_op_name(kind));
	spy_text_add(t, " x=");
	tensor_text(t, target(op, xa, 0), &cx);
	spy_text_add(t, " w=");
	tensor_text(t, target(op, wa, 0), &cw);
	spy_text_add(t, " y=");
	tensor_text(t, target(op, ya, 0), &cy);
	spy_text_add(t, " ");
	conv_text(t, target(op, ca, 0));
	/* The graph API has no group count: the channels say it, as the legacy filter's do. */
	spy_text_add(t, " groups=");
	spy_text_i64(t, cx > 0 && cw > 0 && cx % cw == 0 ? cx / cw : 1);
	return kind;
}

/* The tensors whose numbers an operation's facts keep, by role; 0 where a role is unused. */
static const int *
fact_roles(int type)
{
	static const int matmul[4] = { CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_ATTR_OPERATION_MATMUL_BDESC,
				       CUDNN_ATTR_OPERATION_MATMUL_CDESC, 0 };
	static const int fwd[4] = { CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
				    CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC };
	static const int bwd[4] = { CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
				    CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC };

	switch (type) {
	case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
		return matmul;
	case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR:
		return fwd;
	case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR:
		return bwd;
	}
	return NULL;
}

/* A matmul or SDPA operation's tensors as numbers: captured at its finalize, or read from the live descriptors. */
static int
op_facts_of(const struct slot *op, struct op_facts *out)
{
	const int *roles = op ? fact_roles(op->type) : NULL;

	if (!roles)
		return 0;
	if (op->mm) {
		*out = *op->mm;
		return 1;
	}
	memset(out, 0, sizeof(*out));
	for (int r = 0; r < 4 && roles[r]; r++) {
		const struct slot *ts = target(op, roles[r], 0);
		const struct attr *d = attr_of(ts, CUDNN_ATTR_TENSOR_DIMENSIONS), *st = attr_of(ts, CUDNN_ATTR_TENSOR_STRIDES);
		int64_t v;

		if (!ts || !d || !st || d->stored != st->stored || d->stored > MM_DIMS ||
		    !int_attr(ts, CUDNN_ATTR_TENSOR_DATA_TYPE, &out->t[r].dtype))
			continue;
		out->t[r].known = 1;
		out->t[r].nd = d->stored;
		memcpy(out->t[r].dims, d->v, (size_t)d->stored * sizeof(int64_t));
		memcpy(out->t[r].strides, st->v, (size_t)st->stored * sizeof(int64_t));
		out->t[r].virt = int_attr(ts, CUDNN_ATTR_TENSOR_IS_VIRTUAL, &v) && v;
	}
	return 1;
}

/*
 * An attention tensor as "half:2x8x128x64:bshd": dims b, h, s, d (K as K,
 * not as the K^T view the first matmul takes: `transposed`), and its memory
 * layout named when it is packed in one of the two orders frameworks use.
 */
static void
facts_tensor(struct spy_text *t, const char *name, const struct op_facts *m, int role, int transposed)
{
	int64_t dims[MM_DIMS], strides[MM_DIMS];
	int nd = m->t[role].nd;

	spy_text_add(t, " ");
	spy_text_add(t, name);
	spy_text_add(t, "=");
	if (!m->t[role].known) {
		spy_text_add(t, "?");
		return;
	}
	memcpy(dims, m->t[role].dims, sizeof(dims));
	memcpy(strides, m->t[role].strides, sizeof(strides));
	if (transposed && nd >= 2) {
		int64_t d = dims[nd - 1], st = strides[nd - 1];

		dims[nd - 1] = dims[nd - 2];
		strides[nd - 1] = strides[nd - 2];
		dims[nd - 2] = d;
		strides[nd - 2] = st;
	}
	if (nd == 4 && strides[3] == 1 && strides[2] == dims[3] && strides[1] == dims[2] * dims[3] &&
	    strides[0] == dims[1] * dims[2] * dims[3])
		spy_text_tensor(t, m->t[role].dtype, nd, dims, NULL, "bhsd");
	else if (nd == 4 && strides[3] == 1 && strides[1] == dims[3] && strides[2] == dims[1] * dims[3] &&
		 strides[0] == dims[1] * dims[2] * dims[3])
		spy_text_tensor(t, m->t[role].dtype, nd, dims, NULL, "bshd");
	else
		spy_text_tensor(t, m->t[role].dtype, nd, dims, strides, NULL);
}

static void
text_dim(struct spy_text *t, const char *name, int64_t v)
{
	spy_text_add(t, " ");
	spy_text_add(t, name);
	spy_text_add(t, "=");
	spy_text_i64(t, v);
}

/* b, h (h_kv), s_q, s_kv, d (d_v) from Q [b,h,s_q,d], K [b,h_kv,s_kv,d] and V [b,h_kv,s_kv,d_v], when all are 4-D. */
static void
attention_dims(struct spy_text *t, const struct op_facts *q, int qr, const struct op_facts *k, int kr, int k_transposed,
	       const struct op_facts *v, int vr)
{
	const int64_t *qd = q->t[qr].dims, *kd = k->t[kr].dims;

	if (!q->t[qr].known || !k->t[kr].known || q->t[qr].nd != 4 || k->t[kr].nd != 4)
		return;
	text_dim(t, "b", qd[0]);
	text_dim(t, "h", qd[1]);
	if (kd[1] != qd[1])
		text_dim(t, "h_kv", kd[1]);
	text_dim(t, "s_q", qd[2]);
	text_dim(t, "s_kv", k_transposed ? kd[3] : kd[2]);
	text_dim(t, "d", qd[3]);
	if (v && v->t[vr].known && v->t[vr].nd == 4 && v->t[vr].dims[3] != qd[3])
		text_dim(t, "d_v", v->t[vr].dims[3]);
}

/*
 * cuDNN's own attention operation (CUDNN_BACKEND_OPERATION_SDPA_FWD/BWD,
 * which newer cudnn-frontend builds instead of the composite graph): its Q,
 * K, V and O, and the words for what else it was given: "stats" (the
 * softmax statistics, training), "padding-mask" (sequence lengths),
 * "block-mask", "paged" (K and V page tables).
 */
static int
sdpa_signature(const struct slot *g, const struct attr *ops, const struct slot *op, struct spy_text *t)
{
	struct op_facts f;
	int fwd = op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;

	if (!op_facts_of(op, &f))
		return 0;
	spy_text_add(t, fwd ? "attention-fwd" : "attention-bwd");
	attention_dims(t, &f, 0, &f, 1, 0, &f, 2);
	facts_tensor(t, "q", &f, 0, 0);
	facts_tensor(t, "k", &f, 1, 0);
	facts_tensor(t, "v", &f, 2, 0);
	facts_tensor(t, "o", &f, 3, 0);
	if (attr_of(op, fwd ? CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC : CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC))
		spy_text_add(t, " stats");
	if (attr_of(op, fwd ? CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC : CUDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_QDESC) ||
	    attr_of(op, fwd ? CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC : CUDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KVDESC))
		spy_text_add(t, " padding-mask");
	if (fwd && attr_of(op, CUDNN_ATTR_OPERATION_SDPA_FWD_BLOCK_MASK_DESC))
		spy_text_add(t, " block-mask");
	if (fwd && (attr_of(op, CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_KDESC) ||
		    attr_of(op, CUDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_VDESC)))
		spy_text_add(t, " paged");
	/* Anything fused with it, as a convolution graph lists its other operations. */
	for (int i = 0; i < ops_kept(g, ops); i++) {
		const struct slot *o = target(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);

		if (o == op)
			continue;
		spy_text_add(t, " +");
		if (!o)
			spy_text_add(t, "?");
		else if (o->short_sig)
			spy_text_add(t, o->short_sig);
		else
			op_text(t, o);
	}
	if (ops->count > ops_kept(g, ops))
		spy_text_add(t, " +...");
	return 1;
}

/*
 * A fused attention graph, as cudnn-frontend builds scaled dot-product
 * attention from operations (PyTorch's scaled_dot_product_attention, JAX's
 * and TensorFlow's fused attention): two matmuls (Q.K^T, then P.V) around a
 * softmax (a max and a sum reduction, an exp), forward; three or more
 * matmuls around one, backward. Named by its shapes and data types from
 * the matmul that multiplies the inputs Q and K^T (both non-virtual), with
 * "causal" when a generated index is compared row against column
 * (CMP_GE/CMP_GT/CMP_LE), "stats" when the forward pass also writes the
 * softmax statistics for training (a LOG), "padding-mask" when indices are compared and
 * combined (LOGICAL_AND: the sequence lengths), "dropout" when random
 * numbers are drawn (an RNG operation). 0 when the graph is not one.
 */
static int
attention_signature(const struct slot *g, const struct attr *ops, struct spy_text *t)
{
	struct op_facts mm[8], qk, pv;
	int nmm = 0, exp = 0, reductions = 0, gen = 0, causal = 0, pad = 0, rng = 0, log = 0, iqk = -1, ipv = -1;

	for (int i = 0; i < ops_kept(g, ops); i++) {
		const struct slot *op = target(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);
		char b[64];
		struct spy_text n;
		const char *name;

		if (!op)
			continue;
		if (op->type == CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR ||
		    op->type == CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR)
			return sdpa_signature(g, ops, op, t);
		if (op->type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) {
			if (nmm < 8 && op_facts_of(op, &mm[nmm]))
				nmm++;
			continue;
		}
		if (op->type == CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)
			reductions++;
		if (op->type == CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR)
			rng++;
		if (op->type != CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
			continue;
		spy_text_init(&n, b, sizeof(b));
		if (op->short_sig)
			spy_text_add(&n, op->short_sig);
		else
			op_text(&n, op);
		name = b;
		exp += strcmp(name, "pointwise(exp)") == 0;
		log += strcmp(name, "pointwise(log)") == 0;
		gen += strcmp(name, "pointwise(gen_index)") == 0;
		causal += strcmp(name, "pointwise(cmp_ge)") == 0 || strcmp(name, "pointwise(cmp_gt)") == 0 ||
			  strcmp(name, "pointwise(cmp_le)") == 0;
		pad += strcmp(name, "pointwise(logical_and)") == 0;
	}
	if (nmm < 2 || !exp || !reductions)
		return 0;
	for (int i = 0; i < nmm && iqk < 0; i++)
		if (mm[i].t[0].known && mm[i].t[1].known && !mm[i].t[0].virt && !mm[i].t[1].virt)
			iqk = i;
	if (iqk < 0)
		return 0;
	qk = mm[iqk];
	if (nmm == 2) {
		ipv = 1 - iqk;
		pv = mm[ipv];
	}
	spy_text_add(t, nmm == 2 ? "attention-fwd" : "attention-bwd");
	attention_dims(t, &qk, 0, &qk, 1, 1, ipv >= 0 ? &pv : NULL, 1);
	facts_tensor(t, "q", &qk, 0, 0);
	facts_tensor(t, "k", &qk, 1, 1);
	if (ipv >= 0) {
		facts_tensor(t, "v", &pv, 1, 0);
		facts_tensor(t, "o", &pv, 2, 0);
	}
	if (ipv >= 0 && log)
		spy_text_add(t, " stats");
	if (gen && causal)
		spy_text_add(t, " causal");
	if (gen && pad)
		spy_text_add(t, " padding-mask");
	if (rng)
		spy_text_add(t, " dropout");
	if (ops->count > ops_kept(g, ops))
		spy_text_add(t, " +...");
	return 1;
}

/*
 * An operation graph as a signature: its convolution like a legacy one
 * (without a math type), then "+pointwise(add)" for each other operation;
 * a graph without a convolution lists its operations with their tensors.
 */
static int
graph_signature(const struct slot *g, char *out)
{
	struct spy_text t;
	const struct attr *ops = attr_of(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
	int kind = -1, conv = -1;

	if (g && g->sig) {
		snprintf(out, SPY_SIG_LEN, "%s", g->sig);
		return g->sig_kind;
	}
	spy_text_init(&t, out, SPY_SIG_LEN);
	if (!g || !ops)
		return SPY_OP_GRAPH;
	if (attention_signature(g, ops, &t)) {
		spy_text_mark_cut(&t);
		return SPY_OP_GRAPH;
	}
	for (int i = 0; i < ops_kept(g, ops) && kind < 0; i++) {
		const struct slot *op = target(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);

		if (op && op->sig && op->sig_kind >= 0) {
			spy_text_add(&t, op->sig);
			kind = op->sig_kind;
			conv = i;
		} else if (op && !op->sig && (kind = conv_signature(&t, op)) >= 0) {
			conv = i;
		}
	}
	if (kind < 0)
		spy_text_add(&t, "graph");
	for (int i = 0; i < ops_kept(g, ops); i++) {
		const struct slot *op = target(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);

		if (i == conv)
			continue;
		spy_text_add(&t, kind >= 0 ? " +" : i ? " ; " : " ");
		if (!op)
			spy_text_add(&t, "?");
		else if (op->sig)
			spy_text_add(&t, kind >= 0 ? op->short_sig : op->sig);
		else if (kind >= 0)
			op_text(&t, op);
		else
			op_text_tensors(&t, op);
	}
	if (ops->count > ops_kept(g, ops))
		spy_text_add(&t, " +...");
	spy_text_mark_cut(&t);
	return kind >= 0 ? kind : SPY_OP_GRAPH;
}

static int
is_operation(int type)
{
	const char *n = type >= 0 ? spy_enum_name(_SPY_ENUM_cudnnBackendDescriptorType_t, type, 0) : NULL;

	return n && strncmp(n, "CUDNN_BACKEND_OPERATION_", 24) == 0 && type != CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR;
}

/* At finalize: what the descriptor stands for, in words, kept for when its parts are gone (lock held). */
static void
capture(struct slot *s)
{
	char text[SPY_SIG_LEN], brief[SPY_SIG_LEN];
	struct spy_text t;
	const struct slot *g;

	free(s->sig);
	free(s->short_sig);
	s->sig = s->short_sig = NULL;
	if (is_operation(s->type)) {
		spy_text_init(&t, text, sizeof(text));
		s->sig_kind = conv_signature(&t, s);
		if (s->sig_kind < 0) {
			spy_text_init(&t, text, sizeof(text));
			op_text_tensors(&t, s);
		}
		spy_text_init(&t, brief, sizeof(brief));
		op_text(&t, s);
		s->short_sig = strdup(brief);
		if (fact_roles(s->type)) {
			struct op_facts m;

			free(s->mm);
			s->mm = NULL;
			if (op_facts_of(s, &m) && (s->mm = malloc(sizeof(*s->mm))))
				*s->mm = m;
		}
	} else if (s->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
		s->sig_kind = graph_signature(s, text);
	} else if (s->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR &&
		   (g = target(s, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0))) {
		s->sig_kind = graph_signature(g, text);
	} else {
		return;
	}
	s->sig = strdup(text);
	if (!s->sig || (is_operation(s->type) && !s->short_sig)) {
		free(s->sig);
		free(s->short_sig);
		s->sig = s->short_sig = NULL;
	}
}

/* ---- Plans ---- */

/* What an engine's numerical notes, as the program read them, say of determinism: 1, 0, or -1 unread. */
static int
nondet_of(const struct slot *engine)
{
	const struct attr *a = attr_of(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE);

	if (!a || a->type != CUDNN_TYPE_NUMERICAL_NOTE)
		return -1;
	for (int i = 0; i < a->stored; i++)
		if (a->v[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)
			return 1;
	return a->stored == a->count ? 0 : -1;
}

/* What a plan runs, as far as the program's own calls told (lock held). */
static void
resolve_plan(const struct slot *plan, struct spy_graph_run *r)
{
	const struct slot *cfg = target(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 0), *engine = NULL;
	const struct slot *graph = NULL;
	const struct attr *knobs;
	int64_t v;

	memset(r, 0, sizeof(*r));
	r->engine = -1;
	r->nknobs = -1;
	r->rank = -1;
	r->heur_mode = -1;
	r->workspace = -1;
	r->nondet = -1;
	r->op = SPY_OP_GRAPH;
	r->plan = plan->num;
	if (int_attr(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, &v))
		r->workspace = v;
	if (cfg) {
		r->config = cfg->num;
		engine = target(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, 0);
		if (cfg->query >= 0 && cfg->query < nqueries) {
			r->heur = queries[cfg->query].heur;
			r->rank = cfg->rank;
			r->heur_mode = (int)queries[cfg->query].mode;
		}
		knobs = attr_of(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES);
		if (knobs) {
			r->nknobs = knobs->count <= SPY_KNOBS_MAX && knobs->stored == knobs->count ? 0 : -1;
			for (int k = 0; k < knobs->stored && r->nknobs >= 0 && r->nknobs < SPY_KNOBS_MAX; k++) {
				const struct slot *kn = target(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, k);
				int64_t type, value;

				/* A knob whose descriptor is gone, or that was never read: not known, not none. */
				if (!kn || !int_attr(kn, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, &type) ||
				    !int_attr(kn, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, &value)) {
					r->nknobs = -1;
					break;
				}
				r->knob_type[r->nknobs] = type;
				r->knob_value[r->nknobs++] = value;
			}
			if (r->nknobs < 0 && cfg->query >= 0 && cfg->query < nqueries && cfg->rank >= 0 &&
			    queries[cfg->query].knobs) {
				/* cudnn-frontend destroys the knob descriptors once read: what was read then. */
				const struct qknobs *qk = &queries[cfg->query].knobs[cfg->rank];

				if (qk->n >= 0 && qk->known == (1u << qk->n) - 1) {
					r->nknobs = qk->n;
					memcpy(r->knob_type, qk->type, sizeof(r->knob_type));
					memcpy(r->knob_value, qk->value, sizeof(r->knob_value));
				}
			}
		} else if (cfg->query < 0 && engine) {
			/* A config the program built itself: no knob chosen means none. */
			r->nknobs = 0;
		}
	}
	if (engine) {
		if (int_attr(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, &v))
			r->engine = v;
		r->nondet = nondet_of(engine);
		graph = target(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, 0);
	}
	/* A ranked config whose engine descriptor is gone: its query learned the index when it was read. */
	if (r->engine < 0 && cfg && cfg->query >= 0 && cfg->query < nqueries && cfg->rank >= 0 &&
	    cfg->rank < queries[cfg->query].ncfg && queries[cfg->query].engine[cfg->rank] >= 0)
		r->engine = queries[cfg->query].engine[cfg->rank];
	if (plan->self) {
		if (r->engine < 0)
			r->engine = plan->self->engine;
		if (r->nondet < 0)
			r->nondet = plan->self->nondet;
		if (r->nknobs < 0 && plan->self->nknobs >= 0) {
			r->nknobs = plan->self->nknobs;
			memcpy(r->knob_type, plan->self->knob_type, sizeof(r->knob_type));
			memcpy(r->knob_value, plan->self->knob_value, sizeof(r->knob_value));
		}
	}
	if (graph) {
		r->graph = graph->num;
		r->op = graph_signature(graph, r->sig);
	} else if (engine && engine->sig) {
		/* The graph is gone since the engine was finalized: what it was then. */
		snprintf(r->sig, sizeof(r->sig), "%s", engine->sig);
		r->op = engine->sig_kind;
	} else if (cfg && cfg->query >= 0 && cfg->query < nqueries) {
		/* A ranked config: its query knew the graph. */
		const struct query *q = &queries[cfg->query];

		r->graph = q->graph;
		r->op = q->op;
		snprintf(r->sig, sizeof(r->sig), "%s", q->sig);
	}
}

/* "engine", "knobs", "config", "graph", "signature" of a plan, after a comma. */
static void
run_json(struct spy_line *l, const struct spy_graph_run *r)
{
	spy_line_lit(l, "\"config\":");
	spy_backend_id_json(l, r->config);
	spy_line_lit(l, ",\"engine\":");
	if (r->engine >= 0)
		spy_line_i64(l, r->engine);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"knobs\":");
	spy_backend_knobs_json(l, r->knob_type, r->knob_value, r->nknobs);
	spy_line_lit(l, ",\"graph\":");
	spy_backend_id_json(l, r->graph);
	spy_line_lit(l, ",\"signature\":");
	spy_line_str(l, r->sig[0] ? r->sig : NULL);
	spy_line_lit(l, ",\"heuristics\":");
	if (r->heur) {
		spy_line_lit(l, "{\"id\":");
		spy_backend_id_json(l, r->heur);
		spy_line_lit(l, ",\"rank\":");
		spy_line_i64(l, r->rank);
		spy_line_char(l, '}');
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, ",\"workspace\":");
	if (r->workspace >= 0)
		spy_line_i64(l, r->workspace);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"nondeterministic\":");
	spy_line_raw(l, r->nondet < 0 ? "null" : r->nondet ? "true" : "false");
}

/* ---- Values as JSON ---- */

static void desc_json(struct spy_line *l, const struct slot *s, int depth, int attrs);

/* An element that names an object: its text; within a descriptor's attribute, `depth` levels of it whole. */
struct object_show {
	const struct slot *s;
	int name, depth;
};

static void
object_json(struct spy_line *l, const struct spy_battr_type *t, int64_t v, int index, void *ctx)
{
	const struct object_show *o = ctx;
	const struct slot *target_slot =
		o && o->depth > 0 && t->kind == SPY_BV_DESC ? target(o->s, o->name, index) : NULL;

	if (target_slot)
		desc_json(l, target_slot, o->depth - 1, 1);
	else
		spy_obj_describe(l, (const void *)(uintptr_t)v, t->kind == SPY_BV_HANDLE ? "handle" : "backend", 0, 0);
}

/* One attribute's values: a single element as itself, several as a list; {"count", "values"} when cut. */
static void
attr_json(struct spy_line *l, const struct slot *s, const struct attr *a, int depth)
{
	struct object_show o = { s, a->name, depth };
	struct spy_battr_show how = { object_json, &o };

	spy_battr_kept_json(l, &types[a->type], a->count, a->stored, a->v, &how);
}

/* `"type":...,"finalized":...,"attrs":{...}` of a descriptor, after a comma or brace. */
static void
fields_json(struct spy_line *l, const struct slot *s, int depth, int attrs)
{
	spy_line_lit(l, "\"type\":");
	if (type_name(s->type))
		spy_line_name(l, type_name(s->type));
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"finalized\":");
	spy_line_raw(l, s->finalized ? "true" : "false");
	if (!attrs)
		return;
	spy_line_lit(l, ",\"attrs\":{");
	for (int i = 0; i < s->nattrs; i++) {
		const char *n = spy_enum_name(_SPY_ENUM_cudnnBackendAttributeName_t, s->attrs[i].name, 0);
		char num[24];

		if (i)
			spy_line_char(l, ',');
		if (!n) {
			snprintf(num, sizeof(num), "%d", s->attrs[i].name);
			n = num;
		}
		spy_line_key(l, n);
		attr_json(l, s, &s->attrs[i], depth);
	}
	spy_line_char(l, '}');
	if (s->dropped) {
		spy_line_lit(l, ",\"attrs_dropped\":");
		spy_line_u64(l, s->dropped);
	}
}

static void
desc_json(struct spy_line *l, const struct slot *s, int depth, int attrs)
{
	spy_line_lit(l, "{\"id\":");
	spy_backend_id_json(l, s->num);
	spy_line_char(l, ',');
	fields_json(l, s, depth, attrs);
	spy_line_char(l, '}');
}

void
spy_backend_describe(struct spy_line *l, const void *ptr, unsigned mode)
{
	const struct slot *s;
	struct spy_graph_run r;
	int text = (mode & SPY_ARGS_TEXT) != 0;

	pthread_mutex_lock(&lock);
	s = find(ptr);
	if (!s)
		goto out;
	if (text) {
		struct spy_text t;
		char b[SPY_SIG_LEN];
		int64_t ch;

		spy_text_init(&t, b, sizeof(b));
		text_lower(&t, type_name(s->type), "CUDNN_BACKEND_", "_descriptor");
		if (s->type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
			spy_text_add(&t, " ");
			tensor_text(&t, s, &ch);
		} else if (s->type == CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) {
			spy_text_add(&t, " ");
			conv_text(&t, s);
		} else if (s->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
			resolve_plan(s, &r);
			spy_text_add(&t, " engine ");
			if (r.engine >= 0)
				spy_text_i64(&t, r.engine);
			else
				spy_text_add(&t, "?");
		}
		spy_line_char(l, '[');
		spy_line_raw(l, b);
		spy_line_char(l, ']');
		goto out;
	}
	spy_line_char(l, ',');
	/* Every attribute the program set, in traced calls as in failures (an attribute left out was never set). */
	fields_json(l, s, 0, 1);
	/* What a plan runs; in a traced call only once it is finalized (before, it is being built). */
	if (s->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && (s->finalized || !(mode & SPY_ARGS_BRIEF))) {
		resolve_plan(s, &r);
		spy_line_char(l, ',');
		run_json(l, &r);
	}
out:
	pthread_mutex_unlock(&lock);
}

/* ---- Call records' arrays ---- */

int
spy_backend_arg_json(struct spy_line *l, unsigned fn, const union spy_arg *args, int i, unsigned mode)
{
	int get = fn == _SPY_FN_cudnnBackendGetAttribute;
	int64_t type = args[2].i, count, per, size, v[2 * SPY_BATTR_VALUES];
	const char *at = args[get ? 5 : 4].p, *from = at;
	struct spy_battr_show how = { object_json, NULL };
	/* A failed Set's elements, copied so that a bad pointer cannot fault: 16 of the largest kind, or text. */
	char copy[STRING_MAX + 1 > 16 * 16 ? STRING_MAX + 1 : 16 * 16];

	if (i != (get ? 5 : 4) || !at || (mode & (SPY_ARGS_STORED | SPY_ARGS_TEXT)) || type < 0 || type >= NTYPES)
		return 0;
	if (!(mode & SPY_ARGS_AFTER_SUCCESS)) {
		size_t n;

		if (get || args[3].i <= 0)
			return 0;
		n = types[type].kind == SPY_BV_CHAR ? (size_t)(args[3].i < STRING_MAX ? args[3].i : STRING_MAX)
					       : (size_t)types[type].size * (size_t)(args[3].i < 16 ? args[3].i : 16);
		if (n > sizeof(copy) || spy_safe_copy(copy, at, n) != 0)
			return 0;
		at = copy;
	}
	if (get) {
		if (!args[4].p)
			return 0;
		count = *(const int64_t *)args[4].p;
		if (count > args[3].i)
			count = args[3].i;
	} else {
		count = args[3].i;
	}
	if (count < 0)
		count = 0;
	per = types[type].kind == SPY_BV_FRACTION ? 2 : 1;
	size = types[type].size / per;
	if (types[type].kind != SPY_BV_CHAR)
		for (int64_t k = 0; k < count * per && k < SPY_BATTR_VALUES * per; k++)
			v[k] = load(at + k * size, (unsigned)size, types[type].kind);
	spy_battr_array_json(l, &types[type], (uintptr_t)from, count, v, at,
			     (size_t)(count < STRING_MAX ? count : STRING_MAX), &how);
	return 1;
}

/* ---- Records ---- */

static struct spy_line *
record_begin(struct spy_thread **th, const char *event, int tid, uint64_t t_ns)
{
	struct spy_buf *b;
	struct spy_line *l;

	if (!spy_sink_enabled())
		return NULL;
	*th = spy_thread_get();
	b = *th ? spy_thread_buf(*th) : NULL;
	if (!b)
		return NULL;
	l = &b->line;
	spy_line_reset(l);
	spy_line_lit(l, "{\"event\":\"");
	spy_line_raw(l, event);
	spy_line_lit(l, "\",\"tid\":");
	spy_line_i64(l, tid);
	spy_line_lit(l, ",\"t_ns\":");
	spy_line_u64(l, t_ns);
	return l;
}

/* The operation graph as finalized: its operations, each with its tensors and convolution. */
static void
graph_record(const struct spy_call *c, const struct slot *g)
{
	struct spy_thread *th;
	struct spy_line *l = record_begin(&th, "graph", spy_tid(), c->t0 ? c->t0 : spy_now_ns());
	const struct attr *ops = attr_of(g, CUDNN_ATTR_OPERATIONGRAPH_OPS), *h;
	char sig[SPY_SIG_LEN];
	int op;

	if (!l)
		return;
	op = graph_signature(g, sig);
	spy_line_lit(l, ",\"id\":");
	spy_backend_id_json(l, g->num);
	spy_line_lit(l, ",\"op\":");
	spy_line_name(l, spy_op_name(op));
	spy_line_lit(l, ",\"signature\":");
	spy_line_str(l, sig);
	/* The handle it was given, or null: a repro makes one only where the program had one. */
	spy_line_lit(l, ",\"handle\":");
	if ((h = attr_of(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE)) && h->count == 1)
		attr_json(l, g, h, 0);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"ops\":[");
	for (int i = 0; ops && i < ops_kept(g, ops); i++) {
		const struct slot *o = target(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, i);

		if (i)
			spy_line_char(l, ',');
		if (o)
			desc_json(l, o, DEPTH - 1, 1);
		else
			spy_line_lit(l, "null");
	}
	spy_line_lit(l, "]}");
	if (l->overflow) {
		/* A graph too big for one line: say what it is without its operations. */
		l = record_begin(&th, "graph", spy_tid(), c->t0 ? c->t0 : spy_now_ns());
		spy_line_lit(l, ",\"id\":");
		spy_backend_id_json(l, g->num);
		spy_line_lit(l, ",\"op\":");
		spy_line_name(l, spy_op_name(op));
		spy_line_lit(l, ",\"signature\":");
		spy_line_str(l, sig);
		spy_line_lit(l, ",\"ops\":null}");
	}
	spy_sink_commit(th, l, 0);
}

/* A finalized plan's JSON representation, asked of the real library (json_lock held); its length or -1. */
static long
plan_json(unsigned copy, const void *plan, int64_t *size)
{
	typedef cudnnStatus_t (*get_fn)(const cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
					cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
	get_fn get = (get_fn)spy_real_fn(copy, _SPY_FN_cudnnBackendGetAttribute);
	int64_t n = 0;
	cudnnStatus_t st;

	*size = -1;
	if (!get)
		return -1;
	/* cuDNN's own calls under this one are internal, like those under the program's calls. */
	spy_tls.depth++;
	st = get((cudnnBackendDescriptor_t)plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, 0,
		 &n, NULL);
	if (st == 0 && n > 0) {
		*size = n;
		st = get((cudnnBackendDescriptor_t)plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
			 n < JSON_MAX ? n : JSON_MAX, &n, json);
	}
	spy_tls.depth--;
	if (st != 0 || *size < 0)
		return -1;
	json[*size < JSON_MAX ? *size : JSON_MAX] = 0;
	return (long)strlen(json);
}

static void
plan_record(const struct spy_call *c, const void *ptr, const struct spy_graph_run *r, int with_json)
{
	struct spy_thread *th;
	struct spy_line *l = record_begin(&th, "plan", spy_tid(), c->t0 ? c->t0 : spy_now_ns());
	int64_t size = -1;
	long len = -1;

	if (!l)
		return;
	spy_line_lit(l, ",\"id\":");
	spy_backend_id_json(l, r->plan);
	spy_line_char(l, ',');
	run_json(l, r);
	spy_line_lit(l, ",\"json\":");
	if (with_json) {
		pthread_mutex_lock(&json_lock);
		len = plan_json(c->copy, ptr, &size);
		spy_line_str(l, len >= 0 ? json : NULL);
		pthread_mutex_unlock(&json_lock);
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, ",\"json_size\":");
	if (size >= 0)
		spy_line_i64(l, size);
	else
		spy_line_lit(l, "null");
	spy_line_char(l, '}');
	spy_sink_commit(th, l, 0);
}

void
spy_backend_records(void)
{
	pthread_mutex_lock(&lock);
	for (int q = queries_from; q < nqueries; q++) {
		struct spy_thread *th;
		/* Written at exit, by this thread; the tid is the one that asked. */
		struct spy_line *l = record_begin(&th, "heuristics", queries[q].tid, queries[q].t_ns);

		if (!l)
			break;
		query_fields(l, &queries[q]);
		spy_sink_commit(th, l, 0);
	}
	pthread_mutex_unlock(&lock);
}

/*
 * A query's record kept up to date in the mapped file, so that a process
 * that ends without exit leaves it: when it is made, and again as its
 * configs' engines become known (lock held).
 */
static void
query_keep(struct query *h)
{
	static struct spy_line l;

	if (!spy_sink_state_gen())
		return;
	spy_line_reset(&l);
	spy_line_lit(&l, "{\"event\":\"heuristics\",\"tid\":");
	spy_line_i64(&l, h->tid);
	spy_line_lit(&l, ",\"t_ns\":");
	spy_line_u64(&l, h->t_ns);
	query_fields(&l, h);
	spy_kept_text(&h->kept, (unsigned)(h - queries), &l);
}

/* A heuristics record's fields after its event, thread and time. */
static void
query_fields(struct spy_line *l, const struct query *h)
{
	const char *mode = spy_enum_name(_SPY_ENUM_cudnnBackendHeurMode_t, h->mode, 0);
	int n = (int)h->ncfg;

	spy_line_lit(l, ",\"id\":");
	spy_backend_id_json(l, h->heur);
	spy_line_lit(l, ",\"graph\":");
	spy_backend_id_json(l, h->graph);
	spy_line_lit(l, ",\"op\":");
	spy_line_name(l, spy_op_name(h->op));
	spy_line_lit(l, ",\"signature\":");
	spy_line_str(l, h->sig[0] ? h->sig : NULL);
	spy_line_lit(l, ",\"mode\":");
	spy_line_name(l, mode);
	spy_line_lit(l, ",\"requested\":");
	spy_line_i64(l, h->requested);
	spy_line_lit(l, ",\"returned\":");
	spy_line_i64(l, h->returned);
	spy_line_lit(l, ",\"configs\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_backend_id_json(l, h->cfg[i]);
	}
	spy_line_lit(l, "],\"engines\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, ',');
		if (h->engine[i] >= 0)
			spy_line_i64(l, h->engine[i]);
		else
			spy_line_lit(l, "null");
	}
	spy_line_lit(l, "]}");
}

/* ---- Calls ---- */

static void
heuristics_results(const struct spy_call *c, struct slot *heur, const union spy_arg *args, int64_t n)
{
	void *const *cfgs = args[5].p;
	const struct slot *g;
	struct query *q;

	if (nqueries >= QUERIES) {
		spy_log_once(&queries_said, "more than %d heuristics queries: the others are not recorded", QUERIES);
		return;
	}
	q = &queries[nqueries];
	memset(q, 0, sizeof(*q));
	q->heur = heur->num;
	q->tid = spy_tid();
	q->t_ns = c->t0 ? c->t0 : spy_now_ns();
	q->mode = -1;
	int_attr(heur, CUDNN_ATTR_ENGINEHEUR_MODE, &q->mode);
	q->requested = args[3].i;
	q->returned = n;
	g = target(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, 0);
	q->op = SPY_OP_GRAPH;
	if (g) {
		q->graph = g->num;
		q->op = graph_signature(g, q->sig);
	}
	/* Out of memory: the query is still counted, with no configs. */
	q->cfg = n > 0 ? calloc((size_t)n, sizeof(*q->cfg)) : NULL;
	q->engine = n > 0 ? calloc((size_t)n, sizeof(*q->engine)) : NULL;
	if (!q->cfg || !q->engine) {
		free(q->cfg);
		free(q->engine);
		q->cfg = NULL;
		q->engine = NULL;
		n = 0;
	}
	q->ncfg = n;
	for (int64_t i = 0; i < n; i++) {
		struct slot *cfg = insert(cfgs[i], CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);

		q->engine[i] = -1;
		if (!cfg)
			continue;
		/* Filled by cuDNN, ready to use: the program sets nothing on it. */
		__atomic_store_n(&cfg->finalized, 1, __ATOMIC_RELEASE);
		cfg->query = (short)nqueries;
		cfg->rank = (short)i;
		q->cfg[i] = cfg->num;
	}
	nqueries++;
	query_keep(q);
}

/* The knobs of a ranked config, as its query keeps them; NULL when there is no room (lock held). */
static struct qknobs *
query_knobs(int q, int rank)
{
	struct query *qq = q >= 0 && q < nqueries ? &queries[q] : NULL;

	if (!qq || rank < 0 || rank >= qq->ncfg)
		return NULL;
	if (!qq->knobs) {
		if (!(qq->knobs = calloc((size_t)qq->ncfg, sizeof(*qq->knobs))))
			return NULL;
		for (int64_t i = 0; i < qq->ncfg; i++)
			qq->knobs[i].n = -1;
	}
	return &qq->knobs[rank];
}

/* A ranked config handed its knob choices to the program: each knob descriptor learns whose, and which, it is. */
static void
knobs_handed(const struct slot *cfg, void *const *knobs, int64_t n)
{
	struct qknobs *qk = cfg->query >= 0 ? query_knobs(cfg->query, cfg->rank) : NULL;

	if (!qk)
		return;
	qk->n = n <= SPY_KNOBS_MAX ? (int)n : -1;
	qk->known = 0;
	for (int64_t i = 0; i < n && i < SPY_KNOBS_MAX; i++) {
		struct slot *t = find(knobs[i]);

		if (t) {
			t->query = cfg->query;
			t->rank = cfg->rank;
			t->knob = (short)i;
		}
	}
}

/* The program read a knob choice's type or value: once both are known, its config's query keeps them. */
static void
knob_learn(const struct slot *kn)
{
	struct qknobs *qk = kn->knob >= 0 ? query_knobs(kn->query, kn->rank) : NULL;
	int64_t type, value;

	if (qk && kn->knob < SPY_KNOBS_MAX && int_attr(kn, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, &type) &&
	    int_attr(kn, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, &value)) {
		qk->type[kn->knob] = type;
		qk->value[kn->knob] = value;
		qk->known |= 1u << kn->knob;
	}
}

static void
got(const struct spy_call *c, struct slot *s, const union spy_arg *args)
{
	int64_t name = args[1].i, type = args[2].i, n;
	const struct attr *known;

	if (args[3].i <= 0 || !args[5].p)
		return;	/* a question about the count only */
	/*
	 * Without a count to write (cudnn-frontend reads single values so,
	 * knob values and engine indices among them) cuDNN fills what was asked.
	 */
	n = args[4].p ? *(const int64_t *)args[4].p : args[3].i;
	if (n > args[3].i)
		n = args[3].i;
	if (n < 0)
		return;
	if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
		heuristics_results(c, s, args, n);
	/* Descriptors handed back were created by the program, and come back finalized. */
	if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
		for (int64_t i = 0; i < n && i < VALUES; i++) {
			struct slot *t = insert(((void *const *)args[5].p)[i], -1);

			if (t && !t->finalized) {
				__atomic_store_n(&t->finalized, 1, __ATOMIC_RELEASE);
				changed(t);
			}
		}
	known = attr_of(s, (int)name);
	/*
	 * cuDNN hands back as many values as were asked, so a read of fewer than
	 * the spy knows is a part of them: what was set stays whole.
	 */
	if (!known || known->type != type || n != args[3].i || known->count <= n)
		remember(s, name, type, n, args[5].p, 1);
	if (name == CUDNN_ATTR_ENGINECFG_ENGINE && s->query >= 0 && n > 0) {
		/* The engine of a ranked config: when its index is asked, the query learns it. */
		struct slot *e = find(((void *const *)args[5].p)[0]);

		if (e) {
			e->query = s->query;
			e->rank = s->rank;
		}
	}
	if (name == CUDNN_ATTR_ENGINE_GLOBAL_INDEX || name == CUDNN_ATTR_ENGINECFG_ENGINE)
		query_learn(s);
	if (name == CUDNN_ATTR_ENGINECFG_KNOB_CHOICES && type == CUDNN_TYPE_BACKEND_DESCRIPTOR)
		knobs_handed(s, args[5].p, n);
	if (name == CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE || name == CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
		knob_learn(s);
}

/*
 * What a finalized plan's config runs, read by the spy itself through the
 * copy's own functions (not the wrappers: not counted as the program's), as
 * cudnn-frontend reads it: the engine's global index, its numerical notes
 * and the knob choices.
 * Only calls that succeed on a finalized config; the first that does not
 * ends it. No lock held: this calls into cuDNN.
 */
static void
read_choice(unsigned copy, const void *cfg, struct self_read *out)
{
	typedef cudnnStatus_t (*create_fn)(cudnnBackendDescriptorType_t, cudnnBackendDescriptor_t *);
	typedef cudnnStatus_t (*destroy_fn)(cudnnBackendDescriptor_t);
	typedef cudnnStatus_t (*get_fn)(const cudnnBackendDescriptor_t, cudnnBackendAttributeName_t,
					cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
	create_fn create = (create_fn)spy_real_fn(copy, _SPY_FN_cudnnBackendCreateDescriptor);
	destroy_fn destroy = (destroy_fn)spy_real_fn(copy, _SPY_FN_cudnnBackendDestroyDescriptor);
	get_fn get = (get_fn)spy_real_fn(copy, _SPY_FN_cudnnBackendGetAttribute);
	cudnnBackendDescriptor_t eng = NULL, knobs[SPY_KNOBS_MAX] = { NULL };
	int64_t n = 0, index = -1;
	int saved = errno, made = 0;

	out->engine = -1;
	out->nknobs = -1;
	out->nondet = -1;
	if (!create || !destroy || !get || !cfg)
		return;
	if (create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) == 0 &&
	    get((cudnnBackendDescriptor_t)(uintptr_t)cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
		&eng) == 0 && n == 1) {
		int32_t notes[16];

		if (get(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index) == 0 && n == 1)
			out->engine = index;
		if (get(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 16, &n, notes) == 0 && n >= 0 &&
		    n <= 16) {
			out->nondet = 0;
			for (int64_t i = 0; i < n; i++)
				out->nondet |= notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
		}
	}
	for (made = 0; made < SPY_KNOBS_MAX && create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[made]) == 0; made++)
		;
	if (made == SPY_KNOBS_MAX && get((cudnnBackendDescriptor_t)(uintptr_t)cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
					  CUDNN_TYPE_BACKEND_DESCRIPTOR, SPY_KNOBS_MAX, &n, knobs) == 0 &&
	    n >= 0 && n <= SPY_KNOBS_MAX) {
		out->nknobs = 0;
		for (int64_t k = 0; k < n; k++) {
			int32_t type = 0;
			int64_t value = 0, c = 0;

			if (get(knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &c, &type) != 0 ||
			    get(knobs[k], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &c, &value) != 0) {
				out->nknobs = -1;
				break;
			}
			out->knob_type[out->nknobs] = type;
			out->knob_value[out->nknobs++] = value;
		}
	}
	for (int k = 0; k < made; k++)
		destroy(knobs[k]);
	if (eng)
		destroy(eng);
	errno = saved;
}

int
spy_backend_is_probe(unsigned fn, long status, long not_supported, const union spy_arg *args)
{
	const struct slot *s;
	int type, probe = 0;

	if (status != not_supported || !args ||
	    (fn != _SPY_FN_cudnnBackendFinalize && fn != _SPY_FN_cudnnBackendGetAttribute))
		return 0;
	pthread_mutex_lock(&lock);
	s = find(args[0].p);
	type = s ? s->type : -1;
	probe = type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR || type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR ||
		(fn == _SPY_FN_cudnnBackendFinalize && type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) ||
		(fn == _SPY_FN_cudnnBackendGetAttribute && type == CUDNN_BACKEND_ENGINE_DESCRIPTOR);
	pthread_mutex_unlock(&lock);
	return probe;
}

/* A traced Set: what format 2 needs to pack it as a change of the text the thread wrote before (recbin.c). */
static void
note_set(const struct spy_call *c, const void *ptr, uint64_t before, const struct slot *s, const struct attr *kept)
{
	if (!(spy_fn_flags[c->id] & SPY_FN_TRACE))
		return;
	last_set.ptr = kept ? ptr : NULL;
	last_set.before = before;
	last_set.after = __atomic_load_n(&s->version, __ATOMIC_ACQUIRE);
}

/*
 * A slot version as the stamp of its text now: the text also shows the
 * numbers of the objects its attributes name (which a destroy may give to
 * another object at the same address), and a finalized plan's shows what it
 * runs (which any change but a variant pack's may change: the epoch).
 */
static uint64_t
stamp_of(const struct slot *s, uint64_t version)
{
	if (__atomic_load_n(&s->refs, __ATOMIC_RELAXED))
		version ^= spy_obj_renumbered() * 0xc2b2ae3d27d4eb4full;
	if (s->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && __atomic_load_n(&s->finalized, __ATOMIC_ACQUIRE))
		version ^= (uint64_t)__atomic_load_n(&epoch, __ATOMIC_ACQUIRE) * 0x9e3779b97f4a7c15ull;
	return version;
}

int
spy_backend_version(const void *ptr, uint64_t *version)
{
	const struct slot *s = find(ptr);

	*version = 0;
	if (!s)
		return 0;
	*version = stamp_of(s, __atomic_load_n(&s->version, __ATOMIC_ACQUIRE));
	return 1;
}

int
spy_backend_last_set(const void *ptr, uint64_t *before, uint64_t *after)
{
	const struct slot *s = ptr && last_set.ptr == ptr ? find(ptr) : NULL;

	if (!s || __atomic_load_n(&s->version, __ATOMIC_ACQUIRE) != last_set.after)
		return 0;
	*before = stamp_of(s, last_set.before);
	*after = stamp_of(s, last_set.after);
	return 1;
}

void
spy_backend_call(struct spy_call *c, long status, const union spy_arg *args)
{
	struct slot *s;
	struct spy_graph_run r;
	const void *cfg_ptr = NULL;
	int plan = 0;

	if (c->id == _SPY_FN_cudnnBackendExecute) {
		unsigned e;
		int have, idx;

		pthread_mutex_lock(&lock);
		s = find(args[1].p);
		if (s && s->cache_choice >= 0 && s->cache_epoch == epoch) {
			/* The same plan again, nothing it is built from changed since: no need to resolve it. */
			idx = s->cache_choice;
			pthread_mutex_unlock(&lock);
			spy_algo_graph_count(idx, c, status);
			return;
		}
		have = s != NULL;
		e = epoch;
		if (s)
			resolve_plan(s, &r);
		pthread_mutex_unlock(&lock);
		if (!have) {
			memset(&r, 0, sizeof(r));
			r.engine = -1;
			r.nknobs = -1;
			r.rank = -1;
			r.heur_mode = -1;
			r.workspace = -1;
			r.nondet = -1;
			r.op = SPY_OP_GRAPH;
			r.plan = spy_obj_number(args[1].p);
		}
		idx = spy_algo_graph_run(&r, c, status);
		pthread_mutex_lock(&lock);
		if (have && (s = find(args[1].p)) && epoch == e) {
			s->cache_epoch = e;
			s->cache_choice = idx;
		}
		pthread_mutex_unlock(&lock);
		return;
	}
	if (status != 0)
		return;
	/*
	 * An attribute of a descriptor being built: no lock, and no new epoch. Until
	 * it is finalized the descriptor is its thread's alone, and no finalized
	 * plan can name it, so no plan's cached choice depends on it (its
	 * Finalize starts a new epoch). A graph's attributes are set by the hundred,
	 * and two threads building graphs would take turns on the lock for each.
	 * An engine's index still takes the lock: a heuristics query learns it.
	 */
	if (c->id == _SPY_FN_cudnnBackendSetAttribute && args[1].i != CUDNN_ATTR_ENGINE_GLOBAL_INDEX &&
	    args[1].i != CUDNN_ATTR_ENGINECFG_ENGINE) {
		s = find(args[0].p);
		if (!s)
			return;
		if (!__atomic_load_n(&s->finalized, __ATOMIC_ACQUIRE)) {
			uint64_t before = s->version;

			note_set(c, args[0].p, before, s, remember(s, args[1].i, args[2].i, args[3].i, args[4].p, 0));
			return;
		}
	}
	pthread_mutex_lock(&lock);
	/*
	 * Variant packs say what data a plan runs on, not what it runs: they
	 * change nothing that a plan resolves to, and are kept only when their
	 * creation is traced (a framework makes one per execution), for the
	 * records to show their pointers.
	 */
	if (c->id == _SPY_FN_cudnnBackendCreateDescriptor) {
		if (args[0].i != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
			epoch++;
	} else if ((s = find(args[0].p)) && s->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR) {
		epoch++;
	}
	switch (c->id) {
	case _SPY_FN_cudnnBackendCreateDescriptor:
		if (args[1].p && *(void *const *)args[1].p) {
			const void *p = *(void *const *)args[1].p;

			/* A reused address: whatever was there is gone, kept destroyed ones too. */
			if ((s = find(p)))
				forget(s);
			if (args[0].i != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR || (spy_fn_flags[c->id] & SPY_FN_TRACE))
				insert(p, (int)args[0].i);
		}
		break;
	case _SPY_FN_cudnnBackendDestroyDescriptor:
		if ((s = find(args[0].p))) {
			query_learn(s);
			keep_destroyed(s);
		}
		break;
	case _SPY_FN_cudnnBackendSetAttribute: {
		uint64_t before;
		const struct attr *a;

		if (!(s = find(args[0].p)))
			break;
		before = s->version;
		a = remember(s, args[1].i, args[2].i, args[3].i, args[4].p, 0);
		note_set(c, args[0].p, before, s, a);
		if (a && (args[1].i == CUDNN_ATTR_ENGINE_GLOBAL_INDEX || args[1].i == CUDNN_ATTR_ENGINECFG_ENGINE))
			query_learn(s);
		break;
	}
	case _SPY_FN_cudnnBackendGetAttribute:
		if ((s = find(args[0].p)))
			got(c, s, args);
		break;
	case _SPY_FN_cudnnBackendFinalize:
		if (!(s = find(args[0].p)))
			break;
		__atomic_store_n(&s->finalized, 1, __ATOMIC_RELEASE);
		changed(s);
		capture(s);
		if (s->type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
			graph_record(c, s);
		} else if (s->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
			const struct attr *a = attr_of(s, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);

			plan = 1;
			cfg_ptr = a && a->type == CUDNN_TYPE_BACKEND_DESCRIPTOR && a->stored ? (const void *)(uintptr_t)a->v[0] : NULL;
			resolve_plan(s, &r);
		}
		break;
	}
	pthread_mutex_unlock(&lock);
	if (plan && cfg_ptr && (r.engine < 0 || r.nknobs < 0 || r.nondet < 0)) {
		/* The program never asked what the plan runs: the spy asks, once, and the plan keeps the answer. */
		struct self_read *own = malloc(sizeof(*own));

		if (own) {
			read_choice(c->copy, cfg_ptr, own);
			pthread_mutex_lock(&lock);
			if ((s = find(args[0].p)) && !s->self) {
				s->self = own;
				own = NULL;
				epoch++;
				resolve_plan(s, &r);
			}
			pthread_mutex_unlock(&lock);
			free(own);
		}
	}
	/* Outside the lock: the JSON query calls into cuDNN. */
	if (plan) {
		plan_record(c, args[0].p, &r, (spy_fn_flags[c->id] & SPY_FN_TRACE) != 0);
		spy_algo_graph_planned(&r, c->t0 ? c->t1 - c->t0 : 0);
	}
}

/* fork: the child must not find a lock held by a thread it does not have; the queries before it are the parent's. */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&json_lock);
	pthread_mutex_lock(&lock);
}

static void
fork_parent(void)
{
	pthread_mutex_unlock(&lock);
	pthread_mutex_unlock(&json_lock);
}

static void
fork_child(void)
{
	/* The parent's file: a query the child makes is kept in the child's. */
	for (int q = 0; q < nqueries; q++)
		queries[q].kept.rec = NULL;
	queries_from = nqueries;
	fork_parent();
}

void
spy_backend_flags_init(void)
{
	static const char *const watched[] = {
		"cudnnBackendCreateDescriptor", "cudnnBackendDestroyDescriptor", "cudnnBackendSetAttribute",
		"cudnnBackendGetAttribute", "cudnnBackendFinalize", "cudnnBackendExecute",
	};

	pthread_atfork(fork_prepare, fork_parent, fork_child);
	/* The describers of arguments and objects hand backend descriptors and attribute arrays to this file. */
	spy_obj_set_backend_describer(spy_backend_describe);
	spy_obj_set_backend_stamper(spy_backend_version);
	spy_args_set_backend_decoder(spy_backend_arg_json);
	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
		int id = spy_fn_lookup(watched[i]);

		if (id >= 0)
			spy_fn_flags[id] |= SPY_FN_WATCH;
	}
	/* What a plan took to build and an execution to run go into the algorithm records; the rest is bookkeeping. */
	spy_fn_flags[_SPY_FN_cudnnBackendFinalize] |= SPY_FN_TIMED;
	spy_fn_flags[_SPY_FN_cudnnBackendExecute] |= SPY_FN_TIMED;
}
