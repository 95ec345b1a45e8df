/*
 * `cudnnspy dump FILE|DIR...`: record files as JSON Lines on stdout, the
 * records of either format (docs/record-format.md) in the documented
 * schema (docs/output-format.md), for jq and for anything that reads
 * format 1. What is not a record is said on stderr, telling the tail an
 * ending cut short from damage. Files come from strangers (bug reports):
 * both formats go through the reader, which gives only lines that are JSON
 * and refuses a file that begins as neither format, so that no byte of the
 * file reaches the output unchecked.
 */
#include "dump.h"
#include "cli-options.h"
#include "cli-progress.h"
#include "cli-util.h"
#include "records.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help_text[] =
	"usage: cudnnspy dump [--quiet] FILE_OR_DIR...\n"
	"\n"
	"Prints the records of the files (a directory: its *.cudnnspy.rec and *.jsonl files, in name order;\n"
	"-: standard input, a pipe as well as a file) as\n"
	"JSON Lines on stdout, one record a line, in the schema of docs/output-format.md, whichever format the\n"
	"spy wrote them in (CUDNNSPY_FORMAT=json or binary). Pipe it to jq.\n"
	"\n";

/* After the options, which come from the table (cli-options.def). */
static const char help_tail[] =
	"\n"
	"On stderr, per file: a last record cut short (the process ended while writing it: not printed), bytes\n"
	"that are no record (damage, lines that are not JSON included: not printed, their place named, and\n"
	"reading goes on), records written by a cudnnspy whose function table differs from this one's (not\n"
	"printed), and a file that begins as neither format or is cut inside its first frame (refused whole).\n"
	"\n"
	"Exit status: 0 when every file was read (a cut last record included), 1 when one could not be read,\n"
	"was refused, was damaged or held records this cudnnspy cannot read, 2 for a usage error.\n";

/* What is to be dumped, in order: files, and the directories that gave none, said in their turn. */
struct item {
	char *path;
	int no_files;		/* a directory without record files; errno when it could not be read */
	int err;
	long long size;		/* -1: no size to count by (a pipe) */
};

struct items {
	struct item *v;
	size_t n, cap;
};

static void
items_add(struct items *l, const char *path, int no_files, int err)
{
	struct stat st;
	struct item *it;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct item *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			complain("dump: out of memory");
			exit(1);
		}
		l->v = v;
		l->cap = cap;
	}
	it = &l->v[l->n++];
	it->path = strdup(path);
	if (!it->path) {
		complain("dump: out of memory");
		exit(1);
	}
	it->no_files = no_files;
	it->err = err;
	it->size = !no_files && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}

static int
dump_file(const char *path, struct cli_progress *p)
{
	struct rec_reader r;
	const char *line, *why;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), flags, rc = 0;
	unsigned n = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0) {
		complain("dump: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		complain("dump: %s: %s", path, strerror(EISDIR));
		return 1;
	}
	/*
	 * Format 1 as well: its lines come out byte for byte, and only when they
	 * are JSON. The reader reads a pipe or a FIFO as it comes.
	 */
	rec_open_fd(&r, fd);
	while (rec_next(&r, &line, &len, &flags)) {
		/* Every 256 records; the clock only every 256 KiB (cli-progress.h). */
		if ((++n & 255) == 0)
			cli_progress_at(p, r.offset + r.end);
		if (flags)
			continue;
		fwrite(line, 1, len, stdout);
		putchar('\n');
	}
	if (r.error) {
		complain("dump: %s: read error at byte %llu: %s", path, r.offset + r.start, strerror(r.error));
		rc = 1;
	}
	if ((why = rec_refused_why(&r))) {
		complain("dump: %s: %s; nothing printed", path, why);
		rc = 1;
	}
	if (r.cut)
		complain("dump: %s: the last record is cut short (%llu bytes at byte %llu): the process ended while "
			 "writing it; not printed", path, r.cut_bytes, r.cut_at);
	if (r.damaged) {
		complain("dump: %s: damaged: %llu bytes in %lld places are no record, the first at byte %llu; "
			 "reading went on after each", path, r.damage_bytes, r.damaged, r.damage_at);
		rc = 1;
	}
	if (r.mismatch && r.unreadable_calls) {
		complain("dump: %s: %lld packed calls were written by a cudnnspy with another function table "
			 "(record format %u), the first at byte %llu: read them with that cudnnspy; not printed", path,
			 r.unreadable_calls, r.version, r.unreadable_at);
		rc = 1;
	} else if (r.unreadable_calls) {
		complain("dump: %s: %lld packed calls cannot be read (damaged), the first at byte %llu; not printed", path,
			 r.unreadable_calls, r.unreadable_at);
		rc = 1;
	}
	if (r.missing_texts)
		complain("dump: %s: %lld arguments have no text (it was in a damaged part or refused, or in a buffer "
			 "the spy could not write), the first in the call at byte %llu: shown by their text id", path,
			 r.missing_texts, r.missing_at);
	cli_progress_at(p, r.offset + r.end);
	rec_close(&r);
	close(fd);
	return rc;
}

