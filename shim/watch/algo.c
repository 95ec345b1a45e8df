/*
 * Which algorithm (legacy API) or engine with knobs (graph API, through
 * backend.c) ran for which convolution problem, how often, with what
 * workspace and time.
 *
 * A problem is a signature: a stable text built from what the program set
 * on its descriptors (shapes, strides, layouts, data types, padding,
 * stride, dilation, groups, mode, math type), never from descriptor ids,
 * so the same layer gives the same text in every process. The last search
 * (cudnnFind*, cudnnGet*_v7) is remembered per signature; each convolution
 * call is counted under (signature, choice), and compared with the search:
 * the findings algo-not-fastest, workspace-too-small and algo-changed. At
 * exit, one `algo` record per (signature, choice) and a section of the
 * stderr summary.
 *
 * All of it is slow-path work in fixed tables under one mutex: no
 * allocation. Findings and records are written after the mutex is let go.
 */
#include "core.h"
#include "algo.h"
#include "layout.h"
#include "audit.h"
#include "objects.h"
#include "sink.h"
#include "kept.h"
#include "pyframes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_SIGS 1024
#define SIG_HASH 2048		/* a power of two, twice MAX_SIGS */
#define MAX_CHOICES 2048
/* Plans of one signature from which its planning is a finding (graph_findings). */
#define REPLANNED 16
#define BUILT_MAX 256		/* configs remembered per signature: a sweep of more is not told from a storm */
#define MAX_RESULTS 8		/* a search's ranked results kept per signature */
#define MAX_QUERIED 8		/* legacy algorithm values whose workspace query is kept */
#define PENDING 512		/* calls whose GPU time may still come */
#define CACHE 256		/* descriptors -> signature, for calls whose descriptors did not change */

enum { API_LEGACY, API_GRAPH };
enum { F_NOT_FASTEST = 1, F_WS_SMALL = 2, F_CHANGED = 4 };
enum { K_NONE, K_RUN, K_SEARCH, K_WORKSPACE };

struct result {
	int algo, status, determinism, math;
	double time;		/* ms; negative from a heuristic query */
	uint64_t memory;
};

struct sig {
	uint64_t hash;
	char text[SPY_SIG_LEN];
	unsigned char op, flags;
	int last_algo;		/* legacy: the algorithm of the last call, -1 */
	int search_sig;		/* whose search applies: itself (-1), or for bias-act the forward problem's */
	uint64_t fwd_hash;	/* bias-act: the forward problem's signature, to find its search once there is one */
	int first_choice;	/* its choices, a list through choice.next; -1 */
	unsigned search_fn;	/* the last search: function id + 1, or 0 */
	int nresults;		/* what it returned (some may not be kept) */
	struct result results[MAX_RESULTS];
	int64_t queried[MAX_QUERIED];	/* cudnnGetConvolution*WorkspaceSize answers by algorithm, -1 */
	uint64_t plans, plan_ns;	/* graph: plans finalized for it, and the host time that took */
	/*
	 * graph: plans finalized again, for a config (engine and knobs) already
	 * built, or after the signature ran; the configs built (allocated,
	 * BUILT_MAX at most). A tuning sweep builds many configs once each.
	 */
	uint64_t replans;
	uint64_t *built;
	int nbuilt, built_cap;
	uint32_t py_off, py_len;	/* CUDNNSPY_PYTHON=traced: its first call's Python frames, in py_pool; 0 none */
};

struct choice {
	int sig, next;
	unsigned char api, op;
	int algo;		/* legacy algorithm, -1 for the graph API */
	int64_t engine;		/* graph: engine global index, -1 unknown */
	int nknobs;		/* graph: -1 unknown */
	int64_t knob_type[SPY_KNOBS_MAX], knob_value[SPY_KNOBS_MAX];
	unsigned plan, config, graph, heur;
	int rank, heur_mode;	/* graph: the rank and mode of the heuristics query that offered it, -1 */
	int nondet;		/* cuDNN says it is non-deterministic (engine notes, legacy determinism): 1, 0, -1 unknown */
	uint64_t calls, failures, timed, host_ns, gpu_timed, gpu_ns;
	uint64_t ws_min, ws_max;	/* legacy: workspace sizes the program passed */
	int64_t ws_plan;		/* graph: the plan's workspace size, -1 unknown */
	struct spy_kept kept;		/* its record in the mapped file, for an ending without exit (keep()) */
};

/* Where each watched legacy function keeps its arguments: parameter indexes, -1 when absent. */
struct conv_fn {
	unsigned char kind, op;
	signed char x, w, y, conv, act, algo, ws, perf, count, req, size_out;
};

static const struct {
	const char *name;
	unsigned char kind, op;
	const char *x, *w, *y;	/* the forward problem's input, filter and output */
} conv_names[] = {
	{ "cudnnConvolutionForward", K_RUN, SPY_OP_FWD, "xDesc", "wDesc", "yDesc" },
	{ "cudnnConvolutionBackwardData", K_RUN, SPY_OP_BWD_DATA, "dxDesc", "wDesc", "dyDesc" },
	{ "cudnnConvolutionBackwardFilter", K_RUN, SPY_OP_BWD_FILTER, "xDesc", "dwDesc", "dyDesc" },
	{ "cudnnConvolutionBiasActivationForward", K_RUN, SPY_OP_BIAS_ACT, "xDesc", "wDesc", "yDesc" },
	{ "cudnnFindConvolutionForwardAlgorithm", K_SEARCH, SPY_OP_FWD, "xDesc", "wDesc", "yDesc" },
	{ "cudnnFindConvolutionForwardAlgorithmEx", K_SEARCH, SPY_OP_FWD, "xDesc", "wDesc", "yDesc" },
	{ "cudnnGetConvolutionForwardAlgorithm_v7", K_SEARCH, SPY_OP_FWD, "srcDesc", "filterDesc", "destDesc" },
	{ "cudnnFindConvolutionBackwardDataAlgorithm", K_SEARCH, SPY_OP_BWD_DATA, "dxDesc", "wDesc", "dyDesc" },
	{ "cudnnFindConvolutionBackwardDataAlgorithmEx", K_SEARCH, SPY_OP_BWD_DATA, "dxDesc", "wDesc", "dyDesc" },
	{ "cudnnGetConvolutionBackwardDataAlgorithm_v7", K_SEARCH, SPY_OP_BWD_DATA, "gradDesc", "filterDesc",
	  "diffDesc" },
	{ "cudnnFindConvolutionBackwardFilterAlgorithm", K_SEARCH, SPY_OP_BWD_FILTER, "xDesc", "dwDesc", "dyDesc" },
	{ "cudnnFindConvolutionBackwardFilterAlgorithmEx", K_SEARCH, SPY_OP_BWD_FILTER, "xDesc", "dwDesc", "dyDesc" },
	{ "cudnnGetConvolutionBackwardFilterAlgorithm_v7", K_SEARCH, SPY_OP_BWD_FILTER, "srcDesc", "gradDesc",
	  "diffDesc" },
	{ "cudnnGetConvolutionForwardWorkspaceSize", K_WORKSPACE, SPY_OP_FWD, "xDesc", "wDesc", "yDesc" },
	{ "cudnnGetConvolutionBackwardDataWorkspaceSize", K_WORKSPACE, SPY_OP_BWD_DATA, "dxDesc", "wDesc", "dyDesc" },
	{ "cudnnGetConvolutionBackwardFilterWorkspaceSize", K_WORKSPACE, SPY_OP_BWD_FILTER, "xDesc", "gradDesc",
	  "dyDesc" },
};

