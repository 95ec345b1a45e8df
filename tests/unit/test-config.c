/* spy_config_parse(): defaults, CUDNNSPY_LIBRARY, CUDNNSPY_STDERR, bad input. */
#include "unit.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define ALL_BITS (SPY_STDERR_BANNER | SPY_STDERR_FAILURES | SPY_STDERR_SUMMARY)

/* What the fake environment holds; NULL means unset. */
static const char *env_library;
static const char *env_stderr;
static int asked_library, asked_stderr, asked_other;

static const char *
fake_get(const char *name)
{
	if (strcmp(name, "CUDNNSPY_LIBRARY") == 0) {
		asked_library++;
		return env_library;
	}
	if (strcmp(name, "CUDNNSPY_STDERR") == 0) {
		asked_stderr++;
		return env_stderr;
	}
	asked_other++;
	return NULL;
}

static void
reset(void)
{
	env_library = NULL;
	env_stderr = NULL;
	asked_library = asked_stderr = asked_other = 0;
	/* Leftovers from an earlier parse must never survive the next one. */
	memset(&spy_config, 0x5a, sizeof(spy_config));
	spy_config.library[sizeof(spy_config.library) - 1] = 0;
	spy_quiet = 0;
}

/* Parses the fake environment and returns what went to stderr. */
static const char *
parse(const char *library, const char *stderr_value, size_t *len)
{
	env_library = library;
	env_stderr = stderr_value;
	unit_capture_start();
	spy_config_parse(fake_get);
	return unit_capture_stop(len);
}

static char *
repeat(char first, char fill, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, fill, n);
	s[0] = first;
	s[n] = 0;
	return s;
}

/* A warning is one line of our own, cut by spy_log at 1023 bytes. */
static void
assert_one_warning(const char *out, size_t len, const char *variable)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "cudnnspy: %s", variable);
	ck_assert_msg(len > 0, "expected a warning about %s, got nothing", variable);
	ck_assert_msg(strncmp(out, prefix, strlen(prefix)) == 0, "warning is \"%s\"", out);
	ck_assert_uint_le(len, 1023);
	ck_assert_int_eq(out[len - 1], '\n');
	ck_assert_ptr_eq(strchr(out, '\n'), out + len - 1);
}

START_TEST(test_unset_gives_defaults)
{
	size_t len;
	const char *out = parse(NULL, NULL, &len);

	ck_assert_str_eq(spy_config.library, "");
	ck_assert_uint_eq(spy_config.stderr_mask, ALL_BITS);
	ck_assert_msg(len == 0, "unexpected output: %s", out);
}
END_TEST

START_TEST(test_each_option_read_once)
{
	int options = 0;

	for (const struct spy_option *o = spy_options; o->name; o++)
		options++;
	parse(NULL, NULL, NULL);
	ck_assert_int_eq(asked_library, 1);
	ck_assert_int_eq(asked_stderr, 1);
	ck_assert_int_eq(asked_other, options - 2);
}
END_TEST

START_TEST(test_reparse_forgets_previous_values)
{
	parse("/opt/cudnn/lib", "none", NULL);
	ck_assert_str_eq(spy_config.library, "/opt/cudnn/lib");
	ck_assert_uint_eq(spy_config.stderr_mask, 0);
	parse(NULL, NULL, NULL);
	ck_assert_str_eq(spy_config.library, "");
	ck_assert_uint_eq(spy_config.stderr_mask, ALL_BITS);
}
END_TEST

START_TEST(test_option_table)
{
	int n = 0, seen_library = 0, seen_stderr = 0;

	for (const struct spy_option *o = spy_options; o->name; o++, n++) {
		ck_assert_msg(strncmp(o->name, "CUDNNSPY_", 9) == 0, "%s", o->name);
		ck_assert_ptr_nonnull(o->def);
		ck_assert_msg(o->help && o->help[0], "%s has no help", o->name);
		if (o->type == SPY_OPT_FLAGS)
			ck_assert_msg(o->values && o->values[0], "%s lists no words", o->name);
		for (const struct spy_option *p = spy_options; p != o; p++)
			ck_assert_str_ne(p->name, o->name);
		seen_library += strcmp(o->name, "CUDNNSPY_LIBRARY") == 0;
		seen_stderr += strcmp(o->name, "CUDNNSPY_STDERR") == 0;
		ck_assert_int_lt(n, 100);
	}
	ck_assert_int_eq(seen_library, 1);
	ck_assert_int_eq(seen_stderr, 1);
}
END_TEST

