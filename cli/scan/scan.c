/*
 * cudnnspy scan: lists every cuDNN copy where users have them, reads what
 * each is made of without running it, and names the conflicts between
 * them (docs/conflicts.md has one section per finding id). With --for,
 * it follows the loader's search order as a given program or library
 * would. Files are only stat'ed and read in small, bounded pieces; the
 * one exception, a dispatcher whose name carries no version, is loaded
 * in a forked helper (scan-probe.c) that may crash or hang on its own.
 *
 * This file holds the command line and the order of the steps: the
 * places (scan-places.c), what they hold as copies (scan-copies.c), the
 * toolkits (scan-toolkits.c), the findings (scan-findings.c), then the
 * table or the JSON document (scan-print.c).
 */
#include "scan.h"
#include "scan-int.h"
#include "scan-win.h"
#include "cli-options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: cudnnspy scan [--json] [--for PROGRAM_OR_LIBRARY [--user NAME]] [--root DIR]... [--no-probe]\n"
	"       cudnnspy scan --windows [C:=]DIR... [--program EXE | --python PYTHON_EXE] [--path 'C:\\A;C:\\B']\n"
	"                     [--cwd DIR] [--dll-dir DIR]... [--json]\n"
	"\n"
	"Lists every cuDNN copy on this machine (loader cache, LD_LIBRARY_PATH, CUDA, system\n"
	"directories, conda, Python wheels, TensorRT), what each is made of, and the conflicts\n"
	"between them. Nothing is run, except a dispatcher whose file name has no version:\n"
	"a helper process loads it to ask cudnnGetVersion().\n"
	"With --windows: the cuDNN DLLs of Windows trees (a mounted disk, a copied conda\n"
	"environment, an unpacked archive), and which copy Windows would load.\n"
	"\n";

/* After the options, which come from the table (cli-options.def). */
static const char usage_tail[] =
	"\n"
	"Exit status: 0 when the scan ran (findings or not), 2 for a usage error.\n";

static int
usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cudnnspy: scan: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ncudnnspy: usage: cudnnspy scan [--json] [--for FILE [--user NAME]] [--root DIR]... (see cudnnspy scan --help)\n",
	    stderr);
	return EXIT_USAGE;
}

/* ---- the command ---- */

/* --windows: the trees' copies, the search when asked for, the findings, the output. */
static int
windows_main(struct scan_win *w)
{
	scan_win_gather(w);
	if (w->has_search)
		scan_win_search(w);
	scan_win_findings(w);
	if (w->json)
		scan_win_print_json(stdout, w);
	else
		scan_win_print_human(stdout, w);
	fflush(stdout);
	scan_win_free(w);
	return 0;
}

static int
option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	size_t len = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, len) != 0)
		return 0;
	if (a[len] == '=') {
		*value = a + len + 1;
		return 1;
	}
	if (a[len] != '\0')
		return 0;
	*value = *i + 1 < argc ? argv[++*i] : NULL;
	return 1;
}

static void
free_result(struct scan_result *r)
{
	for (size_t i = 0; i < r->ncopies; i++) {
		struct scan_copy *c = r->copies[i];

		for (size_t j = 0; j < c->nfiles; j++)
			scan_free_file(c->files[j]);
		for (size_t j = 0; j < c->nsubs; j++)
			free(c->subs[j].note);
		free(c->files);
		free(c->dir);
		free(c->version_error);
		free(c->farm_of);
		scan_strv_free(&c->also);
		scan_strv_free(&c->sources);
		free(c);
	}
	free(r->copies);
	for (size_t i = 0; i < r->ndirs; i++) {
		free(r->dirs[i].real);
		scan_strv_free(&r->dirs[i].also);
		scan_strv_free(&r->dirs[i].sources);
	}
	free(r->dirs);
	for (size_t i = 0; i < r->nfindings; i++) {
		free(r->findings[i].message);
		scan_strv_free(&r->findings[i].paths);
	}
	free(r->findings);
	for (size_t i = 0; i < r->nplain; i++)
		scan_resolution_free(&r->plain[i]);
	if (r->for_) {
		scan_for_free(r->for_);
		free(r->for_);
	}
	for (size_t i = 0; i < r->ntoolkits; i++) {
		free(r->toolkits[i].path);
		free(r->toolkits[i].real);
		free(r->toolkits[i].version_from);
	}
	scan_cache_free(&r->cache);
	scan_strv_free(&r->roots);
	scan_forget_probes();
}

