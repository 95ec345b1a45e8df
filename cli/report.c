/*
 * cudnnspy report: reads the JSON Lines records of one or many processes
 * and says what a person wants to know first: which cuDNN answered each
 * process, what failed and where, and where the time went.
 *
 * Every line is parsed by jansson (json_loadb), one line at a time, and only
 * aggregates are kept, so a file of any size is read in bounded memory. One
 * shortcut keeps this fast: the library writes a summary at exit that
 * already holds the per-function counts and times, so a `call` line as the
 * library writes it (it starts with {"event":"call", and ends with }) is
 * only counted when its file has a summary. A file without one (the process
 * was killed) is read a second time with those lines parsed. --full and
 * --chrome parse every line.
 *
 * The report is first built as a JSON model (build_model); the text form
 * is printed from that model, and --json prints the model itself, so that
 * both say the same.
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "cli-util.h"
#include "rules.h"
#include "symtab.h"

#define EXIT_USAGE 2

/* The schema this reader was written for (docs/output-format.md). */
#define SCHEMA_KNOWN 1

/* Longer lines are skipped and counted: no record of ours comes near. */
#define LINE_CAP (1u << 20)
/* The read buffer: a whole LINE_CAP line and room to read more. */
#define READ_BUF (4u << 20)

/*
 * Caps on what one file can make us keep, so that a hostile or broken file
 * cannot grow memory with its size: cuDNN has a few hundred functions, and
 * a run has a handful of kinds of failures.
 */
#define MAX_FNS 1024
#define MAX_GROUPS 1024
#define MAX_FINDINGS 256
#define MAX_SIGS 4096
#define SIG_CAP 1024
#define MAX_TIDS 4096
#define STR_CAP 256
#define MSG_CAP 1024
#define ARGS_CAP 600
#define STACK_KEEP 8
#define RECENT_KEEP 16

/* What the text shows of a first occurrence. */
#define STACK_SHOW 6
#define RECENT_SHOW 8
#define LIST_SHOW 16

/* Chrome: timestamps count from this long before the earliest file opened. */
#define CHROME_LEAD_NS 10000000000LL
#define CHROME_ARGS 8

static const char report_usage[] =
	"usage: cudnnspy report [--json] [--chrome FILE] [--top N] [--full] FILE_OR_DIR...\n"
	"       cudnnspy report --compare [--json] RUN_A RUN_B\n"
	"\n"
	"Reads the JSON Lines records that the spy wrote (CUDNNSPY_OUTPUT) and prints,\n"
	"for a person: each process and the cuDNN that answered it, the processes that\n"
	"loaded a different cuDNN, the failures grouped by function, status and message,\n"
	"and the functions that took the most time. A directory is read for *.jsonl*\n"
	"files, and so are its subdirectories (one level).\n"
	"\n"
	"  --json         the same report as one JSON document\n"
	"  --chrome FILE  also write a Chrome trace (Perfetto, chrome://tracing) there\n"
	"  --top N        functions in the time table (default 20, 0 for all)\n"
	"  --full         parse every call record, even when summaries make it unnecessary\n"
	"  --compare      two runs (each a file or a directory): per function, calls and\n"
	"                 total time in each and the ratio B/A; the cuDNN of each\n";

/* ---- small helpers ---- */


static void
warn_to(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
warn_to(FILE *out, const char *fmt, ...)
{
	va_list ap;

	if (!out)
		return;
	fputs("cudnnspy: ", out);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* Out of memory is not bad input: say so and stop, rather than half a report. */
static void
out_of_memory(void)
{
	complain("out of memory");
	exit(1);
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory();
	return p;
}

static void *
xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

static char *
xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		out_of_memory();
	return d;
}

/* A json_t that must exist: jansson returns NULL only when out of memory. */
static json_t *
must(json_t *j)
{
	if (!j)
		out_of_memory();
	return j;
}

static void
jset(json_t *obj, const char *key, json_t *value)
{
	if (json_object_set_new(obj, key, must(value)) != 0)
		out_of_memory();
}

static void
jpush(json_t *arr, json_t *value)
{
	if (json_array_append_new(arr, must(value)) != 0)
		out_of_memory();
}

static long long
sat_add(long long a, long long b)
{
	long long s;

	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? LLONG_MAX : LLONG_MIN;
	return s;
}

/*
 * A copy that is valid UTF-8 without control characters (each bad byte
 * becomes '?'), cut to at most CAP bytes at a character boundary, with
 * "..." when cut. Strings reach a terminal and JSON output from here, and
 * file names need not be UTF-8.
 */
static char *
clean_dup(const char *s, size_t len, size_t cap)
{
	char *d = xcalloc(1, (len < cap ? len : cap) + 4);
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = 0;

		if (c >= 0x20 && c < 0x7f)
			n = 1;
		else if (c >= 0xc2 && c <= 0xdf)
			n = 2;
		else if (c >= 0xe0 && c <= 0xef)
			n = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4;
		if (n > 1) {
			unsigned char c1 = i + 1 < len ? (unsigned char)s[i + 1] : 0;
			unsigned char lo = 0x80, hi = 0xbf;

			/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
			if (c == 0xe0)
				lo = 0xa0;
			else if (c == 0xed)
				hi = 0x9f;
			else if (c == 0xf0)
				lo = 0x90;
			else if (c == 0xf4)
				hi = 0x8f;
			if (i + n > len || c1 < lo || c1 > hi)
				n = 0;
			for (size_t k = 2; n && k < n; k++)
				if (((unsigned char)s[i + k] & 0xc0) != 0x80)
					n = 0;
		}
		if (n == 0) {
			if (o + 1 > cap)
				goto cut;
			d[o++] = '?';
			i++;
			continue;
		}
		if (o + n > cap)
			goto cut;
		memcpy(d + o, s + i, n);
		o += n;
		i += n;
	}
	d[o] = '\0';
	return d;
cut:
	memcpy(d + o, "...", 4);
	return d;
}

static char *
clean_str(const char *s, size_t cap)
{
	return clean_dup(s, strlen(s), cap);
}

/* ---- a growable string with a limit ---- */

struct sbuf {
	char *p;
	size_t len, cap, limit;
	int cut;
};

static void
sb_init(struct sbuf *b, size_t limit)
{
	b->cap = 128;
	b->p = xcalloc(1, b->cap);
	b->len = 0;
	b->limit = limit;
	b->cut = 0;
}

static void
sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->cut)
		return;
	if (b->len + n > b->limit) {
		n = b->limit - b->len;
		/* Never end in the middle of a UTF-8 character. */
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
		b->cut = 1;
	}
	if (b->len + n + 4 > b->cap) {
		while (b->len + n + 4 > b->cap)
			b->cap *= 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	if (b->cut) {
		memcpy(b->p + b->len, "...", 3);
		b->len += 3;
	}
	b->p[b->len] = '\0';
}

static void
sb_puts(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void
sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[128], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Longer than the stack buffer (signatures, messages): formatted again, whole. */
	if (n >= (int)sizeof(tmp)) {
		big = xcalloc(1, (size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (n > 0)
		sb_add(b, big ? big : tmp, (size_t)n);
	free(big);
}

/* ---- a string-keyed hash map ---- */

struct map_ent {
	char *key;
	size_t klen;
	uint64_t hash;
	void *val;
};

struct map {
	struct map_ent *ents;
	size_t cap, n;
};

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static struct map_ent *
map_slot(struct map_ent *ents, size_t cap, const char *key, size_t klen, uint64_t h)
{
	size_t mask = cap - 1, i = h & mask;

	while (ents[i].key && !(ents[i].hash == h && ents[i].klen == klen &&
				memcmp(ents[i].key, key, klen) == 0))
		i = (i + 1) & mask;
	return &ents[i];
}

static void *
map_get(struct map *m, const char *key, size_t klen)
{
	struct map_ent *e;

	if (!m->cap)
		return NULL;
	e = map_slot(m->ents, m->cap, key, klen, hash_bytes(key, klen));
	return e->key ? e->val : NULL;
}

/* Adds KEY (copied), which must not be there yet. */
static void
map_put(struct map *m, const char *key, size_t klen, void *val)
{
	struct map_ent *e;
	uint64_t h = hash_bytes(key, klen);

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct map_ent *ents = xcalloc(cap, sizeof(*ents));

		for (size_t i = 0; i < m->cap; i++)
			if (m->ents[i].key)
				*map_slot(ents, cap, m->ents[i].key, m->ents[i].klen,
					  m->ents[i].hash) = m->ents[i];
		free(m->ents);
		m->ents = ents;
		m->cap = cap;
	}
	e = map_slot(m->ents, m->cap, key, klen, h);
	e->key = xcalloc(1, klen + 1);
	memcpy(e->key, key, klen);
	e->klen = klen;
	e->hash = h;
	e->val = val;
	m->n++;
}

/* The values, in no particular order: callers sort them. */
static void **
map_values(struct map *m)
{
	void **v = xcalloc(m->n, sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < m->cap; i++)
		if (m->ents[i].key)
			v[k++] = m->ents[i].val;
	return v;
}

static void
map_free(struct map *m, void (*free_val)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->ents[i].key)
			continue;
		free(m->ents[i].key);
		if (free_val)
			free_val(m->ents[i].val);
	}
	free(m->ents);
	m->ents = NULL;
	m->cap = m->n = 0;
}

/* ---- a set of integers with a cap (thread ids, Chrome process ids) ---- */

struct llset {
	long long *v;
	unsigned char *used;
	size_t cap, n;
};

/* 1 when X is new, 0 when it was there, -1 when the set is at LIMIT. */
static int
llset_add(struct llset *s, long long x, size_t limit)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap) {
		struct llset bigger;

		if (s->n >= limit)
			goto check_only;
		bigger.cap = s->cap ? s->cap * 2 : 64;
		bigger.n = 0;
		bigger.v = xcalloc(bigger.cap, sizeof(*bigger.v));
		bigger.used = xcalloc(bigger.cap, 1);
		for (i = 0; i < s->cap; i++)
			if (s->used[i])
				llset_add(&bigger, s->v[i], limit);
		free(s->v);
		free(s->used);
		*s = bigger;
	}
check_only:
	i = (size_t)hash_bytes((const char *)&x, sizeof(x)) & (s->cap - 1);
	while (s->used[i]) {
		if (s->v[i] == x)
			return 0;
		i = (i + 1) & (s->cap - 1);
	}
	if (s->n >= limit)
		return -1;
	s->used[i] = 1;
	s->v[i] = x;
	s->n++;
	return 1;
}

static void
llset_free(struct llset *s)
{
	free(s->v);
	free(s->used);
	memset(s, 0, sizeof(*s));
}

/* ---- durations: a log-linear histogram for p50/p99 from call records ---- */

#define HIST_BUCKETS (8 + 61 * 8)

static int
hist_index(unsigned long long v)
{
	int e;

	if (v < 8)
		return (int)v;
	e = 63 - __builtin_clzll(v);
	return 8 + (e - 3) * 8 + (int)((v >> (e - 3)) & 7);
}

static long long
hist_value(int i)
{
	int e, m;

	if (i < 8)
		return i;
	e = (i - 8) / 8 + 3;
	m = (i - 8) % 8;
	/* The bucket's lower bound; the top bucket would overflow a long long. */
	if (e >= 60)
		return LLONG_MAX;
	return (long long)((8ULL + (unsigned long long)m) << (e - 3));
}

static long long
hist_percentile(const uint64_t *h, uint64_t n, int pct)
{
	uint64_t want = (n * (uint64_t)pct + 99) / 100, seen = 0;

	if (n == 0)
		return 0;
	if (want == 0)
		want = 1;
	for (int i = 0; i < HIST_BUCKETS; i++) {
		seen += h[i];
		if (seen >= want)
			return hist_value(i);
	}
	return 0;
}

/* ---- what one file holds ---- */

struct fnstat {
	char *fn;
	/* From the summary record. */
	int in_summary, s_have_gpu;
	long long s_calls, s_failures, s_internal, s_timed, s_total, s_p50, s_p99, s_gpu, s_first;
	int s_have_first;		/* the summary said each thread's first call apart (first_ns) */
	int s_steady_unknown;		/* and that the calls after it were not measured (steady_ns null) */
	/* From call and failure records. */
	int r_have_gpu;
	long long r_calls, r_failures, r_timed, r_total, r_gpu, r_p50, r_p99;
	uint64_t *hist;			/* freed when the file is done (fnstat_done) */
};

struct fgroup {
	char *fn, *status_name, *message;	/* message NULL when the record had none */
	long long status, count;
	json_t *first;				/* see first_occurrence() */
	int have_wall;
	long long wall_ns;			/* when it happened, on the wall clock */
};

struct proc {
	char *path;
	size_t order;				/* input order, for ties */
	/* The header. */
	int have_header, have_pid, have_rank, have_ppid, have_clock, have_library, lib_null;
	long long schema, pid, ppid, rank, start_unix_ns, start_mono_ns;
	char *program, *host, *spy, *mode, *lib_path, *lib_how;
	int have_lib_version, have_lib_cudart;
	long long lib_version, lib_cudart;
	/* Lines. */
	long long lines, blank, too_long, bad_json, wrong_type, cut, bad_entries, extra_headers;
	long long calls_rec, failures_rec, algo_rec, other_rec, lazy_calls;
	int read_error, pass2;
	/* The summary. */
	int have_summary;
	long long calls, failures, internal, dropped;
	/* Aggregates. */
	struct map fns;
	size_t fns_over;			/* records of functions past MAX_FNS */
	struct map groups;
	long long groups_over;			/* failures past MAX_GROUPS kinds */
	/* Chrome. */
	int chrome_meta;
	long long chrome_pid, chrome_first_t, chrome_skipped;
	int chrome_have_first_t;
	struct llset tids;
	/* Findings, once per (id, message), and convolution choices per (api, op, signature, choice). */
	struct map findings;
	long long findings_over;
	struct map sigs;
	long long sigs_over;
	/* The answering copy's file, from its library record: one build reached by several names is one. */
	char *lib_real, *lib_build_id;
	/* Where build_model put it, for lists of processes. */
	size_t sorted;
};

struct pfinding {
	char *id, *severity, *message, *fix;
};

struct psig {
	char *api, *op, *signature, *choice;
	long long calls, failures, timed, host_ns, gpu_timed, gpu_ns, ws_min, ws_max;
	int have_ws;
	int nondet;	/* the spy found cuDNN calls it non-deterministic */
};

struct report {
	struct proc **procs;
	size_t nprocs, cap;
	FILE *warn;
	int full;
	FILE *chrome;
	long long chrome_base, chrome_events, chrome_next_pid;
	int chrome_first;
	char *chrome_buf;
	size_t chrome_cap;
	struct llset chrome_pids;
};

