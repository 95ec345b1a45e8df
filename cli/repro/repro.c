/*
 * cudnnspy repro: picks one recorded call and gathers what a standalone
 * program needs to replay it (struct repro_plan), then has repro-write.c
 * write the program.
 *
 * The records are streamed line by line (jansson, as in report-read.c). What a
 * call needs of the records before it is kept while reading: each live
 * descriptor's Set calls (from traced Set records; a failure record carries
 * them itself), the last traced algorithm search of each kind, the stream
 * the program set, and the file's header. Memory grows with the descriptors
 * alive at a time, not with the file.
 */
#include "repro.h"
#include "spy-api.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli-options.h"
#include "cli-util.h"
#include "records.h"

#define EXIT_USAGE 2

/* Longer lines are not the spy's. */
#define LINE_CAP (1u << 20)
/* Caps on what hostile records can make us allocate. */
#define MAX_FILES 4096
#define MAX_LIVE 65536
#define MAX_BYTES (1ull << 40)
#define MAX_BACKEND 262144

static const char repro_usage[] =
	"usage: cudnnspy repro [--call N | --failure N | --signature TEXT] [-o FILE]\n"
	"                      [--fill pattern|nan|zero|random]\n"
	"                      [--time] [--cudnn DIR] RECORDS\n"
	"       cudnnspy repro --list RECORDS\n"
	"\n"
	"Writes one standalone C program that replays one recorded cuDNN call: it\n"
	"creates a handle, recreates the descriptors the call uses with the same Set\n"
	"calls, allocates device buffers of the sizes the descriptors give (with the\n"
	"recorded pointers' alignment offsets), fills the inputs, runs the call (and\n"
	"the algorithm search the program made before it) and compares the status\n"
	"with the recorded one. RECORDS is a file or a directory of the spy's records\n"
	"(CUDNNSPY_OUTPUT). The program's data is not in the records: inputs get a\n"
	"documented pattern. Legacy API convolutions, graph API executions\n"
	"(cudnnBackendExecute) from the traced backend calls before them, or rebuilt\n"
	"from the plan's engine and knobs and the graph's record, and any other Set,\n"
	"Get or query call whose arguments the records hold whole.\n"
	"\n";

/* After the options, which come from the table (cli-options.def). */
static const char repro_usage_tail[] =
	"\n"
	"See docs/repro.md.\n";

static int
usage_error(const char *fmt, const char *arg)
{
	fputs("cudnnspy: repro: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\ncudnnspy: usage: cudnnspy repro [--call N | --failure N] [-o FILE] RECORDS"
	      " (see cudnnspy repro --help)\n", stderr);
	return EXIT_USAGE;
}

/* A descriptor's Set calls so far, by id. */
struct live {
	char id[40];
	json_t *sets;
};

struct reader {
	int unknown_fn_said;	/* a call of a name that is no cuDNN function was said */
	int refused_files;	/* files the reader refused (said each) */
	/* What to pick. */
	long long want_call, want_failure;
	const char *want_sig;
	long long sig_call;	/* the first convolution (not a failure) with that signature */
	long long sig_other;	/* the first search or query with it */
	int pick_default, list;
	/* Counters across files. */
	long long calls, failures;
	/* Per file. */
	const char *file;
	long long line_no;
	json_t *header;
	char *cudart;
	json_t *copies;		/* the cuDNN that answers each copy: its library record, by copy number */
	char *stream;
	struct live *live;
	size_t nlive, cap;
	json_t *search[3];	/* fwd, bwd-data, bwd-filter */
	json_t *backend;	/* the traced graph API calls, in order */
	json_t *graphs;		/* the last `graph` record of each operation graph, by id */
	json_t *configs;	/* each engine config's engine, knobs and graph, from the whole process's heuristics
				 * and plan records (config_pass): a probe of one comes before them */
	json_t *segs;		/* config_pass's, one {"configs", "graphs"} per process in the file (its header on) */
	size_t seg_no;
	json_t *searches;	/* the last `search` record of each signature */
	int backend_full;
	json_t *states;		/* repro-host.c's: each descriptor id's Set calls, failed ones too, in order */
	json_t *noted_state;	/* the state the record being read changed, and its Set calls before: a */
	json_t *noted_before;	/* repro of that Set replays the state before it, not after */
	json_t *hidden;		/* the Set calls after it, while state_hide shows those before */
	char *drop_next;	/* a descriptor a Destroy ended: forgotten at the next record */
	/* The default pick (docs/repro.md): the first failure that replays without a GPU when there is none. */
	int no_gpu;
	long long default_any;	/* the first failure of a call it can replay, cudnnCreate aside */
	long long default_injected;	/* the first failure whose status the spy made (injected, no function) */
	/* The outcome. */
	int found, error;
	long long default_create;	/* the first cudnnCreate failure, a fallback for the default */
	long long default_pick;
	struct repro_plan *plan;
	long long skipped_lines;
};

static const char *
jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Whether the traced backend CALLS hold the cudnnBackendCreateDescriptor that made descriptor ON. */
static int
create_traced(json_t *calls, const char *on)
{
	json_t *c;
	size_t i;

	json_array_foreach(calls, i, c) {
		const char *made = jstr(json_object_get(json_object_get(c, "args"), "descriptor"), "value");

		if (on && made && strcmp(jstr(c, "fn"), "cudnnBackendCreateDescriptor") == 0 && strcmp(made, on) == 0)
			return 1;
	}
	return 0;
}

static struct live *
live_find(struct reader *r, const char *id)
{
	for (size_t i = 0; i < r->nlive; i++)
		if (strcmp(r->live[i].id, id) == 0)
			return &r->live[i];
	return NULL;
}

static void
live_drop(struct reader *r, const char *id)
{
	struct live *l = live_find(r, id);

	if (!l)
		return;
	json_decref(l->sets);
	*l = r->live[--r->nlive];
}

static struct live *
live_get(struct reader *r, const char *id)
{
	struct live *l = live_find(r, id);

	if (l)
		return l;
	/* Only ids the spy writes: each one may become a variable, a comment and a message in the program. */
	if (!repro_id_ok(id) || strlen(id) >= sizeof(l->id) || r->nlive >= MAX_LIVE)
		return NULL;
	if (r->nlive == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct live *bigger = realloc(r->live, cap * sizeof(*bigger));

		if (!bigger)
			return NULL;
		r->live = bigger;
		r->cap = cap;
	}
	l = &r->live[r->nlive++];
	snprintf(l->id, sizeof(l->id), "%s", id);
	l->sets = json_array();
	return l;
}

static void next_segment(struct reader *r);

static void
reset_file(struct reader *r)
{
	for (size_t i = 0; i < r->nlive; i++)
		json_decref(r->live[i].sets);
	r->nlive = 0;
	json_decref(r->header);
	r->header = NULL;
	free(r->cudart);
	r->cudart = NULL;
	json_decref(r->copies);
	r->copies = NULL;
	free(r->stream);
	r->stream = NULL;
	for (int i = 0; i < 3; i++) {
		json_decref(r->search[i]);
		r->search[i] = NULL;
	}
	json_decref(r->backend);
	r->backend = NULL;
	json_decref(r->graphs);
	r->graphs = NULL;
	json_decref(r->configs);
	r->configs = NULL;
	json_decref(r->searches);
	r->searches = NULL;
	json_decref(r->states);
	r->states = NULL;
	r->backend_full = 0;
}

static int
op_index(const char *op)
{
	if (!op)
		return -1;
	if (strcmp(op, "fwd") == 0)
		return 0;
	if (strcmp(op, "bwd-data") == 0)
		return 1;
	if (strcmp(op, "bwd-filter") == 0)
		return 2;
	return -1;
}

/* The id of a descriptor argument: {"id": ...} in calls, or a plain string in a "set". */
static const char *
arg_id(json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	return jstr(v, "id");
}

/*
 * A descriptor's state for repro-host.c: {"sets": [...], "created": true
 * when its Create was traced}; its Set calls, made when missing (CREATED:
 * by a traced Create, which also forgets an earlier object of that id).
 */
static json_t *
state_sets(struct reader *r, const char *id, int created)
{
	json_t *st;

	if (!r->states)
		r->states = json_object();
	st = json_object_get(r->states, id);
	if (!st || created) {
		if (!st && json_object_size(r->states) >= MAX_LIVE)
			return NULL;
		st = json_pack("{s:[]}", "sets");
		if (created)
			json_object_set_new(st, "created", json_true());
		json_object_set_new(r->states, id, st);
	}
	return json_object_get(st, "sets");
}

