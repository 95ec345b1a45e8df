/*
 * cudnnspy report: reads the JSON Lines records of one or many processes
 * and says what a person wants to know first: which cuDNN answered each
 * process, what failed and where, and where the time went.
 *
 * This file is the command line: the options, the files a directory holds,
 * and the order of the steps. The steps are files of their own, and call
 * one way only: report-read.c reads the records (and hands them to
 * report-chrome.c for --chrome), report-model.c makes the report from what
 * was read, report-text.c prints it, report-brief.c prints it short for
 * `cudnnspy run`, and report-compare.c sets two runs side by side; report-render.c renders arguments for the reader and the trace,
 * and report-util.c serves them all (report-int.h).
 */
#include "report.h"
#include "report-int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "cli-options.h"
#include "cli-progress.h"
#include "cli-util.h"

#define EXIT_USAGE 2

static const char report_usage[] =
	"usage: cudnnspy report [--json] [--chrome FILE] [--top N] [--full] [--quiet] FILE_OR_DIR...\n"
	"       cudnnspy report --compare [--json] RUN_A RUN_B\n"
	"\n"
	"Reads the JSON Lines records that the spy wrote (CUDNNSPY_OUTPUT) and prints,\n"
	"for a person: each process and the cuDNN that answered it, the processes that\n"
	"loaded a different cuDNN, the failures grouped by function, status and message,\n"
	"and the functions that took the most time. A directory is read for *.jsonl*\n"
	"files, and so are its subdirectories (one level).\n"
	"\n";

/* ---- the command ---- */

struct inputs {
	char **paths;
	long long *sizes;	/* -1: not a regular file (a pipe), no size to count by */
	size_t n, cap;
	struct {
		dev_t dev;
		ino_t ino;
	} *ids;
};

/* Adds PATH; a file named twice (directly and through its directory) is dropped by inputs_once. */
static void
inputs_add(struct inputs *in, const char *path, const struct stat *st)
{
	if (in->n == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 16;
		in->paths = report_xrealloc(in->paths, in->cap * sizeof(*in->paths));
		in->sizes = report_xrealloc(in->sizes, in->cap * sizeof(*in->sizes));
		in->ids = report_xrealloc(in->ids, in->cap * sizeof(*in->ids));
	}
	in->paths[in->n] = report_xstrdup(path);
	in->sizes[in->n] = S_ISREG(st->st_mode) ? (long long)st->st_size : -1;
	in->ids[in->n].dev = st->st_dev;
	in->ids[in->n].ino = st->st_ino;
	in->n++;
}

static const struct inputs *inputs_sorting;

static int
input_id_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct inputs *in = inputs_sorting;

	if (in->ids[x].dev != in->ids[y].dev)
		return in->ids[x].dev < in->ids[y].dev ? -1 : 1;
	if (in->ids[x].ino != in->ids[y].ino)
		return in->ids[x].ino < in->ids[y].ino ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Each file once, where it was first named: by sorting, since comparing
 * each file with every one before it took minutes for 100,000 files.
 */
static void
inputs_once(struct inputs *in)
{
	size_t *by_id = report_xcalloc(in->n ? in->n : 1, sizeof(*by_id)), k = 0;

	for (size_t i = 0; i < in->n; i++)
		by_id[i] = i;
	inputs_sorting = in;
	qsort(by_id, in->n, sizeof(*by_id), input_id_cmp);
	for (size_t i = 1; i < in->n; i++)
		if (in->ids[by_id[i]].dev == in->ids[by_id[i - 1]].dev && in->ids[by_id[i]].ino == in->ids[by_id[i - 1]].ino) {
			free(in->paths[by_id[i]]);
			in->paths[by_id[i]] = NULL;
		}
	free(by_id);
	for (size_t i = 0; i < in->n; i++)
		if (in->paths[i]) {
			in->sizes[k] = in->sizes[i];
			in->paths[k++] = in->paths[i];
		}
	in->n = k;
	free(in->ids);
	in->ids = NULL;
}