START_TEST(test_library_absolute)
{
	static const char *paths[] = {
		"/opt/cudnn/lib64/libcudnn.so.9", "/", "/usr/lib/x86_64-linux-gnu/",
		"/path with spaces/libcudnn.so", "/a:b;c",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		size_t len;
		const char *out = parse(paths[i], NULL, &len);

		ck_assert_str_eq(spy_config.library, paths[i]);
		ck_assert_msg(len == 0, "%s: unexpected output: %s", paths[i], out);
	}
}
END_TEST

START_TEST(test_library_empty_is_unset)
{
	size_t len;

	parse("", NULL, &len);
	ck_assert_str_eq(spy_config.library, "");
	ck_assert_uint_eq(len, 0);
}
END_TEST

START_TEST(test_library_relative_refused)
{
	static const char *paths[] = {
		"lib/libcudnn.so.9", "libcudnn.so.9", "./libcudnn.so.9", "../lib", "~/cudnn", " /opt/x",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		size_t len;
		const char *out = parse(paths[i], NULL, &len);

		ck_assert_msg(spy_config.library[0] == 0, "%s was taken as \"%s\"", paths[i],
			spy_config.library);
		assert_one_warning(out, len, "CUDNNSPY_LIBRARY");
		ck_assert_msg(strstr(out, paths[i]) != NULL, "warning does not quote %s: %s",
			paths[i], out);
	}
}
END_TEST

START_TEST(test_library_relative_replaces_earlier_value)
{
	parse("/opt/cudnn", NULL, NULL);
	parse("cudnn", NULL, NULL);
	ck_assert_str_eq(spy_config.library, "");
}
END_TEST

START_TEST(test_library_huge_absolute)
{
	char *v = repeat('/', 'a', 10000);
	size_t len;
	const char *out = parse(v, NULL, &len);

	ck_assert_str_eq(spy_config.library, "");
	assert_one_warning(out, len, "CUDNNSPY_LIBRARY");
	/* The other option is still parsed. */
	ck_assert_uint_eq(spy_config.stderr_mask, ALL_BITS);
	free(v);
}
END_TEST

START_TEST(test_library_huge_relative)
{
	char *v = repeat('a', 'b', 10000);
	size_t len;
	const char *out = parse(v, NULL, &len);

	ck_assert_str_eq(spy_config.library, "");
	assert_one_warning(out, len, "CUDNNSPY_LIBRARY");
	free(v);
}
END_TEST

START_TEST(test_library_length_limit)
{
	char *fits = repeat('/', 'x', PATH_MAX - 1);
	char *over = repeat('/', 'x', PATH_MAX);
	size_t len;
	const char *out;

	out = parse(fits, NULL, &len);
	ck_assert_msg(len == 0, "unexpected output: %s", out);
	ck_assert_str_eq(spy_config.library, fits);
	out = parse(over, NULL, &len);
	assert_one_warning(out, len, "CUDNNSPY_LIBRARY");
	ck_assert_str_eq(spy_config.library, "");
	free(fits);
	free(over);
}
END_TEST

static const struct {
	const char *value;
	unsigned mask;
} good_stderr[] = {
	{ "none", 0 },
	{ "banner", SPY_STDERR_BANNER },
	{ "failures", SPY_STDERR_FAILURES },
	{ "summary", SPY_STDERR_SUMMARY },
	{ "banner,summary", SPY_STDERR_BANNER | SPY_STDERR_SUMMARY },
	{ "summary,failures,banner", ALL_BITS },
	{ "banner,failures,summary", ALL_BITS },
	{ "failures,failures", SPY_STDERR_FAILURES },
};

START_TEST(test_stderr_good_values)
{
	size_t len;
	const char *out = parse(NULL, good_stderr[_i].value, &len);

	ck_assert_msg(spy_config.stderr_mask == good_stderr[_i].mask, "%s gave %#x, expected %#x",
		good_stderr[_i].value, spy_config.stderr_mask, good_stderr[_i].mask);
	ck_assert_msg(len == 0, "%s: unexpected output: %s", good_stderr[_i].value, out);
}
END_TEST

START_TEST(test_stderr_all)
{
	size_t len;

	parse(NULL, "all", &len);
	ck_assert_uint_eq(spy_config.stderr_mask & ALL_BITS, ALL_BITS);
	ck_assert_uint_eq(len, 0);
}
END_TEST

