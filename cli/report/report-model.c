/*
 * The processes, each read on its own, become one run here. As each
 * process is read whole, the reader hands it over (report_model_add): its
 * line in the table of processes is packed into a row of about 90 bytes,
 * and its functions, failures, findings and convolution choices go into
 * the run's aggregates, so that memory does not grow with the number of
 * calls, and with the number of files by those rows only (the table of
 * processes is output). The report is then built as a JSON model
 * (report_model_new): the text form is printed from that model and --json
 * prints the model itself, so that both say the same. What only grows with
 * the number of processes (each one's entry, the lists of which processes
 * did what) is made as it is printed, from the rows.
 */
#include "report-int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rules.h"

/* ---- texts kept once: program, host, library path ... of many processes are the same ---- */

static size_t
intern(struct report *r, const char *s)
{
	size_t len;
	void *v;

	if (!s)
		return 0;
	len = strlen(s);
	v = report_map_get(&r->strings, s, len);
	if (v)
		return (size_t)(uintptr_t)v;
	if (r->nstrings == r->strings_cap) {
		r->strings_cap = r->strings_cap ? r->strings_cap * 2 : 64;
		r->string_list = report_xrealloc(r->string_list, r->strings_cap * sizeof(*r->string_list));
	}
	r->string_list[r->nstrings++] = report_xstrdup(s);
	report_map_put(&r->strings, s, len, (void *)(uintptr_t)r->nstrings);
	return r->nstrings;
}

static const char *
string_of(const struct report *r, size_t id)
{
	return id && id <= r->nstrings ? r->string_list[id - 1] : NULL;
}

/* ---- rows: a process's line in the table, packed ---- */

/* The numbers of a row, and its texts, in the order they are packed. */
static const size_t row_numbers[] = {
	offsetof(struct proc, schema), offsetof(struct proc, ppid), offsetof(struct proc, lib_version),
	offsetof(struct proc, lib_cudart), offsetof(struct proc, lines), offsetof(struct proc, too_long),
	offsetof(struct proc, bad_json), offsetof(struct proc, wrong_type), offsetof(struct proc, cut),
	offsetof(struct proc, calls_rec), offsetof(struct proc, failures_rec), offsetof(struct proc, lazy_calls),
	offsetof(struct proc, algo_rec), offsetof(struct proc, other_rec), offsetof(struct proc, calls),
	offsetof(struct proc, failures), offsetof(struct proc, internal), offsetof(struct proc, dropped),
	offsetof(struct proc, probing),
};

static const size_t row_texts[] = {
	offsetof(struct proc, program), offsetof(struct proc, spy), offsetof(struct proc, mode),
	offsetof(struct proc, lib_path), offsetof(struct proc, lib_how), offsetof(struct proc, lib_real),
	offsetof(struct proc, lib_build_id),
};

#define ROW_NUMBERS (sizeof(row_numbers) / sizeof(row_numbers[0]))
#define ROW_TEXTS (sizeof(row_texts) / sizeof(row_texts[0]))
/* A varint holds 64 bits in at most 10 bytes. */
#define ROW_PACKED_MAX ((ROW_NUMBERS + ROW_TEXTS) * 10)