struct report *
report_new(void)
{
	struct report *r = calloc(1, sizeof(*r));

	if (r)
		r->warn = stderr;
	return r;
}

void
report_set_warnings(struct report *r, FILE *out)
{
	r->warn = out;
}

void
report_set_full(struct report *r, int full)
{
	r->full = full;
}

static void
fnstat_free(void *v)
{
	struct fnstat *f = v;

	free(f->fn);
	free(f->hist);
	free(f);
}

static void
fgroup_free(void *v)
{
	struct fgroup *g = v;

	free(g->fn);
	free(g->status_name);
	free(g->message);
	json_decref(g->first);
	free(g);
}

static void
pfinding_free(void *v)
{
	struct pfinding *f = v;

	free(f->id);
	free(f->severity);
	free(f->message);
	free(f->fix);
	free(f);
}

static void
psig_free(void *v)
{
	struct psig *g = v;

	free(g->api);
	free(g->op);
	free(g->signature);
	free(g->choice);
	free(g);
}

static void
proc_free(struct proc *p)
{
	free(p->path);
	free(p->lib_real);
	free(p->lib_build_id);
	map_free(&p->findings, pfinding_free);
	map_free(&p->sigs, psig_free);
	free(p->program);
	free(p->host);
	free(p->spy);
	free(p->mode);
	free(p->lib_path);
	free(p->lib_how);
	map_free(&p->fns, fnstat_free);
	map_free(&p->groups, fgroup_free);
	llset_free(&p->tids);
	free(p);
}

void
report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++)
		proc_free(r->procs[i]);
	free(r->procs);
	llset_free(&r->chrome_pids);
	free(r->chrome_buf);
	free(r);
}

static struct proc *
proc_add(struct report *r, const char *path)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->path = clean_str(path, 4096);
	p->order = r->nprocs;
	if (r->nprocs == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->procs = xrealloc(r->procs, r->cap * sizeof(*r->procs));
	}
	r->procs[r->nprocs++] = p;
	return p;
}

/* ---- field access: wrong types read as absent ---- */

static int
get_int(json_t *o, const char *key, long long *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return 0;
	*out = json_integer_value(v);
	return 1;
}

/* A count or a duration: an integer that is not negative. */
static int
get_count(json_t *o, const char *key, long long *out)
{
	long long v;

	if (!get_int(o, key, &v) || v < 0)
		return 0;
	*out = v;
	return 1;
}

static const char *
get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static char *
get_clean(json_t *o, const char *key, size_t cap)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return NULL;
	return clean_dup(json_string_value(v), json_string_length(v), cap);
}

static struct fnstat *
fnstat_get(struct proc *p, const char *fn)
{
	size_t len = strlen(fn);
	struct fnstat *f;

	if (len > STR_CAP)
		len = STR_CAP;
	f = map_get(&p->fns, fn, len);
	if (f)
		return f;
	if (p->fns.n >= MAX_FNS) {
		p->fns_over++;
		return NULL;
	}
	f = xcalloc(1, sizeof(*f));
	f->fn = clean_dup(fn, len, STR_CAP);
	map_put(&p->fns, fn, len, f);
	return f;
}

/* ---- compact renderings of arguments, stacks and recent calls ---- */

static void
render_value(struct sbuf *b, json_t *v, int depth);

static void
render_clean(struct sbuf *b, const char *s, size_t len)
{
	char *c = clean_dup(s, len, ARGS_CAP);

	sb_puts(b, c);
	free(c);
}

/* A descriptor is its id and what it describes; a pointer is its address and value. */
static void
render_object(struct sbuf *b, json_t *v, int depth)
{
	json_t *id = json_object_get(v, "id"), *ptr = json_object_get(v, "ptr");
	const char *key;
	json_t *x;
	int n = 0;

	if (json_is_string(id)) {
		const char *desc = get_str(v, "desc");
		json_t *set = json_object_get(v, "set");

		render_clean(b, json_string_value(id), json_string_length(id));
		if (desc) {
			sb_puts(b, "[");
			render_clean(b, desc, strlen(desc));
			sb_puts(b, "]");
		} else if (json_is_object(set) && get_str(set, "fn")) {
			sb_puts(b, "[set by ");
			render_clean(b, get_str(set, "fn"), strlen(get_str(set, "fn")));
			sb_puts(b, "]");
		}
		return;
	}
	if (json_is_string(ptr)) {
		render_clean(b, json_string_value(ptr), json_string_length(ptr));
		if ((x = json_object_get(v, "value")) != NULL) {
			sb_puts(b, "->");
			render_value(b, x, depth + 1);
		} else if ((x = json_object_get(v, "values")) != NULL) {
			sb_puts(b, "->");
			render_value(b, x, depth + 1);
		}
		return;
	}
	if (depth >= 2) {
		sb_puts(b, "{...}");
		return;
	}
	sb_puts(b, "{");
	json_object_foreach(v, key, x) {
		if (n++)
			sb_puts(b, ", ");
		if (n > 8) {
			sb_puts(b, "...");
			break;
		}
		render_clean(b, key, strlen(key));
		sb_puts(b, "=");
		render_value(b, x, depth + 1);
	}
	sb_puts(b, "}");
}

