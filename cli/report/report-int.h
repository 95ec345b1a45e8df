/*
 * What the files of `cudnnspy report` share: the per-process structures the
 * reader fills and the model reads, and the functions one file calls in
 * another. Every name outside a file is prefixed report_, because the
 * command links the spy's core and the other commands as well.
 *
 * The calls go one way (tests/abi/check-depends.py): report.c calls the
 * reader, the printers and the comparison; the reader calls the Chrome
 * trace and hands each process read to the model; the printers and the
 * comparison call the model, and the comparison prints with some of the
 * text's printers; the reader and the trace render arguments with
 * report-render.c; all of them call report-util.c, and report-util.c calls
 * none.
 */
#ifndef CUDNNSPY_REPORT_INT_H
#define CUDNNSPY_REPORT_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report.h"

/* The schema this reader was written for (docs/output-format.md). */
#define SCHEMA_KNOWN 1

/*
 * The longest strings kept from a record (names, messages, signatures):
 * the reader cuts them there, and the model keys its aggregates by them.
 */
#define SIG_CAP 1024
#define STR_CAP 256
#define MSG_CAP 1024

/* ---- a growable string with a limit ---- */

struct sbuf {
	char *p;
	size_t len, cap, limit;
	int cut;
};

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

/* ---- a set of integers with a cap (thread ids, Chrome process ids) ---- */

struct llset {
	long long *v;
	unsigned char *used;
	size_t cap, n;
};

/* ---- what one process holds while it is read ---- */

struct fnstat {
	char *fn;
	/* From the summary record. */
	int in_summary, s_have_gpu;
	long long s_calls, s_failures, s_internal, s_timed, s_total, s_p50, s_p99, s_gpu, s_first;
	long long s_probing;		/* of s_failures, a framework's expected NOT_SUPPORTED answers */
	int s_have_first;		/* the summary said each thread's first call apart (first_ns) */
	int s_steady_unknown;		/* and that the calls after it were not measured (steady_ns null) */
	/* From call and failure records. */
	int r_have_gpu;
	long long r_calls, r_failures, r_timed, r_total, r_gpu, r_p50, r_p99;
	long long r_probing;		/* failure records marked probing */
	uint64_t *hist;			/* freed when the file is done (fnstat_done) */
};

struct fgroup {
	char *fn, *status_name, *message;	/* message NULL when the record had none */
	char *python_at;			/* its innermost Python frame, "function (file:line)"; NULL: none */
	long long status, count;
	int probing;				/* the records said "probing": a framework's expected NOT_SUPPORTED */
	json_t *first;				/* see first_occurrence() */
	int have_wall;
	long long wall_ns;			/* when it happened, on the wall clock */
};

struct proc {
	char *path;
	size_t order;				/* input order, for ties: its place in report.rows */
	long long first_line, end_line;		/* its lines in the file: a header begins another process */
	/* The header. */
	int have_header, have_pid, have_rank, have_ppid, have_clock, have_library;
	long long schema, pid, ppid, rank, start_unix_ns, start_mono_ns;
	char *program, *host, *spy, *mode, *lib_path, *lib_how;
	int have_lib_version, have_lib_cudart;
	long long lib_version, lib_cudart;
	/* Lines. */
	long long lines, blank, too_long, bad_json, wrong_type, cut, bad_entries;
	long long calls_rec, failures_rec, algo_rec, other_rec, lazy_calls;
	long long probing_rec;			/* failure records marked probing, grouped or not */
	int read_error, pass2;
	/* The summary. */
	int have_summary;
	int not_exited;		/* its summary came from the counters it left: it ended without exit() */
	long long calls, failures, internal, dropped, probing;	/* probing: part of failures */
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
	/* What the graph API built, per signature (struct pgraph); records past MAX_SIGS signatures, configs kept. */
	struct map graphs;
	long long graphs_over;
	size_t built_total;
	/* The answering copy's file, from its library record: one build reached by several names is one. */
	char *lib_real, *lib_build_id;
};

/*
 * What the run keeps of a process once it is read (report_model_add), so
 * that memory does not grow with the number of processes beyond their
 * lines in the table of processes: the keys it is sorted by, and the rest
 * of its line packed (report-model.c), about 90 bytes and the file name. Its
 * functions, failures, findings and convolutions went into the run's
 * aggregates.
 */
enum {
	ROW_HEADER = 1, ROW_PID = 2, ROW_RANK = 4, ROW_PPID = 8, ROW_LIBRARY = 16, ROW_LIB_VERSION = 32,
	ROW_LIB_CUDART = 64, ROW_SUMMARY = 128, ROW_PASS2 = 256, ROW_NOT_EXITED = 512
};

struct prow {
	long long rank, pid;
	const char *host, *dir;		/* kept once in the run (NULL: none); dir: the path to its last '/' */
	size_t order, sorted;		/* input order; place in the report's order (report_model_new) */
	unsigned flags;			/* ROW_* */
	unsigned char data[];		/* the file's name after dir, its NUL, then the rest as varints */
};