static struct conv_fn conv_fns[_SPY_FN_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sig sigs[MAX_SIGS];
static int nsigs;
static short sig_hash[SIG_HASH];	/* index + 1 into sigs, 0 when empty */
static struct choice choices[MAX_CHOICES];
static int nchoices;
static struct {
	int tid;
	uint64_t t_ns;
	int choice;
} pending[PENDING];
static unsigned pending_pos;
static int sigs_full_said, choices_full_said;
/*
 * The Python frames of each signature's first call, as JSON (CUDNNSPY_PYTHON=traced), rendered when the call
 * makes them (the code objects may be gone by exit): one pool, untouched unless used, for every signature.
 */
static char py_pool[256u << 10];
static uint32_t py_used;

/*
 * A convolution call names its problem by descriptors: while none of them
 * was set again (same object, same Set count), the signature is the one
 * built last time, and need not be built again.
 */
struct key {
	unsigned fn;
	const void *d[5];
	unsigned num[5], seq[5];
};
static struct {
	struct key k;
	int sig;		/* -1: empty */
} cache[CACHE];
static int cache_ready;


/* ---- Legacy descriptors into signature text ---- */

/* The copy of the array argument `param` of the remembered Set call, widened; its length. */
static int
obj_array(const struct spy_obj_info *o, int param, int64_t *out)
{
	for (int i = 0; i < 3; i++) {
		if (o->array_param[i] != param)
			continue;
		for (int k = 0; k < o->array_len[i]; k++)
			out[k] = o->array[i][k];
		return o->array_len[i];
	}
	return 0;
}

static const char *
format_name(int64_t format, int nd)
{
	/* CUDNN_TENSOR_NCHW and NHWC stand for channels first or last whatever the rank. */
	if (format == 0)
		return spy_layout_name(0, nd);
	if (format == 1)
		return spy_layout_name(1, nd);
	return format == 2 ? "NCHW_VECT_C" : "?";
}

/* A legacy tensor or filter as "float:8x16x32x32:NCHW"; "?" when the spy saw no Set of it. */
static void
legacy_tensor(struct spy_text *t, const void *desc)
{
	struct spy_obj_info o;
	int64_t dims[SPY_OBJ_MAX_ARRAY], strides[SPY_OBJ_MAX_ARRAY];
	const union spy_arg *a = o.args;
	unsigned fn;
	int nd;

	if (!spy_obj_get(desc, &o) || !o.set_fn) {
		spy_text_add(t, "?");
		return;
	}
	fn = o.set_fn - 1;
	switch (fn) {
	case _SPY_FN_cudnnSetTensor4dDescriptor:
		for (int i = 0; i < 4; i++)
			dims[i] = a[3 + i].i;
		spy_text_tensor(t, a[2].i, 4, dims, NULL, format_name(a[1].i, 4));
		return;
	case _SPY_FN_cudnnSetTensor4dDescriptorEx:
		for (int i = 0; i < 4; i++) {
			dims[i] = a[2 + i].i;
			strides[i] = a[6 + i].i;
		}
		spy_text_tensor(t, a[1].i, 4, dims, strides, NULL);
		return;
	case _SPY_FN_cudnnSetTensorNdDescriptor:
		nd = obj_array(&o, 3, dims);
		if (obj_array(&o, 4, strides) != nd)
			break;
		spy_text_tensor(t, a[1].i, nd, dims, strides, NULL);
		return;
	case _SPY_FN_cudnnSetTensorNdDescriptorEx:
		nd = obj_array(&o, 4, dims);
		spy_text_tensor(t, a[2].i, nd, dims, NULL, format_name(a[1].i, nd));
		return;
	case _SPY_FN_cudnnSetFilter4dDescriptor:
		for (int i = 0; i < 4; i++)
			dims[i] = a[3 + i].i;
		spy_text_tensor(t, a[1].i, 4, dims, NULL, format_name(a[2].i, 4));
		return;
	case _SPY_FN_cudnnSetFilterNdDescriptor:
		nd = obj_array(&o, 4, dims);
		spy_text_tensor(t, a[1].i, nd, dims, NULL, format_name(a[2].i, nd));
		return;
	}
	spy_text_add(t, "?");
}

static void
legacy_conv(struct spy_text *t, const void *desc)
{
	struct spy_obj_info o;
	int64_t pad[SPY_OBJ_MAX_ARRAY], stride[SPY_OBJ_MAX_ARRAY], dil[SPY_OBJ_MAX_ARRAY];
	const union spy_arg *a = o.args;
	int nd;

	if (!spy_obj_get(desc, &o) || !o.set_fn) {
		spy_text_add(t, "conv=?");
		return;
	}
	if (o.set_fn - 1 == _SPY_FN_cudnnSetConvolution2dDescriptor) {
		int64_t p[2] = { a[1].i, a[2].i }, s[2] = { a[3].i, a[4].i }, d[2] = { a[5].i, a[6].i };

		spy_text_conv(t, 2, p, NULL, s, d, a[7].i, a[8].i);
	} else if (o.set_fn - 1 == _SPY_FN_cudnnSetConvolutionNdDescriptor && (nd = obj_array(&o, 2, pad)) > 0 &&
		   obj_array(&o, 3, stride) == nd && obj_array(&o, 4, dil) == nd) {
		spy_text_conv(t, nd, pad, NULL, stride, dil, a[5].i, a[6].i);
	} else {
		spy_text_add(t, "conv=?");
		return;
	}
	spy_text_add(t, " groups=");
	spy_text_i64(t, spy_obj_attr(&o, _SPY_FN_cudnnSetConvolutionGroupCount, 1));
	spy_text_add(t, " math=");
	spy_text_lower(t, spy_enum_name(_SPY_ENUM_cudnnMathType_t,
				    spy_obj_attr(&o, _SPY_FN_cudnnSetConvolutionMathType, 0), 0), "CUDNN_");
}

static void
legacy_signature(const struct conv_fn *f, const union spy_arg *args, char *out)
{
	struct spy_text t;

	spy_text_init(&t, out, SPY_SIG_LEN);
	spy_text_add(&t, spy_op_name(f->op));
	spy_text_add(&t, " x=");
	legacy_tensor(&t, args[f->x].p);
	spy_text_add(&t, " w=");
	legacy_tensor(&t, args[f->w].p);
	spy_text_add(&t, " y=");
	legacy_tensor(&t, args[f->y].p);
	spy_text_add(&t, " ");
	legacy_conv(&t, args[f->conv].p);
	if (f->act >= 0) {
		struct spy_obj_info o;

		spy_text_add(&t, " act=");
		if (spy_obj_get(args[f->act].p, &o) && o.set_fn - 1 == _SPY_FN_cudnnSetActivationDescriptor)
			spy_text_lower(&t, spy_enum_name(_SPY_ENUM_cudnnActivationMode_t, o.args[1].i, 0),
				   "CUDNN_ACTIVATION_");
		else
			spy_text_add(&t, "?");
	}
}

/* ---- Tables (lock held) ---- */

static uint64_t
hash_text(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* A signature by its hash alone (lock held); -1 when there is none yet. */
static int
sig_by_hash(uint64_t h, int op)
{
	size_t i = (size_t)h & (SIG_HASH - 1);

	for (int n = 0; n < SIG_HASH; n++, i = (i + 1) & (SIG_HASH - 1)) {
		int k = sig_hash[i] - 1;

		if (k < 0)
			break;
		if (sigs[k].hash == h && sigs[k].op == op)
			return k;
	}
	return -1;
}

/* A new signature's first call: the Python frames it came from, when the thread runs Python (lock held). */
static void
first_python(struct sig *s)
{
	static struct spy_line l;
	struct spy_pystack st;

	if (spy_py_capture(&st) <= 0)
		return;
	spy_line_reset(&l);
	spy_py_json(&l, &st);
	if (l.overflow || l.len > sizeof(py_pool) - py_used)
		return;
	memcpy(py_pool + py_used, l.data, l.len);
	s->py_off = py_used;
	s->py_len = (uint32_t)l.len;
	py_used += (uint32_t)l.len;
}

static int
sig_find(const char *text, int op, int create)
{
	uint64_t h = hash_text(text) ^ (uint64_t)op;
	size_t i = (size_t)h & (SIG_HASH - 1);

	for (int n = 0; n < SIG_HASH; n++, i = (i + 1) & (SIG_HASH - 1)) {
		int k = sig_hash[i] - 1;

		if (k < 0)
			break;
		if (sigs[k].hash == h && sigs[k].op == op && strcmp(sigs[k].text, text) == 0)
			return k;
	}
	if (!create)
		return -1;
	if (nsigs >= MAX_SIGS) {
		spy_log_once(&sigs_full_said, "more than %d convolution signatures: the others are not counted",
			     MAX_SIGS);
		return -1;
	}
	struct sig *s = &sigs[nsigs];

	s->hash = h;
	snprintf(s->text, sizeof(s->text), "%s", text);
	s->op = (unsigned char)op;
	s->last_algo = -1;
	s->search_sig = -1;
	s->first_choice = -1;
	for (int q = 0; q < MAX_QUERIED; q++)
		s->queried[q] = -1;
	if (spy_config.python == SPY_PYTHON_TRACED)
		first_python(s);
	sig_hash[i] = (short)(nsigs + 1);
	return nsigs++;
}

static int
choice_find(int sig, int api, int op, int algo, const struct spy_graph_run *g)
{
	struct choice *c;

	for (int i = sigs[sig].first_choice; i >= 0; i = choices[i].next) {
		c = &choices[i];
		if (c->api != api || c->op != op || c->algo != algo)
			continue;
		if (!g)
			return i;
		if (c->engine == g->engine && c->nknobs == g->nknobs &&
		    (g->nknobs <= 0 || (spy_same_i64(g->nknobs, c->knob_type, g->knob_type) &&
					spy_same_i64(g->nknobs, c->knob_value, g->knob_value))))
			return i;
	}
	if (nchoices >= MAX_CHOICES) {
		spy_log_once(&choices_full_said, "more than %d convolution choices: the others are not counted",
			     MAX_CHOICES);
		return -1;
	}
	c = &choices[nchoices];
	memset(c, 0, sizeof(*c));
	c->sig = sig;
	c->next = sigs[sig].first_choice;
	sigs[sig].first_choice = nchoices;
	c->api = (unsigned char)api;
	c->op = (unsigned char)op;
	c->algo = algo;
	c->engine = -1;
	c->nknobs = -1;
	c->rank = -1;
	c->heur_mode = -1;
	c->nondet = -1;
	c->ws_plan = -1;
	c->ws_min = UINT64_MAX;
	if (g) {
		c->engine = g->engine;
		c->nknobs = g->nknobs;
		for (int k = 0; k < g->nknobs && k < SPY_KNOBS_MAX; k++) {
			c->knob_type[k] = g->knob_type[k];
			c->knob_value[k] = g->knob_value[k];
		}
	}
	return nchoices++;
}

/* A choice's record kept in the mapped file (below, with the records written at exit). */
static void keep(struct choice *ch, int idx);
static void kept_text(struct choice *ch);
static void kept_all(void);
static void kept_findings(void);

/* Counts one call of a choice; remembers it for its GPU time. */
static void
count_call(struct choice *ch, int idx, const struct spy_call *c, long status)
{
	ch->calls++;
	if (status != 0)
		ch->failures++;
	if (c->t0 && c->t1 >= c->t0) {
		ch->timed++;
		ch->host_ns += c->t1 - c->t0;
	}
	if (c->pre && c->gpu_slot >= 0 && c->t0) {
		unsigned p = pending_pos++ % PENDING;

		pending[p].tid = spy_tid();
		pending[p].t_ns = c->t0;
		pending[p].choice = idx;
	}
}

static int
algo_enum(int op)
{
	switch (op) {
	case SPY_OP_BWD_DATA:
		return _SPY_ENUM_cudnnConvolutionBwdDataAlgo_t;
	case SPY_OP_BWD_FILTER:
		return _SPY_ENUM_cudnnConvolutionBwdFilterAlgo_t;
	default:
		return _SPY_ENUM_cudnnConvolutionFwdAlgo_t;
	}
}

static const char *
algo_name(int op, int algo, char *buf, size_t size)
{
	const char *n = spy_enum_name(algo_enum(op), algo, 0);

	if (n)
		return n;
	snprintf(buf, size, "algorithm %d", algo);
	return buf;
}

/* ---- Records ---- */

static struct spy_line *
record_begin(struct spy_thread **th)
{
	struct spy_buf *b;

	if (!spy_sink_enabled())
		return NULL;
	*th = spy_thread_get();
	b = *th ? spy_thread_buf(*th) : NULL;
	if (!b)
		return NULL;
	spy_line_reset(&b->line);
	return &b->line;
}

static int64_t
field(const struct spy_struct_info *s, const void *at, const char *name, double *d)
{
	for (unsigned i = 0; i < s->nfields; i++) {
		const struct spy_field_info *f = &s->fields[i];
		const char *p = (const char *)at + f->offset;

		if (strcmp(f->name, name) != 0)
			continue;
		if (f->kind == SPY_ARG_DOUBLE) {
			*d = f->size == sizeof(float) ? *(const float *)p : *(const double *)p;
			return 0;
		}
		switch (f->size) {
		case 4:
			return f->kind == SPY_ARG_UINT ? (int64_t) * (const uint32_t *)p : *(const int32_t *)p;
		case 8:
			return *(const int64_t *)p;
		}
	}
	return -1;
}

static void
search_record(const struct spy_call *c, const struct conv_fn *f, const union spy_arg *args, const char *sig,
	      int returned, const struct spy_param_info *pp)
{
	struct spy_thread *th;
	struct spy_line *l = record_begin(&th);
	const struct spy_struct_info *s = &spy_struct_info[pp->struct_id];

	if (!l)
		return;
	spy_line_lit(l, "{\"event\":\"search\",\"fn\":");
	spy_line_name(l, spy_fn_info[c->id].name);
	spy_line_lit(l, ",\"tid\":");
	spy_line_i64(l, spy_tid());
	spy_line_lit(l, ",\"t_ns\":");
	spy_line_u64(l, c->t0 ? c->t0 : spy_now_ns());
	spy_line_lit(l, ",\"op\":");
	spy_line_name(l, spy_op_name(f->op));
	spy_line_lit(l, ",\"signature\":");
	spy_line_str(l, sig);
	spy_line_lit(l, ",\"requested\":");
	spy_line_i64(l, args[f->req].i);
	spy_line_lit(l, ",\"returned\":");
	spy_line_i64(l, returned);
	spy_line_lit(l, ",\"results\":[");
	for (int i = 0; i < returned && i < 16; i++) {
		if (i)
			spy_line_char(l, ',');
		spy_struct_json(l, pp->struct_id, (const char *)args[f->perf].p + (size_t)i * s->size, 0);
	}
	spy_line_lit(l, "]}");
	spy_sink_commit(th, l, 0);
}

/* ---- Legacy calls ---- */

static void
legacy_search(struct spy_call *c, const struct conv_fn *f, const union spy_arg *args)
{
	const struct spy_param_info *pp = &spy_fn_info[c->id].params[f->perf];
	const struct spy_struct_info *s;
	char text[SPY_SIG_LEN];
	int returned, k;

	if (!args[f->count].p || !args[f->perf].p || pp->struct_id < 0)
		return;
	s = &spy_struct_info[pp->struct_id];
	returned = *(const int *)args[f->count].p;
	/* cuDNN writes no more than the caller asked for. */
	if (returned > args[f->req].i)
		returned = (int)args[f->req].i;
	if (returned < 0)
		returned = 0;
	legacy_signature(f, args, text);
	pthread_mutex_lock(&lock);
	k = sig_find(text, f->op, 1);
	if (k >= 0) {
		struct sig *g = &sigs[k];

		g->search_fn = c->id + 1;
		g->nresults = returned;
		for (int i = 0; i < returned && i < MAX_RESULTS; i++) {
			const void *at = (const char *)args[f->perf].p + (size_t)i * s->size;
			struct result *r = &g->results[i];
			double d = -1;

			r->algo = (int)field(s, at, "algo", &d);
			r->status = (int)field(s, at, "status", &d);
			r->memory = (uint64_t)field(s, at, "memory", &d);
			r->determinism = (int)field(s, at, "determinism", &d);
			r->math = (int)field(s, at, "mathType", &d);
			d = -1;
			field(s, at, "time", &d);
			r->time = d;
		}
		kept_all();
	}
	pthread_mutex_unlock(&lock);
	search_record(c, f, args, text, returned, pp);
}

static void
legacy_workspace(const struct conv_fn *f, const union spy_arg *args)
{
	char text[SPY_SIG_LEN];
	int64_t algo = args[f->algo].i;
	int k;

	if (!args[f->size_out].p || algo < 0 || algo >= MAX_QUERIED)
		return;
	legacy_signature(f, args, text);
	pthread_mutex_lock(&lock);
	k = sig_find(text, f->op, 1);
	if (k >= 0 && sigs[k].queried[algo] != (int64_t) * (const size_t *)args[f->size_out].p) {
		sigs[k].queried[algo] = (int64_t) * (const size_t *)args[f->size_out].p;
		kept_all();
	}
	pthread_mutex_unlock(&lock);
}

/* The signature whose search and workspace queries apply to `g`. */
static const struct sig *
searched(const struct sig *g)
{
	return g->search_sig >= 0 ? &sigs[g->search_sig] : g;
}

static const struct result *
ranked_first(const struct sig *g)
{
	for (int i = 0; i < g->nresults && i < MAX_RESULTS; i++)
		if (g->results[i].status == 0)
			return &g->results[i];
	return NULL;
}

static int
rank_of(const struct sig *g, int algo)
{
	for (int i = 0; i < g->nresults && i < MAX_RESULTS; i++)
		if (g->results[i].algo == algo && g->results[i].status == 0)
			return i;
	return -1;
}

/* What the algorithm needs, from the last search or the program's own workspace query; -1 unknown. */
static int64_t
needed(const struct sig *g, int algo, const char **from)
{
	int r;

	g = searched(g);
	r = rank_of(g, algo);

	if (r >= 0) {
		*from = spy_fn_info[g->search_fn - 1].name;
		return (int64_t)g->results[r].memory;
	}
	if (algo >= 0 && algo < MAX_QUERIED && g->queried[algo] >= 0) {
		*from = "the program's workspace query";
		return g->queried[algo];
	}
	return -1;
}

/* The call's descriptors and their versions; 0 when one of them cannot say (unknown, or being set). */
static int
legacy_key(const struct conv_fn *f, unsigned fn, const union spy_arg *args, struct key *k)
{
	const signed char idx[5] = { f->x, f->w, f->y, f->conv, f->act };

	memset(k, 0, sizeof(*k));
	k->fn = fn + 1;
	for (int i = 0; i < 5; i++) {
		k->d[i] = idx[i] >= 0 ? args[idx[i]].p : NULL;
		if (k->d[i] && !spy_obj_version(k->d[i], &k->num[i], &k->seq[i]))
			return 0;
	}
	return 1;
}

static size_t
key_slot(const struct key *k)
{
	uint64_t h = k->fn;

	for (int i = 0; i < 5; i++)
		h = (h ^ (uintptr_t)k->d[i] ^ ((uint64_t)k->num[i] << 32) ^ k->seq[i]) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 32) & (CACHE - 1);
}

/* The signature of a convolution call (lock held): from the cache, or built and cached. */
static int
legacy_sig(const struct conv_fn *f, unsigned fn, const union spy_arg *args)
{
	char text[SPY_SIG_LEN], fwd_text[SPY_SIG_LEN];
	struct key k;
	int cacheable = legacy_key(f, fn, args, &k), sig;
	size_t slot = key_slot(&k);

	if (!cache_ready) {
		for (int i = 0; i < CACHE; i++)
			cache[i].sig = -1;
		cache_ready = 1;
	}
	if (cacheable && cache[slot].sig >= 0 && memcmp(&cache[slot].k, &k, sizeof(k)) == 0)
		return cache[slot].sig;
	legacy_signature(f, args, text);
	sig = sig_find(text, f->op, 1);
	if (sig >= 0 && f->op == SPY_OP_BIAS_ACT) {
		/* Its algorithms are the forward convolution's: so is its search. */
		struct conv_fn fwd = *f;

		fwd.op = SPY_OP_FWD;
		fwd.act = -1;
		legacy_signature(&fwd, args, fwd_text);
		sigs[sig].fwd_hash = hash_text(fwd_text) ^ (uint64_t)SPY_OP_FWD;
	}
	if (cacheable && sig >= 0) {
		cache[slot].k = k;
		cache[slot].sig = sig;
	}
	return sig;
}

static void
legacy_run(struct spy_call *c, const struct conv_fn *f, const union spy_arg *args, long status)
{
	char msg[3][SPY_SIG_LEN + 320], a1[48], a2[48];
	int algo = (int)args[f->algo].i, k, idx, n = 0;
	const char *ids[3];
	uint64_t ws = args[f->ws].u;

	pthread_mutex_lock(&lock);
	k = legacy_sig(f, c->id, args);
	idx = k >= 0 ? choice_find(k, API_LEGACY, f->op, algo, NULL) : -1;
	if (idx >= 0 && f->op == SPY_OP_BIAS_ACT && sigs[k].search_sig < 0)
		sigs[k].search_sig = sig_by_hash(sigs[k].fwd_hash, SPY_OP_FWD);
	if (idx >= 0) {
		struct choice *ch = &choices[idx];
		struct sig *g = &sigs[k];
		const struct sig *sg = searched(g);
		const struct result *first = ranked_first(sg);
		const char *from = NULL, *text = g->text;
		int64_t need = needed(g, algo, &from);

		int nondet = ch->nondet;

		count_call(ch, idx, c, status);
		if (rank_of(sg, algo) >= 0)
			ch->nondet = sg->results[rank_of(sg, algo)].determinism == CUDNN_NON_DETERMINISTIC;
		if (ws < ch->ws_min)
			ch->ws_min = ws;
		if (ws > ch->ws_max)
			ch->ws_max = ws;
		if (spy_kept_live(&ch->kept) && ch->nondet != nondet) {
			kept_text(ch);
			kept_findings();
		}
		keep(ch, idx);
		if (need >= 0 && (int64_t)ws < need && !(g->flags & F_WS_SMALL)) {
			g->flags |= F_WS_SMALL;
			ids[n] = "workspace-too-small";
			snprintf(msg[n++], sizeof(msg[0]), "%s: %s needs %lld bytes of workspace (%s), the program passes "
				 "%llu", text, algo_name(f->op, algo, a1, sizeof(a1)), (long long)need, from,
				 (unsigned long long)ws);
		}
		if (first && first->algo != algo && !(g->flags & F_NOT_FASTEST)) {
			int r = rank_of(sg, algo);
			const char *search = spy_fn_info[sg->search_fn - 1].name;

			g->flags |= F_NOT_FASTEST;
			ids[n] = "algo-not-fastest";
			if (r >= 0 && sg->results[r].time >= 0 && first->time >= 0)
				snprintf(msg[n++], sizeof(msg[0]), "%s: the program runs %s (%.3f ms in %s), which "
					 "ranked %s first (%.3f ms)", text, algo_name(f->op, algo, a1, sizeof(a1)),
					 sg->results[r].time, search, algo_name(f->op, first->algo, a2, sizeof(a2)),
					 first->time);
			else if (r >= 0)
				snprintf(msg[n++], sizeof(msg[0]), "%s: the program runs %s (rank %d of %d in %s), "
					 "which ranked %s first", text, algo_name(f->op, algo, a1, sizeof(a1)), r + 1,
					 sg->nresults, search, algo_name(f->op, first->algo, a2, sizeof(a2)));
			else
				snprintf(msg[n++], sizeof(msg[0]), "%s: the program runs %s, which %s did not return "
					 "as usable; it ranked %s first", text, algo_name(f->op, algo, a1, sizeof(a1)),
					 search, algo_name(f->op, first->algo, a2, sizeof(a2)));
		}
		if (g->last_algo >= 0 && g->last_algo != algo && !(g->flags & F_CHANGED)) {
			g->flags |= F_CHANGED;
			ids[n] = "algo-changed";
			snprintf(msg[n++], sizeof(msg[0]), "%s: the algorithm changed from %s to %s within the "
				 "process", text, algo_name(f->op, g->last_algo, a1, sizeof(a1)),
				 algo_name(f->op, algo, a2, sizeof(a2)));
		}
		g->last_algo = algo;
	}
	pthread_mutex_unlock(&lock);
	/* Outside the lock: a finding writes a record and a line. */
	for (int i = 0; i < n; i++)
		spy_audit_finding(ids[i], strcmp(ids[i], "workspace-too-small") == 0 ? "warning" : "info", msg[i],
				  NULL);
}

/* ---- Graph API, from backend.c ---- */

void
spy_algo_graph_count(int idx, struct spy_call *c, long status)
{
	pthread_mutex_lock(&lock);
	if (idx >= 0 && idx < nchoices) {
		count_call(&choices[idx], idx, c, status);
		keep(&choices[idx], idx);
	}
	pthread_mutex_unlock(&lock);
}

int
spy_algo_graph_run(const struct spy_graph_run *g, struct spy_call *c, long status)
{
	int k, idx = -1;

	pthread_mutex_lock(&lock);
	k = sig_find(g->sig[0] ? g->sig : "graph ?", g->op, 1);
	if (k >= 0)
		idx = choice_find(k, API_GRAPH, g->op, -1, g);
	if (idx >= 0) {
		struct choice *ch = &choices[idx];
		int64_t was_plan = ch->ws_plan;
		int was_nondet = ch->nondet, was_rank = ch->rank;
		unsigned was[4] = { ch->plan, ch->config, ch->graph, ch->heur };

		count_call(ch, idx, c, status);
		ch->plan = g->plan;
		ch->config = g->config;
		ch->graph = g->graph;
		if (g->heur) {
			ch->heur = g->heur;
			ch->rank = g->rank;
			ch->heur_mode = g->heur_mode;
		}
		if (g->workspace >= 0)
			ch->ws_plan = g->workspace;
		if (g->nondet >= 0)
			ch->nondet = g->nondet;
		if (spy_kept_live(&ch->kept) && (was_plan != ch->ws_plan || was_nondet != ch->nondet || was_rank != ch->rank ||
				 was[0] != ch->plan || was[1] != ch->config || was[2] != ch->graph || was[3] != ch->heur)) {
			kept_text(ch);
			kept_findings();
		}
		keep(ch, idx);
	}
	pthread_mutex_unlock(&lock);
	return idx;
}

/* What a plan runs, as one number: its engine and knob choices, or its config when those are unknown. */
static uint64_t
config_hash(const struct spy_graph_run *g)
{
	uint64_t h = 1469598103934665603ull;

	if (g->engine < 0 || g->nknobs < 0)
		return h ^ ((uint64_t)g->config << 1 | 1);
	h = (h ^ (uint64_t)g->engine) * 1099511628211ull;
	for (int i = 0; i < g->nknobs && i < SPY_KNOBS_MAX; i++) {
		h = (h ^ (uint64_t)g->knob_type[i]) * 1099511628211ull;
		h = (h ^ (uint64_t)g->knob_value[i]) * 1099511628211ull;
	}
	return h << 1;
}

/* Whether the plan is built again: a config built before, or the signature ran already (lock held). */
static int
built_again(struct sig *s, const struct spy_graph_run *g)
{
	uint64_t h = config_hash(g);

	for (int c = s->first_choice; c >= 0; c = choices[c].next)
		if (choices[c].api == API_GRAPH && choices[c].calls)
			return 1;
	for (int i = 0; i < s->nbuilt; i++)
		if (s->built[i] == h)
			return 1;
	if (s->nbuilt == s->built_cap && s->built_cap < BUILT_MAX) {
		int cap = s->built_cap ? 2 * s->built_cap : 16;
		uint64_t *b = realloc(s->built, (size_t)cap * sizeof(*b));

		if (b) {
			s->built = b;
			s->built_cap = cap;
		}
	}
	if (s->nbuilt < s->built_cap)
		s->built[s->nbuilt++] = h;
	return 0;
}

void
spy_algo_graph_planned(const struct spy_graph_run *g, uint64_t ns)
{
	int k;

	pthread_mutex_lock(&lock);
	k = sig_find(g->sig[0] ? g->sig : "graph ?", g->op, 1);
	if (k >= 0) {
		sigs[k].plans++;
		sigs[k].plan_ns += ns;
		sigs[k].replans += built_again(&sigs[k], g);
		/* A replanning storm is said from REPLANNED plans built again on, with their count and time. */
		if (sigs[k].replans >= REPLANNED)
			kept_findings();
	}
	pthread_mutex_unlock(&lock);
}

/*
 * The graph API's findings, at exit, from what ran (lock held; messages
 * written out after it): a signature planned again and again; a signature
 * that ran only engines the fallback heuristics offered (the slow ones
 * that always work: a tuning sweep among them would not find the fast
 * kernels, so it is not counted for untuned-graph); and a job in which
 * every signature ran the first plan heuristics ranked, with no sweep of
 * several plans seen anywhere.
 */
#define NONDET_SAID 8		/* signatures named by nondeterministic-engine; the rest are counted */

static void duration(char *b, size_t size, uint64_t ns);

/*
 * Whether the job asked its framework for deterministic results, where the
 * environment shows it: TensorFlow's switches, XLA's flag (JAX), and the
 * cuBLAS workspace setting that PyTorch's deterministic mode requires.
 */
static const char *
determinism_asked(void)
{
	static const char *const on[] = { "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC" };
	const char *v;

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
		if ((v = getenv(on[i])) && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0))
			return on[i];
	if ((v = getenv("XLA_FLAGS")) && (strstr(v, "--xla_gpu_deterministic_ops=true") ||
					  strstr(v, "--xla_gpu_exclude_nondeterministic_ops=true")))
		return "XLA_FLAGS";
	if ((v = getenv("CUBLAS_WORKSPACE_CONFIG")) && (strcmp(v, ":4096:8") == 0 || strcmp(v, ":16:8") == 0))
		return "CUBLAS_WORKSPACE_CONFIG";
	return NULL;
}