/*
 * HIDE 1: takes the entry note_state just added for the record being read
 * out of its list (a repro of a Set replays the state before it); 0: puts
 * it back. Returns 0, for use in a condition.
 */
static int
state_hide(struct reader *r, int hide)
{
	json_t *st = r->noted_state;

	if (hide && st && r->noted_before && !r->hidden) {
		r->hidden = json_incref(json_object_get(st, "sets"));
		json_object_set(st, "sets", r->noted_before);
	} else if (!hide && st && r->hidden) {
		json_object_set_new(st, "sets", r->hidden);
		r->hidden = NULL;
	}
	return 0;
}

/*
 * Every Set call on a descriptor of a legacy kind, for repro-host.c: the
 * latest of each function in the order made, and a failed one kept (with
 * its status) until the next call of that function works. A new shape
 * (the table's RF_SET) replaces the last one once it works.
 */
static void
note_state(struct reader *r, json_t *rec, const char *fn, int failure)
{
	int id_fn = spy_fn_lookup(fn);
	const struct spy_param_info *q;
	const struct repro_fn *f = repro_fn_find(fn), *g;
	json_t *args = json_object_get(rec, "args"), *list, *copy, *e;
	const char *id;
	size_t i;

	if (id_fn < 0 || strncmp(fn, "cudnnSet", 8) != 0 || !spy_fn_info[id_fn].nparams)
		return;
	q = &spy_fn_info[id_fn].params[0];
	if (q->kind != SPY_ARG_DESC || q->dir != SPY_DIR_IN || !q->desc_kind || strcmp(q->desc_kind, "backend") == 0)
		return;
	id = arg_id(json_object_get(args, q->name));
	if (!id || !repro_id_ok(id) || !json_is_object(args))
		return;
	list = state_sets(r, id, 0);
	if (!list)
		return;
	/* What a repro of this very call replays before it (state_hide). */
	r->noted_state = json_object_get(r->states, id);
	r->noted_before = json_deep_copy(list);
	for (i = 0; i < json_array_size(list); i++) {
		const char *other = jstr(json_array_get(list, i), "fn");

		g = repro_fn_find(other);
		/* A shape Set that failed leaves the shape before it (and replays after it). */
		if (strcmp(other, fn) == 0 || (!failure && json_object_get(json_array_get(list, i), "status")) ||
		    (!failure && f && f->cls == RF_SET && g && g->cls == RF_SET)) {
			json_array_remove(list, i);
			i--;
		}
	}
	if (json_array_size(list) >= 16)
		json_array_remove(list, 0);
	copy = json_deep_copy(args);
	json_object_set_new(copy, q->name, json_string(id));
	e = json_pack("{s:s, s:o}", "fn", fn, "args", copy);
	if (failure)
		json_object_set(e, "status", json_object_get(rec, "status"));
	json_array_append_new(list, e);
}

/* Remembers a successful traced Set call: the latest of each function, in the order made. */
static void
note_set(struct reader *r, const struct repro_fn *f, json_t *args)
{
	const char *id = arg_id(json_object_get(args, f->params[0].name));
	struct live *l;
	json_t *entry, *copy;
	size_t i;

	if (!id || !(l = live_get(r, id)))
		return;
	/* A new shape replaces the last; a setting replaces its own earlier value. */
	for (i = 0; i < json_array_size(l->sets); i++) {
		const struct repro_fn *g = repro_fn_find(jstr(json_array_get(l->sets, i), "fn"));

		if (g == f || (f->cls == RF_SET && g && g->cls == RF_SET)) {
			json_array_remove(l->sets, i);
			i--;
		}
	}
	copy = json_deep_copy(args);
	json_object_set_new(copy, f->params[0].name, json_string(id));
	entry = json_pack("{s:s, s:o}", "fn", f->name, "args", copy);
	json_array_append_new(l->sets, entry);
}

static int
plan_error(struct reader *r, const char *fmt, const char *a, const char *b)
{
	char what[512];

	r->error = 1;
	snprintf(what, sizeof(what), fmt, a, b);
	complain("repro: %s, line %lld: %s", r->file, r->line_no, what);
	return -1;
}

static int
parse_ptr(json_t *v, unsigned long long *addr)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	char *end;

	if (json_is_null(v)) {
		*addr = 0;
		return 0;
	}
	if (!s || strncmp(s, "0x", 2) != 0)
		return -1;
	errno = 0;
	*addr = strtoull(s + 2, &end, 16);
	return errno || *end || end == s + 2 ? -1 : 0;
}

/* What the shape Set says of a tensor or filter: data type, elements spanned, dims for comments. */
static int
shape_of(struct reader *r, struct repro_desc *d, json_t *set)
{
	struct repro_shape sh;
	char why[256];
	size_t pos = 0;
	int rc = repro_shape_of(set, &sh, why, sizeof(why));

	/* Any Set's data type counts (an N-d convolution's says whether its scaling factors are doubles). */
	d->dtype = sh.dtype;
	if (rc > 0)
		return 0;
	if (rc < 0)
		return plan_error(r, "%s: %s", d->id, why);
	d->elems = sh.elems;
	d->bytes = sh.elems * repro_elem_size(d->dtype);
	for (int i = 0; i < sh.nd && pos < sizeof(d->shape); i++)
		pos += (size_t)snprintf(d->shape + pos, sizeof(d->shape) - pos, "%s%lld", i ? "x" : "", sh.dims[i]);
	return 0;
}