static const char *const bad_stderr[] = {
	"bogus", "banner,bogus", "bogus,banner", "Banner", "ALL", "None", "none,banner",
	"all,none", " banner", "banner ", "banners", "banne", "banner;summary",
	"banner,failures,summaryX", "-1", "0", "\t",
};

START_TEST(test_stderr_bad_values_keep_default)
{
	size_t len;
	const char *out = parse(NULL, bad_stderr[_i], &len);

	ck_assert_msg(spy_config.stderr_mask == ALL_BITS, "\"%s\" gave %#x", bad_stderr[_i],
		spy_config.stderr_mask);
	assert_one_warning(out, len, "CUDNNSPY_STDERR");
	ck_assert_msg(strstr(out, bad_stderr[_i]) != NULL, "warning does not quote \"%s\": %s",
		bad_stderr[_i], out);
}
END_TEST

START_TEST(test_stderr_bad_after_none_gives_default)
{
	parse(NULL, "none", NULL);
	ck_assert_uint_eq(spy_config.stderr_mask, 0);
	parse(NULL, "banner,bogus", NULL);
	ck_assert_uint_eq(spy_config.stderr_mask, ALL_BITS);
}
END_TEST

START_TEST(test_stderr_none_silences_warnings)
{
	size_t len;
	const char *out = parse("relative/lib", "none", &len);

	/* The library setting is still refused, silently. */
	ck_assert_int_eq(spy_config.library_refused, 1);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(spy_quiet, 1);
	unit_capture_start();
	spy_log("not %s", "said");
	out = unit_capture_stop(&len);
	ck_assert_uint_eq(len, 0);
	/* A bad CUDNNSPY_STDERR is not none: its warning and the others are said. */
	out = parse("relative/lib", "bogus", &len);
	ck_assert_int_eq(spy_quiet, 0);
	ck_assert_ptr_nonnull(strstr(out, "CUDNNSPY_STDERR=bogus"));
	ck_assert_ptr_nonnull(strstr(out, "not an absolute path"));
}
END_TEST

START_TEST(test_stderr_huge_garbage)
{
	char *v = repeat('x', 'x', 10000);
	size_t len;
	const char *out = parse(NULL, v, &len);

	ck_assert_uint_eq(spy_config.stderr_mask, ALL_BITS);
	assert_one_warning(out, len, "CUDNNSPY_STDERR");
	/* A huge value is described by its size, not echoed. */
	ck_assert_msg(strncmp(out, "cudnnspy: CUDNNSPY_STDERR: a value of 10000 bytes", 49) == 0, "%s", out);
	free(v);
}
END_TEST

START_TEST(test_stderr_huge_valid_list)
{
	enum { REPEAT = 1500 };	/* over 10000 bytes of "banner," */
	size_t n = 0, len;
	char *v = malloc(REPEAT * 7 + sizeof("summary"));

	ck_assert_ptr_nonnull(v);
	for (int i = 0; i < REPEAT; i++) {
		memcpy(v + n, "banner,", 7);
		n += 7;
	}
	memcpy(v + n, "summary", sizeof("summary"));
	parse(NULL, v, &len);
	ck_assert_uint_eq(spy_config.stderr_mask, SPY_STDERR_BANNER | SPY_STDERR_SUMMARY);
	ck_assert_uint_eq(len, 0);
	free(v);
}
END_TEST

/*
 * A list with no word at all ("," or ",,", say from "$X," with X unset) is
 * a bad value like any other: a warning, and the default kept. Silence must
 * be asked for by name.
 */
START_TEST(test_stderr_only_commas_warns)
{
	static const char *const values[] = { ",", ",,", ",,," };

	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		size_t len;
		const char *out = parse(NULL, values[i], &len);

		ck_assert_msg(spy_config.stderr_mask == ALL_BITS, "\"%s\" gave %#x", values[i],
			spy_config.stderr_mask);
		assert_one_warning(out, len, "CUDNNSPY_STDERR");
	}
}
END_TEST