/* Copies in a stable order: by directory, then major. */
static int
cmp_copy(const void *a, const void *b)
{
	const struct scan_copy *x = *(struct scan_copy *const *)a, *y = *(struct scan_copy *const *)b;
	int c = strcmp(x->dir, y->dir);

	return c ? c : x->major - y->major;
}

int
cudnnspy_scan_main(int argc, char **argv)
{
	struct scan_result r;
	const char *for_target = NULL;
	struct scan_strv seen = { 0 };
	size_t budget = SCAN_ROOT_BUDGET;
	int user_given = 0;
	struct scan_win w;
	int windows = 0, win_only = 0;
	int i;

	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	scan_no_probe = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = NULL;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			cli_print_options(stdout, "scan", 23);
			fputs(usage_tail, stdout);
			return 0;
		}
		if (strcmp(a, "--json") == 0) {
			r.json = 1;
			continue;
		}
		if (strcmp(a, "--no-probe") == 0) {
			scan_no_probe = 1;
			continue;
		}
		if (option_value(argc, argv, &i, "--root", &v)) {
			struct stat st;

			if (!v || !v[0]) {
				free_result(&r);
				return usage_error("--root needs a directory");
			}
			if (stat(v, &st) != 0) {
				usage_error("--root %s: %s", v, strerror(errno));
				free_result(&r);
				return EXIT_USAGE;
			}
			if (!S_ISDIR(st.st_mode)) {
				usage_error("--root %s: not a directory", v);
				free_result(&r);
				return EXIT_USAGE;
			}
			scan_strv_add(&r.roots, v);
			continue;
		}
		if (option_value(argc, argv, &i, "--windows", &v)) {
			char why[256];

			w.trees = scan_xrealloc(w.trees, (w.ntrees + 1) * sizeof(*w.trees));
			if (!v || scan_win_parse_tree(v, &w.trees[w.ntrees], why, sizeof(why)) != 0) {
				usage_error("--windows %s: %s", v ? v : "", v ? why : "needs a directory (or C:=DIR)");
				scan_win_free(&w);
				free_result(&r);
				return EXIT_USAGE;
			}
			w.ntrees++;
			windows = 1;
			continue;
		}
		if (option_value(argc, argv, &i, "--program", &v) || option_value(argc, argv, &i, "--python", &v)) {
			int py = strncmp(a, "--python", 8) == 0;

			if (!v || !v[0] || w.program) {
				usage_error(w.program ? "--program and --python name one program, given once" :
					    py ? "--python needs the python.exe (C:\\...\\python.exe)" :
						 "--program needs a program (C:\\...\\app.exe)");
				scan_win_free(&w);
				free_result(&r);
				return EXIT_USAGE;
			}
			w.program = v;
			w.python = py;
			w.has_search = win_only = 1;
			continue;
		}
		if (option_value(argc, argv, &i, "--path", &v) || option_value(argc, argv, &i, "--cwd", &v) ||
		    option_value(argc, argv, &i, "--dll-dir", &v)) {
			if (!v) {
				usage_error("%s needs a value", a);
				scan_win_free(&w);
				free_result(&r);
				return EXIT_USAGE;
			}
			if (strncmp(a, "--path", 6) == 0)
				w.path = v;
			else if (strncmp(a, "--cwd", 5) == 0)
				w.cwd = v;
			else
				scan_strv_add(&w.dll_dirs, v);
			w.has_search = win_only = 1;
			continue;
		}
		if (option_value(argc, argv, &i, "--user", &v)) {
			char why[128];

			if (!v || !v[0]) {
				free_result(&r);
				return usage_error("--user needs a user name");
			}
			if (scan_resolve_set_user(v, why, sizeof(why)) != 0) {
				usage_error("--user %s: %s", v, why);
				free_result(&r);
				return EXIT_USAGE;
			}
			user_given = 1;
			continue;
		}
		if (option_value(argc, argv, &i, "--for", &v)) {
			if (!v || !v[0]) {
				free_result(&r);
				return usage_error("--for needs a program or library");
			}
			for_target = v;
			continue;
		}
		if (windows && a[0] != '-') {
			/* More trees after --windows DIR: --windows DIR... */
			char why[256];

			w.trees = scan_xrealloc(w.trees, (w.ntrees + 1) * sizeof(*w.trees));
			if (scan_win_parse_tree(a, &w.trees[w.ntrees], why, sizeof(why)) != 0) {
				usage_error("--windows %s: %s", a, why);
				scan_win_free(&w);
				free_result(&r);
				return EXIT_USAGE;
			}
			w.ntrees++;
			continue;
		}
		scan_win_free(&w);
		free_result(&r);
		if (a[0] == '-')
			return usage_error("unknown option '%s'", a);
		return usage_error("unexpected argument '%s'", a);
	}
	if (win_only && !windows) {
		scan_win_free(&w);
		free_result(&r);
		return usage_error("--program, --python, --path, --cwd and --dll-dir need --windows DIR");
	}
	if (w.dll_dirs.n && !w.python) {
		scan_win_free(&w);
		free_result(&r);
		return usage_error("--dll-dir needs --python: only Python's os.add_dll_directory is modelled");
	}
	if (windows && (for_target || user_given || r.roots.n)) {
		scan_win_free(&w);
		free_result(&r);
		return usage_error("--windows scans Windows trees: --root, --for and --user are for this machine's loader");
	}
	if (windows) {
		w.json = r.json;
		free_result(&r);
		return windows_main(&w);
	}
	if (user_given && !for_target) {
		free_result(&r);
		return usage_error("--user needs --for: it says who runs that program");
	}
	r.machine = r.roots.n == 0;
	scan_cache_load(&r.cache, NULL);
	if (r.machine) {
		scan_gather_machine(&r);
	} else {
		for (size_t k = 0; k < r.roots.n; k++)
			scan_walk_root(&r, r.roots.v[k], 0, &budget, "root");
	}
	if (for_target) {
		r.for_ = scan_xmalloc(sizeof(*r.for_));
		if (scan_for_resolve(r.for_, for_target, &r.cache) != 0) {
			usage_error("--for %s: not a program or library: %s", for_target, r.for_->elf.why);
			free_result(&r);
			return EXIT_USAGE;
		}
	}
	for (size_t k = 0; k < r.ndirs; k++)
		scan_read_dir(&r, &r.dirs[k]);
	scan_find_farms(&r);
	scan_add_toolkit(&r, "/usr/local/cuda", "/usr/local/cuda");
	scan_add_toolkit(&r, "CUDA_HOME", getenv("CUDA_HOME"));
	scan_add_toolkit(&r, "CUDA_PATH", getenv("CUDA_PATH"));
	if (r.ncopies)
		qsort(r.copies, r.ncopies, sizeof(*r.copies), cmp_copy);
	for (size_t k = 0; k < r.ncopies; k++) {
		r.copies[k]->id = (int)k + 1;
		scan_analyze_copy(r.copies[k]);
	}
	scan_farm_ids(&r);
	scan_toolkit_copies(&r);
	for (size_t k = 0; k < r.ncopies; k++) {
		scan_file_findings(&r, r.copies[k], &seen);
		scan_copy_findings(&r, r.copies[k]);
	}
	scan_global_findings(&r);
	scan_toolkit_findings(&r);
	if (r.machine)
		scan_search_path_findings(&r);
	if (r.for_) {
		for (size_t k = 0; k < r.for_->nres; k++) {
			struct scan_resolution *res = r.for_->res[k];
			int major = scan_dispatcher_major(res->name);
			char *context = scan_xasprintf("for %s", r.for_->abs);

			scan_describe(&r, res, major);
			if (major)
				scan_resolve_subs(&r, res, major, context);
			free(context);
		}
	}
	if (r.for_)
		scan_for_findings(&r);
	if (r.json)
		scan_print_json(stdout, &r);
	else
		scan_print_human(stdout, &r);
	fflush(stdout);
	scan_strv_free(&seen);
	free_result(&r);
	return 0;
}