/* A directory's record files, in name order, as items. */
static void
list_dir(struct items *l, const char *path)
{
	size_t n;
	char **names;

	errno = 0;
	names = rec_dir_files(path, SIZE_MAX, &n);
	if (n == 0)
		items_add(l, path, 1, errno);
	for (size_t i = 0; i < n; i++) {
		items_add(l, names[i], 0, 0);
		free(names[i]);
	}
	free(names);
}

static int
dump_item(const struct item *it, struct cli_progress *p)
{
	if (!it->no_files)
		return dump_file(it->path, p);
	if (it->err)
		complain("dump: %s: %s", it->path, strerror(it->err));
	else
		complain("dump: %s: no record files (*.cudnnspy.rec, *.jsonl) in it", it->path);
	return 1;
}

int
cudnnspy_dump_main(int argc, char **argv)
{
	static char out_buf[1 << 20];
	struct items l = { NULL, 0, 0 };
	struct cli_progress progress;
	int rc = 0, quiet = 0;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(help_text, stdout);
			cli_print_options(stdout, "dump", 14);
			fputs(help_tail, stdout);
			return 0;
		}
		if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
			quiet = 1;
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			complain("dump: unknown option '%s' (see cudnnspy dump --help)", argv[i]);
			return 2;
		}
	}
	/* Listed first, so that the progress line knows how much there is. */
	for (int i = 0; i < argc; i++) {
		struct stat st;

		if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
			continue;
		if (strcmp(argv[i], "-") == 0)
			items_add(&l, "/dev/stdin", 0, 0);
		else if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			list_dir(&l, argv[i]);
		else
			items_add(&l, argv[i], 0, 0);
	}
	if (!l.n) {
		complain("dump: no file given (see cudnnspy dump --help)");
		return 2;
	}
	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	/* Records on a terminal scroll past as they come: a progress line among them would only garble them. */
	cli_progress_begin(&progress, "dump", !quiet && !isatty(STDOUT_FILENO));
	for (size_t i = 0; i < l.n; i++)
		if (!l.v[i].no_files)
			cli_progress_add(&progress, l.v[i].size >= 0 ? (unsigned long long)l.v[i].size : 0,
					 l.v[i].size >= 0);
	for (size_t i = 0; i < l.n; i++) {
		rc |= dump_item(&l.v[i], &progress);
		if (!l.v[i].no_files)
			cli_progress_file_done(&progress, l.v[i].size >= 0 ? (unsigned long long)l.v[i].size : 0);
		free(l.v[i].path);
	}
	free(l.v);
	cli_progress_end(&progress);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		complain("dump: cannot write the output: %s", strerror(errno));
		return 1;
	}
	return rc;
}
