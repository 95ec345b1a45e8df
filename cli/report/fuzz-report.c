/*
 * Fuzz target for the record reader of `cudnnspy report`: the bytes are one
 * process's record file. Each input is read twice, the default way (plain
 * call lines only counted, then a second pass when there is no summary) and
 * with every line parsed and streamed as a Chrome trace, and the report is
 * then written as text and JSON, so that the whole path from bytes to
 * output runs. Everything goes to /dev/null.
 *
 * Built two ways from this one file:
 *   clang -fsanitize=fuzzer: libFuzzer's main drives LLVMFuzzerTestOneInput
 *     (tests/report/meson.build, when clang is there);
 *   gcc -DFUZZ_REPORT_REPLAY_MAIN: fuzz-report-replay FILE_OR_DIR... runs
 *     the entry point once over each file, for the seed corpus in the tests.
 */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *
null_out(void)
{
	static FILE *out;

	/* Opened once: a fuzzer runs millions of inputs in one process. */
	if (!out)
		out = fopen("/dev/null", "w");
	return out;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *out = null_out();
	struct report *r;
	long long base = 0;

	if (!out)
		return 0;
	r = report_new();
	if (!r)
		return 0;
	report_set_warnings(r, out);
	report_read_buffer(r, "fuzz.jsonl", data, size);
	report_write_text(r, out, 0);
	report_write_json(r, out);
	report_free(r);

	r = report_new();
	if (!r)
		return 0;
	report_set_warnings(r, out);
	report_chrome_begin(r, out, report_header_start(data, size, &base), base);
	report_read_buffer(r, "fuzz.jsonl", data, size);
	report_chrome_end(r);
	report_write_text(r, out, 3);
	report_free(r);
	return 0;
}

#ifdef FUZZ_REPORT_REPLAY_MAIN

static int
replay_file(const char *path)
{
	struct stat st;
	uint8_t *data;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "fuzz-report-replay: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* An exact-size copy, so that ASan catches a read past the end. */
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data) {
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	LLVMFuzzerTestOneInput(data, got);
	free(data);
	return 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file in DIR, in name order; the number replayed, -1 on an error. */
static int
replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int count = 0;

	if (!d) {
		fprintf(stderr, "fuzz-report-replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **bigger;

			cap = cap ? cap * 2 : 64;
			bigger = realloc(names, cap * sizeof(*names));
			if (!bigger)
				break;
			names = bigger;
		}
		names[n] = strdup(e->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		char *path = NULL;
		struct stat st;

		if (asprintf(&path, "%s/%s", dir, names[i]) >= 0 && stat(path, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			if (replay_file(path) == 0) {
				printf("ok %s\n", path);
				count++;
			} else {
				count = -1;
			}
		}
		free(path);
		free(names[i]);
		if (count < 0)
			break;
	}
	free(names);
	return count;
}

int
main(int argc, char **argv)
{
	int total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz-report-replay FILE_OR_DIR...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			n = replay_dir(argv[i]);
		} else {
			n = replay_file(argv[i]) == 0 ? 1 : -1;
			if (n > 0)
				printf("ok %s\n", argv[i]);
		}
		if (n < 0)
			return 1;
		total += n;
	}
	printf("replayed %d inputs\n", total);
	if (null_out())
		fclose(null_out());
	return 0;
}

#endif