/* The descriptor argument `v` of kind `kind`: found, or added with its Set calls. */
static struct repro_desc *
plan_desc(struct reader *r, struct repro_plan *p, json_t *v, int kind, const char *param)
{
	const char *id = arg_id(v);
	struct repro_desc *d;
	json_t *sets, *set, *last = NULL;
	const char *key;
	json_t *val;

	if (!id)
		return NULL;
	for (int i = 0; i < p->ndescs; i++)
		if (strcmp(p->descs[i].id, id) == 0)
			return &p->descs[i];
	if (!repro_id_ok(id)) {
		plan_error(r, "%s: '%s' is not a descriptor id the spy writes (kind#N); the records were edited or are "
			   "damaged", param, id);
		return NULL;
	}
	if (p->ndescs == REPRO_MAX_DESCS || strlen(id) >= sizeof(d->id)) {
		plan_error(r, "%s: too many descriptors, or an id too long (%s)", param, id);
		return NULL;
	}
	if (strncmp(id, repro_kinds[kind].prefix, strlen(repro_kinds[kind].prefix)) != 0 ||
	    id[strlen(repro_kinds[kind].prefix)] != '#') {
		plan_error(r, "%s: %s is not a descriptor of the kind the call takes", param, id);
		return NULL;
	}
	d = &p->descs[p->ndescs];
	memset(d, 0, sizeof(*d));
	snprintf(d->id, sizeof(d->id), "%s", id);
	snprintf(d->var, sizeof(d->var), "%s_%s", repro_kinds[kind].prefix, strchr(id, '#') + 1);
	for (char *c = d->var; *c; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			*c = '_';
	d->kind = kind;
	set = json_object_get(v, "set");
	if (jstr(v, "set_failed")) {
		/* Its last Set failed: the Set calls the program made on it, the failed one last, as it made them. */
		json_t *known = json_object_get(json_object_get(r->states, id), "sets");
		json_t *failed = json_array_get(known, json_array_size(known) - 1);

		if (!failed || !json_is_integer(json_object_get(failed, "status")) ||
		    strcmp(jstr(failed, "fn") ? jstr(failed, "fn") : "", jstr(v, "set_failed")) != 0) {
			plan_error(r, "%s (%s): its last Set failed, and the records do not hold that call", id, param);
			return NULL;
		}
		sets = json_deep_copy(known);
	} else if (json_is_object(set)) {
		/* A failure record: the last shape Set, and the settings beside it. */
		sets = json_array();
		json_array_append(sets, set);
		json_object_foreach(v, key, val) {
			const struct repro_fn *s = repro_setting_for(kind, key);

			if (s && !repro_is_default(s->name, s->params[1].name, val))
				json_array_append_new(sets, json_pack("{s:s, s:{s:s, s:O}}", "fn", s->name, "args",
								      s->params[0].name, id, s->params[1].name, val));
		}
	} else {
		struct live *l = live_find(r, id);
		int shaped = 0;

		sets = l ? json_deep_copy(l->sets) : json_array();
		for (size_t i = 0; i < json_array_size(sets); i++) {
			const struct repro_fn *g = repro_fn_find(jstr(json_array_get(sets, i), "fn"));

			shaped |= g && g->cls == RF_SET;
		}
		if (!shaped) {
			/* Set calls not traced: the shape from the spy's summary, the settings from beside it. */
			json_t *e = repro_set_from_desc(kind, id, jstr(v, "desc"));

			if (!e) {
				json_decref(sets);
				plan_error(r, "%s (%s): the records hold neither a successful Set call of it before this"
					   " call nor a summary repro reads (trace the cudnnSet* functions too)", id, param);
				return NULL;
			}
			json_array_insert_new(sets, 0, e);
			json_object_foreach(v, key, val) {
				const struct repro_fn *s = repro_setting_for(kind, key);
				int have = 0;

				for (size_t i = 0; s && i < json_array_size(sets); i++)
					have |= strcmp(jstr(json_array_get(sets, i), "fn"), s->name) == 0;
				if (s && !have && !repro_is_default(s->name, s->params[1].name, val))
					json_array_append_new(sets, json_pack("{s:s, s:{s:s, s:O}}", "fn", s->name, "args",
									      s->params[0].name, id, s->params[1].name,
									      val));
			}
		}
	}
	for (size_t i = 0; i < json_array_size(sets); i++) {
		json_t *e = json_array_get(sets, i);
		const struct repro_fn *f = repro_fn_find(jstr(e, "fn"));

		if (!f || f->cls == RF_CALL || f->kind != kind || !json_is_object(json_object_get(e, "args"))) {
			json_decref(sets);
			plan_error(r, "%s: set with %s, which repro cannot replay", id, jstr(e, "fn") ? jstr(e, "fn") : "?");
			return NULL;
		}
		if (f->cls == RF_SET && !json_object_get(e, "status"))
			last = e;
	}
	if (!last && jstr(v, "set_failed")) {
		/* No shape cuDNN accepted: nothing of it to size a buffer by. */
		d->sets = sets;
		p->ndescs++;
		return d;
	}
	if (!last) {
		json_decref(sets);
		plan_error(r, "%s (%s): the records hold no shape Set call of it", id, param);
		return NULL;
	}
	d->sets = sets;
	p->ndescs++;
	if (shape_of(r, d, last) != 0)
		return NULL;
	return d;
}

static int
plan_buffer(struct reader *r, struct repro_plan *p, const char *param, json_t *v, unsigned long long bytes,
	    int input, const struct repro_desc *d)
{
	unsigned long long addr;

	if (parse_ptr(v, &addr) != 0)
		return plan_error(r, "%s: not a pointer: %s", param, json_is_string(v) ? json_string_value(v) : "?");
	if (repro_add_buffer(p, param, addr, bytes, input, d ? d->dtype : NULL, d ? d->elems : 0) != 0)
		return plan_error(r, "%s: too many buffers%s", param, "");
	return 0;
}

/*
 * The search before a convolution when it was not traced: the `search`
 * record of the convolution's forward-problem signature, made into the call
 * record of that search on the convolution's own descriptors.
 */
static json_t *
search_call(struct reader *r, struct repro_plan *p, json_t *args, const struct repro_fn *f)
{
	char sig[2048], *act;
	const char *op, *x, *w, *y, *sop, *sx, *sw, *sy;
	json_t *rec, *cargs;
	const struct repro_fn *s;

	if (repro_signature(p, sig, sizeof(sig)) != 0 || repro_sig_params(f->name, &op, &x, &w, &y) != 0)
		return NULL;
	/* bias-act is judged by its forward problem's search, as the spy does. */
	if (strncmp(sig, "bias-act ", 9) == 0) {
		memmove(sig + 3, sig + 8, strlen(sig + 8) + 1);
		memcpy(sig, "fwd", 3);
		act = strstr(sig, " act=");
		if (act)
			*act = '\0';
	}
	rec = json_object_get(r->searches, sig);
	s = repro_fn_find(jstr(rec, "fn"));
	if (!rec || !s || !s->search_op || repro_sig_params(s->name, &sop, &sx, &sw, &sy) != 0 ||
	    !json_is_integer(json_object_get(rec, "requested")))
		return NULL;
	cargs = json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:{s:O}, s:{s:O}}",
			  "handle", json_object_get(args, "handle"), sx, json_object_get(args, x),
			  sw, json_object_get(args, w), "convDesc", json_object_get(args, "convDesc"),
			  sy, json_object_get(args, y), "requestedAlgoCount", json_object_get(rec, "requested"),
			  "returnedAlgoCount", "value", json_object_get(rec, "returned"),
			  "perfResults", "values", json_object_get(rec, "results"));
	if (!cargs)
		return NULL;
	return json_pack("{s:s, s:s, s:i, s:o, s:b}", "event", "call", "fn", s->name, "status", 0, "args", cargs,
			 "from_search_record", 1);
}

/* A record's copy number as the key of the reader's copies (KEY, 8 bytes); 0 when it has none. */
static int
copy_key(json_t *copy, char *key)
{
	if (!json_is_integer(copy) || json_integer_value(copy) < 0 || json_integer_value(copy) >= 64)
		return 0;
	snprintf(key, 8, "%d", (int)json_integer_value(copy));
	return 1;
}