static size_t
put_varint(unsigned char *d, unsigned long long v)
{
	size_t n = 0;

	while (v >= 0x80) {
		d[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	d[n++] = (unsigned char)v;
	return n;
}

static const unsigned char *
get_varint(const unsigned char *d, unsigned long long *v)
{
	unsigned shift = 0;

	*v = 0;
	for (;;) {
		unsigned char b = *d++;

		*v |= (unsigned long long)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return d;
		shift += 7;
	}
}

/* Zigzag, so that -1 (a count the summary did not have) is one byte too. */
static unsigned long long
zigzag(long long v)
{
	return ((unsigned long long)v << 1) ^ (unsigned long long)(v >> 63);
}

static long long
unzigzag(unsigned long long v)
{
	return (long long)(v >> 1) ^ -(long long)(v & 1);
}

static const char *
row_name(const struct prow *w)
{
	return (const char *)w->data;
}

/*
 * Rows live as long as the run, and thousands are made between the
 * allocations of reading each file, which are freed: cut from blocks of
 * their own, they leave no holes that the heap keeps, nor a malloc header
 * each. A block begins with a pointer to the one before it.
 */
#define ROW_BLOCK (64u << 10)
#define ROW_ALIGN 8u

static void *
row_alloc(struct report *r, size_t size)
{
	const size_t head = (sizeof(void *) + ROW_ALIGN - 1) & ~(size_t)(ROW_ALIGN - 1);
	void *p;

	size = (size + ROW_ALIGN - 1) & ~(size_t)(ROW_ALIGN - 1);
	if (!r->row_block || r->row_used + size > r->row_size) {
		size_t want = head + size > ROW_BLOCK ? head + size : ROW_BLOCK;
		unsigned char *b = report_xcalloc(1, want);

		memcpy(b, &r->row_block, sizeof(r->row_block));
		r->row_block = b;
		r->row_used = head;
		r->row_size = want;
	}
	p = r->row_block + r->row_used;
	r->row_used += size;
	return p;
}

static void
rows_free(struct report *r)
{
	while (r->row_block) {
		unsigned char *prev;

		memcpy(&prev, r->row_block, sizeof(prev));
		free(r->row_block);
		r->row_block = prev;
	}
	r->row_used = r->row_size = 0;
}

static struct prow *
row_pack(struct report *r, const struct proc *p)
{
	const char *slash = strrchr(p->path, '/');
	const char *name = slash ? slash + 1 : p->path;
	size_t dlen = (size_t)(name - p->path), nlen = strlen(name) + 1, n = 0;
	unsigned char packed[ROW_PACKED_MAX];
	struct prow *w;

	for (size_t i = 0; i < ROW_NUMBERS; i++)
		n += put_varint(packed + n, zigzag(*(const long long *)((const char *)p + row_numbers[i])));
	for (size_t i = 0; i < ROW_TEXTS; i++)
		n += put_varint(packed + n, intern(r, *(char *const *)((const char *)p + row_texts[i])));
	w = row_alloc(r, sizeof(*w) + nlen + n);
	w->rank = p->rank;
	w->pid = p->pid;
	w->host = string_of(r, intern(r, p->host));
	if (dlen) {
		char *dir = report_xcalloc(1, dlen + 1);

		memcpy(dir, p->path, dlen);
		w->dir = string_of(r, intern(r, dir));
		free(dir);
	}
	w->order = p->order;
	w->flags = (p->have_header ? ROW_HEADER : 0) | (p->have_pid ? ROW_PID : 0) | (p->have_rank ? ROW_RANK : 0) |
		   (p->have_ppid ? ROW_PPID : 0) | (p->have_library ? ROW_LIBRARY : 0) |
		   (p->have_lib_version ? ROW_LIB_VERSION : 0) | (p->have_lib_cudart ? ROW_LIB_CUDART : 0) |
		   (p->have_summary ? ROW_SUMMARY : 0) | (p->pass2 ? ROW_PASS2 : 0) | (p->not_exited ? ROW_NOT_EXITED : 0);
	memcpy(w->data, name, nlen);
	memcpy(w->data + nlen, packed, n);
	return w;
}

/*
 * The row as a struct proc with what the table shows (texts borrowed from
 * the run; the path is the caller's to free): the model prints processes
 * from struct proc, as they were read.
 */
static void
row_unpack(const struct report *r, const struct prow *w, struct proc *p)
{
	const char *name = row_name(w);
	const unsigned char *d = w->data + strlen(name) + 1;
	unsigned long long v;

	memset(p, 0, sizeof(*p));
	if (asprintf(&p->path, "%s%s", w->dir ? w->dir : "", name) < 0)
		report_out_of_memory();
	for (size_t i = 0; i < ROW_NUMBERS; i++) {
		d = get_varint(d, &v);
		*(long long *)((char *)p + row_numbers[i]) = unzigzag(v);
	}
	for (size_t i = 0; i < ROW_TEXTS; i++) {
		d = get_varint(d, &v);
		/* Borrowed, never freed through P (the reader's own struct proc owns its texts). */
		*(char **)((char *)p + row_texts[i]) = (char *)string_of(r, (size_t)v);
	}
	p->host = (char *)w->host;
	p->rank = w->rank;
	p->pid = w->pid;
	p->order = w->order;
	p->have_header = !!(w->flags & ROW_HEADER);
	p->have_pid = !!(w->flags & ROW_PID);
	p->have_rank = !!(w->flags & ROW_RANK);
	p->have_ppid = !!(w->flags & ROW_PPID);
	p->have_library = !!(w->flags & ROW_LIBRARY);
	p->have_lib_version = !!(w->flags & ROW_LIB_VERSION);
	p->have_lib_cudart = !!(w->flags & ROW_LIB_CUDART);
	p->have_summary = !!(w->flags & ROW_SUMMARY);
	p->pass2 = !!(w->flags & ROW_PASS2);
	p->not_exited = !!(w->flags & ROW_NOT_EXITED);
}

/* strcmp of the two whole paths, each its dir and its name. */
static int
path_cmp(const struct prow *x, const struct prow *y)
{
	const char *a = x->dir ? x->dir : "", *b = y->dir ? y->dir : "";
	int an = 0, bn = 0;

	for (;;) {
		if (!*a && !an) {
			a = row_name(x);
			an = 1;
		}
		if (!*b && !bn) {
			b = row_name(y);
			bn = 1;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		if (!*a)
			return 0;
		a++;
		b++;
	}
}

/* The report's order of processes: by rank (none last), host, pid, file, then input order. */
static int
row_cmp(const struct prow *x, const struct prow *y)
{
	int xr = !!(x->flags & ROW_RANK), yr = !!(y->flags & ROW_RANK);
	int xp = !!(x->flags & ROW_PID), yp = !!(y->flags & ROW_PID);
	int c;

	if (xr != yr)
		return yr - xr;
	if (xr && x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
	if (c)
		return c;
	if (xp != yp)
		return yp - xp;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = path_cmp(x, y);
	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int
row_qsort_cmp(const void *a, const void *b)
{
	return row_cmp(*(struct prow *const *)a, *(struct prow *const *)b);
}

/*
 * What a person calls a process: its rank, unless several share it. ROWS
 * is in the report's order, so processes of one rank are neighbours.
 */
static char *
row_label(struct prow **rows, size_t n, size_t i, size_t hosts)
{
	struct prow *p = rows[i];
	char *s;
	int rc;

	if (p->flags & ROW_RANK) {
		int shared = (i > 0 && (rows[i - 1]->flags & ROW_RANK) && rows[i - 1]->rank == p->rank) ||
			     (i + 1 < n && (rows[i + 1]->flags & ROW_RANK) && rows[i + 1]->rank == p->rank);

		if (!shared)
			rc = asprintf(&s, "rank %lld", p->rank);
		else if (p->flags & ROW_PID)
			rc = asprintf(&s, "rank %lld pid %lld", p->rank, p->pid);
		else
			rc = asprintf(&s, "rank %lld (%s)", p->rank, row_name(p));
	} else if (p->flags & ROW_PID) {
		if (hosts > 1 && p->host)
			rc = asprintf(&s, "pid %lld on %s", p->pid, p->host);
		else
			rc = asprintf(&s, "pid %lld", p->pid);
	} else {
		rc = asprintf(&s, "%s", row_name(p));
	}
	if (rc < 0)
		report_out_of_memory();
	return s;
}

/* ---- lists of processes ---- */

static void
who_add(struct who *w, size_t order)
{
	size_t lo = 0, hi = w->n;

	/* Mostly the process after the last one added. */
	if (w->n && w->r[w->n - 1][1] == order) {
		w->r[w->n - 1][1]++;
		w->count++;
		return;
	}
	/* The first range that ends at ORDER or after it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->r[mid][1] < order)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->n && w->r[lo][0] <= order && order < w->r[lo][1])
		return;
	w->count++;
	if (lo < w->n && w->r[lo][1] == order) {
		w->r[lo][1]++;
		if (lo + 1 < w->n && w->r[lo + 1][0] == w->r[lo][1]) {
			w->r[lo][1] = w->r[lo + 1][1];
			memmove(w->r + lo + 1, w->r + lo + 2, (w->n - lo - 2) * sizeof(*w->r));
			w->n--;
		}
		return;
	}
	if (lo < w->n && w->r[lo][0] == order + 1) {
		w->r[lo][0] = order;
		return;
	}
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 4;
		w->r = report_xrealloc(w->r, w->cap * sizeof(*w->r));
	}
	memmove(w->r + lo + 1, w->r + lo, (w->n - lo) * sizeof(*w->r));
	w->r[lo][0] = order;
	w->r[lo][1] = order + 1;
	w->n++;
}

static int
who_equal(const struct who *a, const struct who *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->r, b->r, a->n * sizeof(*a->r)) == 0);
}

static void
who_free(struct who *w)
{
	free(w->r);
	memset(w, 0, sizeof(*w));
}

/* ---- the run's aggregates, a process at a time ---- */

struct fn_final {
	long long calls, failures, probing, internal, total, p50, p99, gpu, first;
	int have_gpu, have_internal, have_first, steady_unknown;
};

static void
fn_final_of(const struct fnstat *f, struct fn_final *o)
{
	memset(o, 0, sizeof(*o));
	if (f->in_summary) {
		o->calls = f->s_calls;
		o->failures = f->s_failures;
		o->probing = f->s_probing;
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
		o->probing = f->r_probing;
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

struct fn_agg {
	char *fn;
	long long calls, failures, probing, internal, total, gpu, p50, p99, procs, first, steady_known;
	int have_gpu, have_internal, have_first;
};

/* One cuDNN build: the first process with it in the report's order gives its path and version. */
struct lib_agg {
	char *key;
	struct prow *first;
	struct who who;
};

/*
 * A candidate for a kind of failure's first occurrence: one process's
 * first, with where it was.
 */
struct gcand {
	json_t *first;
	char *status_name;
	struct prow *row;
	long long line, wall_ns;
	int have_wall;
};

/*
 * A kind of failure. Its first occurrence is the earliest on the wall
 * clock; without clocks, the one of the first process in the report's
 * order. Taken a process at a time: SORTED is the candidate of the first
 * process in that order, WALL the earliest one with a clock (ties in that
 * order), and the first is SORTED when it has no clock, else WALL.
 */
struct group_agg {
	char *fn, *message, *python_at;
	long long status, count;
	int probing;
	struct gcand sorted, wall;
	struct who who;
};

/* A finding: its severity and fix from the first process in the report's order that had it. */
struct finding_agg {
	char *id, *message, *severity, *fix;
	struct prow *row;
	struct who who;
};

struct sig_agg {
	char *api, *op, *signature, *choice;
	char *python;	/* the first process's, in the report's order of processes */
	long long calls, failures, timed, host_ns, gpu_timed, gpu_ns, ws_min, ws_max;
	int have_ws, nondet;
	struct who who;
};

/* What the processes built through the graph API for one signature, summed; the configs built, united. */
struct graph_agg {
	char *op, *signature;
	long long graphs, heuristics, configs, plans;
	struct llset built;
	int built_capped;
	int unended;	/* a process that built it left no summary nor algo records: what ran there is not known */
	struct who who;
};

/* Configs built kept in the run, all signatures together: 262144 hashes are about 8 MiB at most. */
#define BUILT_RUN 262144

static void
add_library(struct report *r, struct proc *p, struct prow *w)
{
	struct lib_agg *l;
	struct sbuf key;

	report_sb_init(&key, 8192);
	if (!p->have_header) {
		report_sb_puts(&key, "\x01unknown");
	} else if (!p->have_library) {
		report_sb_puts(&key, "\x01none");
	} else {
		/* One file reached by several names (cuda/lib64, cuda-13.0/lib) is one build. */
		report_sb_printf(&key, "%lld\x1f", p->have_lib_version ? p->lib_version : -1);
		if (p->lib_build_id)
			report_sb_printf(&key, "build-id %s", p->lib_build_id);
		else
			report_sb_puts(&key, p->lib_real ? p->lib_real : p->lib_path ? p->lib_path : "");
	}
	l = report_map_get(&r->libs, key.p, key.len);
	if (!l) {
		l = report_xcalloc(1, sizeof(*l));
		l->key = report_xstrdup(key.p);
		report_map_put(&r->libs, key.p, key.len, l);
	}
	if (!l->first || row_cmp(w, l->first) < 0)
		l->first = w;
	who_add(&l->who, w->order);
	free(key.p);
}

static void
gcand_set(struct gcand *c, const struct fgroup *g, struct prow *w, long long line)
{
	json_decref(c->first);
	free(c->status_name);
	c->first = json_incref(g->first);
	c->status_name = g->status_name ? report_xstrdup(g->status_name) : NULL;
	c->row = w;
	c->line = line;
	c->have_wall = g->have_wall;
	c->wall_ns = g->wall_ns;
}

/* Is (W, LINE) before C in the report's order of processes (and lines in one)? */
static int
gcand_before(const struct gcand *c, const struct prow *w, long long line)
{
	int o;

	if (!c->first)
		return 1;
	o = row_cmp(w, c->row);
	return o < 0 || (o == 0 && line < c->line);
}

static void
add_groups(struct report *r, struct proc *p, struct prow *w)
{
	void **gv = report_map_values(&p->groups);

	r->groups_over = report_sat_add(r->groups_over, p->groups_over);
	r->probing_failures = report_sat_add(r->probing_failures, p->probing_rec);
	for (size_t k = 0; k < p->groups.n; k++) {
		struct fgroup *g = gv[k];
		struct group_agg *a;
		struct sbuf key;
		long long line = report_jget_int(g->first, "line");

		report_sb_init(&key, 4 * MSG_CAP);
		report_sb_printf(&key, "%s%s\x1f%lld\x1f", g->probing ? "\x1c" "p" : "\x1c" "f", g->fn, g->status);
		report_sb_puts(&key, g->message ? g->message : "\x1e");
		if (g->python_at) {
			report_sb_puts(&key, "\x1d");
			report_sb_puts(&key, g->python_at);
		}
		a = report_map_get(&r->groups, key.p, key.len);
		if (!a) {
			a = report_xcalloc(1, sizeof(*a));
			a->fn = report_xstrdup(g->fn);
			a->message = g->message ? report_xstrdup(g->message) : NULL;
			a->python_at = g->python_at ? report_xstrdup(g->python_at) : NULL;
			a->status = g->status;
			a->probing = g->probing;
			report_map_put(&r->groups, key.p, key.len, a);
		}
		if (gcand_before(&a->sorted, w, line))
			gcand_set(&a->sorted, g, w, line);
		if (g->have_wall && (!a->wall.first || g->wall_ns < a->wall.wall_ns ||
				     (g->wall_ns == a->wall.wall_ns && gcand_before(&a->wall, w, line))))
			gcand_set(&a->wall, g, w, line);
		a->count = report_sat_add(a->count, g->count);
		/* Two of a file's groups can clean to one (invalid UTF-8 bytes become '?'): still one process. */
		who_add(&a->who, w->order);
		r->total_failures = report_sat_add(r->total_failures, g->count);
		free(key.p);
	}
	free(gv);
}

static void
add_findings(struct report *r, struct proc *p, struct prow *w)
{
	void **fv = report_map_values(&p->findings);

	r->findings_over = report_sat_add(r->findings_over, p->findings_over);
	for (size_t k = 0; k < p->findings.n; k++) {
		struct pfinding *f = fv[k];
		struct finding_agg *a;
		struct sbuf key;

		report_sb_init(&key, 2 * MSG_CAP);
		report_sb_printf(&key, "%s\x1f%s", f->id, f->message);
		a = report_map_get(&r->findings, key.p, key.len);
		if (!a) {
			a = report_xcalloc(1, sizeof(*a));
			a->id = report_xstrdup(f->id);
			a->message = report_xstrdup(f->message);
			report_map_put(&r->findings, key.p, key.len, a);
		}
		if (!a->row || row_cmp(w, a->row) < 0) {
			free(a->severity);
			free(a->fix);
			a->severity = f->severity ? report_xstrdup(f->severity) : NULL;
			a->fix = f->fix ? report_xstrdup(f->fix) : NULL;
			a->row = w;
		}
		who_add(&a->who, w->order);
		free(key.p);
	}
	free(fv);
}

static void
add_sigs(struct report *r, struct proc *p, struct prow *w)
{
	void **gv = report_map_values(&p->sigs);

	for (size_t k = 0; k < p->sigs.n; k++) {
		struct psig *g = gv[k];
		struct sig_agg *a;
		struct sbuf key;

		report_sb_init(&key, 4 * SIG_CAP);
		report_sb_printf(&key, "%s\x1f%s\x1f%s\x1f%s", g->api, g->op, g->signature, g->choice);
		a = report_map_get(&r->sigs, key.p, key.len);
		if (!a) {
			a = report_xcalloc(1, sizeof(*a));
			a->api = report_xstrdup(g->api);
			a->op = report_xstrdup(g->op);
			a->signature = report_xstrdup(g->signature);
			a->choice = report_xstrdup(g->choice);
			report_map_put(&r->sigs, key.p, key.len, a);
		}
		if (!a->python && g->python)
			a->python = report_xstrdup(g->python);
		a->calls = report_sat_add(a->calls, g->calls);
		a->failures = report_sat_add(a->failures, g->failures);
		a->timed = report_sat_add(a->timed, g->timed);
		a->host_ns = report_sat_add(a->host_ns, g->host_ns);
		a->gpu_timed = report_sat_add(a->gpu_timed, g->gpu_timed);
		a->gpu_ns = report_sat_add(a->gpu_ns, g->gpu_ns);
		if (g->have_ws) {
			if (!a->have_ws || g->ws_min < a->ws_min)
				a->ws_min = g->ws_min;
			if (!a->have_ws || g->ws_max > a->ws_max)
				a->ws_max = g->ws_max;
			a->have_ws = 1;
		}
		a->nondet |= g->nondet;
		who_add(&a->who, w->order);
		free(key.p);
	}
	free(gv);
}

/* A process's configs built into the run's set of the signature: one config built by every rank is one. */
static void
unite_built(struct report *r, struct graph_agg *a, const struct pgraph *g)
{
	for (size_t i = 0; i < g->built.cap; i++)
		if (g->built.used[i] && report_llset_add_shared(&a->built, g->built.v[i], BUILT_KEEP, &r->built_total,
								BUILT_RUN) < 0)
			a->built_capped = 1;
	a->built_capped |= g->built_capped;
}

static void
add_graphs(struct report *r, struct proc *p, struct prow *w)
{
	void **gv = report_map_values(&p->graphs);

	for (size_t k = 0; k < p->graphs.n; k++) {
		struct pgraph *g = gv[k];
		size_t len = strlen(g->signature);
		struct graph_agg *a = report_map_get(&r->graphs, g->signature, len);

		if (!a) {
			a = report_xcalloc(1, sizeof(*a));
			a->signature = report_xstrdup(g->signature);
			report_map_put(&r->graphs, g->signature, len, a);
		}
		if (!a->op && g->op)
			a->op = report_xstrdup(g->op);
		a->graphs = report_sat_add(a->graphs, g->graphs);
		a->heuristics = report_sat_add(a->heuristics, g->heuristics);
		a->configs = report_sat_add(a->configs, g->configs);
		a->plans = report_sat_add(a->plans, g->plans);
		unite_built(r, a, g);
		/*
		 * Algo records are written at exit; a format 2 file whose process did not exit gets them, and its
		 * summary, from the state it left (cudnnspy dump's): only a file without a summary lacks them.
		 */
		a->unended |= !p->have_summary && !p->algo_rec;
		who_add(&a->who, w->order);
	}
	free(gv);
}

static void
add_functions(struct report *r, struct proc *p)
{
	void **fv = report_map_values(&p->fns);

	for (size_t k = 0; k < p->fns.n; k++) {
		struct fnstat *f = fv[k];
		struct fn_final o;
		struct fn_agg *a = report_map_get(&r->fns, f->fn, strlen(f->fn));

		if (!a) {
			a = report_xcalloc(1, sizeof(*a));
			a->fn = report_xstrdup(f->fn);
			report_map_put(&r->fns, f->fn, strlen(f->fn), a);
		}
		fn_final_of(f, &o);
		a->calls = report_sat_add(a->calls, o.calls);
		a->failures = report_sat_add(a->failures, o.failures);
		a->probing = report_sat_add(a->probing, o.probing < o.failures ? o.probing : o.failures);
		a->internal = report_sat_add(a->internal, o.internal);
		a->have_internal |= o.have_internal;
		a->total = report_sat_add(a->total, o.total);
		if (o.have_first) {
			a->have_first = 1;
			a->first = report_sat_add(a->first, o.first);
		}
		if (!o.steady_unknown)
			a->steady_known = 1;
		if (o.have_gpu) {
			a->have_gpu = 1;
			a->gpu = report_sat_add(a->gpu, o.gpu);
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

size_t
report_model_slot(struct report *r)
{
	if (r->nrows == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->rows = report_xrealloc(r->rows, r->cap * sizeof(*r->rows));
	}
	r->rows[r->nrows] = NULL;
	return r->nrows++;
}

void
report_model_add(struct report *r, struct proc *p)
{
	struct prow *w = row_pack(r, p);

	r->rows[p->order] = w;
	if (w->host && !report_map_get(&r->hosts, w->host, strlen(w->host)))
		report_map_put(&r->hosts, w->host, strlen(w->host), (void *)(uintptr_t)w->host);
	/* What the process's entry says are its calls: the summary's, else its records'. */
	r->calls = report_sat_add(r->calls, p->have_summary ? (p->calls >= 0 ? p->calls : 0) :
				  report_sat_add(p->calls_rec, p->failures_rec));
	r->algo_rec = report_sat_add(r->algo_rec, p->algo_rec);
	add_library(r, p, w);
	add_groups(r, p, w);
	add_findings(r, p, w);
	add_sigs(r, p, w);
	add_graphs(r, p, w);
	add_functions(r, p);
}

static void
lib_agg_free(void *v)
{
	struct lib_agg *l = v;

	free(l->key);
	who_free(&l->who);
	free(l);
}

static void
group_agg_free(void *v)
{
	struct group_agg *a = v;

	free(a->fn);
	free(a->message);
	free(a->python_at);
	json_decref(a->sorted.first);
	free(a->sorted.status_name);
	json_decref(a->wall.first);
	free(a->wall.status_name);
	who_free(&a->who);
	free(a);
}

static void
finding_agg_free(void *v)
{
	struct finding_agg *a = v;

	free(a->id);
	free(a->message);
	free(a->severity);
	free(a->fix);
	who_free(&a->who);
	free(a);
}

static void
sig_agg_free(void *v)
{
	struct sig_agg *a = v;

	free(a->api);
	free(a->op);
	free(a->signature);
	free(a->choice);
	free(a->python);
	who_free(&a->who);
	free(a);
}

static void
graph_agg_free(void *v)
{
	struct graph_agg *a = v;

	free(a->op);
	free(a->signature);
	report_llset_free(&a->built);
	who_free(&a->who);
	free(a);
}

static void
fn_agg_free(void *v)
{
	struct fn_agg *a = v;

	free(a->fn);
	free(a);
}

void
report_model_release(struct report *r)
{
	rows_free(r);
	free(r->rows);
	r->rows = NULL;
	r->nrows = r->cap = 0;
	report_map_free(&r->libs, lib_agg_free);
	report_map_free(&r->groups, group_agg_free);
	report_map_free(&r->findings, finding_agg_free);
	report_map_free(&r->sigs, sig_agg_free);
	report_map_free(&r->graphs, graph_agg_free);
	r->built_total = 0;
	report_map_free(&r->fns, fn_agg_free);
	report_map_free(&r->hosts, NULL);
	report_map_free(&r->strings, NULL);
	for (size_t i = 0; i < r->nstrings; i++)
		free(r->string_list[i]);
	free(r->string_list);
	r->string_list = NULL;
	r->nstrings = r->strings_cap = 0;
}

/* ---- the model: the report as JSON ---- */

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
	lib = report_must(json_object());
	report_jset(lib, "path", jstr_or_null(p->lib_path));
	report_jset(lib, "version", jint_or_null(p->have_lib_version, p->lib_version));
	if (p->have_lib_version) {
		char *v = report_version_string(p->lib_version);

		report_jset(lib, "version_string", json_string(v));
		free(v);
	} else {
		report_jset(lib, "version_string", json_null());
	}
	report_jset(lib, "cudart", jint_or_null(p->have_lib_cudart, p->lib_cudart));
	report_jset(lib, "how", jstr_or_null(p->lib_how));
	report_jset(lib, "real_path", jstr_or_null(p->lib_real));
	report_jset(lib, "build_id", jstr_or_null(p->lib_build_id));
	return lib;
}

static json_t *
proc_json(struct proc *p, const char *label)
{
	json_t *o = report_must(json_object()), *rec, *sk;
	long long skipped = p->too_long + p->bad_json + p->wrong_type + p->cut;

	report_jset(o, "label", json_string(label));
	report_jset(o, "file", json_string(p->path));
	report_jset(o, "host", jstr_or_null(p->host));
	report_jset(o, "pid", jint_or_null(p->have_pid, p->pid));
	report_jset(o, "ppid", jint_or_null(p->have_ppid, p->ppid));
	report_jset(o, "rank", jint_or_null(p->have_rank, p->rank));
	report_jset(o, "program", jstr_or_null(p->program));
	report_jset(o, "mode", jstr_or_null(p->mode));
	report_jset(o, "spy", jstr_or_null(p->spy));
	report_jset(o, "schema", jint_or_null(p->have_header, p->schema));
	report_jset(o, "header", json_boolean(p->have_header));
	report_jset(o, "library", library_json(p));
	report_jset(o, "summary", json_boolean(p->have_summary));
	report_jset(o, "exited", json_boolean(p->have_summary && !p->not_exited));
	if (p->have_summary) {
		report_jset(o, "calls", jint_or_null(p->calls >= 0, p->calls));
		report_jset(o, "failures", jint_or_null(p->failures >= 0, p->failures));
		report_jset(o, "internal", jint_or_null(p->internal >= 0, p->internal));
		report_jset(o, "dropped", jint_or_null(p->dropped >= 0, p->dropped));
		report_jset(o, "probing", jint_or_null(p->probing >= 0, p->probing));
	} else {
		/* Without a summary, the records are all there is: traced calls and failures. */
		report_jset(o, "calls", json_integer(report_sat_add(p->calls_rec, p->failures_rec)));
		report_jset(o, "failures", json_integer(p->failures_rec));
		report_jset(o, "internal", json_null());
		report_jset(o, "dropped", json_null());
		report_jset(o, "probing", json_null());
	}
	rec = report_must(json_object());
	report_jset(rec, "lines", json_integer(p->lines));
	/* After a second pass, the lines counted on the first were parsed too. */
	report_jset(rec, "call", json_integer(p->pass2 ? p->calls_rec : report_sat_add(p->calls_rec, p->lazy_calls)));
	report_jset(rec, "failure", json_integer(p->failures_rec));
	report_jset(rec, "algo", json_integer(p->algo_rec));
	report_jset(rec, "other", json_integer(p->other_rec));
	report_jset(o, "records", rec);
	sk = report_must(json_object());
	report_jset(sk, "total", json_integer(skipped));
	report_jset(sk, "not_json", json_integer(p->bad_json));
	report_jset(sk, "too_long", json_integer(p->too_long));
	report_jset(sk, "wrong_type", json_integer(p->wrong_type));
	report_jset(sk, "cut", json_integer(p->cut));
	report_jset(o, "skipped", sk);
	return o;
}

static char *
label_of(struct rmodel *m, size_t i)
{
	return row_label(m->sorted, m->n, i, m->r->hosts.n);
}

json_t *
report_model_process(struct rmodel *m, size_t i)
{
	struct proc p;
	char *label = label_of(m, i);
	json_t *o;

	row_unpack(m->r, m->sorted[i], &p);
	o = proc_json(&p, label);
	free(p.path);
	free(label);
	return o;
}

size_t
report_model_unfinished(struct rmodel *m)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += !(m->sorted[i]->flags & ROW_SUMMARY) || (m->sorted[i]->flags & ROW_NOT_EXITED);
	return n;
}

/*
 * The placeholders: objects with a key no record can put in the model (the
 * model's keys are all this file's), for what is made when printed.
 */
#define PH_PROCESSES "\x01processes"
#define PH_WHO "\x01who"

static json_t *
who_placeholder(struct rmodel *m, struct who *w)
{
	json_t *o = report_must(json_object());

	if (m->nwhos == m->whos_cap) {
		m->whos_cap = m->whos_cap ? m->whos_cap * 2 : 64;
		m->whos = report_xrealloc(m->whos, m->whos_cap * sizeof(*m->whos));
	}
	m->whos[m->nwhos] = w;
	report_jset(o, PH_WHO, json_integer((json_int_t)m->nwhos++));
	return o;
}

/* The list a "who" placeholder stands for; NULL for anything else. */
static struct who *
who_of(struct rmodel *m, json_t *who)
{
	json_t *i = json_object_get(who, PH_WHO);

	if (!json_is_integer(i) || json_integer_value(i) < 0 || (size_t)json_integer_value(i) >= m->nwhos)
		return NULL;
	return m->whos[json_integer_value(i)];
}

size_t
report_who_count(struct rmodel *m, json_t *who)
{
	struct who *w = who_of(m, who);

	return w ? w->count : json_array_size(who);
}

void
report_who_each(struct rmodel *m, json_t *who, int (*fn)(const char *label, size_t i, void *arg), void *arg)
{
	struct who *w = who_of(m, who);
	size_t words = (m->n + 63) / 64, k = 0;
	json_t *x;
	size_t i;

	if (!w) {
		json_array_foreach(who, i, x)
			if (json_is_string(x) && fn(json_string_value(x), k++, arg))
				return;
		return;
	}
	if (w->count == m->n) {
		/* All of them: the report's order itself. */
		for (i = 0; i < m->n; i++) {
			char *label = label_of(m, i);
			int stop = fn(label, i, arg);

			free(label);
			if (stop)
				return;
		}
		return;
	}
	/* The members by their place in the report's order, then in that order. */
	memset(m->bits, 0, words * sizeof(*m->bits));
	for (size_t j = 0; j < w->n; j++)
		for (size_t o = w->r[j][0]; o < w->r[j][1]; o++) {
			size_t at = m->r->rows[o]->sorted;

			m->bits[at / 64] |= 1ULL << (at % 64);
		}
	for (size_t wd = 0; wd < words; wd++) {
		uint64_t b = m->bits[wd];

		while (b) {
			size_t at = wd * 64 + (size_t)__builtin_ctzll(b);
			char *label = label_of(m, at);
			int stop = fn(label, k++, arg);

			free(label);
			if (stop)
				return;
			b &= b - 1;
		}
	}
}

static int
lib_agg_cmp(const void *a, const void *b)
{
	const struct lib_agg *x = *(struct lib_agg *const *)a, *y = *(struct lib_agg *const *)b;

	if (x->who.count != y->who.count)
		return x->who.count > y->who.count ? -1 : 1;
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
	c = strcmp(x->fn, y->fn);
	if (c)
		return c;
	if (x->status != y->status)
		return x->status < y->status ? -1 : 1;
	if ((c = str_cmp_null(x->message, y->message)) != 0)
		return c;
	return x->probing - y->probing;
}

static int
finding_agg_cmp(const void *a, const void *b)
{
	const struct finding_agg *x = *(const struct finding_agg *const *)a, *y = *(const struct finding_agg *const *)b;
	static const char *const order[] = { "error", "warning", "info" };
	int sx = 3, sy = 3, c;

	for (int i = 0; i < 3; i++) {
		if (x->severity && strcmp(x->severity, order[i]) == 0)
			sx = i;
		if (y->severity && strcmp(y->severity, order[i]) == 0)
			sy = i;
	}
	if (sx != sy)
		return sx - sy;
	if ((c = strcmp(x->id, y->id)) != 0)
		return c;
	return strcmp(x->message, y->message);
}

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
	if ((c = strcmp(x->signature, y->signature)) != 0)
		return c;
	return strcmp(x->choice, y->choice);
}

/* What was built the most first: plans, then heuristics queries and graphs, then by signature. */
static int
graph_agg_cmp(const void *a, const void *b)
{
	const struct graph_agg *x = *(const struct graph_agg *const *)a, *y = *(const struct graph_agg *const *)b;

	if (x->plans != y->plans)
		return x->plans < y->plans ? 1 : -1;
	if (x->heuristics != y->heuristics)
		return x->heuristics < y->heuristics ? 1 : -1;
	if (x->graphs != y->graphs)
		return x->graphs < y->graphs ? 1 : -1;
	return strcmp(x->signature, y->signature);
}

/* The choices a signature ran, the most calls first. */
static int
sig_agg_calls_cmp(const void *a, const void *b)
{
	const struct sig_agg *x = *(const struct sig_agg *const *)a, *y = *(const struct sig_agg *const *)b;
	int c;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if ((c = strcmp(x->choice, y->choice)) != 0)
		return c;
	return strcmp(x->op, y->op);
}

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

/* The values of M in the order of CMP; the caller frees the array. */
static void **
sorted_values(struct map *m, int (*cmp)(const void *, const void *))
{
	void **v = report_map_values(m);

	qsort(v, m->n, sizeof(*v), cmp);
	return v;
}

/* The cuDNN that answered: one variant per build. */
static json_t *
cudnn_model(struct rmodel *m)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->libs, lib_agg_cmp);
	json_t *libs = report_must(json_object()), *arr = report_must(json_array());
	int known = 0;

	for (size_t k = 0; k < r->libs.n; k++) {
		struct lib_agg *l = vals[k];
		json_t *v = report_must(json_object());
		struct proc p;

		row_unpack(r, l->first, &p);
		known += p.have_header;
		report_jset(v, "known", json_boolean(p.have_header));
		report_jset(v, "library", library_json(&p));
		report_jset(v, "processes", json_integer((json_int_t)l->who.count));
		report_jset(v, "who", who_placeholder(m, &l->who));
		report_jpush(arr, v);
		free(p.path);
	}
	report_jset(libs, "differ", json_boolean(known > 1));
	report_jset(libs, "variants", arr);
	free(vals);
	return libs;
}

/*
 * Failures grouped by (function, status, message, Python frames, probing)
 * across processes. "total" counts them all, the probing among them too:
 * "probing" says how many of those were.
 */
static json_t *
failures_model(struct rmodel *m)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->groups, group_agg_cmp);
	json_t *fails = report_must(json_object()), *arr = report_must(json_array());

	report_jset(fails, "total", json_integer(report_sat_add(r->total_failures, r->groups_over)));
	report_jset(fails, "probing", json_integer(r->probing_failures));
	report_jset(fails, "not_grouped", json_integer(r->groups_over));
	for (size_t k = 0; k < r->groups.n; k++) {
		struct group_agg *a = vals[k];
		struct gcand *c = a->sorted.have_wall ? &a->wall : &a->sorted;
		json_t *v = report_must(json_object()), *first;
		char *label;

		report_jset(v, "fn", json_string(a->fn));
		report_jset(v, "status", json_integer(a->status));
		report_jset(v, "status_name", jstr_or_null(c->status_name));
		report_jset(v, "message", jstr_or_null(a->message));
		report_jset(v, "python", jstr_or_null(a->python_at));
		report_jset(v, "probing", json_boolean(a->probing));
		report_jset(v, "count", json_integer(a->count));
		report_jset(v, "processes", json_integer((json_int_t)a->who.count));
		report_jset(v, "of", json_integer((json_int_t)m->n));
		report_jset(v, "only_some", json_boolean(m->n > 1 && a->who.count < m->n));
		report_jset(v, "who", who_placeholder(m, &a->who));
		first = report_must(json_deep_copy(c->first));
		label = label_of(m, c->row->sorted);
		report_jset(first, "process", json_string(label));
		free(label);
		report_jset(v, "first", first);
		report_jpush(arr, v);
	}
	report_jset(fails, "groups", arr);
	free(vals);
	return fails;
}

/* Findings across processes: each once, with the processes it came from and its fix. */
static json_t *
findings_model(struct rmodel *m)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->findings, finding_agg_cmp);
	json_t *arr = report_must(json_array());

	for (size_t k = 0; k < r->findings.n; k++) {
		struct finding_agg *a = vals[k];
		json_t *v = report_must(json_object());
		/* Records written before findings carried their fix: the command's own table knows it. */
		const char *fix = a->fix ? a->fix : spy_rule_fix(a->id);

		report_jset(v, "id", json_string(a->id));
		report_jset(v, "severity", jstr_or_null(a->severity));
		report_jset(v, "message", json_string(a->message));
		report_jset(v, "fix", jstr_or_null(fix));
		report_jset(v, "processes", json_integer((json_int_t)a->who.count));
		report_jset(v, "of", json_integer((json_int_t)m->n));
		report_jset(v, "who", who_placeholder(m, &a->who));
		report_jpush(arr, v);
	}
	free(vals);
	if (r->findings_over) {
		json_t *o = report_must(json_object());

		report_jset(o, "not_kept", json_integer(r->findings_over));
		report_jpush(arr, o);
	}
	return arr;
}

/* Convolution choices across processes, per (api, op, signature, choice), by total time. */
static json_t *
signatures_model(struct rmodel *m)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->sigs, sig_agg_cmp);
	json_t *arr = report_must(json_array());

	for (size_t k = 0; k < r->sigs.n; k++) {
		struct sig_agg *a = vals[k];
		json_t *v = report_must(json_object());

		report_jset(v, "api", json_string(a->api));
		report_jset(v, "op", json_string(a->op));
		report_jset(v, "signature", json_string(a->signature));
		report_jset(v, "choice", json_string(a->choice));
		report_jset(v, "python", jstr_or_null(a->python));
		report_jset(v, "calls", json_integer(a->calls));
		report_jset(v, "failures", json_integer(a->failures));
		report_jset(v, "timed", json_integer(a->timed));
		report_jset(v, "host_ns", json_integer(a->host_ns));
		report_jset(v, "gpu_timed", json_integer(a->gpu_timed));
		report_jset(v, "gpu_ns", json_integer(a->gpu_ns));
		report_jset(v, "workspace_min", jint_or_null(a->have_ws, a->ws_min));
		report_jset(v, "workspace_max", jint_or_null(a->have_ws, a->ws_max));
		report_jset(v, "nondeterministic", json_boolean(a->nondet));
		report_jset(v, "processes", json_integer((json_int_t)a->who.count));
		report_jset(v, "who", who_placeholder(m, &a->who));
		report_jpush(arr, v);
	}
	free(vals);
	return arr;
}