/* "engine 12" or "CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0": what a choice ran. */
static void
choice_name(const struct choice *ch, char *b, size_t size)
{
	char a[48];

	if (ch->api == API_LEGACY)
		snprintf(b, size, "%s", algo_name(ch->op, ch->algo, a, sizeof(a)));
	else if (ch->engine >= 0)
		snprintf(b, size, "engine %lld", (long long)ch->engine);
	else
		snprintf(b, size, "an engine");
}

/* nondeterministic-engine: each signature that ran what cuDNN calls non-deterministic; the count after NONDET_SAID. */
static int
nondet_findings(char (*msg)[640], const char **ids, int n, int max)
{
	const char *asked = determinism_asked();
	int said = 0, more = 0;

	for (int i = 0; i < nsigs; i++) {
		const struct choice *ch = NULL;
		char what[64];

		for (int c = sigs[i].first_choice; c >= 0 && !ch; c = choices[c].next)
			if (choices[c].calls > choices[c].failures && choices[c].nondet == 1)
				ch = &choices[c];
		if (!ch)
			continue;
		if (said >= NONDET_SAID || n >= max) {
			more++;
			continue;
		}
		choice_name(ch, what, sizeof(what));
		snprintf(msg[n], sizeof(msg[n]), "%s: ran %s, which cuDNN notes as non-deterministic (%s): its results can "
			 "differ from run to run%s%s%s", sigs[i].text, what,
			 ch->api == API_LEGACY ? "CUDNN_NON_DETERMINISTIC" : "CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC",
			 asked ? ", though the job asked for deterministic results (" : "", asked ? asked : "",
			 asked ? ")" : "");
		ids[n++] = "nondeterministic-engine";
		said++;
	}
	if (more && said) {
		char tail[64];

		snprintf(tail, sizeof(tail), "; and %d more signature%s", more, more == 1 ? "" : "s");
		if (strlen(msg[n - 1]) + strlen(tail) < sizeof(msg[0]))
			strcat(msg[n - 1], tail);
	}
	return n;
}