/* Fills the plan from the chosen record; 0, or -1 after a message. */
static int
make_plan(struct reader *r, json_t *rec, const struct repro_fn *f)
{
	struct repro_plan *p = r->plan;
	json_t *args = json_object_get(rec, "args");
	struct repro_desc *descs[REPRO_MAX_PARAMS] = { 0 };
	json_t *lib = json_object_get(r->header, "library");
	char key[8];
	int si;

	/* The copy the call reached, where the records name its library; else the header's. */
	if (copy_key(json_object_get(rec, "copy"), key) && json_object_get(r->copies, key))
		lib = json_object_get(r->copies, key);

	p->fn = f;
	p->record = json_incref(rec);
	p->failure = strcmp(jstr(rec, "event"), "failure") == 0;
	p->status = json_integer_value(json_object_get(rec, "status"));
	if (!json_is_integer(json_object_get(rec, "status")) || p->status < 0 || p->status > INT_MAX)
		return plan_error(r, "%s: a status that is not a cudnnStatus_t%s", jstr(rec, "fn"), "");
	p->status_name = jstr(rec, "status_name");
	p->message = jstr(rec, "message");
	p->file = r->file;
	p->record_no = r->line_no;
	p->call_no = r->calls;
	p->failure_no = p->failure ? r->failures : 0;
	p->program = jstr(r->header, "program");
	p->host = jstr(r->header, "host");
	p->pid = json_integer_value(json_object_get(r->header, "pid"));
	p->lib_path = jstr(lib, "path");
	p->lib_version = json_integer_value(json_object_get(lib, "version"));
	p->cudart_path = r->cudart;
	p->stream = r->stream;
	if (!f) {
		/* Outside the table: the API description says what each argument is. */
		if (repro_host_plan(p, r->states) != 0) {
			r->error = 1;
			return -1;
		}
		return 0;
	}
	if (!json_is_object(args) && f->nparams)
		return plan_error(r, "%s: no arguments in the record%s", f->name, "");
	for (int i = 0; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];
		json_t *v = json_object_get(args, q->name);

		if (!v)
			return plan_error(r, "%s: no argument %s in the record", f->name, q->name);
		if (q->role == RP_HANDLE)
			p->handle_null = json_is_null(v);
		if (q->role == RP_DESC && !json_is_null(v)) {
			descs[i] = plan_desc(r, p, v, q->ref, q->name);
			if (!descs[i])
				return -1;
		}
	}
	for (int i = 0; i < f->nparams; i++) {
		const struct repro_param *q = &f->params[i];
		json_t *v = json_object_get(args, q->name);
		int rc = 0;

		if (q->role == RP_DATA_IN || q->role == RP_DATA_OUT)
			rc = plan_buffer(r, p, q->name, v, descs[q->ref] ? descs[q->ref]->bytes : 0,
					 q->role == RP_DATA_IN, descs[q->ref]);
		else if (q->role == RP_WORKSPACE) {
			json_t *size = json_object_get(args, f->params[q->ref].name);

			if (!json_is_integer(size) || json_integer_value(size) < 0 ||
			    (unsigned long long)json_integer_value(size) > MAX_BYTES)
				return plan_error(r, "%s: no workspace size in the record%s", f->name, "");
			rc = plan_buffer(r, p, q->name, v, (unsigned long long)json_integer_value(size), 0, NULL);
		}
		if (rc)
			return -1;
	}
	/* The search before it, when the same descriptors were searched. */
	si = op_index(f->op);
	if (si >= 0 && r->search[si]) {
		const struct repro_fn *s = repro_fn_find(jstr(r->search[si], "fn"));
		json_t *sargs = json_object_get(r->search[si], "args");
		int same = 1;

		for (int i = 0; s && i < s->nparams; i++) {
			const char *id;
			int found = 0;

			if (s->params[i].role != RP_DESC)
				continue;
			id = arg_id(json_object_get(sargs, s->params[i].name));
			for (int j = 0; id && j < p->ndescs; j++)
				found |= strcmp(p->descs[j].id, id) == 0;
			same &= found;
		}
		if (s && same)
			p->search = json_incref(r->search[si]);
	}
	if (si >= 0 && !p->search && r->searches)
		p->search = search_call(r, p, args, f);
	if (strcmp(f->name, "cudnnBackendFinalize") == 0) {
		const char *on = jstr(json_object_get(args, "descriptor"), "id");
		json_t *made = NULL;
		int traced = create_traced(r->backend, on);
		const char *type = jstr(json_object_get(args, "descriptor"), "type");

		/*
		 * A plan or an engine config whose calls were not traced: made again from its record, its
		 * config's (the engine and knobs a plan of it names) and its graph's.
		 */
		if (!traced && type && (strcmp(type, "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR") == 0 ||
					strcmp(type, "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR") == 0) &&
		    (made = repro_graph_rebuild_desc(rec, r->configs, r->graphs)))
			p->graph_rebuilt = 2;
		if (!(made || r->backend) || repro_graph_plan(p, made ? made : r->backend, rec) != 0) {
			if (!(made || r->backend))
				plan_error(r, "cudnnBackendFinalize: no traced graph API calls before it (trace"
					   " cudnnBackend* from the start)%s%s", "", "");
			json_decref(made);
			r->error = 1;
			return -1;
		}
		json_decref(made);
	}
	if (repro_graph_execution(f->name) || (repro_graph_on_desc(f->name) &&
							      strcmp(f->name, "cudnnBackendFinalize") != 0)) {
		/* An execution's plan, or the descriptor a failed SetAttribute or GetAttribute was on. */
		int execute = repro_graph_execution(f->name);
		const char *on = jstr(json_object_get(args, execute ? "executionPlan" : "descriptor"), "id");
		json_t *calls = r->backend, *made = NULL;
		/* Its creation traced: replay the program's calls; else make them up from the records. */
		int traced = create_traced(calls, on);

		if (execute)
			p->handle_null = json_is_null(json_object_get(args, "handle"));
		if (!traced) {
			const char *graph = jstr(json_object_get(args, "executionPlan"), "graph");

			made = !execute ? repro_graph_rebuild_desc(rec, r->configs, r->graphs) :
			       repro_graph_rebuild(rec, graph ? json_object_get(r->graphs, graph) : NULL);
			if (!made) {
				r->error = 1;
				return -1;
			}
			calls = made;
			p->graph_rebuilt = execute ? 1 : 2;
		}
		if (repro_graph_plan(p, calls, rec) != 0) {
			json_decref(made);
			r->error = 1;
			return -1;
		}
		json_decref(made);
	}
	return 0;
}

static void
plan_free(struct repro_plan *p)
{
	for (int i = 0; i < p->ndescs; i++)
		json_decref(p->descs[i].sets);
	json_decref(p->record);
	json_decref(p->search);
	json_decref(p->graph_calls);
	json_decref(p->graph_types);
	repro_host_free(p);
	free((char *)p->build);
	memset(p, 0, sizeof(*p));
}

/*
 * A plan of the call made on the side, into SCRATCH (plan_free it after), the reader as it was before; what
 * stopped it into WHY, nothing on stderr. 0 when it was made.
 */
static int
plan_trial(struct reader *r, json_t *rec, const struct repro_fn *f, struct repro_plan *scratch, char *why,
	   size_t cap)
{
	struct repro_plan *keep = r->plan;
	int error = r->error, rc;

	memset(scratch, 0, sizeof(*scratch));
	r->plan = scratch;
	complain_into(why, cap);
	rc = make_plan(r, rec, f);
	complain_into(NULL, 0);
	r->plan = keep;
	r->error = error;
	return rc;
}

/* Whether the call computes the signature --signature asks for. */
static int
signature_matches(struct reader *r, json_t *rec, const struct repro_fn *f)
{
	struct repro_plan scratch;
	char sig[2048], why[256];
	int ok;

	if (repro_graph_execution(f->name)) {
		const char *s = jstr(json_object_get(json_object_get(rec, "args"), "executionPlan"), "signature");

		return s && repro_signature_matches(s, r->want_sig);
	}
	ok = plan_trial(r, rec, f, &scratch, why, sizeof(why)) == 0 && repro_signature(&scratch, sig, sizeof(sig)) == 0 &&
	     repro_signature_matches(sig, r->want_sig);
	plan_free(&scratch);
	return ok;
}

static void
list_line(struct reader *r, json_t *rec, const char *fn, int failure, int gpu)
{
	json_t *args = json_object_get(rec, "args");
	const char *key;
	json_t *v;
	int n = 0;

	/* One line a call, whatever bytes the records hold (repro_text). */
	printf("%6lld  %-8s %s -> ", r->calls, failure ? "failure" : "call", fn);
	repro_text(stdout, jstr(rec, "status_name"));
	if (failure)
		printf(" (--failure %lld)", r->failures);
	/* Replayed with device memory: from the API description (repro-host.c), or a table call with buffers. */
	if (gpu)
		fputs(" [needs a GPU: its replay allocates device memory]", stdout);
	if (json_is_true(json_object_get(rec, "injected")))
		fputs(" [injected by CUDNNSPY_INJECT: cuDNN never saw it]", stdout);
	if (json_is_true(json_object_get(rec, "no_function")))
		fputs(" [the spy's answer: its cuDNN has no such function]", stdout);
	json_object_foreach(args, key, v) {
		const char *desc = jstr(v, "desc");

		if (desc && n++ < 4) {
			fputs(n == 1 ? ": " : ", ", stdout);
			repro_text(stdout, key);
			putchar('=');
			repro_text(stdout, desc);
		}
	}
	/* The graph API's: what was finalized, the plan's engine. */
	if (jstr(json_object_get(args, "descriptor"), "id")) {
		fputs(": ", stdout);
		repro_text(stdout, jstr(json_object_get(args, "descriptor"), "id"));
		if (jstr(json_object_get(args, "descriptor"), "type")) {
			putchar(' ');
			repro_text(stdout, jstr(json_object_get(args, "descriptor"), "type"));
		}
	}
	if (json_is_integer(json_object_get(json_object_get(args, "executionPlan"), "engine"))) {
		fputs(": plan ", stdout);
		repro_text(stdout, jstr(json_object_get(args, "executionPlan"), "id"));
		printf(", engine %lld",
		       (long long)json_integer_value(json_object_get(json_object_get(args, "executionPlan"), "engine")));
	}
	putchar('\n');
}

static void
list_refused(struct reader *r, json_t *rec, const char *fn, const char *why)
{
	printf("%6lld  %-8s %s -> ", r->calls, "failure", fn);
	repro_text(stdout, jstr(rec, "status_name"));
	printf(" (--failure %lld): repro cannot replay it: ", r->failures);
	repro_text(stdout, why);
	putchar('\n');
}

/* Whether a graph API call names no backend descriptor but NULL: the program passed NULL (descriptor, plan, pack). */
static int
null_backend(const char *fn, json_t *args)
{
	static const char *const names[] = { "descriptor", "executionPlan", "variantPack" };
	int some = 0;

	if (strncmp(fn, "cudnnBackend", 12) != 0 || strcmp(fn, "cudnnBackendCreateDescriptor") == 0)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_t *v = json_object_get(args, names[i]);

		if (v && !json_is_null(v))
			return 0;
		some |= v != NULL;
	}
	return some;
}

