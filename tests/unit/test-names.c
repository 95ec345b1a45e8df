/* The generated tables and their lookups: function ids, enum and status names. */
#include "unit.h"

#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "spy-api.h"

START_TEST(test_fn_lookup_known)
{
	ck_assert_int_eq(spy_fn_lookup("cudnnCreate"), _SPY_FN_cudnnCreate);
	ck_assert_int_eq(spy_fn_lookup("cudnnGetVersion"), _SPY_FN_cudnnGetVersion);
	ck_assert_int_eq(spy_fn_lookup("cudnnActivationBackward"), _SPY_FN_cudnnActivationBackward);
	ck_assert_str_eq(spy_fn_info[_SPY_FN_cudnnCreate].name, "cudnnCreate");
}
END_TEST

/* Every entry is reachable by its own name: the binary search sees the whole table. */
START_TEST(test_fn_lookup_round_trip)
{
	ck_assert_int_gt(_SPY_FN_COUNT, 0);
	for (int id = 0; id < _SPY_FN_COUNT; id++) {
		ck_assert_ptr_nonnull(spy_fn_info[id].name);
		ck_assert_msg(spy_fn_lookup(spy_fn_info[id].name) == id, "%s: lookup gave %d, id is %d",
			spy_fn_info[id].name, spy_fn_lookup(spy_fn_info[id].name), id);
		ck_assert_msg(spy_fn_info[id].majors & (SPY_MAJOR_8 | SPY_MAJOR_9),
			"%s exists in no major", spy_fn_info[id].name);
	}
}
END_TEST

static const char *const bad_fn_names[] = {
	"", "cudnn", "cudnncreate", "CUDNNCREATE", "cudnnCreat", "cudnnCreateX", "cudnnCreate ",
	" cudnnCreate", "cudnnCreate\n", "cuda", "zzzzzz", "\x01", "\xff\xfe", "spy_fn_lookup",
	"_SPY_FN_cudnnCreate", "cudnnGetVersion()",
};

START_TEST(test_fn_lookup_unknown)
{
	ck_assert_msg(spy_fn_lookup(bad_fn_names[_i]) == -1, "\"%s\" gave %d", bad_fn_names[_i],
		spy_fn_lookup(bad_fn_names[_i]));
}
END_TEST

START_TEST(test_fn_lookup_huge_name)
{
	char *name = malloc(10001);

	ck_assert_ptr_nonnull(name);
	memset(name, 'a', 10000);
	memcpy(name, "cudnnCreate", 11);
	name[10000] = 0;
	ck_assert_int_eq(spy_fn_lookup(name), -1);
	free(name);
}
END_TEST