static void
json_decref_void(void *v)
{
	json_decref(v);
}

/* What ran through the graph API, per signature: {signature: [{"choice", "calls", "processes"}, ...]}. */
static void
executed_by_signature(struct report *r, struct map *out)
{
	void **vals = sorted_values(&r->sigs, sig_agg_calls_cmp);

	for (size_t k = 0; k < r->sigs.n; k++) {
		struct sig_agg *a = vals[k];
		size_t len = strlen(a->signature);
		json_t *arr, *v;

		if (strcmp(a->api, "graph") != 0)
			continue;
		arr = report_map_get(out, a->signature, len);
		if (!arr) {
			arr = report_must(json_array());
			report_map_put(out, a->signature, len, arr);
		}
		v = report_must(json_object());
		report_jset(v, "choice", json_string(a->choice));
		report_jset(v, "calls", json_integer(a->calls));
		report_jset(v, "processes", json_integer((json_int_t)a->who.count));
		report_jpush(arr, v);
	}
	free(vals);
}

/*
 * The graph API per signature, whether or not it executed: graphs
 * finalized, heuristics queries and the configs they returned, plans built
 * and of how many configs ("candidates"), and what ran (the algo records,
 * written at exit: "executed_unknown" when a process that built it left
 * neither a summary nor algo records). More than one candidate built and one config executed is
 * tuning (a framework building every config, then keeping the fastest).
 */