static int
graph_findings(char (*msg)[640], const char **ids, int max)
{
	int n = 0, graph_sigs = 0, swept = 0, first_only = 0;

	for (int i = 0; i < nsigs && n < max; i++) {
		const struct sig *g = &sigs[i];
		int executed = 0, rank0 = 0, fallback = 0;
		int64_t engine = -1;
		char t[32];

		for (int c = g->first_choice; c >= 0; c = choices[c].next) {
			if (choices[c].api != API_GRAPH || !choices[c].calls)
				continue;
			executed++;
			rank0 += choices[c].heur && choices[c].rank == 0;
			if (choices[c].heur && choices[c].heur_mode == CUDNN_HEUR_MODE_FALLBACK) {
				fallback++;
				engine = choices[c].engine;
			}
		}
		if (executed && fallback == executed) {
			if (executed > 1)
				snprintf(t, sizeof(t), "%d engines", executed);
			else if (engine >= 0)
				snprintf(t, sizeof(t), "engine %lld", (long long)engine);
			else
				snprintf(t, sizeof(t), "an engine");
			snprintf(msg[n], sizeof(msg[n]),
				 "%s: ran %s that only the fallback heuristics (CUDNN_HEUR_MODE_FALLBACK) offered: the slow "
				 "engines that always work, not the fast kernels", g->text, t);
			ids[n++] = "fallback-engine";
		} else if (executed) {
			graph_sigs++;
			/* Several plans timed, or several configs built for one to run: a sweep either way. */
			swept += executed > 1 || (executed == 1 && g->nbuilt > 1);
			first_only += executed == 1 && rank0 == 1;
		}
		/* Many configs built once each, then one kept, is tuning (cudnn-frontend's BuildPlanPolicy_t::ALL). */
		if (g->replans >= REPLANNED && n < max) {
			duration(t, sizeof(t), g->plan_ns);
			snprintf(msg[n], sizeof(msg[n]),
				 "%s: %llu plans finalized (%s spent planning), %llu of them for a config already built or "
				 "after the graph ran: the same graph planned again and again, a dynamic-shape or "
				 "plan-cache-miss storm", g->text, (unsigned long long)g->plans, t,
				 (unsigned long long)g->replans);
			ids[n++] = "replanning";
		}
	}
	if (graph_sigs && !swept && first_only == graph_sigs && n < max) {
		snprintf(msg[n], sizeof(msg[n]),
			 "%d graph signature%s ran the plan the heuristics ranked first, and no tuning sweep (several plans "
			 "of one signature timed, then one kept) was seen", graph_sigs, graph_sigs == 1 ? "" : "s");
		ids[n++] = "untuned-graph";
	}
	return nondet_findings(msg, ids, n, max);
}

