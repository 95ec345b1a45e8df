/* spy_log(): one prefixed line on fd 2, one write(2), errno untouched. */
#include "unit.h"

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "core.h"

#define LINE_MAX_BYTES 1023	/* spy_log's buffer less its terminator */

START_TEST(test_log_line)
{
	size_t len;
	const char *out;

	unit_capture_start();
	spy_log("hello %d %s %zu %lld", 42, "world", (size_t)7, -1LL);
	out = unit_capture_stop(&len);
	ck_assert_str_eq(out, "cudnnspy: hello 42 world 7 -1\n");
	ck_assert_uint_eq(len, strlen("cudnnspy: hello 42 world 7 -1\n"));
}
END_TEST

START_TEST(test_log_empty_message)
{
	size_t len;
	const char *out;

	unit_capture_start();
	spy_log("%s", "");
	out = unit_capture_stop(&len);
	ck_assert_str_eq(out, "cudnnspy: \n");
}
END_TEST

START_TEST(test_log_lines_accumulate)
{
	const char *out;

	unit_capture_start();
	spy_log("one");
	spy_log("two");
	spy_log("three");
	out = unit_capture_stop(NULL);
	ck_assert_str_eq(out, "cudnnspy: one\ncudnnspy: two\ncudnnspy: three\n");
}
END_TEST

static const int errnos[] = { 0, EXDEV, ENOENT, EINTR, EAGAIN, 4095 };

START_TEST(test_log_keeps_errno)
{
	int got;

	unit_capture_start();
	errno = errnos[_i];
	spy_log("errno test %d", _i);
	got = errno;
	unit_capture_stop(NULL);
	ck_assert_int_eq(got, errnos[_i]);
}
END_TEST

/* write(2) fails with EBADF here: the caller's errno must still survive. */
START_TEST(test_log_keeps_errno_when_write_fails)
{
	int saved = dup(STDERR_FILENO);
	int got;

	ck_assert_int_ge(saved, 0);
	close(STDERR_FILENO);
	errno = ENOTTY;
	spy_log("nobody hears this");
	got = errno;
	/* Back before asserting: a failure must not leave fd 2 closed. */
	dup2(saved, STDERR_FILENO);
	close(saved);
	ck_assert_int_eq(got, ENOTTY);
}
END_TEST

static void
assert_truncated_line(const char *out, size_t len, char fill)
{
	ck_assert_uint_eq(len, LINE_MAX_BYTES);
	ck_assert_int_eq(strncmp(out, "cudnnspy: ", 10), 0);
	ck_assert_int_eq(out[len - 1], '\n');
	ck_assert_ptr_eq(strchr(out, '\n'), out + len - 1);
	for (size_t i = 10; i < len - 1; i++)
		ck_assert_msg(out[i] == fill, "byte %zu is %#x", i, (unsigned char)out[i]);
}

static char *
filled(size_t n, char fill)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, fill, n);
	s[n] = 0;
	return s;
}

static const size_t long_sizes[] = { 1013, 1014, 2000, 10000, 100000 };

/* Too long a message is cut, but still ends its line: the next one starts clean. */
START_TEST(test_log_truncates_long)
{
	char *msg = filled(long_sizes[_i], 'z');
	size_t len;
	const char *out;

	unit_capture_start();
	spy_log("%s", msg);
	out = unit_capture_stop(&len);
	assert_truncated_line(out, len, 'z');
	free(msg);
}
END_TEST

/* The longest message that fits whole: 1023 bytes less prefix and newline. */
START_TEST(test_log_exact_fit)
{
	size_t fit = LINE_MAX_BYTES - 10 - 1;
	char *msg = filled(fit, 'q');
	size_t len;
	const char *out;

	unit_capture_start();
	spy_log("%s", msg);
	out = unit_capture_stop(&len);
	assert_truncated_line(out, len, 'q');
	ck_assert_int_eq(memcmp(out + 10, msg, fit), 0);
	free(msg);

	msg = filled(fit - 1, 'r');
	unit_capture_start();
	spy_log("%s", msg);
	out = unit_capture_stop(&len);
	ck_assert_uint_eq(len, LINE_MAX_BYTES - 1);
	ck_assert_int_eq(out[len - 1], '\n');
	free(msg);
}
END_TEST