/* Whether a descriptor among the call's arguments was filled by cuDNN (cudnnDeriveBNTensorDescriptor). */
static int
filled_arg(json_t *args)
{
	const char *key;
	json_t *v;

	json_object_foreach(args, key, v)
		if (json_is_object(v) && jstr(v, "filled_by"))
			return 1;
	return 0;
}

/* One record; returns 1 when the pick is made (stop reading). */
static int
take(struct reader *r, json_t *rec)
{
	const char *event = jstr(rec, "event"), *fn;
	const struct repro_fn *f;
	int failure, gpu = 0;
	json_t *args;

	if (!event)
		return 0;
	if (strcmp(event, "header") == 0) {
		reset_file(r);
		next_segment(r);
		r->header = json_incref(rec);
		if (r->list) {
			repro_text(stdout, r->file);
			fputs(": ", stdout);
			repro_text(stdout, jstr(rec, "program"));
			printf(" (pid %lld)\n", (long long)json_integer_value(json_object_get(rec, "pid")));
		}
		return 0;
	}
	if (strcmp(event, "search") == 0) {
		if (!r->list && jstr(rec, "signature")) {
			if (!r->searches)
				r->searches = json_object();
			if (json_object_size(r->searches) < MAX_LIVE)
				json_object_set(r->searches, jstr(rec, "signature"), rec);
		}
		return 0;
	}
	if (strcmp(event, "graph") == 0) {
		/* --list too: whether an execution or a probe replays depends on its graph. */
		if (jstr(rec, "id")) {
			if (!r->graphs)
				r->graphs = json_object();
			if (json_object_size(r->graphs) < MAX_LIVE)
				json_object_set(r->graphs, jstr(rec, "id"), rec);
		}
		return 0;
	}
	if (strcmp(event, "library") == 0) {
		json_t *copy = json_object_get(rec, "copy");

		if (!r->cudart && jstr(rec, "kind") && strcmp(jstr(rec, "kind"), "cudart") == 0 && jstr(rec, "path"))
			r->cudart = strdup(jstr(rec, "path"));
		/* A copy's library: its call's repro builds against it (a process with cuDNN 8 and 9 both). */
		char key[8];

		if (jstr(rec, "kind") && strcmp(jstr(rec, "kind"), "cudnn") == 0 && jstr(rec, "path") &&
		    json_is_true(json_object_get(rec, "answers")) && copy_key(copy, key)) {
			if (!r->copies)
				r->copies = json_object();
			json_object_set(r->copies, key, rec);
		}
		return 0;
	}
	failure = strcmp(event, "failure") == 0;
	if (!failure && strcmp(event, "call") != 0)
		return 0;
	fn = jstr(rec, "fn");
	/* A name the API description does not know is no call the spy recorded: it is not counted or kept. */
	if (!fn || spy_fn_lookup(fn) < 0) {
		if (fn && !r->unknown_fn_said++)
			complain("repro: %s: a call of '%s', which is no cuDNN function: left out (the records were edited "
				 "or are damaged)", r->file, fn);
		return 0;
	}
	r->calls++;
	r->failures += failure;
	f = repro_fn_find(fn);
	args = json_object_get(rec, "args");
	if (strncmp(fn, "cudnnBackend", 12) == 0 && !repro_graph_execution(fn)) {
		/* Kept for a graph API repro (--list plans each failure too); a framework makes a variant pack per
		 * execution, hence the cap. */
		if (!r->backend)
			r->backend = json_array();
		if (json_array_size(r->backend) < MAX_BACKEND)
			json_array_append(r->backend, rec);
		else if (!r->backend_full++)
			complain("repro: %s: more than %d graph API calls; a repro of a later execution may lack some",
				 r->file, MAX_BACKEND);
	}
	if (r->drop_next && r->states)
		json_object_del(r->states, r->drop_next);
	free(r->drop_next);
	r->drop_next = NULL;
	r->noted_state = NULL;
	json_decref(r->noted_before);
	r->noted_before = NULL;
	if (json_integer_value(json_object_get(rec, "status")) == 0 || failure)
		note_state(r, rec, fn, failure);
	/* What a Destroy forgets, once the record after it is read: a repro of the Destroy needs it. */
	if (!failure && json_integer_value(json_object_get(rec, "status")) == 0 &&
	    strncmp(fn, "cudnnDestroy", 12) == 0 && strcmp(fn, "cudnnDestroy") != 0) {
		const char *key;
		json_t *v;

		json_object_foreach(args, key, v)
			if (arg_id(v) && !r->drop_next)
				r->drop_next = strdup(arg_id(v));
	}
	if (!failure && json_integer_value(json_object_get(rec, "status")) == 0) {
		/* The state the calls after this one see. */
		if (f && (f->cls == RF_SET || f->cls == RF_SETTING))
			note_set(r, f, args);
		else if (strncmp(fn, "cudnnDestroy", 12) == 0 && strcmp(fn, "cudnnDestroy") != 0) {
			const char *key;
			json_t *v;

			json_object_foreach(args, key, v)
				if (arg_id(v))
					live_drop(r, arg_id(v));
		} else if (strncmp(fn, "cudnnCreate", 11) == 0) {
			const char *key;
			json_t *v;

			/* A new object under an id: nothing of an earlier one with it. */
			json_object_foreach(args, key, v) {
				const char *id = jstr(json_object_get(v, "value") ? v : NULL, "value");

				if (id)
					live_drop(r, id);
				if (id && repro_id_ok(id))
					state_sets(r, id, 1);
			}
		} else if (strcmp(fn, "cudnnSetStream") == 0 && jstr(args, "streamId")) {
			free(r->stream);
			r->stream = strdup(jstr(args, "streamId"));
		}
		if (f && f->search_op) {
			int i = op_index(f->search_op);

			json_decref(r->search[i]);
			r->search[i] = json_incref(rec);
		}
	}
	if (f && f->cls == RF_CALL && strncmp(fn, "cudnnBackend", 12) != 0 && filled_arg(args) &&
	    repro_host_can(fn, rec, NULL, 0) == 0)
		f = NULL;	/* the table makes descriptors by Set calls only; repro-host.c replays a filling call too */
	/* A graph API call on a NULL descriptor: nothing to rebuild, repro-host.c passes the NULL the program did. */
	if (f && (repro_graph_on_desc(fn) || repro_graph_execution(fn)) && null_backend(fn, args))
		f = NULL;
	/* cudnnCreate(NULL): the table's replay makes a handle; repro-host.c passes the NULL the program did. */
	if (f && strcmp(fn, "cudnnCreate") == 0 && json_is_null(json_object_get(args, "handle")))
		f = NULL;
	if (!f || f->cls != RF_CALL) {
		char why[256];

		/* Planned (below) only when it is listed or may be the pick: a big traced run has many such calls. */
		if (!r->list && !(r->want_call && r->calls == r->want_call) &&
		    !(failure && (r->pick_default || (r->want_failure && r->failures == r->want_failure))))
			return 0;
		/* Outside the table: any call whose arguments the records hold whole (repro-host.c). */
		if (strncmp(fn, "cudnnBackend", 12) == 0 && !null_backend(fn, args))
			snprintf(why, sizeof(why), "%s: a graph API call repro does not replay (it replays executions, "
				 "and a failed Finalize, SetAttribute or GetAttribute)", fn);
		if ((strncmp(fn, "cudnnBackend", 12) == 0 && !null_backend(fn, args)) || repro_host_can(fn, rec, why, sizeof(why)) != 0 ||
		    state_hide(r, 1) || repro_host_try(rec, r->states, why, sizeof(why)) != 0 || state_hide(r, 0)) {
			state_hide(r, 0);
			/* --list names every failure, and why repro cannot replay one. */
			if (r->list && failure)
				list_refused(r, rec, fn, why);
			else if (failure && r->want_failure && r->failures == r->want_failure && why[0])
				complain("repro: %s: failure %lld cannot be replayed: %s", r->file, (long long)r->failures, why);
			return 0;
		}
		f = NULL;
	} else if (repro_graph_on_desc(fn) && !failure) {
		return 0;
	}
	if (r->list && failure && f) {
		/* A call of the table is listed as replayable only once its plan is made; else with why. */
		struct repro_plan scratch;
		char why[512];
		int ok = plan_trial(r, rec, f, &scratch, why, sizeof(why)) == 0;

		gpu = ok && scratch.nbufs > 0;
		plan_free(&scratch);
		if (!ok) {
			/* Its place in the records is this list's own: what is left is why. */
			const char *at = strstr(why, ": line ") ? NULL : strstr(why, ", line ");

			list_refused(r, rec, fn, at && strstr(at, ": ") ? strstr(at, ": ") + 2 : why);
			return 0;
		}
	}
	if (r->list) {
		list_line(r, rec, fn, failure, f ? gpu : repro_host_device_data(rec));
		return 0;
	}
	if (r->want_sig && !f)
		return 0;
	if (r->want_sig) {
		if (!signature_matches(r, rec, f))
			return 0;
		if (!failure) {
			long long *first = f->op || repro_graph_execution(fn) ? &r->sig_call : &r->sig_other;

			if (!*first)
				*first = r->calls;
			return 0;
		}
	} else if (r->pick_default) {
		if (!failure)
			return 0;
		if (strcmp(fn, "cudnnCreate") == 0) {
			if (!r->default_create)
				r->default_create = r->failures;
			return 0;
		}
		/* A status the spy injected, or gave for a function its copy lacks, is no cuDNN failure to reproduce:
		 * the last choice but cudnnCreate's. */
		if (json_is_true(json_object_get(rec, "injected")) || json_is_true(json_object_get(rec, "no_function"))) {
			if (!r->default_injected)
				r->default_injected = r->failures;
			return 0;
		}
		/* Without a GPU here, a failure whose replay needs a handle cannot show its status. */
		if (r->no_gpu && ((f && !(repro_graph_on_desc(f->name) && strcmp(f->name, "cudnnBackendFinalize") != 0)) ||
				  repro_host_needs_handle(rec))) {
			if (!r->default_any)
				r->default_any = r->failures;
			return 0;
		}
		r->default_pick = r->failures;
	} else if (r->want_call ? r->calls != r->want_call : (!failure || r->failures != r->want_failure)) {
		return 0;
	}
	r->found = 1;
	if (!f)
		state_hide(r, 1);
	make_plan(r, rec, f);
	return 1;
}

