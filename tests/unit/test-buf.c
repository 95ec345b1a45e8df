/* The record formatters: numbers, escaping, long records. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "unit.h"

static struct spy_line line;

static const char *
text(void)
{
	line.data[line.len] = 0;
	return line.data;
}

static const struct {
	uint64_t v;
	const char *s;
} unsigned_cases[] = {
	{ 0, "0" }, { 9, "9" }, { 10, "10" }, { 99, "99" }, { 100, "100" }, { 101, "101" },
	{ 1000000007, "1000000007" }, { 1796061722164442819ull, "1796061722164442819" },
	{ UINT64_MAX, "18446744073709551615" },
};

START_TEST(test_u64)
{
	spy_line_reset(&line);
	spy_line_u64(&line, unsigned_cases[_i].v);
	ck_assert_str_eq(text(), unsigned_cases[_i].s);
}
END_TEST

START_TEST(test_i64_extremes)
{
	spy_line_reset(&line);
	spy_line_i64(&line, INT64_MIN);
	ck_assert_str_eq(text(), "-9223372036854775808");
	spy_line_reset(&line);
	spy_line_i64(&line, -1);
	ck_assert_str_eq(text(), "-1");
	spy_line_reset(&line);
	spy_line_i64(&line, INT64_MAX);
	ck_assert_str_eq(text(), "9223372036854775807");
}
END_TEST

START_TEST(test_hex)
{
	spy_line_reset(&line);
	spy_line_hex(&line, 0);
	spy_line_char(&line, ' ');
	spy_line_xdigits(&line, 0xdeadbeefull);
	ck_assert_str_eq(text(), "\"0x0\" 0xdeadbeef");
}
END_TEST

START_TEST(test_str_escapes)
{
	spy_line_reset(&line);
	spy_line_str(&line, "plain \"q\" back\\slash\nnew\ttab \x01\x7f\xc3\xa9");
	ck_assert_str_eq(text(), "\"plain \\\"q\\\" back\\\\slash\\u000anew\\u0009tab \\u0001\\u007f\\u00c3\\u00a9\"");
	spy_line_reset(&line);
	spy_line_str(&line, NULL);
	spy_line_char(&line, ',');
	spy_line_name(&line, NULL);
	spy_line_char(&line, ',');
	spy_line_name(&line, "cudnnCreate");
	ck_assert_str_eq(text(), "null,null,\"cudnnCreate\"");
}
END_TEST

START_TEST(test_doubles)
{
	spy_line_reset(&line);
	spy_line_double(&line, 0.75);
	spy_line_char(&line, ',');
	spy_line_double(&line, 0.0 / 0.0);
	spy_line_char(&line, ',');
	spy_line_double(&line, -1.0 / 0.0);
	ck_assert_str_eq(text(), "0.75,\"nan\",\"-inf\"");
}
END_TEST

/* A record longer than the line's first block is built whole on the heap, never cut or dropped. */
START_TEST(test_long_record_whole)
{
	size_t n = SPY_LINE_SIZE * 5;
	char *big = malloc(n);

	ck_assert_ptr_nonnull(big);
	memset(big, 'a', n - 1);
	big[n - 1] = 0;
	spy_line_reset(&line);
	spy_line_lit(&line, "{");
	for (int i = 0; i < 3; i++)
		spy_line_str(&line, big);
	spy_line_char(&line, '}');
	ck_assert_int_eq(line.overflow, 0);
	ck_assert_uint_eq(line.len, 3 * (n + 1) + 2);
	ck_assert(line.data != line.first);
	ck_assert_int_eq(line.data[0], '{');
	ck_assert_int_eq(line.data[1], '"');
	ck_assert_int_eq(line.data[n + 1], '"');
	ck_assert_int_eq(line.data[line.len - 1], '}');
	/* The grown block is kept for the next long record; reset starts over in it. */
	spy_line_reset(&line);
	ck_assert_uint_eq(line.len, 0);
	spy_line_lit(&line, "x");
	ck_assert_str_eq(text(), "x");
	spy_line_free(&line);
	ck_assert(line.data == line.first);
	spy_line_reset(&line);
	spy_line_lit(&line, "y");
	ck_assert_str_eq(text(), "y");
	free(big);
}
END_TEST

/* A line that may not allocate (the crash handler's) goes out in pieces that add up to the whole record. */
START_TEST(test_spill_pieces)
{
	static struct spy_line small;
	size_t n = SPY_LINE_SIZE * 3, got = 0;
	char *big = malloc(n), *back = malloc(n + 16);
	FILE *f = tmpfile();
	size_t r;

	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(back);
	ck_assert_ptr_nonnull(f);
	memset(big, 'b', n - 1);
	big[n - 1] = 0;
	spy_line_reset(&small);
	small.spill_fd = fileno(f) + 1;
	spy_line_lit(&small, "[");
	spy_line_str(&small, big);
	spy_line_lit(&small, "]\n");
	spy_line_spill(&small);
	ck_assert_int_eq(small.overflow, 0);
	ck_assert(small.data == small.first);
	rewind(f);
	while ((r = fread(back + got, 1, n + 16 - got, f)) > 0)
		got += r;
	ck_assert_uint_eq(got, n + 4);
	ck_assert_int_eq(back[0], '[');
	ck_assert_int_eq(back[1], '"');
	ck_assert_int_eq(back[2], 'b');
	ck_assert_int_eq(back[n], 'b');
	ck_assert_int_eq(back[n + 1], '"');
	ck_assert_int_eq(back[n + 2], ']');
	ck_assert_int_eq(back[n + 3], '\n');
	fclose(f);
	free(back);
	free(big);
}
END_TEST

UNIT_SUITE(buf)
{
	Suite *s = suite_create("buf");
	TCase *tc = unit_tcase(s, "format");

	tcase_add_loop_test(tc, test_u64, 0, UNIT_COUNT(unsigned_cases));
	tcase_add_test(tc, test_i64_extremes);
	tcase_add_test(tc, test_hex);
	tcase_add_test(tc, test_str_escapes);
	tcase_add_test(tc, test_doubles);
	tcase_add_test(tc, test_long_record_whole);
	tcase_add_test(tc, test_spill_pieces);
	return s;
}
