/* The record formatters: numbers, escaping, overflow. */
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

/* A record that does not fit is marked, never cut into invalid JSON that looks whole. */
START_TEST(test_overflow_marks)
{
	char *big = malloc(SPY_LINE_SIZE * 2);

	ck_assert_ptr_nonnull(big);
	memset(big, 'a', SPY_LINE_SIZE * 2 - 1);
	big[SPY_LINE_SIZE * 2 - 1] = 0;
	spy_line_reset(&line);
	spy_line_lit(&line, "{");
	ck_assert_int_eq(line.overflow, 0);
	spy_line_str(&line, big);
	ck_assert_int_eq(line.overflow, 1);
	ck_assert_uint_lt(line.len, SPY_LINE_SIZE);
	spy_line_reset(&line);
	ck_assert_int_eq(line.overflow, 0);
	ck_assert_uint_eq(line.len, 0);
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
	tcase_add_test(tc, test_overflow_marks);
	return s;
}
