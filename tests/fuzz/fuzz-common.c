/*
 * The pieces every fuzz target links: the library identity the core
 * expects, a quiet spy_log, and (with -DFUZZ_REPLAY_MAIN) the replay main
 * that runs the target once over each file of a corpus.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"

/* The core expects each library to say what it is; the targets act as a 9.x spy. */
const struct spy_flavor spy_flavor = { "fuzz", 9 };

/*
 * Replaces log.c's spy_log (the archive member is then never linked): the
 * message is still formatted, so that a bad argument is still read, but a
 * fuzzer running millions of inputs does not fill stderr, where the
 * sanitizers and libFuzzer say what they found.
 */
void
spy_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "cudnnspy: %s\n", buf);
}

char *
fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = 0;
	return s;
}

void
fuzz_failed(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: fuzz assertion failed: %s\n", file, line, what);
	abort();
}

#ifdef FUZZ_REPLAY_MAIN

static int
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (size == cap) {
			cap = cap ? cap * 2 : 4096;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + size, 1, cap - size, f);
		if (n == 0)
			break;
		size += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	/* A copy of exactly the file's size: a read past the end is seen. */
	{
		uint8_t *exact = malloc(size ? size : 1);

		if (!exact)
			abort();
		if (size)
			memcpy(exact, data, size);
		free(data);
		LLVMFuzzerTestOneInput(exact, size);
		free(exact);
	}
	return 0;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in the directory, in name order; the count run, or -1. */
static int
replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int count = 0;

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!names[n])
			abort();
		sprintf(names[n], "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (replay_file(names[i]) != 0)
				count = -1;
			else if (count >= 0)
				count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

/*
 * usage: fuzz-NAME-replay FILE_OR_DIR...
 * Runs the target once over each file; exit 0 when every input ran (a
 * crash or a sanitizer report ends the process first), 1 when a path
 * could not be read or held no input at all.
 */
int
main(int argc, char **argv)
{
	int total = 0, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			bad = 1;
			continue;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : (replay_file(argv[i]) == 0 ? 1 : -1);
		if (n <= 0)
			bad = 1;
		else
			total += n;
	}
	printf("%d inputs replayed\n", total);
	return bad ? 1 : 0;
}

#endif
