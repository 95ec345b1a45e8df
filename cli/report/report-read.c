/*
 * The reader: the JSON Lines records of a file, a pipe or memory, each
 * process's into its struct proc, whatever the file holds (torn last
 * lines, lines too long, wrong types, a newer schema): a damaged file is
 * counted and said in one warning, never a crash or a stop. A file holds
 * one process, or several when files were concatenated: a header after
 * records begins the next. Each process read whole goes to the model
 * (report_model_add), which keeps what the report needs of it, and its
 * struct proc is freed: only the processes of the file being read are held.
 *
 * Every line is parsed by jansson (json_loadb), one line at a time, and only
 * aggregates are kept, so a file of any size is read in bounded memory. One
 * shortcut keeps this fast: the library writes a summary at exit that
 * already holds the per-function counts and times, so a `call` line as the
 * library writes it (it starts with {"event":"call", and ends with }) is
 * only counted when its file has a summary. A file without one (the process
 * was killed) is read a second time with those lines parsed. --full and
 * --chrome parse every line.
 */
#include "report-int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include "cli-progress.h"
#include "cli-util.h"
#include "records.h"
#include "symtab.h"

/*
 * Format 2 files (docs/record-format.md) come through records.c, which the
 * command links. The fuzz targets build the reader without it (and without
 * the API tables it needs): there a format 2 file reads as lines that are
 * not JSON. Weak, so that each build takes what it links.
 */
extern int rec_is_binary(const void *data, size_t len) __attribute__((weak));
extern void rec_open_fd(struct rec_reader *r, int fd) __attribute__((weak));
extern void rec_open_fd_buffer(struct rec_reader *r, int fd, size_t first) __attribute__((weak));
extern void rec_open_fd_after(struct rec_reader *r, int fd, const void *first, size_t len) __attribute__((weak));
extern void rec_open_mem(struct rec_reader *r, const void *data, size_t len) __attribute__((weak));
extern int rec_next(struct rec_reader *r, const char **line, size_t *len, int *flags) __attribute__((weak));
extern void rec_close(struct rec_reader *r) __attribute__((weak));
extern const char *rec_refused_why(const struct rec_reader *r) __attribute__((weak));

/*
 * Given to the record reader (cli/decode): format 2, and anything that does not begin as format 1 does, which
 * the reader then refuses with its reason (a file cut inside its first frame, a damaged magic: issue 27), where
 * its lines would only have been skipped as garbage.
 */
static int
binary_records(const void *data, size_t len)
{
	return rec_is_binary && (rec_is_binary(data, len) || (len > 0 && ((const char *)data)[0] != '{'));
}

/*
 * A format 2 file of SIZE bytes: the reader's buffer starts at the file's
 * size (it grows as frames need), not at the 1 MiB rec_open_fd takes, so
 * that thousands of small files do not each ask malloc for a megabyte.
 */
static void
open_binary(struct rec_reader *rec, int fd, off_t size)
{
	size_t first = size >= 0 && size < (1 << 20) ? (size_t)size + 1 : 1u << 20;

	rec_open_fd_buffer(rec, fd, first < 4096 ? 4096 : first);
}

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
/* Configs built kept in a file, all signatures together (BUILT_KEEP each): 65536 hashes are about 2 MiB. */
#define BUILT_TOTAL 65536
#define STACK_KEEP 8
#define PYTHON_KEEP 8
#define RECENT_KEEP 16

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

/* ---- a run, and each process in it ---- */

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
report_set_progress(struct report *r, struct cli_progress *p)
{
	r->progress = p;
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
	free(g->python_at);
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
	free(g->python);
	free(g);
}

static void
pgraph_free(void *v)
{
	struct pgraph *g = v;

	free(g->op);
	free(g->signature);
	report_llset_free(&g->built);
	free(g);
}

static void
proc_free(struct proc *p)
{
	free(p->path);
	free(p->lib_real);
	free(p->lib_build_id);
	report_map_free(&p->findings, pfinding_free);
	report_map_free(&p->sigs, psig_free);
	report_map_free(&p->graphs, pgraph_free);
	free(p->program);
	free(p->host);
	free(p->spy);
	free(p->mode);
	free(p->lib_path);
	free(p->lib_how);
	report_map_free(&p->fns, fnstat_free);
	report_map_free(&p->groups, fgroup_free);
	report_llset_free(&p->tids);
	free(p);
}

void
report_free(struct report *r)
{
	if (!r)
		return;
	report_model_release(r);
	report_llset_free(&r->chrome_pids);
	free(r->chrome_buf);
	free(r->read_buf);
	free(r);
}

/*
 * A process of the file at PATH, from FIRST_LINE on. Only the processes
 * being read are held whole; report_model_add keeps the rest of each.
 */
static struct proc *
proc_add(struct report *r, const char *path, long long first_line)
{
	struct proc *p = report_xcalloc(1, sizeof(*p));

	p->path = report_clean_str(path, 4096);
	p->order = report_model_slot(r);
	p->first_line = first_line;
	p->end_line = LLONG_MAX;
	return p;
}

/*
 * How warnings name a process: its file, and where it begins when it is
 * not the file's first (files concatenated: cat a.rec b.rec > ab.rec).
 */