/* ---- Entry points ---- */

static signed char
param_index(const struct spy_fn_info *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (strcmp(f->params[i].name, name) == 0)
			return (signed char)i;
	return -1;
}

/*
 * fork: the child must not find a lock held by a thread it does not have,
 * and counts only its own calls (as the summary does); what it knows of
 * signatures, searches and descriptors stays true in the child.
 */
static void
fork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void
fork_parent(void)
{
	pthread_mutex_unlock(&lock);
}

static void
fork_child(void)
{
	for (int i = 0; i < nchoices; i++) {
		struct choice *ch = &choices[i];

		ch->calls = ch->failures = ch->timed = ch->host_ns = ch->gpu_timed = ch->gpu_ns = 0;
		ch->ws_min = UINT64_MAX;
		ch->ws_max = 0;
		/* The parent's file: the child keeps its records in its own. */
		ch->kept.rec = NULL;
		ch->kept.gen = 0;
	}
	for (int k = 0; k < nsigs; k++)
		sigs[k].flags = 0;
	for (int p = 0; p < PENDING; p++)
		pending[p].choice = -1;
	pthread_mutex_unlock(&lock);
}

void
spy_algo_flags_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	for (size_t i = 0; i < sizeof(conv_names) / sizeof(conv_names[0]); i++) {
		int id = spy_fn_lookup(conv_names[i].name);
		const struct spy_fn_info *f;
		struct conv_fn *c;

		if (id < 0)
			continue;
		f = &spy_fn_info[id];
		c = &conv_fns[id];
		c->op = conv_names[i].op;
		c->x = param_index(f, conv_names[i].x);
		c->w = param_index(f, conv_names[i].w);
		c->y = param_index(f, conv_names[i].y);
		c->conv = param_index(f, "convDesc");
		c->act = param_index(f, "activationDesc");
		c->algo = param_index(f, "algo");
		c->ws = param_index(f, "workSpaceSizeInBytes");
		c->perf = param_index(f, "perfResults");
		c->count = param_index(f, "returnedAlgoCount");
		c->req = param_index(f, "requestedAlgoCount");
		c->size_out = param_index(f, "sizeInBytes");
		/* A description that names them otherwise leaves the function unwatched, not misread. */
		if (c->x < 0 || c->w < 0 || c->y < 0 || c->conv < 0 ||
		    (conv_names[i].kind == K_RUN && (c->algo < 0 || c->ws < 0)) ||
		    (conv_names[i].kind == K_SEARCH && (c->perf < 0 || c->count < 0 || c->req < 0)) ||
		    (conv_names[i].kind == K_WORKSPACE && (c->algo < 0 || c->size_out < 0)))
			continue;
		c->kind = conv_names[i].kind;
		spy_fn_flags[id] |= SPY_FN_WATCH | SPY_FN_TIMED;
	}
}