static json_t *
graphs_model(struct rmodel *m)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->graphs, graph_agg_cmp);
	json_t *arr = report_must(json_array());
	struct map ran = { 0 };

	executed_by_signature(r, &ran);
	for (size_t k = 0; k < r->graphs.n; k++) {
		struct graph_agg *a = vals[k];
		json_t *v = report_must(json_object());
		json_t *executed = report_map_get(&ran, a->signature, strlen(a->signature));

		executed = executed ? json_incref(executed) : report_must(json_array());
		report_jset(v, "signature", json_string(a->signature));
		report_jset(v, "op", jstr_or_null(a->op));
		report_jset(v, "graphs", json_integer(a->graphs));
		report_jset(v, "heuristics", json_integer(a->heuristics));
		report_jset(v, "configs_returned", json_integer(a->configs));
		report_jset(v, "plans", json_integer(a->plans));
		report_jset(v, "candidates", json_integer((json_int_t)a->built.n));
		report_jset(v, "candidates_capped", json_boolean(a->built_capped));
		report_jset(v, "tuning", json_boolean(a->built.n > 1 && json_array_size(executed) == 1));
		report_jset(v, "executed", executed);
		report_jset(v, "executed_unknown", json_boolean(a->unended));
		report_jset(v, "processes", json_integer((json_int_t)a->who.count));
		report_jset(v, "who", who_placeholder(m, &a->who));
		report_jpush(arr, v);
	}
	report_map_free(&ran, json_decref_void);
	free(vals);
	return arr;
}