static const struct {
	long long status;
	const char *name;
} known_status[] = {
	{ 0, "CUDNN_STATUS_SUCCESS" },
	{ 1, "CUDNN_STATUS_NOT_INITIALIZED" },
	{ 1001, "CUDNN_STATUS_NOT_INITIALIZED" },
	{ 2000, "CUDNN_STATUS_BAD_PARAM" },
	{ 3, "CUDNN_STATUS_BAD_PARAM" },
	{ 2, "CUDNN_STATUS_ALLOC_FAILED" },
	{ 9, "CUDNN_STATUS_NOT_SUPPORTED" },
	{ 3000, "CUDNN_STATUS_NOT_SUPPORTED" },
	{ 14, "CUDNN_STATUS_VERSION_MISMATCH" },
	{ 2001, "CUDNN_STATUS_INVALID_VALUE" },
	{ 2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER" },
	{ 4, "CUDNN_STATUS_INTERNAL_ERROR" },
	{ 4000, "CUDNN_STATUS_INTERNAL_ERROR" },
	{ 8, "CUDNN_STATUS_EXECUTION_FAILED" },
	{ 5000, "CUDNN_STATUS_EXECUTION_FAILED" },
	{ 5004, "CUDNN_STATUS_EXECUTION_FAILED_CURAND" },
};

START_TEST(test_status_known)
{
	const char *got = spy_status_name(known_status[_i].status);

	ck_assert_msg(got != NULL, "%lld has no name", known_status[_i].status);
	ck_assert_str_eq(got, known_status[_i].name);
}
END_TEST

static const long long unknown_status[] = {
	-1, 15, 999, 1000, 1009, 1999, 2013, 3015, 4007, 5005, 999999,
	LLONG_MIN, LLONG_MAX, INT_MIN, (long long)INT_MAX + 1,
	/* Would be 0, 3 and 1001 if the value were cut to 32 bits somewhere. */
	1LL << 32, (1LL << 32) + 3, (1LL << 32) + 1001,
};

START_TEST(test_status_unknown)
{
	const char *got = spy_status_name(unknown_status[_i]);

	ck_assert_msg(got == NULL, "%lld gave %s", unknown_status[_i], got);
}
END_TEST

/* Whatever name comes back must be one that the table has for that value. */
START_TEST(test_status_every_value_named)
{
	const struct spy_enum_info *e = &spy_enum_info[_SPY_ENUM_cudnnStatus_t];

	ck_assert_str_eq(e->name, "cudnnStatus_t");
	for (unsigned i = 0; i < e->count; i++) {
		const char *got = spy_status_name(e->values[i].value);
		int found = 0;

		ck_assert_msg(got != NULL, "%lld has no name", e->values[i].value);
		ck_assert_msg(strncmp(got, "CUDNN_STATUS_", 13) == 0, "%s", got);
		for (unsigned j = 0; j < e->count; j++)
			if (e->values[j].value == e->values[i].value && strcmp(e->values[j].name, got) == 0)
				found = 1;
		ck_assert_msg(found, "%lld gave %s, not a name of that value", e->values[i].value, got);
	}
}
END_TEST

START_TEST(test_enum_datatype)
{
	ck_assert_str_eq(spy_enum_info[_SPY_ENUM_cudnnDataType_t].name, "cudnnDataType_t");
	for (int major = 0; major <= 9; major++)
		ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnDataType_t, 0, major), "CUDNN_DATA_FLOAT");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnDataType_t, 2, 8), "CUDNN_DATA_HALF");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnDataType_t, 9, 9), "CUDNN_DATA_BFLOAT16");
	ck_assert_ptr_null(spy_enum_name(_SPY_ENUM_cudnnDataType_t, -1, 0));
	ck_assert_ptr_null(spy_enum_name(_SPY_ENUM_cudnnDataType_t, 1000, 9));
	ck_assert_ptr_null(spy_enum_name(_SPY_ENUM_cudnnDataType_t, LLONG_MAX, 9));
	ck_assert_ptr_null(spy_enum_name(_SPY_ENUM_cudnnDataType_t, LLONG_MIN, 8));
}
END_TEST

/* A 9.x-only value still has a name when asked with 8: better than a number. */
START_TEST(test_enum_other_major_falls_back)
{
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnDataType_t, 15, 8), "CUDNN_DATA_FP8_E8M0");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnStatus_t, 1, 9), "CUDNN_STATUS_NOT_INITIALIZED");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnStatus_t, 2000, 8), "CUDNN_STATUS_BAD_PARAM");
}
END_TEST

/* One value, a different name in each major. */
START_TEST(test_enum_major_picks_spelling)
{
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnBackendKnobType_t, 33, 8), "CUDNN_KNOB_TYPE_COUNTS");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnBackendKnobType_t, 33, 9),
		"CUDNN_KNOB_TYPE_SPLIT_COLS");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnBackendBehaviorNote_t, 3, 8),
		"CUDNN_BEHAVIOR_NOTE_TYPE_COUNT");
	ck_assert_str_eq(spy_enum_name(_SPY_ENUM_cudnnBackendBehaviorNote_t, 3, 9),
		"CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API");
}
END_TEST

static const int bad_enum_ids[] = { -1, _SPY_ENUM_COUNT, _SPY_ENUM_COUNT + 1, INT_MAX, INT_MIN };

START_TEST(test_enum_bad_id)
{
	ck_assert_ptr_null(spy_enum_name(bad_enum_ids[_i], 0, 0));
	ck_assert_ptr_null(spy_enum_name(bad_enum_ids[_i], 0, 9));
}
END_TEST