/*
 * A list of processes (who ran a build, a kind of failure, a finding, a
 * convolution choice), as ranges of their input order [from, to): most
 * lists are all the processes, or one of them.
 */
struct who {
	size_t (*r)[2];
	size_t n, cap;
	size_t count;
};

/*
 * A signature's configs built (distinct engine and knobs: the same engine
 * with other knobs is another config), as hashes of their text: at most
 * BUILT_KEEP per signature, and a cap on them all in a file and in the run
 * (report-read.c, report-model.c), so that a stranger's records cannot grow
 * memory with their number.
 */
#define BUILT_KEEP 4096

/*
 * What one process built through the graph API for one signature, from its
 * graph, heuristics and plan records, whether or not anything executed (its
 * algo records say only what ran).
 */
struct pgraph {
	char *op, *signature;		/* op from a graph or heuristics record (a plan has none); NULL: none */
	long long graphs, heuristics, configs, plans;	/* configs: what the heuristics queries returned */
	struct llset built;
	int built_capped;		/* configs were built past what the set keeps */
};

struct pfinding {
	char *id, *severity, *message, *fix;
};

struct psig {
	char *api, *op, *signature, *choice;
	char *python;	/* the Python frames of the signature's first call (CUDNNSPY_PYTHON=traced); NULL */
	long long calls, failures, timed, host_ns, gpu_timed, gpu_ns, ws_min, ws_max;
	int have_ws;
	int nondet;	/* the spy found cuDNN calls it non-deterministic */
};

struct report {
	struct prow **rows;		/* by input order; NULL while the process is being read */
	size_t nrows, cap;
	FILE *warn;
	int full;
	FILE *chrome;
	long long chrome_base, chrome_events, chrome_next_pid;
	int chrome_have_base;	/* chrome_base came from a header (read ahead, or the first one read) */
	int chrome_first;
	char *chrome_buf;
	size_t chrome_cap;
	struct llset chrome_pids;
	char *read_buf;			/* every file is read through it in turn (report-read.c) */
	struct cli_progress *progress;	/* told how far each file is read; NULL for none */
	/* The processes taken together as each is read (report-model.c). */
	struct map strings;		/* each text that rows point to, once */
	char **string_list;		/* by number, for the packed rows */
	size_t nstrings, strings_cap;
	struct map hosts, libs, groups, findings, sigs, fns, graphs;
	size_t built_total;		/* configs kept in the graphs' sets, all together */
	unsigned char *row_block;	/* rows are cut from blocks of their own (report-model.c) */
	size_t row_used, row_size;
	long long groups_over, findings_over, total_failures, calls, algo_rec;
	long long probing_failures;	/* of all failures, those marked probing */
};

/* ---- report-util.c: memory, strings, a map and a set, fields ---- */