static int
same_sig(json_t *a, json_t *b)
{
	return strcmp(report_jget_str(a, "signature", ""), report_jget_str(b, "signature", "")) == 0 &&
	       strcmp(report_jget_str(a, "api", ""), report_jget_str(b, "api", "")) == 0;
}

static int
same_who(struct rmodel *m, json_t *a, json_t *b)
{
	struct who *x = who_of(m, a), *y = who_of(m, b);

	return x && y ? who_equal(x, y) : json_equal(a, b);
}

/* A label after the others in an engine-changed message; stops once the message is full. */
static int
add_label(const char *label, size_t i, void *arg)
{
	struct sbuf *msg = arg;

	report_sb_printf(msg, "%s %s", i ? "," : "", label);
	return msg->cut;
}

/*
 * One layer, two answers: the same (API, signature) ran one choice in some
 * processes and another in others (a sweep inside one process runs several
 * everywhere, and is not this). One finding per signature, on top of the
 * processes' own.
 */
struct choice {
	json_t *sig;
	size_t procs;
};

static int
choice_cmp(const void *pa, const void *pb)
{
	const struct choice *a = pa, *b = pb;

	if (a->procs != b->procs)
		return a->procs > b->procs ? -1 : 1;
	return strcmp(report_jget_str(a->sig, "choice", ""), report_jget_str(b->sig, "choice", ""));
}