/* The real entry point reads the process environment. */
START_TEST(test_load_reads_environment)
{
	const char *old = getenv("CUDNNSPY_STDERR");
	char *saved = old ? strdup(old) : NULL;

	setenv("CUDNNSPY_STDERR", "failures", 1);
	setenv("CUDNNSPY_LIBRARY", "/opt/from-env", 1);
	spy_config_load();
	/* Put the environment back before asserting: a failure must not leak it. */
	unsetenv("CUDNNSPY_LIBRARY");
	if (saved)
		setenv("CUDNNSPY_STDERR", saved, 1);
	else
		unsetenv("CUDNNSPY_STDERR");
	free(saved);
	ck_assert_uint_eq(spy_config.stderr_mask, SPY_STDERR_FAILURES);
	ck_assert_str_eq(spy_config.library, "/opt/from-env");
}
END_TEST

/* CUDNNSPY_FORMAT=auto, the default, settles as the configuration is read: format 2 unless the file is named .jsonl. */
static const char *env_output, *env_format;

static const char *
format_get(const char *name)
{
	if (strcmp(name, "CUDNNSPY_OUTPUT") == 0)
		return env_output;
	if (strcmp(name, "CUDNNSPY_FORMAT") == 0)
		return env_format;
	return NULL;
}

static const struct {
	const char *output, *format;
	long want;
	int warns;
} formats[] = {
	{ NULL, NULL, SPY_FORMAT_BINARY, 0 },
	{ "/tmp/records", NULL, SPY_FORMAT_BINARY, 0 },
	{ "/tmp/records/", "auto", SPY_FORMAT_BINARY, 0 },
	{ "/tmp/run-%p.jsonl", NULL, SPY_FORMAT_JSON, 0 },
	{ "/tmp/run-%p.jsonl", "binary", SPY_FORMAT_BINARY, 0 },
	{ "/tmp/records", "json", SPY_FORMAT_JSON, 0 },
	{ "/tmp/run.jsonl.d/x", NULL, SPY_FORMAT_BINARY, 0 },
	{ ".jsonl", NULL, SPY_FORMAT_JSON, 0 },
	{ "/tmp/run-%p.jsonl", "yaml", SPY_FORMAT_JSON, 1 },
	{ "/tmp/records", "yaml", SPY_FORMAT_BINARY, 1 },
};

START_TEST(test_format_settled)
{
	size_t len;
	const char *err;

	env_output = formats[_i].output;
	env_format = formats[_i].format;
	unit_capture_start();
	spy_config_parse(format_get);
	err = unit_capture_stop(&len);
	ck_assert_int_eq(spy_config.format, formats[_i].want);
	ck_assert_int_eq(len > 0, formats[_i].warns);
	if (formats[_i].warns)
		ck_assert_ptr_nonnull(strstr(err, "CUDNNSPY_FORMAT=yaml: expected"));
}
END_TEST

static TCase *
config_tcase(Suite *s, const char *name)
{
	TCase *tc = unit_tcase(s, name);

	tcase_add_checked_fixture(tc, reset, NULL);
	return tc;
}

UNIT_SUITE(config)
{
	Suite *s = suite_create("config");
	TCase *tc;

	tc = config_tcase(s, "defaults");
	tcase_add_test(tc, test_unset_gives_defaults);
	tcase_add_test(tc, test_each_option_read_once);
	tcase_add_test(tc, test_reparse_forgets_previous_values);
	tcase_add_test(tc, test_option_table);
	tcase_add_test(tc, test_load_reads_environment);

	tc = config_tcase(s, "library");
	tcase_add_test(tc, test_library_absolute);
	tcase_add_test(tc, test_library_empty_is_unset);
	tcase_add_test(tc, test_library_relative_refused);
	tcase_add_test(tc, test_library_relative_replaces_earlier_value);
	tcase_add_test(tc, test_library_huge_absolute);
	tcase_add_test(tc, test_library_huge_relative);
	tcase_add_test(tc, test_library_length_limit);

	tc = config_tcase(s, "stderr");
	tcase_add_loop_test(tc, test_stderr_good_values, 0, UNIT_COUNT(good_stderr));
	tcase_add_test(tc, test_stderr_all);
	tcase_add_loop_test(tc, test_stderr_bad_values_keep_default, 0, UNIT_COUNT(bad_stderr));
	tcase_add_test(tc, test_stderr_bad_after_none_gives_default);
	tcase_add_test(tc, test_stderr_none_silences_warnings);
	tcase_add_test(tc, test_stderr_huge_garbage);
	tcase_add_test(tc, test_stderr_huge_valid_list);

	tcase_add_test(tc, test_stderr_only_commas_warns);

	tc = config_tcase(s, "format");
	tcase_add_loop_test(tc, test_format_settled, 0, UNIT_COUNT(formats));
	return s;
}