/* A plan record, or a plan descriptor in a failure record: its config's id, engine, knobs and graph. */
static int
is_plan_of_config(json_t *o)
{
	return jstr(o, "config") && repro_id_ok(jstr(o, "config")) && jstr(o, "graph") && repro_id_ok(jstr(o, "graph")) &&
	       json_is_integer(json_object_get(o, "engine")) && json_is_array(json_object_get(o, "knobs"));
}

/* What the records say of engine config ID, each the first time it is said; 0 when there is no room. */
static int
note_config(json_t *configs, const char *id, json_t *engine, json_t *knobs, const char *graph)
{
	json_t *c = json_object_get(configs, id);

	if (!c) {
		if (json_object_size(configs) >= MAX_LIVE)
			return 0;
		json_object_set_new(configs, id, c = json_object());
	}
	if (engine && !json_object_get(c, "engine"))
		json_object_set(c, "engine", engine);
	if (knobs && !json_object_get(c, "knobs"))
		json_object_set(c, "knobs", knobs);
	if (graph && !json_object_get(c, "graph"))
		json_object_set_new(c, "graph", json_string(graph));
	return 1;
}

/*
 * An engine config cuDNN filled from a heuristics query is named in a failed probe of it (cudnn-frontend asks
 * each for CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED) by its id alone; the heuristics record that says its engine,
 * and the plan records that say its knobs, come after the probe. A first pass over the file keeps them, by
 * config id: {"engine", "knobs" (from a plan, or from a plan's failure record), "graph", "unfinalized" (its own
 * Finalize failed)}; and the graph records, which a probe's rebuild needs.
 */
static void
config_pass(struct reader *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags;
	struct rec_reader in;
	const char *line;
	size_t n;

	json_decref(r->segs);
	r->segs = json_array();
	r->seg_no = 0;
	/* Records before the first header (a cut file) are a process of their own. */
	json_array_append_new(r->segs, json_pack("{s:{}, s:{}}", "configs", "graphs"));
	if (fd < 0)
		return;
	rec_open_fd(&in, fd);
	while (rec_next(&in, &line, &n, &flags)) {
		json_t *rec, *v, *configs, *graphs;
		const char *event, *graph;
		size_t k;

		/* Only the three kinds it keeps are parsed: a traced run has millions of other records. */
		if (!flags && memmem(line, n, "\"event\":\"header\"", 16) &&
		    json_array_size(r->segs) < MAX_FILES) {
			json_array_append_new(r->segs, json_pack("{s:{}, s:{}}", "configs", "graphs"));
			continue;
		}
		configs = json_object_get(json_array_get(r->segs, json_array_size(r->segs) - 1), "configs");
		graphs = json_object_get(json_array_get(r->segs, json_array_size(r->segs) - 1), "graphs");
		if (n > LINE_CAP || flags || (!memmem(line, n, "\"event\":\"plan\"", 14) &&
					      !memmem(line, n, "\"event\":\"heuristics\"", 20) &&
					      !memmem(line, n, "\"event\":\"graph\"", 15) &&
					      !(memmem(line, n, "\"event\":\"failure\"", 17) &&
						(memmem(line, n, "\"config\":\"backend#", 18) ||
						 memmem(line, n, "\"CUDNN_BACKEND_ENGINECFG_DESCRIPTOR\"", 36)))))
			continue;
		rec = json_loadb(line, n, 0, NULL);
		event = jstr(rec, "event");
		graph = jstr(rec, "graph");
		if (!event) {
			json_decref(rec);
			continue;
		}
		if (strcmp(event, "graph") == 0 && jstr(rec, "id") && repro_id_ok(jstr(rec, "id"))) {
			if (json_object_size(graphs) < MAX_LIVE)
				json_object_set(graphs, jstr(rec, "id"), rec);
		} else if (strcmp(event, "heuristics") == 0 && graph && repro_id_ok(graph)) {
			json_array_foreach(json_object_get(rec, "configs"), k, v) {
				json_t *e = json_array_get(json_object_get(rec, "engines"), k);

				if (json_is_string(v) && repro_id_ok(json_string_value(v)) && json_is_integer(e))
					note_config(configs, json_string_value(v), e, NULL, graph);
			}
		} else if (strcmp(event, "failure") == 0) {
			json_t *d = json_object_get(json_object_get(rec, "args"), "descriptor");

			/* A failure on a plan names its config's engine and knobs (a plan that did not finalize). */
			if (is_plan_of_config(d))
				note_config(configs, jstr(d, "config"), json_object_get(d, "engine"),
					    json_object_get(d, "knobs"), jstr(d, "graph"));
			/* A config that did not finalize: a plan of it is made again on it unfinalized. */
			if (jstr(rec, "fn") && strcmp(jstr(rec, "fn"), "cudnnBackendFinalize") == 0 && jstr(d, "type") &&
			    strcmp(jstr(d, "type"), "CUDNN_BACKEND_ENGINECFG_DESCRIPTOR") == 0 && jstr(d, "id") &&
			    repro_id_ok(jstr(d, "id")) && note_config(configs, jstr(d, "id"), NULL, NULL, NULL))
				json_object_set_new(json_object_get(configs, jstr(d, "id")), "unfinalized", json_true());
		} else if (strcmp(event, "plan") == 0 && is_plan_of_config(rec)) {
			/* The first plan of it: the knobs it had when the program built one. */
			note_config(configs, jstr(rec, "config"), json_object_get(rec, "engine"),
				    json_object_get(rec, "knobs"), graph);
		}
		json_decref(rec);
	}
	rec_close(&in);
	close(fd);
}

/* The next process's configs and graphs (config_pass), as its records begin. */
static void
next_segment(struct reader *r)
{
	json_t *seg = json_array_get(r->segs, r->seg_no++);

	json_decref(r->configs);
	json_decref(r->graphs);
	r->configs = json_incref(json_object_get(seg, "configs"));
	/* A copy: the graph records read on add to it, and a process's are its own. */
	r->graphs = json_object_get(seg, "graphs") ? json_copy(json_object_get(seg, "graphs")) : NULL;
}