static void
engine_changed(struct rmodel *m, json_t *findings, json_t *sigs)
{
	size_t i, j, k, n = json_array_size(sigs);
	struct choice *order = report_xcalloc(n ? n : 1, sizeof(*order));

	for (i = 0; i < n; i++) {
		json_t *a = json_array_get(sigs, i), *who_a = json_object_get(a, "who"), *f;
		int first = 1, differ = 0;
		struct sbuf msg;

		/* The first entry of its signature leads; later ones were compared with it. */
		for (j = 0; j < i && first; j++)
			first = !same_sig(json_array_get(sigs, j), a);
		if (!first)
			continue;
		for (j = i + 1; j < n && !differ; j++) {
			json_t *b = json_array_get(sigs, j);

			differ = same_sig(b, a) && !same_who(m, json_object_get(b, "who"), who_a);
		}
		if (!differ)
			continue;
		/*
		 * The signatures' own order follows their times, which differ run to
		 * run; the message leads with the choice most processes made.
		 */
		k = 0;
		for (j = i; j < n; j++)
			if (same_sig(json_array_get(sigs, j), a))
				order[k++] = (struct choice){ json_array_get(sigs, j),
							      report_who_count(m, json_object_get(json_array_get(sigs, j), "who")) };
		qsort(order, k, sizeof(*order), choice_cmp);
		report_sb_init(&msg, 4 * MSG_CAP);
		report_sb_printf(&msg, "%s %s ran", report_jget_str(a, "api", "?"), report_jget_str(a, "signature", "?"));
		for (j = 0; j < k; j++) {
			report_sb_printf(&msg, "%s %s in", j ? ";" : "", report_jget_str(order[j].sig, "choice", "?"));
			report_who_each(m, json_object_get(order[j].sig, "who"), add_label, &msg);
		}
		f = report_must(json_object());
		report_jset(f, "id", json_string("engine-changed"));
		report_jset(f, "severity", json_string("warning"));
		report_jset(f, "message", json_string(msg.p));
		report_jset(f, "fix", jstr_or_null(spy_rule_fix("engine-changed")));
		report_jset(f, "processes", json_integer(0));
		report_jset(f, "of", json_integer(0));
		report_jset(f, "who", report_must(json_array()));
		json_array_append_new(findings, f);
		free(msg.p);
	}
	free(order);
}

