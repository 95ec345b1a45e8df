/*
 * The report is first built as a JSON model (report_build_model); the text
 * form is printed from that model, and --json prints the model itself, so
 * that both say the same. Here the processes, each read on its own, become
 * one run: sorted and labelled, with their cuDNN builds, failures,
 * findings, convolution choices and functions taken together.
 */
#include "report-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rules.h"

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
			rc = asprintf(&s, "rank %lld (%s)", p->rank, report_base_name(p->path));
	} else if (p->have_pid) {
		if (hosts > 1 && p->host)
			rc = asprintf(&s, "pid %lld on %s", p->pid, p->host);
		else
			rc = asprintf(&s, "pid %lld", p->pid);
	} else {
		rc = asprintf(&s, "%s", report_base_name(p->path));
	}
	if (rc < 0)
		report_out_of_memory();
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
	if (p->have_summary) {
		report_jset(o, "calls", jint_or_null(p->calls >= 0, p->calls));
		report_jset(o, "failures", jint_or_null(p->failures >= 0, p->failures));
		report_jset(o, "internal", jint_or_null(p->internal >= 0, p->internal));
		report_jset(o, "dropped", jint_or_null(p->dropped >= 0, p->dropped));
	} else {
		/* Without a summary, the records are all there is: traced calls and failures. */
		report_jset(o, "calls", json_integer(report_sat_add(p->calls_rec, p->failures_rec)));
		report_jset(o, "failures", json_integer(p->failures_rec));
		report_jset(o, "internal", json_null());
		report_jset(o, "dropped", json_null());
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
	json_t *arr = report_must(json_array());

	for (size_t i = 0; i < n; i++)
		report_jpush(arr, json_string(labels[procs[i]->sorted]));
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
	json_t *arr = report_must(json_array());
	long long over = 0;
	void **vals;

	for (size_t i = 0; i < n; i++) {
		void **fv = report_map_values(&procs[i]->findings);

		over = report_sat_add(over, procs[i]->findings_over);
		for (size_t k = 0; k < procs[i]->findings.n; k++) {
			struct pfinding *f = fv[k];
			struct finding_agg *a;
			struct sbuf key;

			report_sb_init(&key, 2 * MSG_CAP);
			report_sb_printf(&key, "%s\x1f%s", f->id, f->message);
			a = report_map_get(&m, key.p, key.len);
			if (!a) {
				a = report_xcalloc(1, sizeof(*a));
				a->f = f;
				a->procs = report_xcalloc(n, sizeof(*a->procs));
				report_map_put(&m, key.p, key.len, a);
			}
			a->procs[a->n++] = procs[i];
			free(key.p);
		}
		free(fv);
	}
	vals = report_map_values(&m);
	qsort(vals, m.n, sizeof(*vals), finding_agg_cmp);
	for (size_t k = 0; k < m.n; k++) {
		struct finding_agg *a = vals[k];
		json_t *v = report_must(json_object());
		/* Records written before findings carried their fix: the command's own table knows it. */
		const char *fix = a->f->fix ? a->f->fix : spy_rule_fix(a->f->id);

		report_jset(v, "id", json_string(a->f->id));
		report_jset(v, "severity", jstr_or_null(a->f->severity));
		report_jset(v, "message", json_string(a->f->message));
		report_jset(v, "fix", jstr_or_null(fix));
		report_jset(v, "processes", json_integer((json_int_t)a->n));
		report_jset(v, "of", json_integer((json_int_t)n));
		report_jset(v, "who", who_json(a->procs, a->n, labels));
		report_jpush(arr, v);
		free(a->procs);
		free(a);
	}
	free(vals);
	report_map_free(&m, NULL);
	if (over) {
		json_t *o = report_must(json_object());

		report_jset(o, "not_kept", json_integer(over));
		report_jpush(arr, o);
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
	json_t *arr = report_must(json_array());
	void **vals;

	for (size_t i = 0; i < n; i++) {
		void **gv = report_map_values(&procs[i]->sigs);

		for (size_t k = 0; k < procs[i]->sigs.n; k++) {
			struct psig *g = gv[k];
			struct sig_agg *a;
			struct sbuf key;

			report_sb_init(&key, 4 * SIG_CAP);
			report_sb_printf(&key, "%s\x1f%s\x1f%s\x1f%s", g->api, g->op, g->signature, g->choice);
			a = report_map_get(&m, key.p, key.len);
			if (!a) {
				a = report_xcalloc(1, sizeof(*a));
				a->g = g;
				a->procs = report_xcalloc(n, sizeof(*a->procs));
				report_map_put(&m, key.p, key.len, a);
			}
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
			a->procs[a->n++] = procs[i];
			free(key.p);
		}
		free(gv);
	}
	vals = report_map_values(&m);
	qsort(vals, m.n, sizeof(*vals), sig_agg_cmp);
	for (size_t k = 0; k < m.n; k++) {
		struct sig_agg *a = vals[k];
		json_t *v = report_must(json_object());

		report_jset(v, "api", json_string(a->g->api));
		report_jset(v, "op", json_string(a->g->op));
		report_jset(v, "signature", json_string(a->g->signature));
		report_jset(v, "choice", json_string(a->g->choice));
		report_jset(v, "calls", json_integer(a->calls));
		report_jset(v, "failures", json_integer(a->failures));
		report_jset(v, "timed", json_integer(a->timed));
		report_jset(v, "host_ns", json_integer(a->host_ns));
		report_jset(v, "gpu_timed", json_integer(a->gpu_timed));
		report_jset(v, "gpu_ns", json_integer(a->gpu_ns));
		report_jset(v, "workspace_min", jint_or_null(a->have_ws, a->ws_min));
		report_jset(v, "workspace_max", jint_or_null(a->have_ws, a->ws_max));
		report_jset(v, "nondeterministic", json_boolean(a->nondet));
		report_jset(v, "processes", json_integer((json_int_t)a->n));
		report_jset(v, "who", who_json(a->procs, a->n, labels));
		report_jpush(arr, v);
		free(a->procs);
		free(a);
	}
	free(vals);
	report_map_free(&m, NULL);
	return arr;
}


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
			first = !(strcmp(report_jget_str(json_array_get(sigs, j), "signature", ""), report_jget_str(a, "signature", "")) == 0 &&
				  strcmp(report_jget_str(json_array_get(sigs, j), "api", ""), report_jget_str(a, "api", "")) == 0);
		if (!first)
			continue;
		for (j = i + 1; j < n && !differ; j++) {
			json_t *b = json_array_get(sigs, j);

			differ = strcmp(report_jget_str(b, "signature", ""), report_jget_str(a, "signature", "")) == 0 &&
				 strcmp(report_jget_str(b, "api", ""), report_jget_str(a, "api", "")) == 0 &&
				 !json_equal(json_object_get(b, "who"), who_a);
		}
		if (!differ)
			continue;
		report_sb_init(&msg, 4 * MSG_CAP);
		report_sb_printf(&msg, "%s %s ran", report_jget_str(a, "api", "?"), report_jget_str(a, "signature", "?"));
		for (j = i; j < n; j++) {
			json_t *b = json_array_get(sigs, j), *w;
			size_t k;

			if (strcmp(report_jget_str(b, "signature", ""), report_jget_str(a, "signature", "")) != 0 ||
			    strcmp(report_jget_str(b, "api", ""), report_jget_str(a, "api", "")) != 0)
				continue;
			report_sb_printf(&msg, "%s %s in", j == i ? "" : ";", report_jget_str(b, "choice", "?"));
			json_array_foreach(json_object_get(b, "who"), k, w)
				report_sb_printf(&msg, "%s %s", k ? "," : "", json_string_value(w));
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
}

json_t *
report_build_model(struct report *r)
{
	json_t *model = report_must(json_object()), *arr, *libs, *fails, *fns;
	struct proc **procs;
	char **labels;
	struct map fnmap = { 0 }, libmap = { 0 }, grpmap = { 0 };
	struct map hosts = { 0 };
	long long total_failures = 0, total_over = 0;
	size_t n = r->nprocs, k;
	void **vals;
	int any_gpu = 0, known_variants = 0, any_first = 0;

	procs = report_xcalloc(n, sizeof(*procs));
	memcpy(procs, r->procs, n * sizeof(*procs));
	qsort(procs, n, sizeof(*procs), proc_cmp);
	for (size_t i = 0; i < n; i++)
		if (procs[i]->host && !report_map_get(&hosts, procs[i]->host, strlen(procs[i]->host)))
			report_map_put(&hosts, procs[i]->host, strlen(procs[i]->host), procs[i]);
	labels = report_xcalloc(n, sizeof(*labels));
	for (size_t i = 0; i < n; i++) {
		procs[i]->sorted = i;
		labels[i] = proc_label(procs, n, i, (int)hosts.n);
	}

	report_jset(model, "cudnnspy_report", json_integer(1));
	report_jset(model, "hosts", json_integer((json_int_t)hosts.n));
	arr = report_must(json_array());
	for (size_t i = 0; i < n; i++)
		report_jpush(arr, proc_json(procs[i], labels[i]));
	report_jset(model, "processes", arr);

	/* The cuDNN that answered: one variant per (path, version). */
	for (size_t i = 0; i < n; i++) {
		struct proc *p = procs[i];
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
		l = report_map_get(&libmap, key.p, key.len);
		if (!l) {
			l = report_xcalloc(1, sizeof(*l));
			l->key = report_xstrdup(key.p);
			l->p = p;
			l->procs = report_xcalloc(n, sizeof(*l->procs));
			report_map_put(&libmap, key.p, key.len, l);
			if (p->have_header)
				known_variants++;
		}
		l->procs[l->n++] = p;
		free(key.p);
	}
	vals = report_map_values(&libmap);
	qsort(vals, libmap.n, sizeof(*vals), lib_agg_cmp);
	libs = report_must(json_object());
	report_jset(libs, "differ", json_boolean(known_variants > 1));
	arr = report_must(json_array());
	for (k = 0; k < libmap.n; k++) {
		struct lib_agg *l = vals[k];
		json_t *v = report_must(json_object());
		struct proc *p = l->p;

		report_jset(v, "known", json_boolean(p->have_header));
		report_jset(v, "library", library_json(p));
		report_jset(v, "processes", json_integer((json_int_t)l->n));
		report_jset(v, "who", who_json(l->procs, l->n, labels));
		report_jpush(arr, v);
	}
	report_jset(libs, "variants", arr);
	report_jset(model, "cudnn", libs);
	for (k = 0; k < libmap.n; k++) {
		struct lib_agg *l = vals[k];

		free(l->key);
		free(l->procs);
		free(l);
	}
	free(vals);
	report_map_free(&libmap, NULL);

	/* Failures grouped by (function, status, message) across processes. */
	for (size_t i = 0; i < n; i++) {
		struct proc *p = procs[i];
		void **gv = report_map_values(&p->groups);

		total_over += p->groups_over;
		for (k = 0; k < p->groups.n; k++) {
			struct fgroup *g = gv[k];
			struct group_agg *a;
			struct sbuf key;

			report_sb_init(&key, 4 * MSG_CAP);
			report_sb_printf(&key, "%s\x1f%lld\x1f", g->fn, g->status);
			report_sb_puts(&key, g->message ? g->message : "\x1e");
			a = report_map_get(&grpmap, key.p, key.len);
			if (!a) {
				a = report_xcalloc(1, sizeof(*a));
				a->g = g;
				a->gp = p;
				a->procs = report_xcalloc(n, sizeof(*a->procs));
				report_map_put(&grpmap, key.p, key.len, a);
			} else if (earlier(g, a->g)) {
				a->g = g;
				a->gp = p;
			}
			a->count = report_sat_add(a->count, g->count);
			/*
			 * Two of a file's groups can clean to one (invalid UTF-8
			 * bytes become '?'): the process is still one process.
			 */
			if (!a->n || a->procs[a->n - 1] != p)
				a->procs[a->n++] = p;
			total_failures = report_sat_add(total_failures, g->count);
			free(key.p);
		}
		free(gv);
	}
	vals = report_map_values(&grpmap);
	qsort(vals, grpmap.n, sizeof(*vals), group_agg_cmp);
	fails = report_must(json_object());
	report_jset(fails, "total", json_integer(report_sat_add(total_failures, total_over)));
	report_jset(fails, "not_grouped", json_integer(total_over));
	arr = report_must(json_array());
	for (k = 0; k < grpmap.n; k++) {
		struct group_agg *a = vals[k];
		json_t *v = report_must(json_object()), *first;

		report_jset(v, "fn", json_string(a->g->fn));
		report_jset(v, "status", json_integer(a->g->status));
		report_jset(v, "status_name", jstr_or_null(a->g->status_name));
		report_jset(v, "message", jstr_or_null(a->g->message));
		report_jset(v, "count", json_integer(a->count));
		report_jset(v, "processes", json_integer((json_int_t)a->n));
		report_jset(v, "of", json_integer((json_int_t)n));
		report_jset(v, "only_some", json_boolean(n > 1 && a->n < n));
		report_jset(v, "who", who_json(a->procs, a->n, labels));
		first = report_must(json_deep_copy(a->g->first));
		report_jset(first, "process", json_string(labels[a->gp->sorted]));
		report_jset(v, "first", first);
		report_jpush(arr, v);
		free(a->procs);
		free(a);
	}
	report_jset(fails, "groups", arr);
	report_jset(model, "failures", fails);
	free(vals);
	report_map_free(&grpmap, NULL);

	report_jset(model, "findings", findings_model(procs, n, labels));
	report_jset(model, "signatures", signatures_model(procs, n, labels));
	engine_changed(json_object_get(model, "findings"), json_object_get(model, "signatures"));

	/* Functions across processes, by total time. */
	for (size_t i = 0; i < n; i++) {
		void **fv = report_map_values(&procs[i]->fns);

		for (k = 0; k < procs[i]->fns.n; k++) {
			struct fnstat *f = fv[k];
			struct fn_final o;
			struct fn_agg *a = report_map_get(&fnmap, f->fn, strlen(f->fn));

			if (!a) {
				a = report_xcalloc(1, sizeof(*a));
				a->fn = f->fn;
				report_map_put(&fnmap, f->fn, strlen(f->fn), a);
			}
			fn_final_of(f, &o);
			a->calls = report_sat_add(a->calls, o.calls);
			a->failures = report_sat_add(a->failures, o.failures);
			a->internal = report_sat_add(a->internal, o.internal);
			a->have_internal |= o.have_internal;
			a->total = report_sat_add(a->total, o.total);
			if (o.have_first) {
				a->have_first = any_first = 1;
				a->first = report_sat_add(a->first, o.first);
			}
			if (!o.steady_unknown)
				a->steady_known = 1;
			if (o.have_gpu) {
				a->have_gpu = any_gpu = 1;
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
	vals = report_map_values(&fnmap);
	qsort(vals, fnmap.n, sizeof(*vals), fn_agg_cmp);
	fns = report_must(json_array());
	for (k = 0; k < fnmap.n; k++) {
		struct fn_agg *a = vals[k];
		json_t *v = report_must(json_object());

		report_jset(v, "fn", json_string(a->fn));
		report_jset(v, "calls", json_integer(a->calls));
		report_jset(v, "failures", json_integer(a->failures));
		report_jset(v, "internal", jint_or_null(a->have_internal, a->internal));
		report_jset(v, "total_ns", json_integer(a->total));
		report_jset(v, "first_ns", jint_or_null(a->have_first, a->first));
		report_jset(v, "steady_ns", jint_or_null(a->have_first && a->steady_known, a->total - a->first));
		report_jset(v, "gpu_ns", jint_or_null(a->have_gpu, a->gpu));
		report_jset(v, "p50_ns", json_integer(a->p50));
		report_jset(v, "p99_ns", json_integer(a->p99));
		report_jset(v, "processes", json_integer(a->procs));
		report_jpush(fns, v);
		free(a);
	}
	report_jset(model, "functions", fns);
	report_jset(model, "gpu_times", json_boolean(any_gpu));
	report_jset(model, "first_times", json_boolean(any_first));
	free(vals);
	report_map_free(&fnmap, NULL);

	for (size_t i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
	free(procs);
	report_map_free(&hosts, NULL);
	return model;
}