static void
render_value(struct sbuf *b, json_t *v, int depth)
{
	size_t i;
	json_t *x;

	switch (json_typeof(v)) {
	case JSON_NULL:
		sb_puts(b, "NULL");
		break;
	case JSON_TRUE:
		sb_puts(b, "true");
		break;
	case JSON_FALSE:
		sb_puts(b, "false");
		break;
	case JSON_INTEGER:
		sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		sb_printf(b, "%g", json_real_value(v));
		break;
	case JSON_STRING:
		render_clean(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_ARRAY:
		if (depth >= 2) {
			sb_puts(b, "[...]");
			break;
		}
		sb_puts(b, "[");
		json_array_foreach(v, i, x) {
			if (i)
				sb_puts(b, ",");
			if (i >= 16) {
				sb_puts(b, "...");
				break;
			}
			render_value(b, x, depth + 1);
		}
		sb_puts(b, "]");
		break;
	case JSON_OBJECT:
		render_object(b, v, depth);
		break;
	}
}

/* name=value, name=value: the arguments as the spy's stderr line shows them. */
static char *
render_args(json_t *args, int max)
{
	struct sbuf b;
	const char *key;
	json_t *v;
	int n = 0;

	sb_init(&b, ARGS_CAP);
	if (!json_is_object(args))
		return b.p;
	json_object_foreach(args, key, v) {
		if (max && n >= max)
			break;
		if (n++)
			sb_puts(&b, ", ");
		render_clean(&b, key, strlen(key));
		sb_puts(&b, "=");
		render_value(&b, v, 0);
	}
	return b.p;
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The first frames, module by its file name: {module, offset, symbol}. */
static json_t *
keep_stack(json_t *stack)
{
	json_t *out = must(json_array()), *f;
	size_t i;

	if (!json_is_array(stack))
		return out;
	json_array_foreach(stack, i, f) {
		json_t *frame;
		const char *module, *offset, *symbol;
		char found[256];

		if (i >= STACK_KEEP)
			break;
		if (!json_is_object(f))
			continue;
		module = get_str(f, "module");
		offset = get_str(f, "offset");
		symbol = get_str(f, "symbol");
		frame = must(json_object());
		if (module) {
			char *m = clean_str(base_name(module), STR_CAP);

			jset(frame, "module", json_string(m));
			free(m);
		} else {
			jset(frame, "module", json_null());
		}
		if (offset) {
			char *o = clean_str(offset, 40);

			jset(frame, "offset", json_string(o));
			free(o);
		} else {
			jset(frame, "offset", json_null());
		}
		if (!symbol && module && module[0] == '/' && offset && strncmp(offset, "0x", 2) == 0) {
			/* Older records, or a module the spy could not read: its symbol table, read here. */
			unsigned long long off = strtoull(offset + 2, NULL, 16);

			if (off > 0 && spy_symtab_name(module, off - 1, found, sizeof(found)) > 0)
				symbol = found;
		}
		if (symbol) {
			char *s = clean_str(symbol, STR_CAP);

			jset(frame, "symbol", json_string(s));
			free(s);
		} else {
			jset(frame, "symbol", json_null());
		}
		jpush(out, frame);
	}
	return out;
}

/* The last calls before the failure, oldest first: {fn, status}. */
static json_t *
keep_recent(json_t *recent)
{
	json_t *out = must(json_array()), *c;
	size_t n = json_array_size(recent), i;

	for (i = n > RECENT_KEEP ? n - RECENT_KEEP : 0; i < n; i++) {
		json_t *call;
		const char *fn;
		long long status = 0;
		char *f;

		c = json_array_get(recent, i);
		fn = get_str(c, "fn");
		if (!fn)
			continue;
		get_int(c, "status", &status);
		f = clean_str(fn, STR_CAP);
		call = must(json_object());
		jset(call, "fn", json_string(f));
		jset(call, "status", json_integer(status));
		free(f);
		jpush(out, call);
	}
	return out;
}

/* ---- the records ---- */

static void
chrome_record(struct report *r, struct proc *p, json_t *rec, const char *fn, int failure);

static void
warn_schema(struct report *r, struct proc *p)
{
	warn_to(r->warn, "%s: schema %lld is newer than this reader's (%d); reading the fields it knows",
		p->path, p->schema, SCHEMA_KNOWN);
}

static int
on_header(struct report *r, struct proc *p, json_t *rec)
{
	json_t *lib;
	long long schema;

	if (!get_int(rec, "schema", &schema))
		return -1;
	if (p->have_header) {
		p->extra_headers++;
		return 0;
	}
	p->have_header = 1;
	p->schema = schema;
	if (schema > SCHEMA_KNOWN)
		warn_schema(r, p);
	p->program = get_clean(rec, "program", STR_CAP);
	p->host = get_clean(rec, "host", STR_CAP);
	p->spy = get_clean(rec, "spy", 64);
	p->mode = get_clean(rec, "mode", 64);
	p->have_pid = get_int(rec, "pid", &p->pid);
	p->have_ppid = get_int(rec, "ppid", &p->ppid);
	p->have_rank = get_int(rec, "rank", &p->rank);
	p->have_clock = get_int(rec, "start_unix_ns", &p->start_unix_ns) &&
			get_int(rec, "start_mono_ns", &p->start_mono_ns);
	lib = json_object_get(rec, "library");
	if (json_is_object(lib)) {
		p->have_library = 1;
		p->lib_path = get_clean(lib, "path", 4096);
		p->lib_how = get_clean(lib, "how", STR_CAP);
		p->have_lib_version = get_int(lib, "version", &p->lib_version);
		p->have_lib_cudart = get_int(lib, "cudart", &p->lib_cudart);
	} else if (json_is_null(lib)) {
		p->lib_null = 1;
	}
	return 0;
}

/* The first occurrence of a kind of failure, kept small. */
static json_t *
first_occurrence(struct proc *p, json_t *rec, long long line)
{
	json_t *first = must(json_object());
	long long v;
	char *args;

	jset(first, "file", json_string(p->path));
	jset(first, "line", json_integer(line));
	jset(first, "tid", get_int(rec, "tid", &v) ? json_integer(v) : json_null());
	jset(first, "t_ns", get_int(rec, "t_ns", &v) ? json_integer(v) : json_null());
	jset(first, "dur_ns", get_count(rec, "dur_ns", &v) ? json_integer(v) : json_null());
	args = render_args(json_object_get(rec, "args"), 0);
	jset(first, "args", json_string(args));
	free(args);
	jset(first, "stack", keep_stack(json_object_get(rec, "stack")));
	jset(first, "stack_frames", json_integer((json_int_t)json_array_size(json_object_get(rec, "stack"))));
	jset(first, "recent", keep_recent(json_object_get(rec, "recent")));
	jset(first, "recent_calls", json_integer((json_int_t)json_array_size(json_object_get(rec, "recent"))));
	return first;
}

static void
add_failure(struct proc *p, json_t *rec, const char *fn, long long status, long long line)
{
	json_t *msgv = json_object_get(rec, "message");
	const char *msg = json_string_value(msgv);
	const char *sname = get_str(rec, "status_name");
	struct sbuf key;
	struct fgroup *g;
	long long t;

	/* fn, status and message, separated by bytes that JSON strings do not hold raw. */
	sb_init(&key, 2 * MSG_CAP);
	sb_add(&key, fn, strnlen(fn, STR_CAP));
	sb_printf(&key, "\x1f%lld\x1f", status);
	if (msg)
		sb_add(&key, msg, strnlen(msg, MSG_CAP));
	else
		sb_puts(&key, "\x1e");
	g = map_get(&p->groups, key.p, key.len);
	if (!g && p->groups.n >= MAX_GROUPS) {
		p->groups_over++;
		free(key.p);
		return;
	}
	if (!g) {
		g = xcalloc(1, sizeof(*g));
		g->fn = clean_str(fn, STR_CAP);
		g->status = status;
		g->status_name = sname ? clean_str(sname, STR_CAP) : NULL;
		g->message = msg ? clean_str(msg, MSG_CAP) : NULL;
		g->first = first_occurrence(p, rec, line);
		if (p->have_clock && get_int(rec, "t_ns", &t)) {
			long long d;

			if (!__builtin_sub_overflow(t, p->start_mono_ns, &d) &&
			    !__builtin_add_overflow(p->start_unix_ns, d, &g->wall_ns))
				g->have_wall = 1;
		}
		map_put(&p->groups, key.p, key.len, g);
	}
	g->count++;
	free(key.p);
}

/* A call or failure record; -1 when its fields have the wrong types. */
static int
on_call(struct report *r, struct proc *p, json_t *rec, int failure, long long line)
{
	const char *fn = get_str(rec, "fn");
	struct fnstat *f;
	long long status, dur, gpu;

	if (!fn || !fn[0] || !get_int(rec, "status", &status))
		return -1;
	if (failure) {
		p->failures_rec++;
		add_failure(p, rec, fn, status, line);
	} else {
		p->calls_rec++;
	}
	f = fnstat_get(p, fn);
	if (f) {
		f->r_calls++;
		f->r_failures += failure;
		if (get_count(rec, "dur_ns", &dur)) {
			f->r_timed++;
			f->r_total = sat_add(f->r_total, dur);
			if (!f->hist)
				f->hist = xcalloc(HIST_BUCKETS, sizeof(*f->hist));
			f->hist[hist_index((unsigned long long)dur)]++;
		}
		if (get_count(rec, "gpu_ns", &gpu)) {
			f->r_have_gpu = 1;
			f->r_gpu = sat_add(f->r_gpu, gpu);
		}
	}
	if (r->chrome)
		chrome_record(r, p, rec, fn, failure);
	return 0;
}

static int
on_summary(struct proc *p, json_t *rec)
{
	json_t *fns = json_object_get(rec, "functions"), *e;
	size_t i;

	if (!json_is_array(fns))
		return -1;
	p->have_summary = 1;
	p->calls = p->failures = p->internal = p->dropped = -1;
	get_count(rec, "calls", &p->calls);
	get_count(rec, "failures", &p->failures);
	get_count(rec, "internal", &p->internal);
	get_count(rec, "dropped", &p->dropped);
	json_array_foreach(fns, i, e) {
		const char *fn = get_str(e, "fn");
		long long calls;
		struct fnstat *f;

		if (!fn || !fn[0] || !get_count(e, "calls", &calls)) {
			p->bad_entries++;
			continue;
		}
		f = fnstat_get(p, fn);
		if (!f)
			continue;
		f->in_summary = 1;
		f->s_calls = calls;
		f->s_failures = f->s_internal = f->s_timed = f->s_total = f->s_p50 = f->s_p99 = 0;
		get_count(e, "failures", &f->s_failures);
		get_count(e, "internal", &f->s_internal);
		get_count(e, "timed", &f->s_timed);
		get_count(e, "total_ns", &f->s_total);
		f->s_have_first = get_count(e, "first_ns", &f->s_first);
		f->s_steady_unknown = f->s_have_first && json_is_null(json_object_get(e, "steady_ns"));
		get_count(e, "p50_ns", &f->s_p50);
		get_count(e, "p99_ns", &f->s_p99);
		f->s_have_gpu = get_count(e, "gpu_ns", &f->s_gpu);
	}
	return 0;
}

/* A finding, kept once per (id, message) in a process. */
static int
on_finding(struct proc *p, json_t *rec)
{
	char *id = get_clean(rec, "id", 64), *message = get_clean(rec, "message", MSG_CAP);
	struct pfinding *f;
	struct sbuf key;

	if (!id || !message) {
		free(id);
		free(message);
		return -1;
	}
	sb_init(&key, 2 * MSG_CAP);
	sb_printf(&key, "%s\x1f%s", id, message);
	if (map_get(&p->findings, key.p, key.len)) {
		free(id);
		free(message);
	} else if (p->findings.n >= MAX_FINDINGS) {
		p->findings_over++;
		free(id);
		free(message);
	} else {
		f = xcalloc(1, sizeof(*f));
		f->id = id;
		f->message = message;
		f->severity = get_clean(rec, "severity", 16);
		f->fix = get_clean(rec, "fix", MSG_CAP);
		map_put(&p->findings, key.p, key.len, f);
	}
	free(key.p);
	return 0;
}

/* What an algo record's choice was, in words: the legacy algorithm, or the engine and its knobs. */
static char *
algo_choice(json_t *rec)
{
	const char *algo = get_str(rec, "algo");
	json_t *knobs = json_object_get(rec, "knobs"), *k;
	long long engine;
	struct sbuf b;
	size_t i;

	if (algo)
		return clean_dup(algo, strlen(algo), STR_CAP);
	sb_init(&b, STR_CAP);
	if (get_int(rec, "engine", &engine))
		sb_printf(&b, "engine %lld", engine);
	else
		sb_puts(&b, "engine ?");
	json_array_foreach(knobs, i, k) {
		const char *type = get_str(k, "type");
		long long v;

		if (get_int(k, "value", &v))
			sb_printf(&b, "%s%s=%lld", i ? "," : " ", type ? type : "?", v);
	}
	return b.p;
}

/* An algo record: the calls of one (signature, choice), summed per process. */
static int
on_algo(struct proc *p, json_t *rec)
{
	char *api = get_clean(rec, "api", 16), *op = get_clean(rec, "op", 16);
	char *sig = get_clean(rec, "signature", SIG_CAP), *choice;
	json_t *ws = json_object_get(rec, "workspace");
	struct psig *g;
	struct sbuf key;
	long long v, lo, hi;

	p->algo_rec++;
	if (!api || !op || !sig) {
		/* Not the documented shape: counted, and nothing else. */
		free(api);
		free(op);
		free(sig);
		return 0;
	}
	choice = algo_choice(rec);
	sb_init(&key, 4 * SIG_CAP);
	sb_printf(&key, "%s\x1f%s\x1f%s\x1f%s", api, op, sig, choice);
	g = map_get(&p->sigs, key.p, key.len);
	if (!g && p->sigs.n >= MAX_SIGS) {
		p->sigs_over++;
		free(api);
		free(op);
		free(sig);
		free(choice);
		free(key.p);
		return 0;
	}
	if (!g) {
		g = xcalloc(1, sizeof(*g));
		g->api = api;
		g->op = op;
		g->signature = sig;
		g->choice = choice;
		map_put(&p->sigs, key.p, key.len, g);
	} else {
		free(api);
		free(op);
		free(sig);
		free(choice);
	}
	free(key.p);
	if (get_count(rec, "calls", &v))
		g->calls = sat_add(g->calls, v);
	if (get_count(rec, "failures", &v))
		g->failures = sat_add(g->failures, v);
	if (get_count(rec, "timed", &v))
		g->timed = sat_add(g->timed, v);
	if (get_count(rec, "host_ns", &v))
		g->host_ns = sat_add(g->host_ns, v);
	if (get_count(rec, "gpu_timed", &v))
		g->gpu_timed = sat_add(g->gpu_timed, v);
	if (get_count(rec, "gpu_ns", &v))
		g->gpu_ns = sat_add(g->gpu_ns, v);
	if (json_is_object(ws) && get_count(ws, "min", &lo) && get_count(ws, "max", &hi)) {
		if (!g->have_ws || lo < g->ws_min)
			g->ws_min = lo;
		if (!g->have_ws || hi > g->ws_max)
			g->ws_max = hi;
		g->have_ws = 1;
	}
	if (json_is_true(json_object_get(rec, "nondeterministic")))
		g->nondet = 1;
	return 0;
}

/* The answering copy's library record: its real path and build-id say which build it is. */
static int
on_library(struct proc *p, json_t *rec)
{
	const char *kind = get_str(rec, "kind");
	json_t *copy = json_object_get(rec, "copy"), *answers = json_object_get(rec, "answers");

	if (!kind)
		return -1;
	/* The first record that names the build is the one: a later one would leak what it names. */
	if (strcmp(kind, "cudnn") != 0 || p->lib_real || p->lib_build_id)
		return 0;
	/* Copy 0 serves the program's calls by name; records before copies had only "answers". */
	if (json_is_integer(copy) ? json_integer_value(copy) != 0 : !json_is_true(answers))
		return 0;
	p->lib_real = get_clean(rec, "real_path", 4096);
	p->lib_build_id = get_clean(rec, "build_id", 64);
	return 0;
}

/* ---- reading lines ---- */

enum { LINE_CUT = 1, LINE_LONG = 2 };

struct src {
	const char *mem;
	size_t len, pos;
	int fd;
	char *buf;
	size_t start, end;
	int eof, skipping, error;
};

/*
 * The next line, without its newline. LINE_CUT: the last line had no
 * newline; LINE_LONG: the line was over LINE_CAP and is not given.
 */
static int
src_next(struct src *s, const char **line, size_t *len, int *flags)
{
	if (s->mem) {
		const char *p = s->mem + s->pos, *nl;
		size_t n;

		if (s->pos >= s->len)
			return 0;
		nl = memchr(p, '\n', s->len - s->pos);
		n = nl ? (size_t)(nl - p) : s->len - s->pos;
		s->pos += n + (nl != NULL);
		*line = p;
		*len = n;
		*flags = (nl ? 0 : LINE_CUT) | (n > LINE_CAP ? LINE_LONG : 0);
		return 1;
	}
	for (;;) {
		char *p = s->buf + s->start;
		char *nl = memchr(p, '\n', s->end - s->start);
		ssize_t got;

		if (nl) {
			size_t n = (size_t)(nl - p);

			*line = p;
			*len = n;
			*flags = s->skipping || n > LINE_CAP ? LINE_LONG : 0;
			s->skipping = 0;
			s->start += n + 1;
			return 1;
		}
		if (s->eof) {
			if (s->start == s->end && !s->skipping)
				return 0;
			*line = p;
			*len = s->end - s->start;
			*flags = LINE_CUT | (s->skipping || *len > LINE_CAP ? LINE_LONG : 0);
			s->skipping = 0;
			s->start = s->end;
			return 1;
		}
		if (s->end - s->start > LINE_CAP) {
			/* Too long to be ours: drop it up to its newline. */
			s->skipping = 1;
			s->start = s->end = 0;
		} else if (s->start > 0) {
			memmove(s->buf, s->buf + s->start, s->end - s->start);
			s->end -= s->start;
			s->start = 0;
		}
		do
			got = read(s->fd, s->buf + s->end, READ_BUF - s->end);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			s->error = errno;
		if (got <= 0)
			s->eof = 1;
		else
			s->end += (size_t)got;
	}
}

/*
 * A call line as the library writes it: the cheap test of the fast path.
 * The library writes "event" and then "fn" as a string first; anything
 * else, and any line that holds gpu_ns (summed from call records), is
 * parsed.
 */
static int
plain_call(const char *line, size_t len)
{
	static const char prefix[] = "{\"event\":\"call\",\"fn\":\"";

	return len > sizeof(prefix) && memcmp(line, prefix, sizeof(prefix) - 1) == 0 &&
	       line[len - 1] == '}' && !memmem(line, len, "\"gpu_ns\"", 8);
}

static int
blank_line(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return 0;
	return 1;
}

static void
handle_line(struct report *r, struct proc *p, const char *line, size_t len, int flags, long long lineno)
{
	json_error_t err;
	json_t *rec = json_loadb(line, len, 0, &err);
	const char *ev;
	int rc = 0;

	if (!rec) {
		if (flags & LINE_CUT)
			p->cut++;
		else
			p->bad_json++;
		return;
	}
	ev = get_str(rec, "event");
	if (!json_is_object(rec) || !ev)
		rc = -1;
	else if (strcmp(ev, "call") == 0)
		rc = on_call(r, p, rec, 0, lineno);
	else if (strcmp(ev, "failure") == 0)
		rc = on_call(r, p, rec, 1, lineno);
	else if (strcmp(ev, "header") == 0)
		rc = on_header(r, p, rec);
	else if (strcmp(ev, "summary") == 0)
		rc = on_summary(p, rec);
	else if (strcmp(ev, "algo") == 0)
		rc = on_algo(p, rec);
	else if (strcmp(ev, "finding") == 0 || strcmp(ev, "library") == 0) {
		p->other_rec++;
		rc = ev[0] == 'f' ? on_finding(p, rec) : on_library(p, rec);
	} else {
		p->other_rec++;
	}
	if (rc < 0)
		p->wrong_type++;
	json_decref(rec);
}

/*
 * Pass 1 reads everything but the plain call lines (unless r->full); pass 2
 * reads only those, for a file that turned out to have no summary.
 */
static void
read_lines(struct report *r, struct proc *p, struct src *s, int pass)
{
	const char *line;
	size_t len;
	int flags;
	long long lineno = 0;

	while (src_next(s, &line, &len, &flags)) {
		int lazy;

		lineno++;
		if (len && line[len - 1] == '\r')
			len--;
		lazy = !(flags & (LINE_LONG | LINE_CUT)) && plain_call(line, len);
		if (pass == 2) {
			if (lazy)
				handle_line(r, p, line, len, flags, lineno);
			continue;
		}
		p->lines++;
		if (flags & LINE_LONG) {
			p->too_long++;
			continue;
		}
		if (blank_line(line, len)) {
			p->blank++;
			continue;
		}
		if (lazy && !r->full) {
			p->lazy_calls++;
			continue;
		}
		handle_line(r, p, line, len, flags, lineno);
	}
}

/*
 * The percentiles of the durations read from records; the histograms go,
 * so that only one file's are held at a time.
 */
static void
fnstats_done(struct proc *p)
{
	void **fv = map_values(&p->fns);

	for (size_t i = 0; i < p->fns.n; i++) {
		struct fnstat *f = fv[i];

		if (!f->hist)
			continue;
		f->r_p50 = hist_percentile(f->hist, (uint64_t)f->r_timed, 50);
		f->r_p99 = hist_percentile(f->hist, (uint64_t)f->r_timed, 99);
		free(f->hist);
		f->hist = NULL;
	}
	free(fv);
}

/* One warning per file, with the counts. */
static void
finish_file(struct report *r, struct proc *p)
{
	long long skipped = p->too_long + p->bad_json + p->wrong_type + p->cut;
	struct sbuf b;

	fnstats_done(p);
	if (p->read_error)
		warn_to(r->warn, "%s: read error after %lld lines: %s", p->path, p->lines,
			strerror(p->read_error));
	if (skipped == 0 && p->bad_entries == 0 && p->groups_over == 0 && p->fns_over == 0)
		return;
	sb_init(&b, 1024);
	sb_printf(&b, "skipped %lld of %lld lines", skipped, p->lines);
	if (p->bad_json)
		sb_printf(&b, ", %lld not JSON", p->bad_json);
	if (p->too_long)
		sb_printf(&b, ", %lld over %u bytes", p->too_long, LINE_CAP);
	if (p->wrong_type)
		sb_printf(&b, ", %lld with fields of the wrong type", p->wrong_type);
	if (p->cut)
		sb_printf(&b, ", %lld cut short", p->cut);
	if (p->bad_entries)
		sb_printf(&b, "; %lld summary entries unusable", p->bad_entries);
	if (p->groups_over)
		sb_printf(&b, "; %lld failures past %d kinds not grouped", p->groups_over, MAX_GROUPS);
	if (p->fns_over)
		sb_printf(&b, "; %zu records of functions past %d not counted", p->fns_over, MAX_FNS);
	warn_to(r->warn, "%s: %s", p->path, b.p);
	free(b.p);
}

/* Lines, and not one of them a record: some other file given by mistake. */
static int
not_records(const struct proc *p)
{
	return p->lines > p->blank && !p->have_header && !p->have_summary && !p->calls_rec && !p->failures_rec &&
	       !p->lazy_calls && !p->algo_rec && !p->other_rec && !p->wrong_type && !p->extra_headers;
}

static int
needs_pass2(struct report *r, struct proc *p)
{
	return !r->full && p->lazy_calls > 0 && !p->have_summary;
}

static void
chrome_process(struct report *r, struct proc *p);

void
report_read_buffer(struct report *r, const char *name, const void *data, size_t len)
{
	struct proc *p = proc_add(r, name);
	struct src s = { 0 };

	s.mem = data ? data : "";
	s.len = data ? len : 0;
	read_lines(r, p, &s, 1);
	if (needs_pass2(r, p)) {
		s.pos = 0;
		p->pass2 = 1;
		read_lines(r, p, &s, 2);
	}
	if (r->chrome)
		chrome_process(r, p);
	finish_file(r, p);
}

int
report_read_path(struct report *r, const char *path)
{
	struct src s = { 0 };
	struct stat st;
	struct proc *p;
	unsigned char magic[2];
	int fd, saved_full = r->full;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		complain("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		complain("cannot read %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		complain("cannot read %s: %s", path, strerror(EISDIR));
		close(fd);
		return -1;
	}
	/* Compressed records would only be counted as garbage: say what they are. */
	if (pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		complain("%s: compressed (gzip); decompress it first", path);
		close(fd);
		return -1;
	}
	p = proc_add(r, path);
	s.fd = fd;
	s.buf = xcalloc(1, READ_BUF);
	/* A pipe cannot be read twice: everything is parsed on the first pass. */
	if (!S_ISREG(st.st_mode))
		r->full = 1;
	read_lines(r, p, &s, 1);
	p->read_error = s.error;
	if (needs_pass2(r, p) && lseek(fd, 0, SEEK_SET) == 0) {
		char *buf = s.buf;	/* the second pass reads into the same buffer */

		memset(&s, 0, sizeof(s));
		s.fd = fd;
		s.buf = buf;
		p->pass2 = 1;
		read_lines(r, p, &s, 2);
	}
	r->full = saved_full;
	free(s.buf);
	close(fd);
	if (not_records(p)) {
		complain("%s: not cudnnspy records (no line of it is a record; see docs/output-format.md)", path);
		r->nprocs--;
		proc_free(p);
		return -1;
	}
	if (r->chrome)
		chrome_process(r, p);
	finish_file(r, p);
	return 0;
}

int
report_header_start(const void *data, size_t len, long long *start_unix_ns)
{
	const char *d = data, *nl;
	json_error_t err;
	json_t *rec;
	int ok;

	if (!data)
		return 0;
	nl = memchr(d, '\n', len);
	if (nl)
		len = (size_t)(nl - d);
	if (len > LINE_CAP)
		return 0;
	rec = json_loadb(d, len, 0, &err);
	ok = json_is_object(rec) && get_str(rec, "event") && strcmp(get_str(rec, "event"), "header") == 0 &&
	     get_int(rec, "start_unix_ns", start_unix_ns);
	json_decref(rec);
	return ok;
}

/* The header's start_unix_ns of a file, from its first line only. */
static int
path_header_start(const char *path, long long *start_unix_ns)
{
	struct src s = { 0 };
	const char *line;
	size_t len;
	int flags, ok = 0;

	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return 0;
	s.buf = xcalloc(1, READ_BUF);
	if (src_next(&s, &line, &len, &flags) && !(flags & LINE_LONG))
		ok = report_header_start(line, len, start_unix_ns);
	free(s.buf);
	close(s.fd);
	return ok;
}

/* ---- Chrome trace events, streamed as the records are read ---- */

static void
chrome_emit(struct report *r, json_t *ev)
{
	const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
	size_t n;

	/* One write per event: json_dumpf writes every token on its own. */
	if (r->chrome_cap < 4096) {
		r->chrome_cap = 65536;
		r->chrome_buf = xrealloc(r->chrome_buf, r->chrome_cap);
	}
	n = json_dumpb(ev, r->chrome_buf + 2, r->chrome_cap - 2, flags);
	if (n + 2 > r->chrome_cap) {
		r->chrome_cap = n + 2 + 4096;
		r->chrome_buf = xrealloc(r->chrome_buf, r->chrome_cap);
		n = json_dumpb(ev, r->chrome_buf + 2, r->chrome_cap - 2, flags);
	}
	json_decref(ev);
	if (n == 0 || n + 2 > r->chrome_cap)
		return;
	memcpy(r->chrome_buf, ",\n", 2);
	if (r->chrome_first)
		fwrite(r->chrome_buf + 1, 1, n + 1, r->chrome);
	else
		fwrite(r->chrome_buf, 1, n + 2, r->chrome);
	r->chrome_first = 0;
	r->chrome_events++;
}

static json_t *
chrome_meta(const char *name, long long pid, long long tid, json_t *args)
{
	json_t *ev = must(json_object());

	jset(ev, "name", json_string(name));
	jset(ev, "ph", json_string("M"));
	jset(ev, "pid", json_integer(pid));
	if (tid >= 0)
		jset(ev, "tid", json_integer(tid));
	jset(ev, "args", args);
	return ev;
}

static char *
version_string(long long v)
{
	char *s;
	int n;

	/* 9.x counts major*10000 + minor*100 + patch; 8.x major*1000 + minor*100 + patch. */
	if (v >= 90000)
		n = asprintf(&s, "%lld.%lld.%lld", v / 10000, v % 10000 / 100, v % 100);
	else if (v >= 0)
		n = asprintf(&s, "%lld.%lld.%lld", v / 1000, v % 1000 / 100, v % 100);
	else
		n = asprintf(&s, "%lld", v);
	if (n < 0)
		out_of_memory();
	return s;
}

/* The process's track: its name, order and labels, once, before its first event. */
static void
chrome_process_meta(struct report *r, struct proc *p)
{
	struct sbuf name;
	json_t *args;

	if (p->chrome_meta)
		return;
	p->chrome_meta = 1;
	/* Two hosts can have the same pid: the second gets a made-up one. */
	if (!p->have_pid || p->pid <= 0 || p->pid > INT_MAX ||
	    llset_add(&r->chrome_pids, p->pid, (size_t)-1) != 1) {
		do
			p->chrome_pid = ++r->chrome_next_pid + 10000000;
		while (llset_add(&r->chrome_pids, p->chrome_pid, (size_t)-1) != 1);
	} else {
		p->chrome_pid = p->pid;
	}
	sb_init(&name, 512);
	if (p->have_header) {
		sb_puts(&name, p->program ? p->program : "?");
		if (p->have_pid)
			sb_printf(&name, " pid %lld", p->pid);
		if (p->have_rank)
			sb_printf(&name, " rank %lld", p->rank);
		else
			sb_puts(&name, " norank");
	} else {
		char *b = clean_str(base_name(p->path), STR_CAP);

		sb_puts(&name, b);
		free(b);
	}
	args = must(json_object());
	jset(args, "name", json_string(name.p));
	chrome_emit(r, chrome_meta("process_name", p->chrome_pid, -1, args));
	free(name.p);
	args = must(json_object());
	jset(args, "sort_index", json_integer(p->have_rank && p->rank >= 0 && p->rank < INT_MAX ?
					       p->rank : (long long)INT_MAX / 2 + (long long)p->order));
	chrome_emit(r, chrome_meta("process_sort_index", p->chrome_pid, -1, args));
	sb_init(&name, 512);
	if (p->host)
		sb_puts(&name, p->host);
	if (p->have_library && p->have_lib_version) {
		char *v = version_string(p->lib_version);

		sb_printf(&name, "%scuDNN %s", name.len ? ", " : "", v);
		free(v);
	}
	if (name.len) {
		args = must(json_object());
		jset(args, "labels", json_string(name.p));
		chrome_emit(r, chrome_meta("process_labels", p->chrome_pid, -1, args));
	}
	free(name.p);
}

/* A file without records still gets its track, so that every process shows. */
static void
chrome_process(struct report *r, struct proc *p)
{
	chrome_process_meta(r, p);
}

static void
chrome_record(struct report *r, struct proc *p, json_t *rec, const char *fn, int failure)
{
	long long t, tid = 0, dur = -1, rel, ts_ns;
	json_t *ev, *args, *x;
	const char *sname, *key;
	char *name;
	int n = 0;

	chrome_process_meta(r, p);
	if (!get_int(rec, "t_ns", &t)) {
		p->chrome_skipped++;
		return;
	}
	get_int(rec, "tid", &tid);
	get_count(rec, "dur_ns", &dur);
	/* Each file's own clock, placed on the wall clock by its header. */
	if (p->have_clock) {
		if (__builtin_sub_overflow(t, p->start_mono_ns, &rel) ||
		    __builtin_sub_overflow(p->start_unix_ns, r->chrome_base, &ts_ns) ||
		    __builtin_add_overflow(ts_ns, rel, &ts_ns)) {
			p->chrome_skipped++;
			return;
		}
	} else {
		if (!p->chrome_have_first_t) {
			p->chrome_have_first_t = 1;
			p->chrome_first_t = t;
		}
		if (__builtin_sub_overflow(t, p->chrome_first_t, &ts_ns)) {
			p->chrome_skipped++;
			return;
		}
		ts_ns = sat_add(ts_ns, CHROME_LEAD_NS);
	}
	if (ts_ns < 0) {
		/* Before the base: Perfetto drops negative times, so it starts at 0. */
		if (dur > 0)
			dur = sat_add(dur, ts_ns) > 0 ? sat_add(dur, ts_ns) : 0;
		ts_ns = 0;
	}
	if (llset_add(&p->tids, tid, MAX_TIDS) == 1) {
		struct sbuf tn;

		sb_init(&tn, 64);
		if (p->have_pid && tid == p->pid)
			sb_printf(&tn, "main thread (tid %lld)", tid);
		else
			sb_printf(&tn, "tid %lld", tid);
		args = must(json_object());
		jset(args, "name", json_string(tn.p));
		chrome_emit(r, chrome_meta("thread_name", p->chrome_pid, tid, args));
		free(tn.p);
	}
	name = clean_str(fn, STR_CAP);
	args = must(json_object());
	sname = get_str(rec, "status_name");
	if (sname) {
		char *s = clean_str(sname, STR_CAP);

		jset(args, "status_name", json_string(s));
		free(s);
	} else {
		jset(args, "status_name", json_null());
	}
	if ((x = json_object_get(rec, "status")) && json_is_integer(x))
		jset(args, "status", json_integer(json_integer_value(x)));
	if (failure && get_str(rec, "message")) {
		char *m = clean_str(get_str(rec, "message"), MSG_CAP);

		jset(args, "message", json_string(m));
		free(m);
	}
	if (json_is_object(x = json_object_get(rec, "args"))) {
		json_t *v;

		json_object_foreach(x, key, v) {
			struct sbuf b;
			char *k;

			if (n++ >= CHROME_ARGS)
				break;
			sb_init(&b, 200);
			render_value(&b, v, 0);
			k = clean_str(key, 64);
			/* Our own fields win over an argument of the same name. */
			if (!json_object_get(args, k))
				jset(args, k, json_string(b.p));
			free(k);
			free(b.p);
		}
	}
	ev = must(json_object());
	jset(ev, "name", json_string(name));
	jset(ev, "cat", json_string(failure ? "failure" : "call"));
	jset(ev, "ph", json_string("X"));
	jset(ev, "ts", json_real((double)ts_ns / 1000.0));
	jset(ev, "dur", json_real(dur >= 0 ? (double)dur / 1000.0 : 1.0));
	jset(ev, "pid", json_integer(p->chrome_pid));
	jset(ev, "tid", json_integer(tid));
	/* The instant event below shares the same args object. */
	json_incref(args);
	jset(ev, "args", args);
	chrome_emit(r, ev);
	if (failure) {
		ev = must(json_object());
		jset(ev, "name", json_string(name));
		jset(ev, "cat", json_string("failure"));
		jset(ev, "ph", json_string("i"));
		jset(ev, "s", json_string("t"));
		jset(ev, "ts", json_real((double)ts_ns / 1000.0));
		jset(ev, "pid", json_integer(p->chrome_pid));
		jset(ev, "tid", json_integer(tid));
		json_incref(args);
		jset(ev, "args", args);
		chrome_emit(r, ev);
	}
	json_decref(args);
	free(name);
}

void
report_chrome_begin(struct report *r, FILE *out, long long base_unix_ns)
{
	r->chrome = out;
	r->full = 1;
	r->chrome_first = 1;
	/* A call can start before its file is opened (the file comes with the first record). */
	r->chrome_base = sat_add(base_unix_ns, -CHROME_LEAD_NS);
	fputs("{\"traceEvents\":[", out);
}

int
report_chrome_end(struct report *r)
{
	FILE *out = r->chrome;

	if (!out)
		return 0;
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"cudnnspy report\"}}\n", out);
	r->chrome = NULL;
	return fflush(out) != 0 || ferror(out) ? -1 : 0;
}

/* ---- the model: the report as JSON ---- */

static int
proc_cmp(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	int c;

	if (x->have_rank != y->have_rank)
		return y->have_rank - x->have_rank;
	if (x->have_rank && x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
	if (c)
		return c;
	if (x->have_pid != y->have_pid)
		return y->have_pid - x->have_pid;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->path, y->path);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * What a person calls a process: its rank, unless several share it. PROCS
 * is in proc_cmp order, so processes of one rank are neighbours.
 */
static char *
proc_label(struct proc **procs, size_t n, size_t i, int hosts)
{
	struct proc *p = procs[i];
	int shared = 0;
	char *s;
	int rc;

	if (p->have_rank) {
		shared = (i > 0 && procs[i - 1]->have_rank && procs[i - 1]->rank == p->rank) ||
			 (i + 1 < n && procs[i + 1]->have_rank && procs[i + 1]->rank == p->rank);
		if (!shared)
			rc = asprintf(&s, "rank %lld", p->rank);
		else if (p->have_pid)
			rc = asprintf(&s, "rank %lld pid %lld", p->rank, p->pid);
		else
			rc = asprintf(&s, "rank %lld (%s)", p->rank, base_name(p->path));
	} else if (p->have_pid) {
		if (hosts > 1 && p->host)
			rc = asprintf(&s, "pid %lld on %s", p->pid, p->host);
		else
			rc = asprintf(&s, "pid %lld", p->pid);
	} else {
		rc = asprintf(&s, "%s", base_name(p->path));
	}
	if (rc < 0)
		out_of_memory();
	return s;
}

struct fn_final {
	long long calls, failures, internal, total, p50, p99, gpu, first;
	int have_gpu, have_internal, have_first, steady_unknown;
};

static void
fn_final_of(const struct fnstat *f, struct fn_final *o)
{
	memset(o, 0, sizeof(*o));
	if (f->in_summary) {
		o->calls = f->s_calls;
		o->failures = f->s_failures;
		o->internal = f->s_internal;
		o->have_internal = 1;
		o->total = f->s_total;
		o->p50 = f->s_p50;
		o->p99 = f->s_p99;
		o->have_first = f->s_have_first && f->s_first <= f->s_total;
		o->first = o->have_first ? f->s_first : 0;
		o->steady_unknown = o->have_first && f->s_steady_unknown;
	} else {
		o->calls = f->r_calls;
		o->failures = f->r_failures;
		o->total = f->r_total;
		o->p50 = f->r_p50;
		o->p99 = f->r_p99;
	}
	if (f->s_have_gpu) {
		o->have_gpu = 1;
		o->gpu = f->s_gpu;
	} else if (f->r_have_gpu) {
		o->have_gpu = 1;
		o->gpu = f->r_gpu;
	}
}

static json_t *
jint_or_null(int have, long long v)
{
	return have ? json_integer(v) : json_null();
}

static json_t *
jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *
library_json(struct proc *p)
{
	json_t *lib;

	if (!p->have_library)
		return json_null();
	lib = must(json_object());
	jset(lib, "path", jstr_or_null(p->lib_path));
	jset(lib, "version", jint_or_null(p->have_lib_version, p->lib_version));
	if (p->have_lib_version) {
		char *v = version_string(p->lib_version);

		jset(lib, "version_string", json_string(v));
		free(v);
	} else {
		jset(lib, "version_string", json_null());
	}
	jset(lib, "cudart", jint_or_null(p->have_lib_cudart, p->lib_cudart));
	jset(lib, "how", jstr_or_null(p->lib_how));
	jset(lib, "real_path", jstr_or_null(p->lib_real));
	jset(lib, "build_id", jstr_or_null(p->lib_build_id));
	return lib;
}

static json_t *
proc_json(struct proc *p, const char *label)
{
	json_t *o = must(json_object()), *rec, *sk;
	long long skipped = p->too_long + p->bad_json + p->wrong_type + p->cut;

	jset(o, "label", json_string(label));
	jset(o, "file", json_string(p->path));
	jset(o, "host", jstr_or_null(p->host));
	jset(o, "pid", jint_or_null(p->have_pid, p->pid));
	jset(o, "ppid", jint_or_null(p->have_ppid, p->ppid));
	jset(o, "rank", jint_or_null(p->have_rank, p->rank));
	jset(o, "program", jstr_or_null(p->program));
	jset(o, "mode", jstr_or_null(p->mode));
	jset(o, "spy", jstr_or_null(p->spy));
	jset(o, "schema", jint_or_null(p->have_header, p->schema));
	jset(o, "header", json_boolean(p->have_header));
	jset(o, "library", library_json(p));
	jset(o, "summary", json_boolean(p->have_summary));
	if (p->have_summary) {
		jset(o, "calls", jint_or_null(p->calls >= 0, p->calls));
		jset(o, "failures", jint_or_null(p->failures >= 0, p->failures));
		jset(o, "internal", jint_or_null(p->internal >= 0, p->internal));
		jset(o, "dropped", jint_or_null(p->dropped >= 0, p->dropped));
	} else {
		/* Without a summary, the records are all there is: traced calls and failures. */
		jset(o, "calls", json_integer(sat_add(p->calls_rec, p->failures_rec)));
		jset(o, "failures", json_integer(p->failures_rec));
		jset(o, "internal", json_null());
		jset(o, "dropped", json_null());
	}
	rec = must(json_object());
	jset(rec, "lines", json_integer(p->lines));
	/* After a second pass, the lines counted on the first were parsed too. */
	jset(rec, "call", json_integer(p->pass2 ? p->calls_rec : sat_add(p->calls_rec, p->lazy_calls)));
	jset(rec, "failure", json_integer(p->failures_rec));
	jset(rec, "algo", json_integer(p->algo_rec));
	jset(rec, "other", json_integer(p->other_rec));
	jset(o, "records", rec);
	sk = must(json_object());
	jset(sk, "total", json_integer(skipped));
	jset(sk, "not_json", json_integer(p->bad_json));
	jset(sk, "too_long", json_integer(p->too_long));
	jset(sk, "wrong_type", json_integer(p->wrong_type));
	jset(sk, "cut", json_integer(p->cut));
	jset(o, "skipped", sk);
	return o;
}

/* ---- cross-process aggregates ---- */

struct fn_agg {
	char *fn;
	long long calls, failures, internal, total, gpu, p50, p99, procs, first, steady_known;
	int have_gpu, have_internal, have_first;
};

struct lib_agg {
	char *key;
	struct proc *p;			/* the first process with it: path and version */
	struct proc **procs;
	size_t n;
};

struct group_agg {
	struct fgroup *g;		/* the earliest occurrence */
	struct proc *gp;
	long long count;
	struct proc **procs;
	size_t n;
};

static int
fn_agg_cmp(const void *a, const void *b)
{
	const struct fn_agg *x = *(struct fn_agg *const *)a, *y = *(struct fn_agg *const *)b;

	/* By the steady state: a first call that paid for cuDNN's lazy loading does not top the table. */
	long long tx = x->total - x->first, ty = y->total - y->first;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->fn, y->fn);
}

static int
lib_agg_cmp(const void *a, const void *b)
{
	const struct lib_agg *x = *(struct lib_agg *const *)a, *y = *(struct lib_agg *const *)b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int
str_cmp_null(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

static int
group_agg_cmp(const void *a, const void *b)
{
	const struct group_agg *x = *(struct group_agg *const *)a, *y = *(struct group_agg *const *)b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	c = strcmp(x->g->fn, y->g->fn);
	if (c)
		return c;
	if (x->g->status != y->g->status)
		return x->g->status < y->g->status ? -1 : 1;
	return str_cmp_null(x->g->message, y->g->message);
}

/* Did A happen before B on the wall clock? Ties keep the process order. */
static int
earlier(struct fgroup *a, struct fgroup *b)
{
	if (a->have_wall && b->have_wall)
		return a->wall_ns < b->wall_ns;
	return 0;
}

/* The labels of PROCS (added in the report's process order). */
static json_t *
who_json(struct proc **procs, size_t n, char **labels)
{
	json_t *arr = must(json_array());

	for (size_t i = 0; i < n; i++)
		jpush(arr, json_string(labels[procs[i]->sorted]));
	return arr;
}

/* Findings across processes: each once, with the processes it came from and its fix. */
struct finding_agg {
	struct pfinding *f;
	struct proc **procs;
	size_t n;
};

static int
finding_agg_cmp(const void *a, const void *b)
{
	const struct finding_agg *x = *(const struct finding_agg *const *)a, *y = *(const struct finding_agg *const *)b;
	static const char *const order[] = { "error", "warning", "info" };
	int sx = 3, sy = 3, c;

	for (int i = 0; i < 3; i++) {
		if (x->f->severity && strcmp(x->f->severity, order[i]) == 0)
			sx = i;
		if (y->f->severity && strcmp(y->f->severity, order[i]) == 0)
			sy = i;
	}
	if (sx != sy)
		return sx - sy;
	if ((c = strcmp(x->f->id, y->f->id)) != 0)
		return c;
	return strcmp(x->f->message, y->f->message);
}

static json_t *
findings_model(struct proc **procs, size_t n, char **labels)
{
	struct map m = { 0 };
	json_t *arr = must(json_array());
	long long over = 0;
	void **vals;

	for (size_t i = 0; i < n; i++) {
		void **fv = map_values(&procs[i]->findings);

		over = sat_add(over, procs[i]->findings_over);
		for (size_t k = 0; k < procs[i]->findings.n; k++) {
			struct pfinding *f = fv[k];
			struct finding_agg *a;
			struct sbuf key;

			sb_init(&key, 2 * MSG_CAP);
			sb_printf(&key, "%s\x1f%s", f->id, f->message);
			a = map_get(&m, key.p, key.len);
			if (!a) {
				a = xcalloc(1, sizeof(*a));
				a->f = f;
				a->procs = xcalloc(n, sizeof(*a->procs));
				map_put(&m, key.p, key.len, a);
			}
			a->procs[a->n++] = procs[i];
			free(key.p);
		}
		free(fv);
	}
	vals = map_values(&m);
	qsort(vals, m.n, sizeof(*vals), finding_agg_cmp);
	for (size_t k = 0; k < m.n; k++) {
		struct finding_agg *a = vals[k];
		json_t *v = must(json_object());
		/* Records written before findings carried their fix: the command's own table knows it. */
		const char *fix = a->f->fix ? a->f->fix : spy_rule_fix(a->f->id);

		jset(v, "id", json_string(a->f->id));
		jset(v, "severity", jstr_or_null(a->f->severity));
		jset(v, "message", json_string(a->f->message));
		jset(v, "fix", jstr_or_null(fix));
		jset(v, "processes", json_integer((json_int_t)a->n));
		jset(v, "of", json_integer((json_int_t)n));
		jset(v, "who", who_json(a->procs, a->n, labels));
		jpush(arr, v);
		free(a->procs);
		free(a);
	}
	free(vals);
	map_free(&m, NULL);
	if (over) {
		json_t *o = must(json_object());

		jset(o, "not_kept", json_integer(over));
		jpush(arr, o);
	}
	return arr;
}

/* Convolution choices across processes, per (api, op, signature, choice), by total time. */
struct sig_agg {
	struct psig *g;
	long long calls, failures, timed, host_ns, gpu_timed, gpu_ns, ws_min, ws_max;
	int have_ws, nondet;
	struct proc **procs;
	size_t n;
};

static int
sig_agg_cmp(const void *a, const void *b)
{
	const struct sig_agg *x = *(const struct sig_agg *const *)a, *y = *(const struct sig_agg *const *)b;
	long long tx = x->gpu_ns ? x->gpu_ns : x->host_ns, ty = y->gpu_ns ? y->gpu_ns : y->host_ns;
	int c;

	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if ((c = strcmp(x->g->signature, y->g->signature)) != 0)
		return c;
	return strcmp(x->g->choice, y->g->choice);
}

static json_t *
signatures_model(struct proc **procs, size_t n, char **labels)
{
	struct map m = { 0 };
	json_t *arr = must(json_array());
	void **vals;

	for (size_t i = 0; i < n; i++) {
		void **gv = map_values(&procs[i]->sigs);

		for (size_t k = 0; k < procs[i]->sigs.n; k++) {
			struct psig *g = gv[k];
			struct sig_agg *a;
			struct sbuf key;

			sb_init(&key, 4 * SIG_CAP);
			sb_printf(&key, "%s\x1f%s\x1f%s\x1f%s", g->api, g->op, g->signature, g->choice);
			a = map_get(&m, key.p, key.len);
			if (!a) {
				a = xcalloc(1, sizeof(*a));
				a->g = g;
				a->procs = xcalloc(n, sizeof(*a->procs));
				map_put(&m, key.p, key.len, a);
			}
			a->calls = sat_add(a->calls, g->calls);
			a->failures = sat_add(a->failures, g->failures);
			a->timed = sat_add(a->timed, g->timed);
			a->host_ns = sat_add(a->host_ns, g->host_ns);
			a->gpu_timed = sat_add(a->gpu_timed, g->gpu_timed);
			a->gpu_ns = sat_add(a->gpu_ns, g->gpu_ns);
			if (g->have_ws) {
				if (!a->have_ws || g->ws_min < a->ws_min)
					a->ws_min = g->ws_min;
				if (!a->have_ws || g->ws_max > a->ws_max)
					a->ws_max = g->ws_max;
				a->have_ws = 1;
			}
			a->nondet |= g->nondet;
			a->procs[a->n++] = procs[i];
			free(key.p);
		}
		free(gv);
	}
	vals = map_values(&m);
	qsort(vals, m.n, sizeof(*vals), sig_agg_cmp);
	for (size_t k = 0; k < m.n; k++) {
		struct sig_agg *a = vals[k];
		json_t *v = must(json_object());

		jset(v, "api", json_string(a->g->api));
		jset(v, "op", json_string(a->g->op));
		jset(v, "signature", json_string(a->g->signature));
		jset(v, "choice", json_string(a->g->choice));
		jset(v, "calls", json_integer(a->calls));
		jset(v, "failures", json_integer(a->failures));
		jset(v, "timed", json_integer(a->timed));
		jset(v, "host_ns", json_integer(a->host_ns));
		jset(v, "gpu_timed", json_integer(a->gpu_timed));
		jset(v, "gpu_ns", json_integer(a->gpu_ns));
		jset(v, "workspace_min", jint_or_null(a->have_ws, a->ws_min));
		jset(v, "workspace_max", jint_or_null(a->have_ws, a->ws_max));
		jset(v, "nondeterministic", json_boolean(a->nondet));
		jset(v, "processes", json_integer((json_int_t)a->n));
		jset(v, "who", who_json(a->procs, a->n, labels));
		jpush(arr, v);
		free(a->procs);
		free(a);
	}
	free(vals);
	map_free(&m, NULL);
	return arr;
}

static const char *jget_str(json_t *o, const char *key, const char *def);

/*
 * One layer, two answers: the same (API, signature) ran one choice in some
 * processes and another in others (a sweep inside one process runs several
 * everywhere, and is not this). One finding per signature, on top of the
 * processes' own.
 */
static void
engine_changed(json_t *findings, json_t *sigs)
{
	size_t i, j, n = json_array_size(sigs);

	for (i = 0; i < n; i++) {
		json_t *a = json_array_get(sigs, i), *who_a = json_object_get(a, "who"), *f;
		int first = 1, differ = 0;
		struct sbuf msg;

		/* The first entry of its signature leads; later ones were compared with it. */
		for (j = 0; j < i && first; j++)
			first = !(strcmp(jget_str(json_array_get(sigs, j), "signature", ""), jget_str(a, "signature", "")) == 0 &&
				  strcmp(jget_str(json_array_get(sigs, j), "api", ""), jget_str(a, "api", "")) == 0);
		if (!first)
			continue;
		for (j = i + 1; j < n && !differ; j++) {
			json_t *b = json_array_get(sigs, j);

			differ = strcmp(jget_str(b, "signature", ""), jget_str(a, "signature", "")) == 0 &&
				 strcmp(jget_str(b, "api", ""), jget_str(a, "api", "")) == 0 &&
				 !json_equal(json_object_get(b, "who"), who_a);
		}
		if (!differ)
			continue;
		sb_init(&msg, 4 * MSG_CAP);
		sb_printf(&msg, "%s %s ran", jget_str(a, "api", "?"), jget_str(a, "signature", "?"));
		for (j = i; j < n; j++) {
			json_t *b = json_array_get(sigs, j), *w;
			size_t k;

			if (strcmp(jget_str(b, "signature", ""), jget_str(a, "signature", "")) != 0 ||
			    strcmp(jget_str(b, "api", ""), jget_str(a, "api", "")) != 0)
				continue;
			sb_printf(&msg, "%s %s in", j == i ? "" : ";", jget_str(b, "choice", "?"));
			json_array_foreach(json_object_get(b, "who"), k, w)
				sb_printf(&msg, "%s %s", k ? "," : "", json_string_value(w));
		}
		f = must(json_object());
		jset(f, "id", json_string("engine-changed"));
		jset(f, "severity", json_string("warning"));
		jset(f, "message", json_string(msg.p));
		jset(f, "fix", jstr_or_null(spy_rule_fix("engine-changed")));
		jset(f, "processes", json_integer(0));
		jset(f, "of", json_integer(0));
		jset(f, "who", must(json_array()));
		json_array_append_new(findings, f);
		free(msg.p);
	}
}

static json_t *
build_model(struct report *r)
{
	json_t *model = must(json_object()), *arr, *libs, *fails, *fns;
	struct proc **procs;
	char **labels;
	struct map fnmap = { 0 }, libmap = { 0 }, grpmap = { 0 };
	struct map hosts = { 0 };
	long long total_failures = 0, total_over = 0;
	size_t n = r->nprocs, k;
	void **vals;
	int any_gpu = 0, known_variants = 0, any_first = 0;

	procs = xcalloc(n, sizeof(*procs));
	memcpy(procs, r->procs, n * sizeof(*procs));
	qsort(procs, n, sizeof(*procs), proc_cmp);
	for (size_t i = 0; i < n; i++)
		if (procs[i]->host && !map_get(&hosts, procs[i]->host, strlen(procs[i]->host)))
			map_put(&hosts, procs[i]->host, strlen(procs[i]->host), procs[i]);
	labels = xcalloc(n, sizeof(*labels));
	for (size_t i = 0; i < n; i++) {
		procs[i]->sorted = i;
		labels[i] = proc_label(procs, n, i, (int)hosts.n);
	}

	jset(model, "cudnnspy_report", json_integer(1));
	jset(model, "hosts", json_integer((json_int_t)hosts.n));
	arr = must(json_array());
	for (size_t i = 0; i < n; i++)
		jpush(arr, proc_json(procs[i], labels[i]));
	jset(model, "processes", arr);

	/* The cuDNN that answered: one variant per (path, version). */
	for (size_t i = 0; i < n; i++) {
		struct proc *p = procs[i];
		struct lib_agg *l;
		struct sbuf key;

		sb_init(&key, 8192);
		if (!p->have_header) {
			sb_puts(&key, "\x01unknown");
		} else if (!p->have_library) {
			sb_puts(&key, "\x01none");
		} else {
			/* One file reached by several names (cuda/lib64, cuda-13.0/lib) is one build. */
			sb_printf(&key, "%lld\x1f", p->have_lib_version ? p->lib_version : -1);
			if (p->lib_build_id)
				sb_printf(&key, "build-id %s", p->lib_build_id);
			else
				sb_puts(&key, p->lib_real ? p->lib_real : p->lib_path ? p->lib_path : "");
		}
		l = map_get(&libmap, key.p, key.len);
		if (!l) {
			l = xcalloc(1, sizeof(*l));
			l->key = xstrdup(key.p);
			l->p = p;
			l->procs = xcalloc(n, sizeof(*l->procs));
			map_put(&libmap, key.p, key.len, l);
			if (p->have_header)
				known_variants++;
		}
		l->procs[l->n++] = p;
		free(key.p);
	}
	vals = map_values(&libmap);
	qsort(vals, libmap.n, sizeof(*vals), lib_agg_cmp);
	libs = must(json_object());
	jset(libs, "differ", json_boolean(known_variants > 1));
	arr = must(json_array());
	for (k = 0; k < libmap.n; k++) {
		struct lib_agg *l = vals[k];
		json_t *v = must(json_object());
		struct proc *p = l->p;

		jset(v, "known", json_boolean(p->have_header));
		jset(v, "library", library_json(p));
		jset(v, "processes", json_integer((json_int_t)l->n));
		jset(v, "who", who_json(l->procs, l->n, labels));
		jpush(arr, v);
	}
	jset(libs, "variants", arr);
	jset(model, "cudnn", libs);
	for (k = 0; k < libmap.n; k++) {
		struct lib_agg *l = vals[k];

		free(l->key);
		free(l->procs);
		free(l);
	}
	free(vals);
	map_free(&libmap, NULL);

	/* Failures grouped by (function, status, message) across processes. */
	for (size_t i = 0; i < n; i++) {
		struct proc *p = procs[i];
		void **gv = map_values(&p->groups);

		total_over += p->groups_over;
		for (k = 0; k < p->groups.n; k++) {
			struct fgroup *g = gv[k];
			struct group_agg *a;
			struct sbuf key;

			sb_init(&key, 4 * MSG_CAP);
			sb_printf(&key, "%s\x1f%lld\x1f", g->fn, g->status);
			sb_puts(&key, g->message ? g->message : "\x1e");
			a = map_get(&grpmap, key.p, key.len);
			if (!a) {
				a = xcalloc(1, sizeof(*a));
				a->g = g;
				a->gp = p;
				a->procs = xcalloc(n, sizeof(*a->procs));
				map_put(&grpmap, key.p, key.len, a);
			} else if (earlier(g, a->g)) {
				a->g = g;
				a->gp = p;
			}
			a->count = sat_add(a->count, g->count);
			/*
			 * Two of a file's groups can clean to one (invalid UTF-8
			 * bytes become '?'): the process is still one process.
			 */
			if (!a->n || a->procs[a->n - 1] != p)
				a->procs[a->n++] = p;
			total_failures = sat_add(total_failures, g->count);
			free(key.p);
		}
		free(gv);
	}
	vals = map_values(&grpmap);
	qsort(vals, grpmap.n, sizeof(*vals), group_agg_cmp);
	fails = must(json_object());
	jset(fails, "total", json_integer(sat_add(total_failures, total_over)));
	jset(fails, "not_grouped", json_integer(total_over));
	arr = must(json_array());
	for (k = 0; k < grpmap.n; k++) {
		struct group_agg *a = vals[k];
		json_t *v = must(json_object()), *first;

		jset(v, "fn", json_string(a->g->fn));
		jset(v, "status", json_integer(a->g->status));
		jset(v, "status_name", jstr_or_null(a->g->status_name));
		jset(v, "message", jstr_or_null(a->g->message));
		jset(v, "count", json_integer(a->count));
		jset(v, "processes", json_integer((json_int_t)a->n));
		jset(v, "of", json_integer((json_int_t)n));
		jset(v, "only_some", json_boolean(n > 1 && a->n < n));
		jset(v, "who", who_json(a->procs, a->n, labels));
		first = must(json_deep_copy(a->g->first));
		jset(first, "process", json_string(labels[a->gp->sorted]));
		jset(v, "first", first);
		jpush(arr, v);
		free(a->procs);
		free(a);
	}
	jset(fails, "groups", arr);
	jset(model, "failures", fails);
	free(vals);
	map_free(&grpmap, NULL);

	jset(model, "findings", findings_model(procs, n, labels));
	jset(model, "signatures", signatures_model(procs, n, labels));
	engine_changed(json_object_get(model, "findings"), json_object_get(model, "signatures"));

	/* Functions across processes, by total time. */
	for (size_t i = 0; i < n; i++) {
		void **fv = map_values(&procs[i]->fns);

		for (k = 0; k < procs[i]->fns.n; k++) {
			struct fnstat *f = fv[k];
			struct fn_final o;
			struct fn_agg *a = map_get(&fnmap, f->fn, strlen(f->fn));

			if (!a) {
				a = xcalloc(1, sizeof(*a));
				a->fn = f->fn;
				map_put(&fnmap, f->fn, strlen(f->fn), a);
			}
			fn_final_of(f, &o);
			a->calls = sat_add(a->calls, o.calls);
			a->failures = sat_add(a->failures, o.failures);
			a->internal = sat_add(a->internal, o.internal);
			a->have_internal |= o.have_internal;
			a->total = sat_add(a->total, o.total);
			if (o.have_first) {
				a->have_first = any_first = 1;
				a->first = sat_add(a->first, o.first);
			}
			if (!o.steady_unknown)
				a->steady_known = 1;
			if (o.have_gpu) {
				a->have_gpu = any_gpu = 1;
				a->gpu = sat_add(a->gpu, o.gpu);
			}
			/* Percentiles do not add up: the worst process's. */
			if (o.p50 > a->p50)
				a->p50 = o.p50;
			if (o.p99 > a->p99)
				a->p99 = o.p99;
			a->procs++;
		}
		free(fv);
	}
	vals = map_values(&fnmap);
	qsort(vals, fnmap.n, sizeof(*vals), fn_agg_cmp);
	fns = must(json_array());
	for (k = 0; k < fnmap.n; k++) {
		struct fn_agg *a = vals[k];
		json_t *v = must(json_object());

		jset(v, "fn", json_string(a->fn));
		jset(v, "calls", json_integer(a->calls));
		jset(v, "failures", json_integer(a->failures));
		jset(v, "internal", jint_or_null(a->have_internal, a->internal));
		jset(v, "total_ns", json_integer(a->total));
		jset(v, "first_ns", jint_or_null(a->have_first, a->first));
		jset(v, "steady_ns", jint_or_null(a->have_first && a->steady_known, a->total - a->first));
		jset(v, "gpu_ns", jint_or_null(a->have_gpu, a->gpu));
		jset(v, "p50_ns", json_integer(a->p50));
		jset(v, "p99_ns", json_integer(a->p99));
		jset(v, "processes", json_integer(a->procs));
		jpush(fns, v);
		free(a);
	}
	jset(model, "functions", fns);
	jset(model, "gpu_times", json_boolean(any_gpu));
	jset(model, "first_times", json_boolean(any_first));
	free(vals);
	map_free(&fnmap, NULL);

	for (size_t i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	free(procs);
	map_free(&hosts, NULL);
	return model;
}

/* ---- the model as text ---- */

static long long
jget_int(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static const char *
jget_str(json_t *o, const char *key, const char *def)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : def;
}

/* A duration for a person, in a unit that keeps 3 or 4 digits. */
static void
fmt_ns(char *buf, size_t size, long long ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%lld ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.1f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
}

static void
print_who(FILE *out, json_t *who)
{
	size_t n = json_array_size(who), i;
	int ranks = n > 0;
	json_t *w;

	json_array_foreach(who, i, w) {
		const char *s = json_string_value(w);
		char *end;

		if (!s || strncmp(s, "rank ", 5) != 0)
			ranks = 0;
		else {
			strtoll(s + 5, &end, 10);
			if (*end)
				ranks = 0;
		}
	}
	if (ranks)
		fputs(n == 1 ? "rank " : "ranks ", out);
	json_array_foreach(who, i, w) {
		if (i >= LIST_SHOW) {
			fprintf(out, " and %zu more", n - i);
			break;
		}
		fprintf(out, "%s%s", i ? ", " : "", json_string_value(w) + (ranks ? 5 : 0));
	}
}

static void
print_library(FILE *out, json_t *lib)
{
	if (!json_is_object(lib)) {
		fputs("no cuDNN found", out);
		return;
	}
	if (json_is_integer(json_object_get(lib, "version")))
		fprintf(out, "cuDNN %s (%lld)", jget_str(lib, "version_string", "?"), jget_int(lib, "version"));
	else
		fputs("cuDNN of unknown version", out);
	fprintf(out, " %s", jget_str(lib, "path", "(no path)"));
}

static void
print_processes(FILE *out, json_t *model)
{
	json_t *procs = json_object_get(model, "processes"), *p;
	size_t i;

	fprintf(out, "\nProcesses\n");
	json_array_foreach(procs, i, p) {
		json_t *lib = json_object_get(p, "library"), *rec = json_object_get(p, "records");
		json_t *sk = json_object_get(p, "skipped");

		fprintf(out, "  %s: ", jget_str(p, "label", "?"));
		if (json_is_true(json_object_get(p, "header"))) {
			fprintf(out, "%s", jget_str(p, "program", "?"));
			if (json_is_integer(json_object_get(p, "pid")))
				fprintf(out, ", pid %lld", jget_int(p, "pid"));
			fprintf(out, " on %s", jget_str(p, "host", "?"));
			if (!json_is_integer(json_object_get(p, "rank")))
				fputs(", no rank", out);
			if (json_integer_value(json_object_get(p, "schema")) > SCHEMA_KNOWN)
				fprintf(out, " (schema %lld)", jget_int(p, "schema"));
			fputs("\n    ", out);
			print_library(out, lib);
			if (json_is_object(lib)) {
				if (json_is_integer(json_object_get(lib, "cudart")))
					fprintf(out, ", cudart %lld", jget_int(lib, "cudart"));
				if (json_is_string(json_object_get(lib, "how")))
					fprintf(out, " [%s]", jget_str(lib, "how", ""));
			}
			fputc('\n', out);
		} else {
			fputs("no header: program, host and cuDNN unknown\n", out);
		}
		fprintf(out, "    %lld call%s, %lld failure%s", jget_int(p, "calls"), jget_int(p, "calls") == 1 ? "" : "s",
			jget_int(p, "failures"), jget_int(p, "failures") == 1 ? "" : "s");
		if (json_is_true(json_object_get(p, "summary")))
			fprintf(out, ", %lld internal, %lld dropped\n", jget_int(p, "internal"),
				jget_int(p, "dropped"));
		else
			fputs(" (no summary: the process did not exit normally? counts from the records)\n",
			      out);
		fprintf(out, "    %s: %lld lines", jget_str(p, "file", "?"), jget_int(rec, "lines"));
		if (jget_int(sk, "total"))
			fprintf(out, ", %lld skipped", jget_int(sk, "total"));
		fputc('\n', out);
	}
}

static void
print_cudnn(FILE *out, json_t *model)
{
	json_t *c = json_object_get(model, "cudnn"), *vars = json_object_get(c, "variants"), *v;
	size_t nproc = json_array_size(json_object_get(model, "processes")), i;

	fprintf(out, "\ncuDNN\n");
	if (json_array_size(vars) == 1 && json_is_true(json_object_get(json_array_get(vars, 0), "known"))) {
		fprintf(out, "  %s: ", nproc == 1 ? "the process" : nproc == 2 ? "both processes" : "all processes");
		print_library(out, json_object_get(json_array_get(vars, 0), "library"));
		fputc('\n', out);
		return;
	}
	if (json_is_true(json_object_get(c, "differ")))
		fprintf(out, "  DIFFERENT cuDNN builds across processes (library path or version):\n");
	json_array_foreach(vars, i, v) {
		long long np = jget_int(v, "processes");

		fprintf(out, "    %lld process%s: ", np, np == 1 ? "" : "es");
		if (json_is_true(json_object_get(v, "known")))
			print_library(out, json_object_get(v, "library"));
		else
			fputs("unknown (no header)", out);
		fputs(": ", out);
		print_who(out, json_object_get(v, "who"));
		fputc('\n', out);
	}
}

static void
print_first(FILE *out, json_t *first)
{
	json_t *stack = json_object_get(first, "stack"), *recent = json_object_get(first, "recent"), *x;
	long long frames = jget_int(first, "stack_frames"), calls = jget_int(first, "recent_calls");
	size_t i, nr = json_array_size(recent);
	const char *args = jget_str(first, "args", "");

	fprintf(out, "     first: %s", jget_str(first, "process", "?"));
	if (json_is_integer(json_object_get(first, "tid")))
		fprintf(out, ", tid %lld", jget_int(first, "tid"));
	fprintf(out, " (%s:%lld)\n", jget_str(first, "file", "?"), jget_int(first, "line"));
	fprintf(out, "       args: %s\n", args[0] ? args : "(none)");
	if (json_array_size(stack)) {
		fputs("       stack:", out);
		json_array_foreach(stack, i, x) {
			const char *sym = jget_str(x, "symbol", NULL);

			if (i >= STACK_SHOW)
				break;
			fputs(i ? " <" : "", out);
			if (sym)
				fprintf(out, " %s (%s+%s)", sym, jget_str(x, "module", "?"),
					jget_str(x, "offset", "?"));
			else
				fprintf(out, " %s+%s", jget_str(x, "module", "?"), jget_str(x, "offset", "?"));
		}
		if (frames > (long long)i)
			fprintf(out, " < ... (%lld frames)", frames);
		fputc('\n', out);
	}
	if (nr) {
		size_t from = nr > RECENT_SHOW ? nr - RECENT_SHOW : 0;

		fputs("       recent:", out);
		if (calls > (long long)(nr - from))
			fprintf(out, " ... %lld earlier,", calls - (long long)(nr - from));
		for (i = from; i < nr; i++) {
			x = json_array_get(recent, i);
			fprintf(out, "%s %s", i > from ? "," : "", jget_str(x, "fn", "?"));
			if (jget_int(x, "status"))
				fprintf(out, "=%lld", jget_int(x, "status"));
		}
		fputc('\n', out);
	}
}

static void
print_failures(FILE *out, json_t *model)
{
	json_t *f = json_object_get(model, "failures"), *groups = json_object_get(f, "groups"), *g;
	size_t i, some = 0;

	fprintf(out, "\nFailures: %lld", jget_int(f, "total"));
	if (json_array_size(groups))
		fprintf(out, " in %zu group%s", json_array_size(groups), json_array_size(groups) == 1 ? "" : "s");
	fputc('\n', out);
	if (jget_int(f, "not_grouped"))
		fprintf(out, "  (%lld failures of too many kinds are not grouped)\n", jget_int(f, "not_grouped"));
	json_array_foreach(groups, i, g) {
		const char *msg = jget_str(g, "message", NULL);

		fprintf(out, "  %lldx %s: %s (%lld)", jget_int(g, "count"), jget_str(g, "fn", "?"),
			jget_str(g, "status_name", "status"), jget_int(g, "status"));
		if (msg)
			fprintf(out, " \"%s\"", msg);
		fputc('\n', out);
		if (json_is_true(json_object_get(g, "only_some"))) {
			fprintf(out, "     on %lld of %lld processes: ", jget_int(g, "processes"), jget_int(g, "of"));
			print_who(out, json_object_get(g, "who"));
			fputc('\n', out);
			some++;
		} else if (jget_int(g, "of") > 1) {
			fprintf(out, jget_int(g, "of") == 2 ? "     on both processes\n" : "     on all %lld processes\n",
				jget_int(g, "of"));
		}
		print_first(out, json_object_get(g, "first"));
	}
	if (!some)
		return;
	fprintf(out, "\nFailures on some processes only\n");
	json_array_foreach(groups, i, g) {
		if (!json_is_true(json_object_get(g, "only_some")))
			continue;
		fprintf(out, "  %s: %s (%lld): ", jget_str(g, "fn", "?"), jget_str(g, "status_name", "status"),
			jget_int(g, "status"));
		print_who(out, json_object_get(g, "who"));
		fputs(" only\n", out);
	}
}

/* Each finding once, with where it came from and its fix. */
static void
print_findings(FILE *out, json_t *model)
{
	json_t *fs = json_object_get(model, "findings"), *f;
	size_t i, n = 0;

	json_array_foreach(fs, i, f)
		n += json_is_string(json_object_get(f, "id"));
	if (!json_array_size(fs))
		return;
	fprintf(out, "\nFindings: %zu\n", n);
	json_array_foreach(fs, i, f) {
		long long np = jget_int(f, "processes"), of = jget_int(f, "of");

		if (!json_is_string(json_object_get(f, "id"))) {
			fprintf(out, "  (%lld more not kept)\n", jget_int(f, "not_kept"));
			continue;
		}
		fprintf(out, "  %s %s: %s\n", jget_str(f, "severity", "?"), jget_str(f, "id", "?"),
			jget_str(f, "message", ""));
		if (of > 1) {
			fputs(np == of ? (of == 2 ? "    in both processes" : "    in all processes") : "    in ", out);
			if (np != of)
				print_who(out, json_object_get(f, "who"));
			fputc('\n', out);
		}
		if (json_is_string(json_object_get(f, "fix")))
			fprintf(out, "    fix: %s\n", jget_str(f, "fix", ""));
	}
	fprintf(out, "  (causes and longer fixes: docs/conflicts.md, installed under share/doc/cudnnspy)\n");
}

/* The per-signature table: which algorithm or engine ran for each convolution, how often, how long. */
static void
print_signatures(FILE *out, json_t *model)
{
	json_t *sigs = json_object_get(model, "signatures"), *g;
	size_t i, nproc = json_array_size(json_object_get(model, "processes"));
	char host[32], gpu[32];

	if (!json_array_size(sigs))
		return;
	fprintf(out, "\nConvolutions and graphs: %zu (signature, choice) pair%s, by time\n", json_array_size(sigs),
		json_array_size(sigs) == 1 ? "" : "s");
	json_array_foreach(sigs, i, g) {
		fmt_ns(host, sizeof(host), jget_int(g, "host_ns"));
		if (jget_int(g, "gpu_timed"))
			fmt_ns(gpu, sizeof(gpu), jget_int(g, "gpu_ns"));
		else
			snprintf(gpu, sizeof(gpu), "-");
		/* The signature starts with its operation (fwd, bwd-data, graph ...). */
		fprintf(out, "  %s %s\n    %s: %lld call%s", jget_str(g, "api", "?"), jget_str(g, "signature", "?"),
			jget_str(g, "choice", "?"), jget_int(g, "calls"), jget_int(g, "calls") == 1 ? "" : "s");
		if (jget_int(g, "failures"))
			fprintf(out, ", %lld failed", jget_int(g, "failures"));
		fprintf(out, ", host %s, GPU %s", host, gpu);
		if (json_is_integer(json_object_get(g, "workspace_max"))) {
			long long lo = jget_int(g, "workspace_min"), hi = jget_int(g, "workspace_max");

			if (lo == hi)
				fprintf(out, ", workspace %lld", lo);
			else
				fprintf(out, ", workspace %lld..%lld", lo, hi);
		}
		if (json_is_true(json_object_get(g, "nondeterministic")))
			fputs(", non-deterministic", out);
		if (nproc > 1) {
			fputs(", in ", out);
			if ((size_t)jget_int(g, "processes") == nproc)
				fputs(nproc == 2 ? "both processes" : "all processes", out);
			else
				print_who(out, json_object_get(g, "who"));
		}
		fputc('\n', out);
	}
}

static void
print_functions(FILE *out, json_t *model, int top)
{
	json_t *fns = json_object_get(model, "functions"), *f;
	int gpu = json_is_true(json_object_get(model, "gpu_times"));
	int first = json_is_true(json_object_get(model, "first_times"));
	size_t n = json_array_size(fns), i;
	char t[32], g[32], p50[32], p99[32];

	if (!n)
		return;
	fprintf(out, "\nTop functions by total time");
	if (top > 0 && (size_t)top < n)
		fprintf(out, " (%d of %zu)", top, n);
	fputc('\n', out);
	fprintf(out, "  %-44s %10s %9s %12s", "function", "calls", "failures", first ? "steady" : "total");
	if (first)
		fprintf(out, " %10s", "first");
	if (gpu)
		fprintf(out, " %12s", "gpu");
	fprintf(out, " %10s %10s\n", "p50", "p99");
	json_array_foreach(fns, i, f) {
		if (top > 0 && i >= (size_t)top)
			break;
		/* Only cuDNN's own internal calls: nothing the program spent time on. */
		if (jget_int(f, "calls") == 0)
			continue;
		/* With the first calls apart, the total is the steady state's and the first calls have a column. */
		if (!first)
			fmt_ns(t, sizeof(t), jget_int(f, "total_ns"));
		else if (json_is_integer(json_object_get(f, "steady_ns")))
			fmt_ns(t, sizeof(t), jget_int(f, "steady_ns"));
		else
			snprintf(t, sizeof(t), "-");
		fmt_ns(p50, sizeof(p50), jget_int(f, "p50_ns"));
		fmt_ns(p99, sizeof(p99), jget_int(f, "p99_ns"));
		fprintf(out, "  %-44s %10lld %9lld %12s", jget_str(f, "fn", "?"), jget_int(f, "calls"),
			jget_int(f, "failures"), t);
		if (first) {
			char fs[32];

			if (json_is_integer(json_object_get(f, "first_ns")))
				fmt_ns(fs, sizeof(fs), jget_int(f, "first_ns"));
			else
				snprintf(fs, sizeof(fs), "-");
			fprintf(out, " %10s", fs);
		}
		if (gpu) {
			if (json_is_integer(json_object_get(f, "gpu_ns")))
				fmt_ns(g, sizeof(g), jget_int(f, "gpu_ns"));
			else
				snprintf(g, sizeof(g), "-");
			fprintf(out, " %12s", g);
		}
		fprintf(out, " %10s %10s\n", p50, p99);
	}
	if (json_array_size(json_object_get(model, "processes")) > 1)
		fprintf(out, "  (p50 and p99: the highest among the processes)\n");
}

static int
finish_output(FILE *out)
{
	if (fflush(out) != 0 || ferror(out)) {
		complain("cannot write the report: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int
report_write_text(struct report *r, FILE *out, int top)
{
	json_t *model = build_model(r);
	size_t np = json_array_size(json_object_get(model, "processes"));

	fprintf(out, "cudnnspy report: %zu process%s", np, np == 1 ? "" : "es");
	if (jget_int(model, "hosts") > 1)
		fprintf(out, " on %lld hosts", jget_int(model, "hosts"));
	fputc('\n', out);
	print_processes(out, model);
	print_cudnn(out, model);
	print_findings(out, model);
	print_failures(out, model);
	print_signatures(out, model);
	print_functions(out, model, top);
	json_decref(model);
	return finish_output(out);
}

int
report_write_json(struct report *r, FILE *out)
{
	json_t *model = build_model(r);

	json_dumpf(model, out, JSON_INDENT(2));
	fputc('\n', out);
	json_decref(model);
	return finish_output(out);
}

/* ---- comparing two runs ---- */

static long long
algo_records(struct report *r)
{
	long long n = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		n = sat_add(n, r->procs[i]->algo_rec);
	return n;
}

/* One run's choices per signature: {api signature: {"choices": [...], "calls", "time_ns"}}. */
static json_t *
signature_rows(struct report *r)
{
	json_t *model = build_model(r), *rows = must(json_object()), *g;
	size_t i;

	json_array_foreach(json_object_get(model, "signatures"), i, g) {
		char *key;
		json_t *row;
		long long t = jget_int(g, "gpu_timed") ? jget_int(g, "gpu_ns") : jget_int(g, "host_ns");

		if (asprintf(&key, "%s %s", jget_str(g, "api", "?"), jget_str(g, "signature", "?")) < 0)
			out_of_memory();
		row = json_object_get(rows, key);
		if (!row) {
			row = must(json_object());
			jset(row, "choices", must(json_array()));
			jset(row, "calls", json_integer(0));
			jset(row, "time_ns", json_integer(0));
			jset(rows, key, row);
		}
		jpush(json_object_get(row, "choices"), json_string(jget_str(g, "choice", "?")));
		jset(row, "calls", json_integer(sat_add(jget_int(row, "calls"), jget_int(g, "calls"))));
		jset(row, "time_ns", json_integer(sat_add(jget_int(row, "time_ns"), t)));
		free(key);
	}
	json_decref(model);
	return rows;
}

/*
 * Per convolution signature, what each run chose and how long it took: the
 * "did the other cuDNN pick another algorithm for this layer" question. Null
 * when neither run holds algo records.
 */
static json_t *
compare_signatures(struct report *a, struct report *b)
{
	long long na = algo_records(a), nb = algo_records(b);
	json_t *s, *ra, *rb, *table, *v;
	const char *key;

	if (!na && !nb)
		return json_null();
	s = must(json_object());
	jset(s, "algo_records_a", json_integer(na));
	jset(s, "algo_records_b", json_integer(nb));
	ra = signature_rows(a);
	rb = signature_rows(b);
	table = must(json_array());
	json_object_foreach(ra, key, v) {
		json_t *row = must(json_object()), *w = json_object_get(rb, key);

		jset(row, "signature", json_string(key));
		jset(row, "a", json_incref(v));
		jset(row, "b", w ? json_incref(w) : json_null());
		jset(row, "changed", json_boolean(!w || !json_equal(json_object_get(v, "choices"),
								       json_object_get(w, "choices"))));
		jpush(table, row);
	}
	json_object_foreach(rb, key, v) {
		json_t *row;

		if (json_object_get(ra, key))
			continue;
		row = must(json_object());
		jset(row, "signature", json_string(key));
		jset(row, "a", json_null());
		jset(row, "b", json_incref(v));
		jset(row, "changed", json_true());
		jpush(table, row);
	}
	jset(s, "table", table);
	json_decref(ra);
	json_decref(rb);
	return s;
}

static void
print_choices(FILE *out, json_t *side)
{
	json_t *c;
	size_t i;
	char t[32];

	if (!json_is_object(side)) {
		fputs("not run", out);
		return;
	}
	json_array_foreach(json_object_get(side, "choices"), i, c)
		fprintf(out, "%s%s", i ? " + " : "", json_string_value(c));
	fmt_ns(t, sizeof(t), jget_int(side, "time_ns"));
	fprintf(out, " (%lld call%s, %s)", jget_int(side, "calls"), jget_int(side, "calls") == 1 ? "" : "s", t);
}

static json_t *
run_json(json_t *model, const char *name)
{
	json_t *o = must(json_object()), *vars, *v, *p, *versions = must(json_array());
	long long calls = 0, total = 0;
	size_t i;

	jset(o, "input", json_string(name));
	jset(o, "processes", json_integer((json_int_t)json_array_size(json_object_get(model, "processes"))));
	json_array_foreach(json_object_get(model, "processes"), i, p)
		calls = sat_add(calls, jget_int(p, "calls"));
	json_array_foreach(json_object_get(model, "functions"), i, p)
		total = sat_add(total, jget_int(p, "total_ns"));
	jset(o, "calls", json_integer(calls));
	jset(o, "total_ns", json_integer(total));
	vars = json_object_get(json_object_get(model, "cudnn"), "variants");
	json_array_foreach(vars, i, v) {
		json_t *e = must(json_object());

		jset(e, "library", json_deep_copy(json_object_get(v, "library")));
		jset(e, "processes", json_integer(jget_int(v, "processes")));
		jpush(versions, e);
	}
	jset(o, "cudnn", versions);
	return o;
}

struct cmp_row {
	const char *fn;
	json_t *a, *b;
	long long key;
};

static int
cmp_row_cmp(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;

	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return strcmp(a->fn, b->fn);
}

static json_t *
compare_model(struct report *ra, const char *name_a, struct report *rb, const char *name_b)
{
	json_t *ma = build_model(ra), *mb = build_model(rb), *c = must(json_object()), *arr, *f;
	json_t *fa = json_object_get(ma, "functions"), *fb = json_object_get(mb, "functions");
	size_t na = json_array_size(fa), nb = json_array_size(fb), n = 0, i;
	struct cmp_row *rows = xcalloc(na + nb, sizeof(*rows));
	struct map seen = { 0 };

	jset(c, "cudnnspy_compare", json_integer(1));
	jset(c, "a", run_json(ma, name_a));
	jset(c, "b", run_json(mb, name_b));
	json_array_foreach(fa, i, f) {
		const char *fn = jget_str(f, "fn", "?");

		rows[n].fn = fn;
		rows[n].a = f;
		map_put(&seen, fn, strlen(fn), &rows[n]);
		n++;
	}
	json_array_foreach(fb, i, f) {
		const char *fn = jget_str(f, "fn", "?");
		struct cmp_row *row = map_get(&seen, fn, strlen(fn));

		if (!row) {
			row = &rows[n++];
			row->fn = fn;
			map_put(&seen, fn, strlen(fn), row);
		}
		row->b = f;
	}
	for (i = 0; i < n; i++) {
		long long ta = rows[i].a ? jget_int(rows[i].a, "total_ns") : 0;
		long long tb = rows[i].b ? jget_int(rows[i].b, "total_ns") : 0;

		rows[i].key = ta > tb ? ta : tb;
	}
	qsort(rows, n, sizeof(*rows), cmp_row_cmp);
	arr = must(json_array());
	for (i = 0; i < n; i++) {
		json_t *row = must(json_object()), *sa, *sb;
		long long ta = rows[i].a ? jget_int(rows[i].a, "total_ns") : 0;
		long long tb = rows[i].b ? jget_int(rows[i].b, "total_ns") : 0;

		jset(row, "fn", json_string(rows[i].fn));
		sa = must(json_object());
		jset(sa, "calls", json_integer(rows[i].a ? jget_int(rows[i].a, "calls") : 0));
		jset(sa, "total_ns", json_integer(ta));
		sb = must(json_object());
		jset(sb, "calls", json_integer(rows[i].b ? jget_int(rows[i].b, "calls") : 0));
		jset(sb, "total_ns", json_integer(tb));
		jset(row, "a", sa);
		jset(row, "b", sb);
		jset(row, "ratio", ta > 0 ? json_real((double)tb / (double)ta) : json_null());
		jpush(arr, row);
	}
	jset(c, "functions", arr);
	jset(c, "signatures", compare_signatures(ra, rb));
	map_free(&seen, NULL);
	free(rows);
	json_decref(ma);
	json_decref(mb);
	return c;
}

static void
print_run_versions(FILE *out, json_t *run)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(run, "cudnn"), i, v) {
		long long np = jget_int(v, "processes");

		fputs(i ? "\n     " : " ", out);
		print_library(out, json_object_get(v, "library"));
		if (json_array_size(json_object_get(run, "cudnn")) > 1)
			fprintf(out, " (%lld process%s)", np, np == 1 ? "" : "es");
	}
	fputc('\n', out);
}

int
report_write_compare(struct report *a, const char *name_a, struct report *b, const char *name_b,
		     FILE *out, int json)
{
	json_t *c = compare_model(a, name_a, b, name_b), *f, *sig;
	size_t i;

	if (json) {
		json_dumpf(c, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
		fputc('\n', out);
		json_decref(c);
		return finish_output(out);
	}
	fprintf(out, "cudnnspy report --compare\n");
	fprintf(out, "  A: %s (%lld process%s, %lld calls):", jget_str(json_object_get(c, "a"), "input", "?"),
		jget_int(json_object_get(c, "a"), "processes"), jget_int(json_object_get(c, "a"), "processes") == 1 ? "" : "es",
		jget_int(json_object_get(c, "a"), "calls"));
	print_run_versions(out, json_object_get(c, "a"));
	fprintf(out, "  B: %s (%lld process%s, %lld calls):", jget_str(json_object_get(c, "b"), "input", "?"),
		jget_int(json_object_get(c, "b"), "processes"), jget_int(json_object_get(c, "b"), "processes") == 1 ? "" : "es",
		jget_int(json_object_get(c, "b"), "calls"));
	print_run_versions(out, json_object_get(c, "b"));
	fprintf(out, "\nFunctions by total time\n");
	fprintf(out, "  %-44s %10s %10s %12s %12s %8s\n", "function", "calls A", "calls B", "total A",
		"total B", "B/A");
	json_array_foreach(json_object_get(c, "functions"), i, f) {
		json_t *sa = json_object_get(f, "a"), *sb = json_object_get(f, "b"), *ratio;
		char ta[32], tb[32], rs[32];

		fmt_ns(ta, sizeof(ta), jget_int(sa, "total_ns"));
		fmt_ns(tb, sizeof(tb), jget_int(sb, "total_ns"));
		ratio = json_object_get(f, "ratio");
		if (json_is_real(ratio))
			snprintf(rs, sizeof(rs), "%.2f", json_real_value(ratio));
		else
			snprintf(rs, sizeof(rs), "-");
		fprintf(out, "  %-44s %10lld %10lld %12s %12s %8s\n", jget_str(f, "fn", "?"),
			jget_int(sa, "calls"), jget_int(sb, "calls"), ta, tb, rs);
	}
	sig = json_object_get(c, "signatures");
	if (json_is_object(sig)) {
		json_t *row, *table = json_object_get(sig, "table");
		size_t changed = 0;

		json_array_foreach(table, i, row)
			changed += json_is_true(json_object_get(row, "changed"));
		fprintf(out, "\nConvolution and graph signatures: %zu, %zu with another choice in B\n", json_array_size(table),
			changed);
		if (!json_array_size(table))
			fprintf(out, "  (%lld algo records in A, %lld in B, none of them usable)\n",
				jget_int(sig, "algo_records_a"), jget_int(sig, "algo_records_b"));
		json_array_foreach(table, i, row) {
			fprintf(out, "  %s%s\n    A: ", json_is_true(json_object_get(row, "changed")) ? "CHANGED " : "",
				jget_str(row, "signature", "?"));
			print_choices(out, json_object_get(row, "a"));
			fputs("\n    B: ", out);
			print_choices(out, json_object_get(row, "b"));
			fputc('\n', out);
		}
	}
	json_decref(c);
	return finish_output(out);
}

/* ---- the command ---- */

struct inputs {
	char **paths;
	size_t n, cap;
	struct {
		dev_t dev;
		ino_t ino;
	} *ids;
};

static void
inputs_add(struct inputs *in, const char *path, const struct stat *st)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->ids[i].dev == st->st_dev && in->ids[i].ino == st->st_ino)
			return;
	if (in->n == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 16;
		in->paths = xrealloc(in->paths, in->cap * sizeof(*in->paths));
		in->ids = xrealloc(in->ids, in->cap * sizeof(*in->ids));
	}
	in->paths[in->n] = xstrdup(path);
	in->ids[in->n].dev = st->st_dev;
	in->ids[in->n].ino = st->st_ino;
	in->n++;
}

static void
inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	free(in->ids);
	memset(in, 0, sizeof(*in));
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
join_path(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	char *s;

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (asprintf(&s, "%.*s/%s", (int)len, dir, name) < 0)
		out_of_memory();
	return s;
}

/* *.jsonl* files in DIR, and in its subdirectories when DEPTH is 0; the count found. */
static size_t
scan_dir(struct inputs *in, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, found = 0;

	if (!d) {
		complain("cannot read %s: %s", dir, strerror(errno));
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	/* Directory order is the file system's: sort, for the same report every time. */
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char *path = join_path(dir, names[i]);
		struct stat st;

		if (stat(path, &st) == 0) {
			if (S_ISREG(st.st_mode) && strstr(names[i], ".jsonl")) {
				inputs_add(in, path, &st);
				found++;
			} else if (S_ISDIR(st.st_mode) && depth == 0) {
				found += scan_dir(in, path, 1);
			}
		}
		free(path);
		free(names[i]);
	}
	free(names);
	return found;
}

/* Adds a named file or directory; -1 when it cannot be read. */
static int
add_operand(struct inputs *in, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		complain("cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (scan_dir(in, path, 0) == 0) {
			complain("%s: no record files (*.jsonl*) in it or in its subdirectories", path);
			return -1;
		}
		return 0;
	}
	inputs_add(in, path, &st);
	return 0;
}

static int
report_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
report_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cudnnspy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ncudnnspy: usage: cudnnspy report [--json] [--chrome FILE] FILE_OR_DIR..."
	      " (see cudnnspy report --help)\n", stderr);
	return EXIT_USAGE;
}

/* Reads every input into R; the number that could be read. */
static size_t
read_inputs(struct report *r, struct inputs *in)
{
	size_t ok = 0;

	for (size_t i = 0; i < in->n; i++)
		if (report_read_path(r, in->paths[i]) == 0)
			ok++;
	return ok;
}

static int
run_compare(char **operands, int json)
{
	struct inputs in[2] = { { 0 }, { 0 } };
	struct report *r[2] = { NULL, NULL };
	int rc = EXIT_USAGE;

	for (int i = 0; i < 2; i++) {
		r[i] = report_new();
		if (!r[i])
			out_of_memory();
		if (add_operand(&in[i], operands[i]) != 0)
			goto out;
		if (read_inputs(r[i], &in[i]) == 0) {
			complain("%s: nothing could be read", operands[i]);
			goto out;
		}
	}
	rc = report_write_compare(r[0], operands[0], r[1], operands[1], stdout, json) == 0 ? 0 : 1;
out:
	for (int i = 0; i < 2; i++) {
		report_free(r[i]);
		inputs_free(&in[i]);
	}
	return rc;
}

int
cudnnspy_report_main(int argc, char **argv)
{
	const char *chrome_path = NULL;
	char **operands = xcalloc((size_t)argc + 1, sizeof(*operands));
	struct inputs in = { 0 };
	struct report *r = NULL;
	FILE *chrome = NULL;
	int json = 0, compare = 0, full = 0, top = 20, nops = 0, rc = EXIT_USAGE, bad = 0, i;
	size_t ok;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			for (i++; i < argc; i++)
				operands[nops++] = argv[i];
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(report_usage, stdout);
			rc = 0;
			goto out;
		}
		if (strcmp(a, "--json") == 0) {
			json = 1;
		} else if (strcmp(a, "--compare") == 0) {
			compare = 1;
		} else if (strcmp(a, "--full") == 0) {
			full = 1;
		} else if (strcmp(a, "--chrome") == 0 || strncmp(a, "--chrome=", 9) == 0) {
			if (a[8] == '=')
				chrome_path = a + 9;
			else if (i + 1 < argc)
				chrome_path = argv[++i];
			else
				chrome_path = NULL;
			if (!chrome_path || !chrome_path[0]) {
				rc = report_usage_error("--chrome needs a file name");
				goto out;
			}
		} else if (strcmp(a, "--top") == 0 || strncmp(a, "--top=", 6) == 0) {
			const char *v = a[5] == '=' ? a + 6 : i + 1 < argc ? argv[++i] : NULL;
			char *end;
			long t;

			errno = 0;
			t = v ? strtol(v, &end, 10) : -1;
			if (!v || !*v || *end || errno || t < 0 || t > INT_MAX) {
				rc = report_usage_error("--top takes a number (0 for all)");
				goto out;
			}
			top = (int)t;
		} else if (a[0] == '-' && a[1]) {
			rc = report_usage_error("report: unknown option '%s'", a);
			goto out;
		} else {
			operands[nops++] = argv[i];
		}
	}
	if (compare) {
		if (chrome_path) {
			rc = report_usage_error("--chrome and --compare do not go together");
			goto out;
		}
		if (nops != 2) {
			rc = report_usage_error("--compare takes two runs, each a file or a directory");
			goto out;
		}
		rc = run_compare(operands, json);
		goto out;
	}
	if (nops == 0) {
		rc = report_usage_error("report: no files or directories given");
		goto out;
	}
	for (i = 0; i < nops; i++)
		if (add_operand(&in, operands[i]) != 0)
			bad++;
	if (in.n == 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	r = report_new();
	if (!r)
		out_of_memory();
	report_set_full(r, full);
	if (chrome_path) {
		long long base = 0, t;
		int have = 0;

		for (size_t k = 0; k < in.n; k++)
			if (path_header_start(in.paths[k], &t) && (!have || t < base)) {
				base = t;
				have = 1;
			}
		chrome = fopen(chrome_path, "w");
		if (!chrome) {
			complain("cannot write %s: %s", chrome_path, strerror(errno));
			rc = 1;
			goto out;
		}
		report_chrome_begin(r, chrome, base);
	}
	ok = read_inputs(r, &in);
	if (ok < in.n)
		bad++;
	if (chrome) {
		int err;

		report_chrome_end(r);
		/* A write that failed earlier (a full disk) leaves only the error flag: fclose may still say 0. */
		err = fflush(chrome) != 0 ? errno : ferror(chrome) ? EIO : 0;
		if (fclose(chrome) != 0 && !err)
			err = errno;
		chrome = NULL;
		if (err) {
			complain("cannot write %s: %s", chrome_path, strerror(err));
			rc = 1;
			goto out;
		}
	}
	if (ok == 0) {
		complain("nothing could be read");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((json ? report_write_json(r, stdout) : report_write_text(r, stdout, top)) != 0)
		rc = 1;
	else
		rc = bad ? 1 : 0;
out:
	if (chrome)
		fclose(chrome);
	report_free(r);
	inputs_free(&in);
	free(operands);
	return rc;
}