/* Functions across processes, by steady total (the total without the first calls); sets *gpu and *first when any has those times. */
static json_t *
functions_model(struct rmodel *m, int *any_gpu, int *any_first)
{
	struct report *r = m->r;
	void **vals = sorted_values(&r->fns, fn_agg_cmp);
	json_t *fns = report_must(json_array());

	for (size_t k = 0; k < r->fns.n; k++) {
		struct fn_agg *a = vals[k];
		json_t *v = report_must(json_object());

		*any_gpu |= a->have_gpu;
		*any_first |= a->have_first;
		report_jset(v, "fn", json_string(a->fn));
		report_jset(v, "calls", json_integer(a->calls));
		report_jset(v, "failures", json_integer(a->failures));
		report_jset(v, "probing", json_integer(a->probing));
		report_jset(v, "internal", jint_or_null(a->have_internal, a->internal));
		report_jset(v, "total_ns", json_integer(a->total));
		report_jset(v, "first_ns", jint_or_null(a->have_first, a->first));
		report_jset(v, "steady_ns", jint_or_null(a->have_first && a->steady_known, a->total - a->first));
		report_jset(v, "gpu_ns", jint_or_null(a->have_gpu, a->gpu));
		report_jset(v, "p50_ns", json_integer(a->p50));
		report_jset(v, "p99_ns", json_integer(a->p99));
		report_jset(v, "processes", json_integer(a->procs));
		report_jpush(fns, v);
	}
	free(vals);
	return fns;
}