/* The lookup is a binary search: every table must be sorted and well formed. */
START_TEST(test_enum_tables_sorted)
{
	ck_assert_int_gt(_SPY_ENUM_COUNT, 0);
	for (int id = 0; id < _SPY_ENUM_COUNT; id++) {
		const struct spy_enum_info *e = &spy_enum_info[id];

		ck_assert_ptr_nonnull(e->name);
		ck_assert_msg(e->count > 0, "%s is empty", e->name);
		for (unsigned i = 0; i < e->count; i++) {
			ck_assert_ptr_nonnull(e->values[i].name);
			ck_assert_msg(e->values[i].majors != 0
				&& (e->values[i].majors & ~(SPY_MAJOR_8 | SPY_MAJOR_9)) == 0,
				"%s has majors %#x", e->values[i].name, e->values[i].majors);
			if (i > 0)
				ck_assert_msg(e->values[i - 1].value <= e->values[i].value,
					"%s: %s after %s", e->name, e->values[i].name,
					e->values[i - 1].name);
		}
	}
}
END_TEST

/* Every value of every enum, asked in each major it exists in, gives a name of that major. */
START_TEST(test_enum_every_value_round_trip)
{
	static const struct {
		int major;
		unsigned bit;
	} majors[] = { { 8, SPY_MAJOR_8 }, { 9, SPY_MAJOR_9 } };

	for (int id = 0; id < _SPY_ENUM_COUNT; id++) {
		const struct spy_enum_info *e = &spy_enum_info[id];

		for (unsigned i = 0; i < e->count; i++) {
			long long v = e->values[i].value;

			ck_assert_msg(spy_enum_name(id, v, 0) != NULL, "%s %lld", e->name, v);
			for (size_t m = 0; m < sizeof(majors) / sizeof(majors[0]); m++) {
				const char *got;
				int ok = 0;

				if (!(e->values[i].majors & majors[m].bit))
					continue;
				got = spy_enum_name(id, v, majors[m].major);
				ck_assert_msg(got != NULL, "%s %lld @%d", e->name, v, majors[m].major);
				for (unsigned j = 0; j < e->count; j++)
					if (e->values[j].value == v && (e->values[j].majors & majors[m].bit)
						&& strcmp(e->values[j].name, got) == 0)
						ok = 1;
				ck_assert_msg(ok, "%s %lld @%d gave %s", e->name, v, majors[m].major, got);
			}
		}
	}
}
END_TEST

/*
 * cuDNN 9 keeps old spellings as deprecated aliases of the new codes; the
 * description lists the new one first, but the generated table orders
 * aliases by name, so 3007 and 4003 print the deprecated spelling while
 * 1002, 3008 and 4006 print the new one.
 */
START_TEST(test_status_9_prefers_current_spelling)
{
	static const struct {
		long long status;
		const char *name;
	} cases[] = {
		{ 1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH" },
		{ 3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH" },
		{ 3008, "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING" },
		{ 4003, "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED" },
		{ 4006, "CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = spy_status_name(cases[i].status);

		ck_assert_msg(got && strcmp(got, cases[i].name) == 0, "%lld gave %s, expected %s",
			cases[i].status, got ? got : "NULL", cases[i].name);
	}
}
END_TEST

UNIT_SUITE(names)
{
	Suite *s = suite_create("names");
	TCase *tc;

	tc = unit_tcase(s, "functions");
	tcase_add_test(tc, test_fn_lookup_known);
	tcase_add_test(tc, test_fn_lookup_round_trip);
	tcase_add_loop_test(tc, test_fn_lookup_unknown, 0, UNIT_COUNT(bad_fn_names));
	tcase_add_test(tc, test_fn_lookup_huge_name);

	tc = unit_tcase(s, "status");
	tcase_add_loop_test(tc, test_status_known, 0, UNIT_COUNT(known_status));
	tcase_add_loop_test(tc, test_status_unknown, 0, UNIT_COUNT(unknown_status));
	tcase_add_test(tc, test_status_every_value_named);

	tc = unit_tcase(s, "enums");
	tcase_add_test(tc, test_enum_datatype);
	tcase_add_test(tc, test_enum_other_major_falls_back);
	tcase_add_test(tc, test_enum_major_picks_spelling);
	tcase_add_loop_test(tc, test_enum_bad_id, 0, UNIT_COUNT(bad_enum_ids));
	tcase_add_test(tc, test_enum_tables_sorted);
	tcase_add_test(tc, test_enum_every_value_round_trip);

	tcase_add_test(tc, test_status_9_prefers_current_spelling);
	return s;
}