/* Reads one file; 1 when the pick was made in it, -1 when it cannot be read. */
static int
read_file(struct reader *r, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags;
	struct rec_reader in;
	const char *line;
	size_t n;
	int done = 0;

	if (fd < 0) {
		complain("repro: %s: %s", path, strerror(errno));
		return -1;
	}
	r->file = path;
	r->line_no = 0;
	reset_file(r);
	config_pass(r, path);
	next_segment(r);
	/* Either format: records.c gives format 2's records as the lines format 1 holds. */
	rec_open_fd(&in, fd);
	while (!done && rec_next(&in, &line, &n, &flags)) {
		json_t *rec;
		json_error_t err;

		r->line_no++;
		if (n > LINE_CAP || flags) {
			r->skipped_lines++;
			continue;
		}
		rec = json_loadb(line, n, 0, &err);
		if (!json_is_object(rec)) {
			r->skipped_lines++;
			json_decref(rec);
			continue;
		}
		done = take(r, rec);
		json_decref(rec);
	}
	/* Its first frame is no record file's (cut, damaged, another kind of file): said, and nothing of it taken. */
	if (in.refused) {
		complain("repro: %s: %s", path, rec_refused_why(&in));
		r->refused_files++;
	}
	rec_close(&in);
	close(fd);
	return done;
}