static const char *
proc_name(const struct proc *p, char *buf, size_t size)
{
	if (p->first_line <= 1)
		return p->path;
	snprintf(buf, size, "%s (the process from line %lld)", p->path, p->first_line);
	return buf;
}

static struct fnstat *
fnstat_get(struct proc *p, const char *fn)
{
	size_t len = strlen(fn);
	struct fnstat *f;

	if (len > STR_CAP)
		len = STR_CAP;
	f = report_map_get(&p->fns, fn, len);
	if (f)
		return f;
	if (p->fns.n >= MAX_FNS) {
		p->fns_over++;
		return NULL;
	}
	f = report_xcalloc(1, sizeof(*f));
	f->fn = report_clean_dup(fn, len, STR_CAP);
	report_map_put(&p->fns, fn, len, f);
	return f;
}

/* A record's string, cleaned, as a JSON string; null for none. */
static json_t *
clean_string(const char *s, size_t cap)
{
	char *c;
	json_t *j;

	if (!s)
		return json_null();
	c = report_clean_str(s, cap);
	j = json_string(c);
	free(c);
	return j;
}

/* The first frames, module by its file name: {module, offset, symbol}. */
static json_t *
keep_stack(json_t *stack)
{
	json_t *out = report_must(json_array()), *f;
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
		module = report_get_str(f, "module");
		offset = report_get_str(f, "offset");
		symbol = report_get_str(f, "symbol");
		frame = report_must(json_object());
		report_jset(frame, "module", clean_string(module ? report_base_name(module) : NULL, STR_CAP));
		report_jset(frame, "offset", clean_string(offset, 40));
		if (!symbol && module && module[0] == '/' && offset && strncmp(offset, "0x", 2) == 0) {
			/* Older records, or a module the spy could not read: its symbol table, read here. */
			unsigned long long off = strtoull(offset + 2, NULL, 16);

			if (off > 0 && spy_symtab_name(module, off - 1, found, sizeof(found)) > 0)
				symbol = found;
		}
		report_jset(frame, "symbol", clean_string(symbol, STR_CAP));
		report_jpush(out, frame);
	}
	return out;
}

/* The Python frames, as the record has them where each is whole: {file, line, function}, at most PYTHON_KEEP. */
static json_t *
keep_python(json_t *frames)
{
	json_t *out = report_must(json_array()), *f;
	size_t i;

	json_array_foreach(frames, i, f) {
		const char *file = report_get_str(f, "file"), *fn = report_get_str(f, "function");
		long long line;
		json_t *frame;

		if (i >= PYTHON_KEEP)
			break;
		if (!file || !fn || !report_get_int(f, "line", &line))
			continue;
		frame = report_must(json_object());
		report_jset(frame, "file", clean_string(file, STR_CAP));
		report_jset(frame, "line", json_integer(line));
		report_jset(frame, "function", clean_string(fn, STR_CAP));
		report_jpush(out, frame);
	}
	return out;
}

/*
 * "function (file:line) < ..." of the kept frames: what tells failures from
 * different Python lines apart (the innermost frame alone is often a
 * framework's, the same for every layer).
 */
static char *
python_at(json_t *kept)
{
	json_t *f;
	struct sbuf b;
	size_t i;

	if (!json_array_size(kept))
		return NULL;
	report_sb_init(&b, PYTHON_KEEP * (2 * STR_CAP + 32));
	json_array_foreach(kept, i, f)
		report_sb_printf(&b, "%s%s (%s:%lld)", i ? " < " : "", report_jget_str(f, "function", "?"),
				 report_jget_str(f, "file", "?"), report_jget_int(f, "line"));
	return b.p;
}

char *
report_python_text(json_t *frames)
{
	json_t *kept = keep_python(frames);
	char *at = python_at(kept);

	json_decref(kept);
	return at;
}

/* The last calls before the failure, oldest first: {fn, status}. */
static json_t *
keep_recent(json_t *recent)
{
	json_t *out = report_must(json_array()), *c;
	size_t n = json_array_size(recent), i;

	for (i = n > RECENT_KEEP ? n - RECENT_KEEP : 0; i < n; i++) {
		json_t *call;
		const char *fn;
		long long status = 0;
		char *f;

		c = json_array_get(recent, i);
		fn = report_get_str(c, "fn");
		if (!fn)
			continue;
		report_get_int(c, "status", &status);
		f = report_clean_str(fn, STR_CAP);
		call = report_must(json_object());
		report_jset(call, "fn", json_string(f));
		report_jset(call, "status", json_integer(status));
		free(f);
		report_jpush(out, call);
	}
	return out;
}

/* ---- the records ---- */


static void
warn_schema(struct report *r, struct proc *p)
{
	char name[4200];

	report_warn_to(r->warn, "%s: schema %lld is newer than this reader's (%d); reading the fields it knows",
		proc_name(p, name, sizeof(name)), p->schema, SCHEMA_KNOWN);
}

