/*
 * cudnnspy report: the reader of the JSON Lines records
 * (docs/output-format.md) and the report made from them (docs/report.md).
 *
 * A struct report is one run: the records of one or many processes, a
 * file each or several in one (files concatenated). The reader streams
 * every file line by line and keeps aggregates only (counts, sums, the
 * first occurrence of each kind of failure), so that memory does not grow
 * with the number of calls, and of each process only its line in the table
 * of processes, so that it grows by little more than that with the number
 * of files. It reads files or memory buffers alike; the fuzz target
 * (fuzz-report.c) feeds it bytes through report_read_buffer.
 *
 * Nothing here needs jansson in its interface, so main.c can include it
 * whether or not the report is built.
 */
#ifndef CUDNNSPY_REPORT_H
#define CUDNNSPY_REPORT_H

#include <stddef.h>
#include <stdio.h>

struct report;

/* A new, empty run; NULL when out of memory. */
struct report *
report_new(void);

void
report_free(struct report *r);

struct cli_progress;

/* Told how far each file has been read, on the first pass (cli-progress.h); NULL (the default) for none. */
void
report_set_progress(struct report *r, struct cli_progress *p);

/* Where the one-per-file warnings go: stderr by default, NULL for none. */
void
report_set_warnings(struct report *r, FILE *out);

/*
 * Parse every call record, also those that the file's summary makes
 * unnecessary for the report (the default skips them; see docs/report.md).
 */
void
report_set_full(struct report *r, int full);

/*
 * Stream a Chrome trace (trace-event JSON) to OUT while reading: one event
 * per call and failure record, so it implies report_set_full. Timestamps
 * count from BASE_UNIX_NS when HAVE_BASE (see report_header_start), else
 * from the first header read. report_chrome_end writes the closing
 * brackets; it returns 0, or -1 when OUT had an error.
 */
void
report_chrome_begin(struct report *r, FILE *out, int have_base, long long base_unix_ns);

int
report_chrome_end(struct report *r);

/*
 * The header's start_unix_ns when the first line of DATA is a header;
 * returns 1 and sets *start_unix_ns, or 0.
 */
int
report_header_start(const void *data, size_t len, long long *start_unix_ns);

/* Reads the records of one file from memory (its processes); NAME is how messages call it. */
void
report_read_buffer(struct report *r, const char *name, const void *data, size_t len);

/* Reads one file; 0, or -1 after a message when it cannot be read at all. */
int
report_read_path(struct report *r, const char *path);

/* The report for a person, and the same as one JSON document. */
int
report_write_text(struct report *r, FILE *out, int top);

int
report_write_json(struct report *r, FILE *out);

/*
 * The job in a few lines, each prefixed "cudnnspy: ", for `cudnnspy run`
 * after the program: its processes, copies that differ between them, the
 * findings and failures of the whole job. WHERE names the records in the
 * line that points to the full report. With ONLY_NEWS, nothing when the
 * records hold a single process that ended with its summary (it said all
 * of that itself at exit). Returns 1 when it printed.
 */
int
report_write_brief(struct report *r, FILE *out, const char *where, int only_news);

/* The comparison of two runs, as text or JSON. */
int
report_write_compare(struct report *a, const char *name_a, struct report *b, const char *name_b,
		     FILE *out, int json);

/*
 * `cudnnspy report ARGS...`: ARGV holds the arguments after "report".
 * Returns the exit status.
 */
int
cudnnspy_report_main(int argc, char **argv);

#endif