/* The spy shares stdout with the program: it must never write there. */
START_TEST(test_log_not_on_stdout)
{
	FILE *f = tmpfile();
	int saved;
	long size;

	ck_assert_ptr_nonnull(f);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(saved, 0);
	dup2(fileno(f), STDOUT_FILENO);
	unit_capture_start();
	spy_log("to stderr only");
	unit_capture_stop(NULL);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	size = lseek(fileno(f), 0, SEEK_END);
	fclose(f);
	ck_assert_int_eq(size, 0);
}
END_TEST

/* A conversion that fails (a wide character C locale cannot encode) still gives one line. */
START_TEST(test_log_encoding_error)
{
	static const wchar_t wide[] = { 0x263a, 0 };
	size_t len;
	const char *out;
	int got;

	unit_capture_start();
	errno = EXDEV;
	spy_log("%ls", wide);
	got = errno;
	out = unit_capture_stop(&len);
	ck_assert_int_eq(got, EXDEV);
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_le(len, LINE_MAX_BYTES);
	ck_assert_int_eq(strncmp(out, "cudnnspy:", 9), 0);
	ck_assert_int_eq(out[len - 1], '\n');
	ck_assert_ptr_eq(strchr(out, '\n'), out + len - 1);
}
END_TEST

START_TEST(test_log_once)
{
	static int flag_a, flag_b;
	const char *out;

	flag_a = flag_b = 0;
	unit_capture_start();
	for (int i = 0; i < 5; i++)
		spy_log_once(&flag_a, "first %d", i);
	spy_log_once(&flag_b, "second");
	spy_log_once(&flag_b, "second again");
	out = unit_capture_stop(NULL);
	ck_assert_str_eq(out, "cudnnspy: first 0\ncudnnspy: second\n");
	ck_assert_int_eq(flag_a, 1);
	ck_assert_int_eq(flag_b, 1);
}
END_TEST

#define THREADS 8
#define LINES 100
#define PAD "xxxxxxxxxxxxxxxx"

static void *
log_many(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int i = 0; i < LINES; i++)
		spy_log("thread %d line %d " PAD, t, i);
	return NULL;
}

/* One write(2) per line: lines from several threads never interleave. */
START_TEST(test_log_threads_whole_lines)
{
	pthread_t th[THREADS];
	int seen[THREADS] = { 0 };
	size_t len;
	const char *out, *p;
	int lines = 0;

	unit_capture_start();
	for (int t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, log_many, (void *)(intptr_t)t), 0);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	out = unit_capture_stop(&len);
	ck_assert_uint_lt(len, 64 * 1024 - 1);
	for (p = out; *p; lines++) {
		const char *nl = strchr(p, '\n');
		int t, i, used = 0;

		ck_assert_ptr_nonnull(nl);
		ck_assert_msg(sscanf(p, "cudnnspy: thread %d line %d " PAD "%n",
			&t, &i, &used) == 2 && p + used == nl, "mangled line: %.*s", (int)(nl - p), p);
		ck_assert_int_ge(t, 0);
		ck_assert_int_lt(t, THREADS);
		ck_assert_int_eq(i, seen[t]);
		seen[t]++;
		p = nl + 1;
	}
	ck_assert_int_eq(lines, THREADS * LINES);
}
END_TEST

/* A configuration parsed by another suite may have left CUDNNSPY_STDERR=none behind. */
static void
loud(void)
{
	spy_quiet = 0;
}

UNIT_SUITE(log)
{
	Suite *s = suite_create("log");
	TCase *tc;

	tc = unit_tcase(s, "format");
	tcase_add_checked_fixture(tc, loud, NULL);
	tcase_add_test(tc, test_log_line);
	tcase_add_test(tc, test_log_empty_message);
	tcase_add_test(tc, test_log_lines_accumulate);
	tcase_add_loop_test(tc, test_log_truncates_long, 0, UNIT_COUNT(long_sizes));
	tcase_add_test(tc, test_log_exact_fit);
	tcase_add_test(tc, test_log_encoding_error);
	tcase_add_test(tc, test_log_once);

	tc = unit_tcase(s, "side-effects");
	tcase_add_checked_fixture(tc, loud, NULL);
	tcase_add_loop_test(tc, test_log_keeps_errno, 0, UNIT_COUNT(errnos));
	tcase_add_test(tc, test_log_keeps_errno_when_write_fails);
	tcase_add_test(tc, test_log_not_on_stdout);
	tcase_add_test(tc, test_log_threads_whole_lines);
	return s;
}