static int
on_header(struct report *r, struct proc *p, json_t *rec)
{
	json_t *lib;
	long long schema;

	/* A header begins its process (handle_line): P has no other. */
	if (!report_get_int(rec, "schema", &schema))
		return -1;
	p->have_header = 1;
	p->schema = schema;
	if (schema > SCHEMA_KNOWN)
		warn_schema(r, p);
	p->program = report_get_clean(rec, "program", STR_CAP);
	p->host = report_get_clean(rec, "host", STR_CAP);
	p->spy = report_get_clean(rec, "spy", 64);
	p->mode = report_get_clean(rec, "mode", 64);
	p->have_pid = report_get_int(rec, "pid", &p->pid);
	p->have_ppid = report_get_int(rec, "ppid", &p->ppid);
	p->have_rank = report_get_int(rec, "rank", &p->rank);
	p->have_clock = report_get_int(rec, "start_unix_ns", &p->start_unix_ns) &&
			report_get_int(rec, "start_mono_ns", &p->start_mono_ns);
	lib = json_object_get(rec, "library");
	if (json_is_object(lib)) {
		p->have_library = 1;
		p->lib_path = report_get_clean(lib, "path", 4096);
		p->lib_how = report_get_clean(lib, "how", STR_CAP);
		p->have_lib_version = report_get_int(lib, "version", &p->lib_version);
		p->have_lib_cudart = report_get_int(lib, "cudart", &p->lib_cudart);
	}
	return 0;
}

/* The first occurrence of a kind of failure, kept small. */
static json_t *
first_occurrence(struct proc *p, json_t *rec, long long line)
{
	json_t *first = report_must(json_object());
	long long v;
	char *args;

	report_jset(first, "file", json_string(p->path));
	report_jset(first, "line", json_integer(line));
	report_jset(first, "tid", report_get_int(rec, "tid", &v) ? json_integer(v) : json_null());
	report_jset(first, "t_ns", report_get_int(rec, "t_ns", &v) ? json_integer(v) : json_null());
	report_jset(first, "dur_ns", report_get_count(rec, "dur_ns", &v) ? json_integer(v) : json_null());
	args = report_render_args(json_object_get(rec, "args"), 0);
	report_jset(first, "args", json_string(args));
	free(args);
	report_jset(first, "stack", keep_stack(json_object_get(rec, "stack")));
	report_jset(first, "stack_frames", json_integer((json_int_t)json_array_size(json_object_get(rec, "stack"))));
	report_jset(first, "recent", keep_recent(json_object_get(rec, "recent")));
	report_jset(first, "recent_calls", json_integer((json_int_t)json_array_size(json_object_get(rec, "recent"))));
	if (json_array_size(json_object_get(rec, "python")))
		report_jset(first, "python", keep_python(json_object_get(rec, "python")));
	return first;
}

/*
 * A failure, into its group by (fn, status, message, Python line, probing):
 * a framework's expected NOT_SUPPORTED probing (the record says "probing")
 * is a group of its own, which the report shows apart from the failures.
 */
static void
add_failure(struct proc *p, json_t *rec, const char *fn, long long status, long long line)
{
	json_t *msgv = json_object_get(rec, "message");
	const char *msg = json_string_value(msgv);
	const char *sname = report_get_str(rec, "status_name");
	int probing = json_is_true(json_object_get(rec, "probing"));
	struct sbuf key;
	struct fgroup *g;
	long long t;
	char *at = report_python_text(json_object_get(rec, "python"));

	p->probing_rec += probing;
	/* fn, status, message and Python line, separated by bytes that JSON strings do not hold raw. */
	report_sb_init(&key, 2 * MSG_CAP);
	report_sb_puts(&key, probing ? "\x1c" "p" : "\x1c" "f");
	report_sb_add(&key, fn, strnlen(fn, STR_CAP));
	report_sb_printf(&key, "\x1f%lld\x1f", status);
	if (msg)
		report_sb_add(&key, msg, strnlen(msg, MSG_CAP));
	else
		report_sb_puts(&key, "\x1e");
	if (at) {
		report_sb_puts(&key, "\x1d");
		report_sb_puts(&key, at);
	}
	g = report_map_get(&p->groups, key.p, key.len);
	if (!g && p->groups.n >= MAX_GROUPS) {
		p->groups_over++;
		free(key.p);
		free(at);
		return;
	}
	if (!g) {
		g = report_xcalloc(1, sizeof(*g));
		g->fn = report_clean_str(fn, STR_CAP);
		g->status = status;
		g->probing = probing;
		g->status_name = sname ? report_clean_str(sname, STR_CAP) : NULL;
		g->message = msg ? report_clean_str(msg, MSG_CAP) : NULL;
		g->first = first_occurrence(p, rec, line);
		g->python_at = at;
		at = NULL;
		if (p->have_clock && report_get_int(rec, "t_ns", &t)) {
			long long d;

			if (!__builtin_sub_overflow(t, p->start_mono_ns, &d) &&
			    !__builtin_add_overflow(p->start_unix_ns, d, &g->wall_ns))
				g->have_wall = 1;
		}
		report_map_put(&p->groups, key.p, key.len, g);
	}
	g->count++;
	free(key.p);
	free(at);
}