/* The record files RECORDS names: itself, or a directory's *.jsonl* files in name order. */
static char **
record_files(const char *records, size_t *count)
{
	struct stat st;
	char **files = NULL;
	size_t n = 0;

	*count = 0;
	if (stat(records, &st) != 0) {
		complain("repro: %s: %s", records, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		files = calloc(1, sizeof(*files));
		if (!files || !(files[0] = strdup(records))) {
			free(files);
			return NULL;
		}
		*count = 1;
		return files;
	}
	errno = 0;
	files = rec_dir_files(records, MAX_FILES, &n);
	if (n == 0 && errno) {
		complain("repro: %s: %s", records, strerror(errno));
		return NULL;
	}
	if (n == 0) {
		complain("repro: %s: no record files (*.jsonl, *.cudnnspy.rec) in this directory", records);
		free(files);
		return NULL;
	}
	*count = n;
	return files;
}

static int
read_all(struct reader *r, char **files, size_t nfiles)
{
	for (size_t i = 0; i < nfiles; i++) {
		int rc = read_file(r, files[i]);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* Single-quoted for the shell when it needs quoting. */
static void
shell_word(char *out, size_t cap, const char *s)
{
	size_t pos = 0;
	int plain = s[0] != '\0';

	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,", *c))
			plain = 0;
	if (plain) {
		snprintf(out, cap, "%s", s);
		return;
	}
	pos += (size_t)snprintf(out + pos, cap - pos, "'");
	for (const char *c = s; *c && pos + 5 < cap; c++) {
		if (*c == '\'') {
			memcpy(out + pos, "'\\''", 4);
			pos += 4;
		} else {
			out[pos++] = *c;
		}
	}
	out[pos] = '\0';
	snprintf(out + pos, cap - pos, "'");
}

static int
exists(const char *dir, const char *file)
{
	char *path;
	struct stat st;
	int rc;

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return 0;
	rc = stat(path, &st) == 0;
	free(path);
	return rc;
}

/* -lNAME when libNAME.so is there, else -l: the recorded file or a versioned one that is there. */
static void
lib_flag(char *out, size_t cap, const char *dir, const char *name, const char *file)
{
	static const char *const majors[] = { "9", "13", "12", "11", "8" };
	char so[64];

	snprintf(so, sizeof(so), "lib%s.so", name);
	if (!dir || exists(dir, so)) {
		snprintf(out, cap, "-l%s", name);
		return;
	}
	if (file && exists(dir, file)) {
		snprintf(out, cap, "-l:%s", file);
		return;
	}
	for (size_t i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
		snprintf(so, sizeof(so), "lib%s.so.%s", name, majors[i]);
		if (exists(dir, so)) {
			snprintf(out, cap, "-l:%s", so);
			return;
		}
	}
	snprintf(out, cap, "-l%s", name);
}

/* Appends " FLAG'WORD'" to *cmd (quoted for the shell when it needs it). */
static void
add_flag(char **cmd, const char *flag, const char *word)
{
	char q[2 * PATH_MAX + 8];
	char *more;

	if (!*cmd)
		return;
	shell_word(q, sizeof(q), word);
	if (asprintf(&more, "%s %s%s", *cmd, flag, q) < 0)
		more = NULL;
	free(*cmd);
	*cmd = more;
}

static char *
dir_of(const char *path)
{
	char *d = path ? strdup(path) : NULL;
	char *slash = d ? strrchr(d, '/') : NULL;

	if (!slash) {
		free(d);
		return NULL;
	}
	*slash = '\0';
	return d;
}

/* The command that builds the program: against the recorded cuDNN, or DIR. */
static char *
build_command(struct repro_plan *p, const char *cudnn_dir, const char *source)
{
	char *lib = cudnn_dir ? strdup(cudnn_dir) : dir_of(p->lib_path);
	char *rt = dir_of(p->cudart_path);
	static const char *const rt_dirs[] = { "/usr/local/cuda/lib64", "/usr/local/cuda/lib" };
	char inc[PATH_MAX] = "", rt_inc[PATH_MAX] = "";
	char l_cudnn[PATH_MAX], l_rt[PATH_MAX], exe[PATH_MAX];
	const char *base;
	char *cmd = NULL;
	size_t len;

	/* The headers: beside the library as CUDA and the tarballs lay them out, or the system's. */
	if (lib) {
		const char *cands[] = { "/../include", "/include", "/../../include" };

		for (size_t i = 0; i < 3 && !inc[0]; i++) {
			char d[PATH_MAX];

			snprintf(d, sizeof(d), "%s%s", lib, cands[i]);
			if (exists(d, "cudnn.h") && !realpath(d, inc))
				snprintf(inc, sizeof(inc), "%s", d);
		}
	}
	if (!inc[0] && !exists("/usr/include", "cudnn.h")) {
		const char *cands[] = { "/usr/local/cuda/include", "/usr/include/x86_64-linux-gnu" };

		for (size_t i = 0; i < 2 && !inc[0]; i++)
			if (exists(cands[i], "cudnn.h"))
				snprintf(inc, sizeof(inc), "%s", cands[i]);
	}
	/* The program lands beside its source: bug.c builds bug. */
	base = source ? source : "repro.c";
	len = strlen(base);
	snprintf(exe, sizeof(exe), "%.*s", (int)(len > 2 && strcmp(base + len - 2, ".c") == 0 ? len - 2 : len), base);
	if (strcmp(exe, base) == 0)
		snprintf(exe + strlen(exe), sizeof(exe) - strlen(exe), ".out");
	snprintf(p->exe, sizeof(p->exe), "%s", exe);
	/* The CUDA runtime: the one the program loaded, beside cuDNN, or CUDA's. */
	for (size_t i = 0; !rt && !(lib && exists(lib, "libcudart.so")) && i < 2; i++)
		if (exists(rt_dirs[i], "libcudart.so"))
			rt = strdup(rt_dirs[i]);
	/* cudnn.h includes cuda_runtime_api.h: beside it, beside the runtime, or CUDA's. */
	if (!exists(inc[0] ? inc : "/usr/include", "cuda_runtime_api.h")) {
		char d[PATH_MAX];

		snprintf(d, sizeof(d), "%s/../include", rt ? rt : "/nonexistent");
		if (!rt || !exists(d, "cuda_runtime_api.h") || !realpath(d, rt_inc))
			rt_inc[0] = '\0';
		if (!rt_inc[0] && exists("/usr/local/cuda/include", "cuda_runtime_api.h"))
			snprintf(rt_inc, sizeof(rt_inc), "/usr/local/cuda/include");
	}
	{
		const char *f = p->lib_path ? strrchr(p->lib_path, '/') : NULL;
		const char *g = p->cudart_path ? strrchr(p->cudart_path, '/') : NULL;

		lib_flag(l_cudnn, sizeof(l_cudnn), lib, "cudnn", cudnn_dir ? NULL : f ? f + 1 : NULL);
		lib_flag(l_rt, sizeof(l_rt), rt ? rt : lib, "cudart", g ? g + 1 : NULL);
	}
	cmd = strdup("cc -Wall -Werror");
	add_flag(&cmd, "-o ", exe);
	add_flag(&cmd, "", source ? source : "repro.c");
	if (inc[0])
		add_flag(&cmd, "-I", inc);
	if (rt_inc[0])
		add_flag(&cmd, "-I", rt_inc);
	/*
	 * -Xlinker passes each word to the linker whole: -Wl,-rpath,DIR would split a directory with commas
	 * into linker options (issue 27: "/x/lib,-o,/some/file" made the linker overwrite that file).
	 */
	if (lib) {
		add_flag(&cmd, "-L", lib);
		add_flag(&cmd, "-Xlinker -rpath -Xlinker ", lib);
	}
	if (rt && (!lib || strcmp(rt, lib) != 0)) {
		add_flag(&cmd, "-L", rt);
		add_flag(&cmd, "-Xlinker -rpath -Xlinker ", rt);
	}
	add_flag(&cmd, "", l_cudnn);
	add_flag(&cmd, "", l_rt);
	free(lib);
	free(rt);
	return cmd;
}

static int
parse_count(const char *opt, const char *v, long long *out)
{
	char *end;

	errno = 0;
	*out = v ? strtoll(v, &end, 10) : 0;
	if (!v || errno || *end || end == v || *out < 1)
		return usage_error("%s takes a number from 1", opt);
	return 0;
}

int
cudnnspy_repro_main(int argc, char **argv)
{
	const char *records = NULL, *out_name = NULL, *cudnn_dir = NULL, *why = NULL;
	struct reader r;
	struct repro_plan plan;
	char **files;
	size_t nfiles;
	int rc = 0, timing = 0;
	FILE *out;

	memset(&r, 0, sizeof(r));
	memset(&plan, 0, sizeof(plan));
	plan.fill = FILL_PATTERN;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(repro_usage, stdout);
			cli_print_options(stdout, "repro", 18);
			fputs(repro_usage_tail, stdout);
			return 0;
		} else if (strcmp(a, "--list") == 0) {
			r.list = 1;
		} else if (strcmp(a, "--time") == 0) {
			timing = 1;
		} else if (strcmp(a, "--call") == 0 || strcmp(a, "--failure") == 0) {
			if (parse_count(a, v, a[2] == 'c' ? &r.want_call : &r.want_failure))
				return EXIT_USAGE;
			i++;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--cudnn") == 0) {
			if (!v || !v[0])
				return usage_error("%s needs a value", a);
			if (strcmp(a, "--cudnn") == 0)
				cudnn_dir = v;
			else
				out_name = v;
			i++;
		} else if (strcmp(a, "--signature") == 0) {
			if (!v || !v[0])
				return usage_error("%s needs a value", a);
			r.want_sig = v;
			i++;
		} else if (strcmp(a, "--fill") == 0) {
			static const char *const modes[] = { "pattern", "nan", "zero", "random" };
			int m = -1;

			for (int k = 0; v && k < 4; k++)
				if (strcmp(v, modes[k]) == 0)
					m = k;
			if (m < 0)
				return usage_error("--fill takes pattern, nan, zero or random%s", "");
			plan.fill = (enum repro_fill)m;
			i++;
		} else if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		} else if (records) {
			return usage_error("one RECORDS file or directory, not '%s' too", a);
		} else {
			records = a;
		}
	}
	if (!records)
		return usage_error("no RECORDS file or directory given%s", "");
	if (!!r.want_call + !!r.want_failure + !!r.want_sig > 1)
		return usage_error("--call, --failure and --signature each pick the call: give one%s", "");
	if (cudnn_dir && !exists(cudnn_dir, "."))
		return usage_error("--cudnn %s: no such directory", cudnn_dir);
	files = record_files(records, &nfiles);
	if (!files)
		return EXIT_USAGE;
	r.pick_default = !r.list && !r.want_call && !r.want_failure && !r.want_sig;
	/* No NVIDIA device node: the repro will run where cuDNN gets no GPU, as here. */
	r.no_gpu = access("/dev/nvidiactl", F_OK) != 0;
	r.plan = &plan;
	if (read_all(&r, files, nfiles) < 0) {
		rc = EXIT_USAGE;
		goto done;
	}
	/* Nothing but refused files: an error, not an empty list. */
	if (r.refused_files == (int)nfiles) {
		rc = 1;
		goto done;
	}
	if (r.list)
		goto done;
	if (r.found && r.pick_default) {
		why = r.no_gpu ? "the first failure that replays without a GPU, which this machine lacks" :
		      "the first failure";
	} else if (!r.found && r.pick_default && (r.default_any || r.default_injected || r.default_create)) {
		/* None replays without a GPU: the first failure all the same; or, when only the handle failed, that. */
		why = r.default_any ? "the first failure; none replays without a GPU, which this machine lacks, so its "
				      "program needs one" :
		      r.default_injected ? "the first failure whose status the spy made (injected, or for a function "
					   "its cuDNN lacks): the records hold no other but cudnnCreate's" :
		      "the only kind of failure: cudnnCreate";
		r.calls = r.failures = 0;
		r.pick_default = 0;
		r.want_failure = r.default_any ? r.default_any : r.default_injected ? r.default_injected :
				 r.default_create;
		read_all(&r, files, nfiles);
	}
	if (!r.found && r.want_sig && (r.sig_call || r.sig_other)) {
		/* No failure with that signature: its first call. */
		r.calls = r.failures = 0;
		r.want_call = r.sig_call ? r.sig_call : r.sig_other;
		r.want_sig = NULL;
		read_all(&r, files, nfiles);
	}
	if (r.error) {
		rc = 1;
		goto done;
	}
	if (!r.found) {
		if (r.want_call)
			complain("repro: %s: no call %lld that repro can replay (there are %lld calls; --list shows"
				 " those it can)", records, r.want_call, r.calls);
		else if (r.want_sig)
			complain("repro: %s: no call with the signature '%s' that repro can replay (the spy's algo and"
				 " search records name the signatures)", records, r.want_sig);
		else if (r.want_failure)
			complain("repro: %s: no failure %lld of a call that repro can replay (there are %lld"
				 " failures; --list shows the calls it can)", records, r.want_failure, r.failures);
		else
			complain("repro: %s: no failure of a call that repro can replay (%lld failures in all);"
				 " pick a call with --call N (--list shows them)", records, r.failures);
		rc = 1;
		goto done;
	}
	plan.out_name = out_name;
	plan.build = build_command(&plan, cudnn_dir, out_name);
	if (!plan.build) {
		complain("repro: out of memory");
		rc = 1;
		goto done;
	}
	plan.time_default = timing;
	/* Written in memory first: a plan the writer refuses leaves no half file. */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);

		if (!mem) {
			complain("repro: out of memory");
			rc = 1;
			goto done;
		}
		rc = (plan.hplan ? repro_host_write(&plan, mem) : repro_write(&plan, mem)) == 0 ? 0 : 1;
		if (fclose(mem) != 0)
			rc = 1;
		out = rc == 0 ? out_name ? fopen(out_name, "w") : stdout : NULL;
		if (rc == 0 && !out) {
			complain("repro: %s: %s", out_name, strerror(errno));
			rc = 1;
		}
		if (out && (fwrite(text, 1, len, out) != len || fflush(out) != 0 || ferror(out))) {
			complain("repro: %s: %s", out_name ? out_name : "stdout", strerror(errno));
			rc = 1;
		}
		if (out && out_name && fclose(out) != 0 && rc == 0) {
			complain("repro: %s: %s", out_name, strerror(errno));
			rc = 1;
		}
		free(text);
	}
	if (rc == 0 && why) {
		/* The default picked: which failure, and why that one. */
		fprintf(stderr, "cudnnspy: repro: failure %lld, ", plan.failure_no);
		repro_text(stderr, jstr(plan.record, "fn"));
		fputs(" -> ", stderr);
		repro_text(stderr, plan.status_name ? plan.status_name : "?");
		fprintf(stderr, ": %s (--failure N for another, --list for all)\n", why);
	}
	if (rc == 0) {
		if (out_name)
			printf("%s\n", plan.build);
		else
			complain("build it with: %s", plan.build);
	}
done:
	reset_file(&r);
	json_decref(r.segs);
	free(r.live);
	free(r.drop_next);
	json_decref(r.hidden);
	json_decref(r.noted_before);
	plan_free(&plan);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	return rc;
}