/* "cudnnspy: " and the message on OUT, a line; nothing when OUT is NULL. */
void
report_warn_to(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Out of memory is not bad input: says so and ends the command (exit 1). */
void
report_out_of_memory(void);

void *
report_xcalloc(size_t n, size_t size);

void *
report_xrealloc(void *p, size_t size);

char *
report_xstrdup(const char *s);

/* A json_t that must exist (jansson returns NULL only when out of memory), set or appended. */
json_t *
report_must(json_t *j);

void
report_jset(json_t *obj, const char *key, json_t *value);

void
report_jpush(json_t *arr, json_t *value);

/* A sum that stops at LLONG_MAX or LLONG_MIN. */
long long
report_sat_add(long long a, long long b);

/* A copy that is valid UTF-8 without control characters, cut to CAP bytes with "...". */
char *
report_clean_dup(const char *s, size_t len, size_t cap);

char *
report_clean_str(const char *s, size_t cap);

void
report_sb_init(struct sbuf *b, size_t limit);

void
report_sb_add(struct sbuf *b, const char *s, size_t n);

void
report_sb_puts(struct sbuf *b, const char *s);

void
report_sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* map_put copies KEY, which must not be there yet; map_values are in no order. */
void *
report_map_get(struct map *m, const char *key, size_t klen);

void
report_map_put(struct map *m, const char *key, size_t klen, void *val);

void **
report_map_values(struct map *m);

void
report_map_free(struct map *m, void (*free_val)(void *));

/* 1 when X is new, 0 when it was there, -1 when the set is at LIMIT. */
int
report_llset_add(struct llset *s, long long x, size_t limit);

/* X into a set of at most PER that shares TOTAL with others (*USED of it taken): as report_llset_add. */
int
report_llset_add_shared(struct llset *s, long long x, size_t per, size_t *used, size_t total);

/* A 64-bit hash of N bytes (FNV-1a): what a set of texts keeps of each. */
uint64_t
report_hash(const char *p, size_t n);

void
report_llset_free(struct llset *s);

/* A record's fields: a wrong type reads as absent (0, NULL); a count is not negative. */
int
report_get_int(json_t *o, const char *key, long long *out);

int
report_get_count(json_t *o, const char *key, long long *out);

const char *
report_get_str(json_t *o, const char *key);

char *
report_get_clean(json_t *o, const char *key, size_t cap);

/* The file name of PATH; a cuDNN version number as 9.1.0 (freed by the caller). */
const char *
report_base_name(const char *path);

char *
report_version_string(long long v);

/* The model's fields: an absent one reads as 0 or DEF. */
long long
report_jget_int(json_t *o, const char *key);

const char *
report_jget_str(json_t *o, const char *key, const char *def);

/* ---- report-render.c: arguments for a person ---- */

/* V into B, short (DEPTH: how deep V is already); ARGS as name=value, ..., the first MAX (0: all). */
void
report_render_value(struct sbuf *b, json_t *v, int depth);

char *
report_render_args(json_t *args, int max);

/* ---- report-read.c (also report.h's report_new ... report_read_path) ---- */

/* The header's start_unix_ns of a file, from its first line only. */
int
report_path_header_start(const char *path, long long *start_unix_ns);

/* ---- report-chrome.c: the reader's calls, while R->chrome is set ---- */

/* A file's track, also for a file without records; one event per call or failure record. */
void
report_chrome_process(struct report *r, struct proc *p);

void
report_chrome_record(struct report *r, struct proc *p, json_t *rec, const char *fn, int failure);

/* ---- report-model.c ---- */

/*
 * A process that was read whole into the run: its line in the table, and
 * its functions, failures, findings and convolutions into the run's
 * aggregates. What it keeps of P is copied: the reader frees P after.
 * report_model_slot gives a new process its place (its input order).
 */
size_t
report_model_slot(struct report *r);

void
report_model_add(struct report *r, struct proc *p);

/* The aggregates and rows, for report_free. */
void
report_model_release(struct report *r);

/*
 * The report (docs/report.md) as a JSON model, from which the text is
 * printed and which --json prints. What grows with the number of processes
 * is made only as it is printed, so that the model does not: the entries
 * of "processes" (report_model_process) and each list of processes ("who",
 * report_who_*). In the model they are placeholders that only these
 * functions and report_model_dump read.
 */
struct rmodel {
	json_t *j;
	struct report *r;
	struct prow **sorted;		/* the processes in the report's order */
	size_t n;
	struct who **whos;		/* what each "who" placeholder stands for */
	size_t nwhos, whos_cap;
	uint64_t *bits;			/* scratch: a list's members by their place in the order */
};

struct rmodel *
report_model_new(struct report *r);

void
report_model_free(struct rmodel *m);

/* The entry of the I-th process of the report's order (what "processes" holds); the caller frees it. */
json_t *
report_model_process(struct rmodel *m, size_t i);

/* How many processes ended without a summary. */
size_t
report_model_unfinished(struct rmodel *m);

/* A "who": its size; its labels in the report's order, each passed to FN with ARG, until FN returns nonzero. */
size_t
report_who_count(struct rmodel *m, json_t *who);

void
report_who_each(struct rmodel *m, json_t *who, int (*fn)(const char *label, size_t i, void *arg), void *arg);

/* The model as --json prints it: jansson's JSON_INDENT(2), with the placeholders written out. */
int
report_model_dump(struct rmodel *m, FILE *out);

/* ---- report-text.c: what report-compare.c and report-brief.c print the same way ---- */

/* A duration in a unit that keeps 3 or 4 digits; a library's version and path; 0, or -1 after a message. */
void
report_fmt_ns(char *buf, size_t size, long long ns);

void
report_print_library(FILE *out, json_t *lib);

/* Processes by their labels ("ranks 0, 2", "pid 7, pid 9"), the first 16 of them. */
void
report_print_who(struct rmodel *m, FILE *out, json_t *who);

/* A stack frame as " symbol (module+offset)" or " module+offset", after " <" unless it is the first (i 0). */
void
report_print_frame(FILE *out, json_t *frame, size_t i);

/* A record's Python frames as "function (file:line) < ...", cleaned; NULL when it has none (malloc'd). */
char *
report_python_text(json_t *frames);

/* Python frames as " function (file:line) < ...", the first MAX of them. */
void
report_print_python(FILE *out, json_t *frames, size_t max);

/* One cuDNN build and the processes that loaded it, a line after `prefix`. */
void
report_print_variant(struct rmodel *m, FILE *out, const char *prefix, json_t *variant);

/* A failure group's line, after PREFIX: 4x fn: STATUS_NAME (status) "message" (no newline). */
void
report_print_group_line(FILE *out, const char *prefix, json_t *group);

/*
 * The model's failures, the probing apart (the records mark a framework's
 * expected NOT_SUPPORTED "probing"): how many of each, and in how many groups.
 */
struct report_failure_counts {
	long long failures, probing;
	size_t groups, probing_groups;
};

void
report_failure_counts(json_t *failures, struct report_failure_counts *c);

/* "208 expected NOT_SUPPORTED answers in 3 groups (...; not failures)", after the caller's "Probing: ". */
void
report_print_probing_heading(FILE *out, const struct report_failure_counts *c);

int
report_finish_output(FILE *out);

#endif