/* A call or failure record; -1 when its fields have the wrong types. */
static int
on_call(struct report *r, struct proc *p, json_t *rec, int failure, long long line)
{
	const char *fn = report_get_str(rec, "fn");
	struct fnstat *f;
	long long status, dur, gpu;

	if (!fn || !fn[0] || !report_get_int(rec, "status", &status))
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
		f->r_probing += failure && json_is_true(json_object_get(rec, "probing"));
		if (report_get_count(rec, "dur_ns", &dur)) {
			f->r_timed++;
			f->r_total = report_sat_add(f->r_total, dur);
			if (!f->hist)
				f->hist = report_xcalloc(HIST_BUCKETS, sizeof(*f->hist));
			f->hist[hist_index((unsigned long long)dur)]++;
		}
		if (report_get_count(rec, "gpu_ns", &gpu)) {
			f->r_have_gpu = 1;
			f->r_gpu = report_sat_add(f->r_gpu, gpu);
		}
	}
	if (r->chrome)
		report_chrome_record(r, p, rec, fn, failure);
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
	/* cudnnspy dump's summary of a process that did not exit, from the counters it left (records.c). */
	p->not_exited = json_is_false(json_object_get(rec, "exited"));
	p->calls = p->failures = p->internal = p->dropped = p->probing = -1;
	report_get_count(rec, "calls", &p->calls);
	report_get_count(rec, "probing", &p->probing);
	report_get_count(rec, "failures", &p->failures);
	report_get_count(rec, "internal", &p->internal);
	report_get_count(rec, "dropped", &p->dropped);
	json_array_foreach(fns, i, e) {
		const char *fn = report_get_str(e, "fn");
		long long calls;
		struct fnstat *f;

		if (!fn || !fn[0] || !report_get_count(e, "calls", &calls)) {
			p->bad_entries++;
			continue;
		}
		f = fnstat_get(p, fn);
		if (!f)
			continue;
		f->in_summary = 1;
		f->s_calls = calls;
		f->s_failures = f->s_internal = f->s_timed = f->s_total = f->s_p50 = f->s_p99 = 0;
		report_get_count(e, "failures", &f->s_failures);
		f->s_probing = 0;
		report_get_count(e, "probing", &f->s_probing);
		report_get_count(e, "internal", &f->s_internal);
		report_get_count(e, "timed", &f->s_timed);
		report_get_count(e, "total_ns", &f->s_total);
		f->s_have_first = report_get_count(e, "first_ns", &f->s_first);
		f->s_steady_unknown = f->s_have_first && json_is_null(json_object_get(e, "steady_ns"));
		report_get_count(e, "p50_ns", &f->s_p50);
		report_get_count(e, "p99_ns", &f->s_p99);
		f->s_have_gpu = report_get_count(e, "gpu_ns", &f->s_gpu);
	}
	return 0;
}

/* A finding, kept once per (id, message) in a process. */
static int
on_finding(struct proc *p, json_t *rec)
{
	char *id = report_get_clean(rec, "id", 64), *message = report_get_clean(rec, "message", MSG_CAP);
	struct pfinding *f;
	struct sbuf key;

	if (!id || !message) {
		free(id);
		free(message);
		return -1;
	}
	report_sb_init(&key, 2 * MSG_CAP);
	report_sb_printf(&key, "%s\x1f%s", id, message);
	if (report_map_get(&p->findings, key.p, key.len)) {
		free(id);
		free(message);
	} else if (p->findings.n >= MAX_FINDINGS) {
		p->findings_over++;
		free(id);
		free(message);
	} else {
		f = report_xcalloc(1, sizeof(*f));
		f->id = id;
		f->message = message;
		f->severity = report_get_clean(rec, "severity", 16);
		f->fix = report_get_clean(rec, "fix", MSG_CAP);
		report_map_put(&p->findings, key.p, key.len, f);
	}
	free(key.p);
	return 0;
}

/* What an algo record's choice was, in words: the legacy algorithm, or the engine and its knobs. */
static char *
algo_choice(json_t *rec)
{
	const char *algo = report_get_str(rec, "algo");
	json_t *knobs = json_object_get(rec, "knobs"), *k;
	long long engine;
	struct sbuf b;
	size_t i;

	if (algo)
		return report_clean_dup(algo, strlen(algo), STR_CAP);
	report_sb_init(&b, STR_CAP);
	if (report_get_int(rec, "engine", &engine))
		report_sb_printf(&b, "engine %lld", engine);
	else
		report_sb_puts(&b, "engine ?");
	json_array_foreach(knobs, i, k) {
		const char *type = report_get_str(k, "type");
		long long v;

		if (report_get_int(k, "value", &v))
			report_sb_printf(&b, "%s%s=%lld", i ? "," : " ", type ? type : "?", v);
	}
	return b.p;
}