void
spy_algo_call(struct spy_call *c, long status, const union spy_arg *args)
{
	const struct conv_fn *f = &conv_fns[c->id];

	switch (f->kind) {
	case K_RUN:
		legacy_run(c, f, args, status);
		return;
	case K_SEARCH:
		if (status == 0)
			legacy_search(c, f, args);
		return;
	case K_WORKSPACE:
		if (status == 0)
			legacy_workspace(f, args);
		return;
	}
}

void
spy_algo_gpu_time(unsigned fn, int tid, uint64_t t_ns, uint64_t ns)
{
	/* Only the convolutions and cudnnBackendExecute wait for one. */
	if (fn >= _SPY_FN_COUNT || !(conv_fns[fn].kind == K_RUN || fn == _SPY_FN_cudnnBackendExecute))
		return;
	pthread_mutex_lock(&lock);
	for (unsigned n = 0; n < PENDING && n < pending_pos; n++) {
		unsigned p = (pending_pos - 1 - n) % PENDING;

		if (pending[p].tid == tid && pending[p].t_ns == t_ns && pending[p].choice >= 0) {
			choices[pending[p].choice].gpu_timed++;
			choices[pending[p].choice].gpu_ns += ns;
			keep(&choices[pending[p].choice], pending[p].choice);
			pending[p].choice = -1;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

/* ---- At exit ---- */

/* A value of the record: the number, or in a kept record's text its mark (recfmt.h) and index. */
static void
value(struct spy_line *l, uint64_t v, int kept, int k)
{
	if (kept) {
		spy_line_char(l, SPY_KEPT_MARK);
		spy_line_char(l, (char)('0' + k));
	} else {
		spy_line_u64(l, v);
	}
}

/* The record of a choice; `kept`: with marks for its values, for its record in the mapped file (keep()). */
static void
algo_fields(struct spy_line *l, const struct choice *ch, int kept)
{
	const struct sig *g = &sigs[ch->sig];
	char a[48];

	spy_line_lit(l, "{\"event\":\"algo\",\"api\":");
	spy_line_name(l, ch->api == API_LEGACY ? "legacy" : "graph");
	spy_line_lit(l, ",\"op\":");
	spy_line_name(l, spy_op_name(ch->op));
	spy_line_lit(l, ",\"signature\":");
	spy_line_str(l, g->text);
	if (g->py_len) {
		spy_line_lit(l, ",\"python\":");
		spy_line_mem(l, py_pool + g->py_off, g->py_len);
	}
	spy_line_lit(l, ",\"algo\":");
	if (ch->api == API_LEGACY)
		spy_line_str(l, algo_name(ch->op, ch->algo, a, sizeof(a)));
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"engine\":");
	if (ch->api == API_GRAPH && ch->engine >= 0)
		spy_line_i64(l, ch->engine);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"knobs\":");
	spy_backend_knobs_json(l, ch->knob_type, ch->knob_value,
			       ch->api == API_GRAPH ? (ch->nknobs < SPY_KNOBS_MAX ? ch->nknobs : SPY_KNOBS_MAX) : -1);
	spy_line_lit(l, ",\"calls\":");
	value(l, ch->calls, kept, 0);
	spy_line_lit(l, ",\"failures\":");
	value(l, ch->failures, kept, 1);
	spy_line_lit(l, ",\"timed\":");
	value(l, ch->timed, kept, 2);
	spy_line_lit(l, ",\"host_ns\":");
	value(l, ch->host_ns, kept, 3);
	spy_line_lit(l, ",\"gpu_timed\":");
	value(l, ch->gpu_timed, kept, 4);
	spy_line_lit(l, ",\"gpu_ns\":");
	value(l, ch->gpu_ns, kept, 5);
	spy_line_lit(l, ",\"workspace\":");
	if (ch->api == API_LEGACY && ch->calls) {
		spy_line_lit(l, "{\"min\":");
		value(l, ch->ws_min, kept, 6);
		spy_line_lit(l, ",\"max\":");
		value(l, ch->ws_max, kept, 7);
		spy_line_char(l, '}');
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, ",\"workspace_needed\":");
	if (ch->api == API_LEGACY) {
		const char *from = NULL;
		int64_t need = needed(g, ch->algo, &from);

		if (need >= 0)
			spy_line_i64(l, need);
		else
			spy_line_lit(l, "null");
	} else if (ch->ws_plan >= 0) {
		spy_line_i64(l, ch->ws_plan);
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, ",\"search\":");
	if (ch->api == API_LEGACY && searched(g)->search_fn) {
		const struct sig *sg = searched(g);
		const struct result *first = ranked_first(sg);
		int r = rank_of(sg, ch->algo);

		spy_line_lit(l, "{\"fn\":");
		spy_line_name(l, spy_fn_info[sg->search_fn - 1].name);
		spy_line_lit(l, ",\"returned\":");
		spy_line_i64(l, sg->nresults);
		spy_line_lit(l, ",\"rank\":");
		if (r >= 0)
			spy_line_i64(l, r);
		else
			spy_line_lit(l, "null");
		spy_line_lit(l, ",\"first\":");
		if (first)
			spy_line_str(l, algo_name(ch->op, first->algo, a, sizeof(a)));
		else
			spy_line_lit(l, "null");
		spy_line_char(l, '}');
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, ",\"nondeterministic\":");
	spy_line_raw(l, ch->nondet < 0 ? "null" : ch->nondet ? "true" : "false");
	spy_line_lit(l, ",\"plan\":");
	spy_backend_id_json(l, ch->api == API_GRAPH ? ch->plan : 0);
	spy_line_lit(l, ",\"config\":");
	spy_backend_id_json(l, ch->api == API_GRAPH ? ch->config : 0);
	spy_line_lit(l, ",\"graph\":");
	spy_backend_id_json(l, ch->api == API_GRAPH ? ch->graph : 0);
	spy_line_lit(l, ",\"heuristics\":");
	if (ch->api == API_GRAPH && ch->heur) {
		spy_line_lit(l, "{\"id\":");
		spy_backend_id_json(l, ch->heur);
		spy_line_lit(l, ",\"rank\":");
		spy_line_i64(l, ch->rank);
		spy_line_char(l, '}');
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_char(l, '}');
}

static void
algo_record(const struct choice *ch)
{
	struct spy_thread *th;
	struct spy_line *l = record_begin(&th);

	if (!l)
		return;
	algo_fields(l, ch, 0);
	spy_sink_commit(th, l, 0);
}

/* The choice's values in its kept record (lock held). */
static void
kept_values(struct choice *ch)
{
	const uint64_t v[SPY_KEPT_VALUES] = { ch->calls, ch->failures, ch->timed, ch->host_ns, ch->gpu_timed, ch->gpu_ns,
					      ch->ws_min, ch->ws_max };

	spy_kept_values(&ch->kept, v, SPY_KEPT_VALUES);
}

/* The choice's kept text, rendered again (lock held). */
static void
kept_text(struct choice *ch)
{
	static struct spy_line l;

	spy_line_reset(&l);
	algo_fields(&l, ch, 1);
	spy_kept_text(&ch->kept, (unsigned)(ch - choices), &l);
}

/*
 * A choice that ran: its record kept up to date in the mapped file, so that
 * a process that ends without exit leaves it (records.c gives it then). Its
 * values at each call; its text when it is new and when what it says
 * besides changes (kept_all). Lock held.
 */
static void
keep(struct choice *ch, int idx)
{
	(void)idx;
	if (!spy_kept_live(&ch->kept)) {
		kept_text(ch);
		kept_findings();
	}
	kept_values(ch);
}

/* A search or a workspace query changed what records say: every kept text again (lock held; rare). */
static void
kept_all(void)
{
	for (int i = 0; i < nchoices; i++)
		if (spy_kept_live(&choices[i].kept))
			kept_text(&choices[i]);
	kept_findings();
}

void
spy_algo_records(void)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nchoices; i++)
		if (choices[i].calls)
			algo_record(&choices[i]);
	pthread_mutex_unlock(&lock);
}

