/* common/layout.c: a tensor layout's name from dimensions and strides (the spy's signatures and repro's). */
#include "unit.h"

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "layout.h"

static const struct {
	int nd;
	int64_t dims[8], strides[8];
	const char *want;	/* NULL: no packed layout */
} cases[] = {
	{ 4, { 8, 16, 32, 32 }, { 16384, 1024, 32, 1 }, "NCHW" },
	{ 4, { 8, 16, 32, 32 }, { 16384, 1, 512, 16 }, "NHWC" },
	{ 5, { 2, 4, 3, 5, 7 }, { 420, 105, 35, 7, 1 }, "NCDHW" },
	{ 5, { 2, 4, 3, 5, 7 }, { 420, 1, 140, 28, 4 }, "NDHWC" },
	{ 3, { 2, 4, 7 }, { 28, 7, 1 }, "NCW" },
	{ 3, { 2, 4, 7 }, { 28, 1, 4 }, "NWC" },
	{ 2, { 8, 16 }, { 16, 1 }, "NC" },
	/* A dimension of 1 may have any stride: both readings fit, channels first is named. */
	{ 4, { 1, 1, 1, 1 }, { 99, 7, 3, 1000 }, "NCHW" },
	{ 4, { 8, 1, 32, 32 }, { 1024, 1, 32, 1 }, "NCHW" },
	/* One channel: channels last is channels first. */
	{ 4, { 8, 16, 32, 32 }, { 16384, 1024, 32, 2 }, NULL },
	{ 4, { 8, 16, 32, 32 }, { 32768, 1024, 32, 1 }, NULL },
	/* Past the names: 6 and 8 dimensions. */
	{ 6, { 2, 2, 2, 2, 2, 2 }, { 32, 16, 8, 4, 2, 1 }, "packed" },
	{ 8, { 2, 2, 2, 2, 2, 2, 2, 2 }, { 128, 1, 64, 32, 16, 8, 4, 2 }, "channels-last" },
	/* Nothing to name. */
	{ 0, { 0 }, { 0 }, NULL },
	{ 1, { 5 }, { 1 }, "packed" },
};

START_TEST(test_layout_of)
{
	const char *got = spy_layout_of(cases[_i].nd, cases[_i].dims, cases[_i].strides);

	if (!cases[_i].want)
		ck_assert_msg(got == NULL, "case %d: %s, expected none", _i, got);
	else
		ck_assert_msg(got && strcmp(got, cases[_i].want) == 0, "case %d: %s, expected %s", _i,
			got ? got : "none", cases[_i].want);
}
END_TEST

/* More dimensions than a layout is named for is no layout, not a read past the arrays. */
START_TEST(test_layout_too_many_dims)
{
	int64_t dims[SPY_LAYOUT_MAX_DIMS + 1], strides[SPY_LAYOUT_MAX_DIMS + 1];

	for (int i = 0; i <= SPY_LAYOUT_MAX_DIMS; i++) {
		dims[i] = 1;
		strides[i] = 1;
	}
	ck_assert_ptr_null(spy_layout_of(SPY_LAYOUT_MAX_DIMS + 1, dims, strides));
	ck_assert_ptr_null(spy_layout_of(-1, dims, strides));
}
END_TEST

START_TEST(test_layout_names)
{
	ck_assert_str_eq(spy_layout_name(0, 4), "NCHW");
	ck_assert_str_eq(spy_layout_name(1, 4), "NHWC");
	ck_assert_str_eq(spy_layout_name(0, 1), "packed");
	ck_assert_str_eq(spy_layout_name(1, 9), "channels-last");
}
END_TEST

UNIT_SUITE(layout)
{
	Suite *s = suite_create("layout");
	TCase *tc = unit_tcase(s, "layout");

	tcase_add_loop_test(tc, test_layout_of, 0, UNIT_COUNT(cases));
	tcase_add_test(tc, test_layout_too_many_dims);
	tcase_add_test(tc, test_layout_names);
	return s;
}