struct rmodel *
report_model_new(struct report *r)
{
	struct rmodel *m = report_xcalloc(1, sizeof(*m));
	json_t *model = report_must(json_object()), *ph;
	int any_gpu = 0, any_first = 0;

	m->r = r;
	m->j = model;
	m->n = r->nrows;
	m->sorted = report_xcalloc(m->n ? m->n : 1, sizeof(*m->sorted));
	memcpy(m->sorted, r->rows, m->n * sizeof(*m->sorted));
	qsort(m->sorted, m->n, sizeof(*m->sorted), row_qsort_cmp);
	for (size_t i = 0; i < m->n; i++)
		m->sorted[i]->sorted = i;
	m->bits = report_xcalloc((m->n + 63) / 64 + 1, sizeof(*m->bits));

	report_jset(model, "cudnnspy_report", json_integer(1));
	report_jset(model, "hosts", json_integer((json_int_t)r->hosts.n));
	ph = report_must(json_object());
	report_jset(ph, PH_PROCESSES, json_true());
	report_jset(model, "processes", ph);
	report_jset(model, "cudnn", cudnn_model(m));
	report_jset(model, "failures", failures_model(m));
	report_jset(model, "findings", findings_model(m));
	report_jset(model, "signatures", signatures_model(m));
	report_jset(model, "graphs", graphs_model(m));
	engine_changed(m, json_object_get(model, "findings"), json_object_get(model, "signatures"));
	report_jset(model, "functions", functions_model(m, &any_gpu, &any_first));
	report_jset(model, "gpu_times", json_boolean(any_gpu));
	report_jset(model, "first_times", json_boolean(any_first));
	return m;
}

void
report_model_free(struct rmodel *m)
{
	if (!m)
		return;
	json_decref(m->j);
	free(m->sorted);
	free(m->whos);
	free(m->bits);
	free(m);
}

/* ---- the model as --json prints it ---- */

struct dump {
	struct rmodel *m;
	FILE *out;
	int depth;
};

/* What jansson writes between two values with JSON_INDENT(2): a newline and two spaces a level. */
static void
dump_indent(FILE *out, int depth)
{
	fputc('\n', out);
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

static void
dump_string(FILE *out, const char *s)
{
	json_t *j = report_must(json_string(s));

	json_dumpf(j, out, JSON_ENCODE_ANY);
	json_decref(j);
}

static void dump_value(struct dump *d, json_t *v);

static int
dump_label(const char *label, size_t i, void *arg)
{
	struct dump *d = arg;

	if (i)
		fputc(',', d->out);
	dump_indent(d->out, d->depth + 1);
	dump_string(d->out, label);
	return 0;
}

/*
 * jansson's JSON_INDENT(2) form, written here rather than by json_dumpf
 * so that the placeholders are written out as they are met, one process or
 * label at a time: the same bytes as json_dumpf of the whole model.
 */
static void
dump_value(struct dump *d, json_t *v)
{
	FILE *out = d->out;
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_object(v) && json_object_get(v, PH_PROCESSES)) {
		if (!d->m->n) {
			fputs("[]", out);
			return;
		}
		fputc('[', out);
		d->depth++;
		for (i = 0; i < d->m->n; i++) {
			x = report_model_process(d->m, i);
			if (i)
				fputc(',', out);
			dump_indent(out, d->depth);
			dump_value(d, x);
			json_decref(x);
		}
		d->depth--;
		dump_indent(out, d->depth);
		fputc(']', out);
	} else if (json_is_object(v) && who_of(d->m, v)) {
		if (!report_who_count(d->m, v)) {
			fputs("[]", out);
			return;
		}
		fputc('[', out);
		report_who_each(d->m, v, dump_label, d);
		dump_indent(out, d->depth);
		fputc(']', out);
	} else if (json_is_object(v)) {
		if (!json_object_size(v)) {
			fputs("{}", out);
			return;
		}
		fputc('{', out);
		d->depth++;
		i = 0;
		json_object_foreach(v, key, x) {
			if (i++)
				fputc(',', out);
			dump_indent(out, d->depth);
			dump_string(out, key);
			fputs(": ", out);
			dump_value(d, x);
		}
		d->depth--;
		dump_indent(out, d->depth);
		fputc('}', out);
	} else if (json_is_array(v)) {
		if (!json_array_size(v)) {
			fputs("[]", out);
			return;
		}
		fputc('[', out);
		d->depth++;
		json_array_foreach(v, i, x) {
			if (i)
				fputc(',', out);
			dump_indent(out, d->depth);
			dump_value(d, x);
		}
		d->depth--;
		dump_indent(out, d->depth);
		fputc(']', out);
	} else {
		json_dumpf(v, out, JSON_ENCODE_ANY);
	}
}

int
report_model_dump(struct rmodel *m, FILE *out)
{
	struct dump d = { m, out, 0 };

	dump_value(&d, m->j);
	return ferror(out) ? -1 : 0;
}