/* An algo record: the calls of one (signature, choice), summed per process. */
static int
on_algo(struct proc *p, json_t *rec)
{
	char *api = report_get_clean(rec, "api", 16), *op = report_get_clean(rec, "op", 16);
	char *sig = report_get_clean(rec, "signature", SIG_CAP), *choice;
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
	report_sb_init(&key, 4 * SIG_CAP);
	report_sb_printf(&key, "%s\x1f%s\x1f%s\x1f%s", api, op, sig, choice);
	g = report_map_get(&p->sigs, key.p, key.len);
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
		g = report_xcalloc(1, sizeof(*g));
		g->api = api;
		g->op = op;
		g->signature = sig;
		g->choice = choice;
		g->python = report_python_text(json_object_get(rec, "python"));
		report_map_put(&p->sigs, key.p, key.len, g);
	} else {
		free(api);
		free(op);
		free(sig);
		free(choice);
	}
	free(key.p);
	if (report_get_count(rec, "calls", &v))
		g->calls = report_sat_add(g->calls, v);
	if (report_get_count(rec, "failures", &v))
		g->failures = report_sat_add(g->failures, v);
	if (report_get_count(rec, "timed", &v))
		g->timed = report_sat_add(g->timed, v);
	if (report_get_count(rec, "host_ns", &v))
		g->host_ns = report_sat_add(g->host_ns, v);
	if (report_get_count(rec, "gpu_timed", &v))
		g->gpu_timed = report_sat_add(g->gpu_timed, v);
	if (report_get_count(rec, "gpu_ns", &v))
		g->gpu_ns = report_sat_add(g->gpu_ns, v);
	if (json_is_object(ws) && report_get_count(ws, "min", &lo) && report_get_count(ws, "max", &hi)) {
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

/*
 * The signature a graph, heuristics or plan record is about, per process;
 * NULL when the record names none (a plan whose graph the spy did not
 * know) or the file has MAX_SIGS already. The op comes from the first
 * record that has one: plan records carry none.
 */
static struct pgraph *
pgraph_of(struct proc *p, json_t *rec)
{
	char *sig = report_get_clean(rec, "signature", SIG_CAP);
	struct pgraph *g;

	if (!sig)
		return NULL;
	g = report_map_get(&p->graphs, sig, strlen(sig));
	if (!g && p->graphs.n >= MAX_SIGS) {
		p->graphs_over++;
		free(sig);
		return NULL;
	}
	if (!g) {
		g = report_xcalloc(1, sizeof(*g));
		g->signature = sig;
		report_map_put(&p->graphs, sig, strlen(sig), g);
	} else {
		free(sig);
	}
	if (!g->op)
		g->op = report_get_clean(rec, "op", 16);
	return g;
}

/*
 * What a plan's config is, as the text its hash is kept of: its engine and
 * knobs as an algo record's choice reads; without the engine, the config
 * itself (backend#N), so that configs of unknown engines still count apart.
 */
static char *
plan_config(json_t *rec)
{
	const char *config = report_get_str(rec, "config");
	long long engine;
	char *c, *s;

	if (report_get_int(rec, "engine", &engine) || !config)
		return algo_choice(rec);
	c = report_clean_str(config, STR_CAP);
	if (asprintf(&s, "config %s", c) < 0)
		report_out_of_memory();
	free(c);
	return s;
}

/*
 * The graph API's building blocks, whether or not they executed: a graph
 * finalized, a heuristics query (with how many configs it returned), a plan
 * finalized (with the config it was built of). Records of another shape are
 * counted, and nothing else, as on_algo does.
 */
static int
on_build(struct proc *p, json_t *rec, const char *ev)
{
	struct pgraph *g = pgraph_of(p, rec);
	long long v;
	char *config;

	if (!g)
		return 0;
	if (ev[0] == 'g') {
		g->graphs = report_sat_add(g->graphs, 1);
	} else if (ev[0] == 'h') {
		g->heuristics = report_sat_add(g->heuristics, 1);
		if (!report_get_count(rec, "returned", &v))
			v = (long long)json_array_size(json_object_get(rec, "configs"));
		g->configs = report_sat_add(g->configs, v);
	} else {
		g->plans = report_sat_add(g->plans, 1);
		config = plan_config(rec);
		if (report_llset_add_shared(&g->built, (long long)report_hash(config, strlen(config)), BUILT_KEEP,
					    &p->built_total, BUILT_TOTAL) < 0)
			g->built_capped = 1;
		free(config);
	}
	return 0;
}

/* The answering copy's library record: its real path and build-id say which build it is. */
static int
on_library(struct proc *p, json_t *rec)
{
	const char *kind = report_get_str(rec, "kind");
	json_t *copy = json_object_get(rec, "copy"), *answers = json_object_get(rec, "answers");

	if (!kind)
		return -1;
	/* The first record that names the build is the one: a later one would leak what it names. */
	if (strcmp(kind, "cudnn") != 0 || p->lib_real || p->lib_build_id)
		return 0;
	/* Copy 0 serves the program's calls by name; records before copies had only "answers". */
	if (json_is_integer(copy) ? json_integer_value(copy) != 0 : !json_is_true(answers))
		return 0;
	p->lib_real = report_get_clean(rec, "real_path", 4096);
	p->lib_build_id = report_get_clean(rec, "build_id", 64);
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
	unsigned long long read_total;	/* bytes read from fd */
	struct rec_reader *rec;	/* format 2: its records as lines */
};

/* How far into its file S has read, for the progress line. */
static unsigned long long
src_pos(const struct src *s)
{
	if (s->rec)
		return s->rec->offset + s->rec->end;
	return s->mem ? s->pos : s->read_total;
}

/* The reader refused the file (its first frame is no record file's): said, and the file read as none. */
static int
refused(const char *path, const struct src *s)
{
	if (!s->rec || !s->rec->refused)
		return 0;
	complain("%s: %s", path, rec_refused_why ? rec_refused_why(s->rec) : "not a record file");
	return 1;
}

/*
 * The next line, without its newline. LINE_CUT: the last line had no
 * newline; LINE_LONG: the line was over LINE_CAP and is not given.
 */
static int
src_next(struct src *s, const char **line, size_t *len, int *flags)
{
	if (s->rec) {
		int f;

		if (!rec_next(s->rec, line, len, &f)) {
			s->error = s->rec->error;
			return 0;
		}
		/* Damage reads as a line that is not JSON; the tail an ending cut, as a cut line. */
		*flags = (f & REC_CUT ? LINE_CUT : 0) | (*len > LINE_CAP ? LINE_LONG : 0);
		return 1;
	}
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
		if (got <= 0) {
			s->eof = 1;
		} else {
			s->end += (size_t)got;
			s->read_total += (unsigned long long)got;
		}
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

/* ---- the processes of a file ---- */

/*
 * One file (or buffer) being read. A file holds one process, or several
 * when files were concatenated (cat a.rec b.rec > ab.rec, in either
 * format): a header after records begins the next, and each is read as a
 * process of its own, as if it had its own file.
 */
struct file_read {
	const char *path;
	struct proc *p;			/* the process whose lines these are */
	size_t nprocs;			/* processes begun in the file */
	struct proc **pending;		/* those that wait for the second pass, in line order */
	size_t npending, pending_cap;
	int pass2;			/* the second pass: only the call lines the first one counted */
};

/*
 * Has P had a record? Then a header is another process's. Lines that are
 * no record, or records with fields of the wrong type (a damaged header
 * among them), are not a process of their own: they stay with the header
 * that follows them, as they always did.
 */
static int
begun(const struct proc *p)
{
	return p->have_header || p->have_summary || p->calls_rec || p->failures_rec || p->lazy_calls || p->algo_rec ||
	       p->other_rec;
}

static int
needs_pass2(struct report *r, struct proc *p)
{
	return !r->full && p->lazy_calls > 0 && !p->have_summary;
}

static void finish_proc(struct report *r, struct proc *p);

/* P is whole: its warning, its Chrome track, and into the run, which keeps its line and its aggregates. */
static void
proc_done(struct report *r, struct proc *p)
{
	if (r->chrome)
		report_chrome_process(r, p);
	finish_proc(r, p);
	report_model_add(r, p);
	proc_free(p);
}

/*
 * The lines of the current process end before END_LINE: done, unless it
 * has no summary and its plain call lines were only counted; then it waits
 * for the second pass over the file.
 */
static void
segment_end(struct report *r, struct file_read *f, long long end_line)
{
	struct proc *p = f->p;

	f->p = NULL;
	p->end_line = end_line;
	if (!needs_pass2(r, p)) {
		proc_done(r, p);
		return;
	}
	if (f->npending == f->pending_cap) {
		f->pending_cap = f->pending_cap ? f->pending_cap * 2 : 4;
		f->pending = report_xrealloc(f->pending, f->pending_cap * sizeof(*f->pending));
	}
	f->pending[f->npending++] = p;
}

/* After the second pass (RAN: it could be made), the processes that waited for it. */
static void
pending_done(struct report *r, struct file_read *f, int ran)
{
	for (size_t i = 0; i < f->npending; i++) {
		f->pending[i]->pass2 = ran;
		proc_done(r, f->pending[i]);
	}
	free(f->pending);
	f->pending = NULL;
	f->npending = f->pending_cap = 0;
}

static void
handle_line(struct report *r, struct file_read *f, const char *line, size_t len, int flags, long long lineno)
{
	json_error_t err;
	json_t *rec = json_loadb(line, len, 0, &err);
	const char *ev;
	long long schema;
	int rc = 0;

	if (!rec) {
		if (flags & LINE_CUT)
			f->p->cut++;
		else
			f->p->bad_json++;
		return;
	}
	ev = report_get_str(rec, "event");
	if (f->pass2 && (!ev || strcmp(ev, "call") != 0)) {
		/*
		 * A line the first pass counted as a call that parses as something
		 * else (a second "event" key): the first pass said what it is. Read
		 * again as a header, it ended the process a second time, which was
		 * then freed twice (issue 28's CI, fuzz-report-short).
		 */
		json_decref(rec);
		return;
	} else if (!json_is_object(rec) || !ev) {
		rc = -1;
	} else if (strcmp(ev, "call") == 0) {
		rc = on_call(r, f->p, rec, 0, lineno);
	} else if (strcmp(ev, "failure") == 0) {
		rc = on_call(r, f->p, rec, 1, lineno);
	} else if (strcmp(ev, "header") == 0) {
		/* Another process's header: files concatenated. Its lines are another process, from here. */
		if (report_get_int(rec, "schema", &schema) && begun(f->p)) {
			segment_end(r, f, lineno);
			f->p = proc_add(r, f->path, lineno);
			f->nprocs++;
		}
		rc = on_header(r, f->p, rec);
	} else if (strcmp(ev, "summary") == 0) {
		rc = on_summary(f->p, rec);
	} else if (strcmp(ev, "algo") == 0) {
		rc = on_algo(f->p, rec);
	} else if (strcmp(ev, "graph") == 0 || strcmp(ev, "heuristics") == 0 || strcmp(ev, "plan") == 0) {
		f->p->other_rec++;
		rc = on_build(f->p, rec, ev);
	} else if (strcmp(ev, "finding") == 0 || strcmp(ev, "library") == 0) {
		f->p->other_rec++;
		rc = ev[0] == 'f' ? on_finding(f->p, rec) : on_library(f->p, rec);
	} else {
		f->p->other_rec++;
	}
	if (rc < 0)
		f->p->wrong_type++;
	json_decref(rec);
}

/*
 * Pass 1 reads everything but the plain call lines (unless r->full); pass 2
 * reads only those, for the processes of the file that turned out to have
 * no summary (f->pending, each with its lines [first_line, end_line)).
 */
static void
read_lines(struct report *r, struct file_read *f, struct src *s, int pass)
{
	const char *line;
	size_t len, k = 0;
	int flags;
	long long lineno = 0;

	while (src_next(s, &line, &len, &flags)) {
		int lazy;

		lineno++;
		if (len && line[len - 1] == '\r')
			len--;
		lazy = !(flags & (LINE_LONG | LINE_CUT)) && plain_call(line, len);
		if (pass == 2) {
			while (k < f->npending && lineno >= f->pending[k]->end_line)
				k++;
			if (k == f->npending)
				break;
			if (lazy && lineno >= f->pending[k]->first_line) {
				f->p = f->pending[k];
				handle_line(r, f, line, len, flags, lineno);
			}
			continue;
		}
		/* Every 256 lines; the clock only every 256 KiB (cli-progress.h). */
		if (r->progress && (lineno & 255) == 0)
			cli_progress_at(r->progress, src_pos(s));
		if (flags & LINE_LONG)
			f->p->too_long++;
		else if (blank_line(line, len))
			f->p->blank++;
		else if (lazy && !r->full)
			f->p->lazy_calls++;
		else
			handle_line(r, f, line, len, flags, lineno);
		/* After handle_line: a header's line is the process it begins. */
		f->p->lines++;
	}
	if (pass == 2)
		f->p = NULL;
}

/*
 * The percentiles of the durations read from records; the histograms go,
 * so that only one process's are held at a time.
 */
static void
fnstats_done(struct proc *p)
{
	void **fv = report_map_values(&p->fns);

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

/* One warning per process, with the counts. */
static void
finish_proc(struct report *r, struct proc *p)
{
	long long skipped = p->too_long + p->bad_json + p->wrong_type + p->cut;
	char name[4200];
	struct sbuf b;

	fnstats_done(p);
	if (p->read_error)
		report_warn_to(r->warn, "%s: read error after %lld lines: %s", proc_name(p, name, sizeof(name)),
			p->lines, strerror(p->read_error));
	if (skipped == 0 && p->bad_entries == 0 && p->groups_over == 0 && p->fns_over == 0 && p->graphs_over == 0)
		return;
	report_sb_init(&b, 1024);
	report_sb_printf(&b, "skipped %lld of %lld lines", skipped, p->lines);
	if (p->bad_json)
		report_sb_printf(&b, ", %lld not JSON", p->bad_json);
	if (p->too_long)
		report_sb_printf(&b, ", %lld over %u bytes", p->too_long, LINE_CAP);
	if (p->wrong_type)
		report_sb_printf(&b, ", %lld with fields of the wrong type", p->wrong_type);
	if (p->cut)
		report_sb_printf(&b, ", %lld cut short", p->cut);
	if (p->bad_entries)
		report_sb_printf(&b, "; %lld summary entries unusable", p->bad_entries);
	if (p->groups_over)
		report_sb_printf(&b, "; %lld failures past %d kinds not grouped", p->groups_over, MAX_GROUPS);
	if (p->fns_over)
		report_sb_printf(&b, "; %zu records of functions past %d not counted", p->fns_over, MAX_FNS);
	if (p->graphs_over)
		report_sb_printf(&b, "; %lld graph records past %d signatures not kept", p->graphs_over, MAX_SIGS);
	report_warn_to(r->warn, "%s: %s", proc_name(p, name, sizeof(name)), b.p);
	free(b.p);
}

/* Lines, and not one of them a record: some other file given by mistake. */
static int
not_records(const struct proc *p)
{
	return p->lines > p->blank && !p->have_header && !p->have_summary && !p->calls_rec && !p->failures_rec &&
	       !p->lazy_calls && !p->algo_rec && !p->other_rec && !p->wrong_type;
}

void
report_read_buffer(struct report *r, const char *name, const void *data, size_t len)
{
	struct file_read f = { 0 };
	struct src s = { 0 };
	struct rec_reader rec;

	f.path = name;
	f.p = proc_add(r, name, 1);
	f.nprocs = 1;
	s.mem = data ? data : "";
	s.len = data ? len : 0;
	if (binary_records(s.mem, s.len)) {
		rec_open_mem(&rec, s.mem, s.len);
		s.rec = &rec;
	}
	read_lines(r, &f, &s, 1);
	segment_end(r, &f, LLONG_MAX);
	if (f.npending) {
		s.pos = 0;
		if (s.rec) {
			rec_close(&rec);
			rec_open_mem(&rec, s.mem, s.len);
		}
		f.pass2 = 1;
		read_lines(r, &f, &s, 2);
	}
	pending_done(r, &f, 1);
	if (s.rec)
		rec_close(&rec);
}

int
report_read_path(struct report *r, const char *path)
{
	struct file_read f = { 0 };
	struct src s = { 0 };
	struct stat st;
	unsigned char magic[16];
	int piped;
	struct rec_reader rec;
	ssize_t got;
	int fd, saved_full = r->full, binary, ran = 0;

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
	/*
	 * Compressed records would only be counted as garbage: say what they are. A pipe (cudnnspy report
	 * /dev/stdin, a FIFO) cannot be read again: its first bytes are read here and handed to the reader.
	 */
	piped = !S_ISREG(st.st_mode);
	got = piped ? cli_read_start(fd, magic, sizeof(magic)) : pread(fd, magic, sizeof(magic), 0);
	if (got >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		complain("%s: compressed (gzip); decompress it first", path);
		close(fd);
		return -1;
	}
	binary = got > 0 && binary_records(magic, (size_t)got);
	f.path = path;
	f.p = proc_add(r, path, 1);
	f.nprocs = 1;
	s.fd = fd;
	/*
	 * One buffer for every file, not zeroed: a buffer per file was 4 MiB to clear each time (and, glibc
	 * giving it from the heap after the first, to keep), for files that are mostly a few KB.
	 */
	if (!r->read_buf)
		r->read_buf = report_xrealloc(NULL, READ_BUF);
	s.buf = r->read_buf;
	if (binary) {
		if (piped)
			rec_open_fd_after(&rec, fd, magic, (size_t)got);
		else
			open_binary(&rec, fd, st.st_size);
		s.rec = &rec;
	} else if (piped && got > 0) {
		memcpy(s.buf, magic, (size_t)got);
		s.end = (size_t)got;
	}
	/* A pipe cannot be read twice: everything is parsed on the first pass. */
	if (piped)
		r->full = 1;
	read_lines(r, &f, &s, 1);
	f.p->read_error = s.error;
	if (s.rec && s.rec->damaged)
		report_warn_to(r->warn, "%s: damaged: %llu bytes in %lld places are no record, the first at byte %llu",
			       path, s.rec->damage_bytes, s.rec->damaged, s.rec->damage_at);
	if (s.rec && s.rec->unreadable_calls)
		report_warn_to(r->warn, "%s: %lld packed calls cannot be read%s", path, s.rec->unreadable_calls,
			       s.rec->mismatch ? " (written by a cudnnspy with another function table)" : "");
	if (f.nprocs == 1 && (refused(path, &s) || not_records(f.p))) {
		if (!s.rec || !s.rec->refused)
			complain("%s: not cudnnspy records (no line of it is a record; see docs/output-format.md)", path);
		/* Its place was the last one given. */
		r->nrows--;
		proc_free(f.p);
		if (binary)
			rec_close(&rec);
		r->full = saved_full;
		close(fd);
		return -1;
	}
	segment_end(r, &f, LLONG_MAX);
	if (f.npending && lseek(fd, 0, SEEK_SET) == 0) {
		memset(&s, 0, sizeof(s));
		s.fd = fd;
		s.buf = r->read_buf;	/* the second pass reads into the same buffer */
		if (binary) {
			rec_close(&rec);
			open_binary(&rec, fd, st.st_size);
			s.rec = &rec;
		}
		f.pass2 = 1;
		read_lines(r, &f, &s, 2);
		ran = 1;
	}
	pending_done(r, &f, ran);
	if (binary)
		rec_close(&rec);
	r->full = saved_full;
	close(fd);
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
	ok = json_is_object(rec) && report_get_str(rec, "event") && strcmp(report_get_str(rec, "event"), "header") == 0 &&
	     report_get_int(rec, "start_unix_ns", start_unix_ns);
	json_decref(rec);
	return ok;
}

/* The header's start_unix_ns of a file, from its first line only. */
int
report_path_header_start(const char *path, long long *start_unix_ns)
{
	struct src s = { 0 };
	struct rec_reader rec;
	unsigned char magic[16];
	struct stat st;
	const char *line;
	size_t len;
	ssize_t got;
	int flags, ok = 0;

	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return 0;
	/* Not a pipe, whose records reading it here would take from the report; not a directory. */
	if (fstat(s.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(s.fd);
		return 0;
	}
	/* Format 2 begins with its file frame: the header is its first record. */
	got = pread(s.fd, magic, sizeof(magic), 0);
	if (got > 0 && binary_records(magic, (size_t)got)) {
		open_binary(&rec, s.fd, st.st_size);
		s.rec = &rec;
	} else {
		/* Not zeroed: only what read() put there is looked at. */
		s.buf = report_xrealloc(NULL, READ_BUF);
	}
	if (src_next(&s, &line, &len, &flags) && !(flags & LINE_LONG))
		ok = report_header_start(line, len, start_unix_ns);
	if (s.rec)
		rec_close(&rec);
	free(s.buf);
	close(s.fd);
	return ok;
}