static void
inputs_free(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	free(in->sizes);
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
		report_out_of_memory();
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
			names = report_xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = report_xstrdup(e->d_name);
	}
	closedir(d);
	/* Directory order is the file system's: sort, for the same report every time. */
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char *path = join_path(dir, names[i]);
		struct stat st;

		if (stat(path, &st) == 0) {
			if (S_ISREG(st.st_mode) && cli_is_record_name(names[i])) {
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
			complain("%s: no record files (*.jsonl*, *.cudnnspy.rec) in it or in its subdirectories", path);
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

/* The inputs counted for the progress line. */
static void
progress_add(struct cli_progress *p, const struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		cli_progress_add(p, in->sizes[i] >= 0 ? (unsigned long long)in->sizes[i] : 0, in->sizes[i] >= 0);
}

/*
 * Reads every input into R; the number that could be read. Each name goes once read: the report has its own.
 * P counts them done (the second pass over a file, for processes without a summary, is in its file's time).
 */
static size_t
read_inputs(struct report *r, struct inputs *in, struct cli_progress *p)
{
	size_t ok = 0;

	report_set_progress(r, p);
	for (size_t i = 0; i < in->n; i++) {
		if (report_read_path(r, in->paths[i]) == 0)
			ok++;
		cli_progress_file_done(p, in->sizes[i] >= 0 ? (unsigned long long)in->sizes[i] : 0);
		free(in->paths[i]);
		in->paths[i] = NULL;
	}
	report_set_progress(r, NULL);
	return ok;
}

static int
run_compare(char **operands, int json, int quiet)
{
	struct inputs in[2] = { { 0 }, { 0 } };
	struct report *r[2] = { NULL, NULL };
	struct cli_progress progress;
	int rc = EXIT_USAGE;

	/* Both runs listed first: the progress line counts them together. */
	cli_progress_begin(&progress, "report", !quiet);
	for (int i = 0; i < 2; i++) {
		r[i] = report_new();
		if (!r[i])
			report_out_of_memory();
		if (add_operand(&in[i], operands[i]) != 0)
			goto out;
		inputs_once(&in[i]);
		progress_add(&progress, &in[i]);
	}
	for (int i = 0; i < 2; i++)
		if (read_inputs(r[i], &in[i], &progress) == 0) {
			cli_progress_end(&progress);
			complain("%s: nothing could be read", operands[i]);
			goto out;
		}
	cli_progress_end(&progress);
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
	char **operands = report_xcalloc((size_t)argc + 1, sizeof(*operands));
	struct inputs in = { 0 };
	struct report *r = NULL;
	struct cli_progress progress;
	FILE *chrome = NULL;
	int json = 0, compare = 0, full = 0, quiet = 0, top = 20, nops = 0, rc = EXIT_USAGE, bad = 0, i;
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
			cli_print_options(stdout, "report", 17);
			rc = 0;
			goto out;
		}
		if (strcmp(a, "--json") == 0) {
			json = 1;
		} else if (strcmp(a, "--compare") == 0) {
			compare = 1;
		} else if (strcmp(a, "--full") == 0) {
			full = 1;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			quiet = 1;
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
		rc = run_compare(operands, json, quiet);
		goto out;
	}
	if (nops == 0) {
		rc = report_usage_error("report: no files or directories given");
		goto out;
	}
	for (i = 0; i < nops; i++)
		if (add_operand(&in, operands[i]) != 0)
			bad++;
	inputs_once(&in);
	if (in.n == 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	r = report_new();
	if (!r)
		report_out_of_memory();
	report_set_full(r, full);
	if (chrome_path) {
		long long base = 0, t;
		int have = 0;

		for (size_t k = 0; k < in.n; k++)
			if (report_path_header_start(in.paths[k], &t) && (!have || t < base)) {
				base = t;
				have = 1;
			}
		chrome = fopen(chrome_path, "w");
		if (!chrome) {
			complain("cannot write %s: %s", chrome_path, strerror(errno));
			rc = 1;
			goto out;
		}
		report_chrome_begin(r, chrome, have, base);
	}
	cli_progress_begin(&progress, "report", !quiet);
	progress_add(&progress, &in);
	ok = read_inputs(r, &in, &progress);
	cli_progress_end(&progress);
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