#define EXIT_FINDINGS 24

static const char *
exit_severity(const char *id, int asked)
{
	return strcmp(id, "untuned-graph") == 0 || (strcmp(id, "nondeterministic-engine") == 0 && !asked) ? "info"
													     : "warning";
}

void
spy_algo_exit_findings(void)
{
	static char msg[EXIT_FINDINGS][640];
	const char *ids[EXIT_FINDINGS];
	int n, asked = determinism_asked() != NULL;

	pthread_mutex_lock(&lock);
	n = graph_findings(msg, ids, EXIT_FINDINGS);
	pthread_mutex_unlock(&lock);
	/* Outside the lock: a finding writes a record and a line. */
	for (int i = 0; i < n; i++)
		spy_audit_finding(ids[i], exit_severity(ids[i], asked), msg[i], NULL);
}

/*
 * The findings the exit makes from what ran, kept up to date in the mapped
 * file as what ran changes (a choice made, a search, a plan), so that a
 * process that ends without exit leaves them too (lock held).
 */
static void
kept_findings(void)
{
	static char msg[EXIT_FINDINGS][640];
	static struct spy_kept kept[EXIT_FINDINGS];
	static struct spy_line l;
	static int nkept;
	const char *ids[EXIT_FINDINGS];
	int n, asked;

	if (!spy_sink_state_gen() || !nchoices)
		return;
	asked = determinism_asked() != NULL;
	n = graph_findings(msg, ids, EXIT_FINDINGS);
	for (int i = 0; i < n; i++) {
		spy_audit_finding_json(&l, ids[i], exit_severity(ids[i], asked), msg[i], NULL, 0);
		spy_kept_text(&kept[i], 0x10000u + (unsigned)i, &l);
	}
	for (int i = n; i < nkept; i++)
		spy_kept_clear(&kept[i]);
	nkept = n;
}

