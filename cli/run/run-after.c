/*
 * `cudnnspy run`, after the program: the analysis of what its processes
 * recorded, as heaptrack's launcher runs its own. Each process said its own
 * summary at exit; what only the records of all of them taken together show
 * is said here once for the job (report-brief.c): copies that differ between
 * processes, the job's findings and failures once, and the processes that
 * ended without a summary (killed, or replaced by exec) and so said nothing.
 */
#include "run-after.h"
#include "cli-util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef CUDNNSPY_HAVE_REPORT
#include "report.h"
#endif

/* Records past this are left to `cudnnspy report`: the user is not kept waiting after the program. */
#define AFTER_MAX_BYTES (1ull << 30)

/* Whether CUDNNSPY_STDERR lets the spy say its summary (unset: the default says it). */
static int
summary_wanted(void)
{
	const char *v = getenv("CUDNNSPY_STDERR");

	if (!v || !v[0])
		return 1;
	while (*v) {
		size_t len = strcspn(v, ", ");

		if ((len == 7 && strncmp(v, "summary", 7) == 0) || (len == 3 && strncmp(v, "all", 3) == 0))
			return 1;
		v += len;
		v += strspn(v, ", ");
	}
	return 0;
}

/* The directory the files to read share, or the first of them when they share none; NULL when none is read. */
static char *
where_of(const struct cli_run_files *f, const int *regular)
{
	const char *first = NULL, *slash;
	size_t dir, n = 0;

	for (size_t i = 0; i < f->n && !first; i++)
		if (regular[i])
			first = f->paths[i];
	if (!first)
		return NULL;
	slash = strrchr(first, '/');
	dir = slash ? (size_t)(slash - first) : 0;
	for (size_t i = 0; i < f->n; i++) {
		if (!regular[i])
			continue;
		n++;
		if (strncmp(f->paths[i], first, dir) != 0 || !f->paths[i][dir] || strchr(f->paths[i] + dir + 1, '/'))
			return strdup(first);
	}
	return n == 1 ? strdup(first) : strndup(first, dir ? dir : 1);
}

int
cli_run_after(const struct cli_run_files *files)
{
#ifdef CUDNNSPY_HAVE_REPORT
	unsigned long long bytes = 0;
	struct report *r;
	char *where;
	int said, *regular;

	if (!files->n || !summary_wanted() || !(regular = calloc(files->n, sizeof(*regular))))
		return 0;
	for (size_t i = 0; i < files->n; i++) {
		struct stat st;

		/* The spy writes regular files only: a marker naming anything else (a FIFO, a device) is not read. */
		if (stat(files->paths[i], &st) == 0 && S_ISREG(st.st_mode)) {
			regular[i] = 1;
			bytes += (unsigned long long)st.st_size;
		}
	}
	said = 0;
	if (!(where = where_of(files, regular)))
		goto out;
	if (bytes > AFTER_MAX_BYTES) {
		complain("records of %zu process%s (%.1f GiB): cudnnspy report %s", files->n, files->n == 1 ? "" : "es",
			 (double)bytes / (1 << 30), where);
		said = 1;
		goto out;
	}
	if (!(r = report_new()))
		goto out;
	/* The program's own stderr is what the user reads: a file's troubles wait for `cudnnspy report`. */
	report_set_warnings(r, NULL);
	for (size_t i = 0; i < files->n; i++)
		if (regular[i])
			report_read_path(r, files->paths[i]);
	said = report_write_brief(r, stderr, where, 1);
	report_free(r);
out:
	free(where);
	free(regular);
	return said;
#else
	(void)files;
	return 0;
#endif
}