static void
duration(char *b, size_t size, uint64_t ns)
{
	if (ns >= 10000000)
		snprintf(b, size, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 10000)
		snprintf(b, size, "%.1f us", (double)ns / 1e3);
	else
		snprintf(b, size, "%llu ns", (unsigned long long)ns);
}

void
spy_algo_print(void)
{
	int shown = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < nchoices; i++)
		shown += choices[i].calls > 0;
	if (!shown) {
		pthread_mutex_unlock(&lock);
		return;
	}
	spy_log("convolutions and graphs: what ran for each signature, how often");
	for (int k = 0; k < nsigs; k++) {
		const struct sig *g = &sigs[k];
		int header = 0;

		for (int i = 0; i < nchoices; i++) {
			const struct choice *ch = &choices[i];
			char what[256], host[32], gpu[48], ws[96], a[48];
			struct spy_text t;

			if (ch->sig != k || !ch->calls)
				continue;
			if (!header++)
				spy_log("  %s", g->text);
			spy_text_init(&t, what, sizeof(what));
			if (ch->api == API_LEGACY) {
				spy_text_add(&t, algo_name(ch->op, ch->algo, a, sizeof(a)));
			} else {
				spy_text_add(&t, "graph engine ");
				if (ch->engine >= 0)
					spy_text_i64(&t, ch->engine);
				else
					spy_text_add(&t, "?");
				if (ch->nknobs > 0) {
					spy_text_add(&t, " knobs ");
					for (int n = 0; n < ch->nknobs && n < SPY_KNOBS_MAX; n++) {
						if (n)
							spy_text_add(&t, ",");
						spy_text_lower(&t, spy_enum_name(_SPY_ENUM_cudnnBackendKnobType_t,
									     ch->knob_type[n], 0), "CUDNN_KNOB_TYPE_");
						spy_text_add(&t, "=");
						spy_text_i64(&t, ch->knob_value[n]);
					}
				}
			}
			duration(host, sizeof(host), ch->host_ns);
			if (ch->gpu_timed) {
				char d[32];

				duration(d, sizeof(d), ch->gpu_ns);
				snprintf(gpu, sizeof(gpu), ", gpu %s (%llu timed)", d, (unsigned long long)ch->gpu_timed);
			} else {
				gpu[0] = 0;
			}
			if (ch->api == API_LEGACY) {
				const char *from = NULL;
				int64_t need = needed(g, ch->algo, &from);

				if (ch->ws_min == ch->ws_max)
					snprintf(ws, sizeof(ws), ", workspace %llu", (unsigned long long)ch->ws_max);
				else
					snprintf(ws, sizeof(ws), ", workspace %llu..%llu",
						 (unsigned long long)ch->ws_min, (unsigned long long)ch->ws_max);
				if (need >= 0)
					snprintf(ws + strlen(ws), sizeof(ws) - strlen(ws), " (needs %lld)",
						 (long long)need);
			} else if (ch->ws_plan >= 0) {
				snprintf(ws, sizeof(ws), ", workspace %lld", (long long)ch->ws_plan);
			} else {
				ws[0] = 0;
			}
			spy_log("    %-52s %8llu calls, %llu failed, host %s%s%s%s", what, (unsigned long long)ch->calls,
				(unsigned long long)ch->failures, host, gpu, ws,
				ch->nondet == 1 ? ", non-deterministic" : "");
		}
	}
	pthread_mutex_unlock(&lock);
}
