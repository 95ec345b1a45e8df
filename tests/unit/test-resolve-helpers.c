/* The pure helpers of resolve.c: dispatcher names and search-list splitting. */
#include "unit.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static const char *const dispatchers[] = {
	"libcudnn.so", "libcudnn.so.9", "libcudnn.so.8", "libcudnn.so.9.19.0", "libcudnn.so.8.9.7",
};

START_TEST(test_dispatcher_names)
{
	ck_assert_msg(spy_is_dispatcher_name(dispatchers[_i]) == 1, "%s", dispatchers[_i]);
}
END_TEST

/* Sub-libraries, look-alikes and the spy itself must never be taken for cuDNN. */
static const char *const not_dispatchers[] = {
	"libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_graph.so.9", "libcudnn_adv.so.9.1.0",
	"libcudnn.so.9x", "libcudnn.so.9-debug", "libcudnnspy.so", "libcudnnspy.so.9", "libcudnn",
	"libcudnn.s", "libcudnn.a", "libcudnn.so_9", "xlibcudnn.so", "cudnn.so",
	"LIBCUDNN.SO", "libcudnn.so.9 ", " libcudnn.so", "libcudnn.so/9", "", "libcudnn.dll",
};

START_TEST(test_not_dispatcher_names)
{
	ck_assert_msg(spy_is_dispatcher_name(not_dispatchers[_i]) == 0, "%s", not_dispatchers[_i]);
}
END_TEST

/*
 * Only digits and dots are checked, not their order: a suffix that is not
 * ".N", ".N.N", ... still passes (libcudnn.so9, libcudnn.so., ...).
 */
static const char *const malformed_versions[] = {
	"libcudnn.so9", "libcudnn.so.", "libcudnn.so..9", "libcudnn.so.9.", "libcudnn.so9.1",
};

START_TEST(test_malformed_version_suffix)
{
	ck_assert_msg(spy_is_dispatcher_name(malformed_versions[_i]) == 0, "%s",
		malformed_versions[_i]);
}
END_TEST

START_TEST(test_dispatcher_huge_names)
{
	char *name = malloc(10001);

	ck_assert_ptr_nonnull(name);
	memcpy(name, "libcudnn.so.", 12);
	memset(name + 12, '9', 10000 - 12);
	name[10000] = 0;
	ck_assert_int_eq(spy_is_dispatcher_name(name), 1);
	name[9999] = 'x';
	ck_assert_int_eq(spy_is_dispatcher_name(name), 0);
	free(name);
}
END_TEST

/* What spy_foreach_dir handed to the callback, joined by '|'. */
struct seen {
	char text[64 * 1024];
	int calls;
	const char *last_ptr;
};

static void
collect(const char *dir, void *arg)
{
	struct seen *s = arg;
	size_t used = strlen(s->text);

	ck_assert_ptr_nonnull(dir);
	ck_assert_msg(dir[0] == '/', "relative entry passed on: %s", dir);
	snprintf(s->text + used, sizeof(s->text) - used, "%s%s", s->calls ? "|" : "", dir);
	s->calls++;
	s->last_ptr = dir;
}

static struct seen *
split(const char *list)
{
	static struct seen s;

	memset(&s, 0, sizeof(s));
	spy_foreach_dir(list, collect, &s);
	return &s;
}

static const struct {
	const char *list;
	const char *want;
	int calls;
} splits[] = {
	{ "/a", "/a", 1 },
	{ "/a:/b", "/a|/b", 2 },
	{ "/a;/b", "/a|/b", 2 },
	{ "/a:/b;/c", "/a|/b|/c", 3 },
	{ "/usr/lib/x86_64-linux-gnu:/opt/cuda/lib64", "/usr/lib/x86_64-linux-gnu|/opt/cuda/lib64", 2 },
	{ "", "", 0 },
	{ ":", "", 0 },
	{ ":::;;;", "", 0 },
	{ "::/a::", "/a", 1 },
	{ "/a:", "/a", 1 },
	{ ":/a", "/a", 1 },
	{ "rel", "", 0 },
	{ "rel:/abs:./dot:../up:~/home", "/abs", 1 },
	{ " /space:/b", "/b", 1 },
	{ "/a b:/c", "/a b|/c", 2 },
	{ "/", "/", 1 },
	{ "/a:/a", "/a|/a", 2 },
	{ "/a/:/b//c/", "/a/|/b//c/", 2 },
};

START_TEST(test_split)
{
	struct seen *s = split(splits[_i].list);

	ck_assert_msg(strcmp(s->text, splits[_i].want) == 0, "\"%s\" gave \"%s\", expected \"%s\"",
		splits[_i].list, s->text, splits[_i].want);
	ck_assert_int_eq(s->calls, splits[_i].calls);
}
END_TEST

START_TEST(test_split_null)
{
	struct seen *s = split(NULL);

	ck_assert_int_eq(s->calls, 0);
}
END_TEST

/* The caller's string is never written to and entries are copies. */
START_TEST(test_split_leaves_list_alone)
{
	static const char list[] = "/a:/b;/c";
	char copy[sizeof(list)];
	struct seen *s;

	memcpy(copy, list, sizeof(list));
	s = split(copy);
	ck_assert_str_eq(copy, list);
	ck_assert_int_eq(s->calls, 3);
	ck_assert_msg(s->last_ptr < copy || s->last_ptr >= copy + sizeof(copy),
		"the callback got a pointer into the caller's list");
}
END_TEST

/* A directory too long for a path is skipped; its neighbours are not. */
START_TEST(test_split_huge_entry)
{
	size_t n = 10000;
	char *list = malloc(n + 16);
	struct seen *s;

	ck_assert_ptr_nonnull(list);
	strcpy(list, "/first:");
	memset(list + 7, 'x', n);
	list[7] = '/';
	strcpy(list + 7 + n, ":/last");
	s = split(list);
	ck_assert_str_eq(s->text, "/first|/last");
	ck_assert_int_eq(s->calls, 2);
	free(list);
}
END_TEST

START_TEST(test_split_path_max_boundary)
{
	char *list = malloc(PATH_MAX + 8);
	struct seen *s;

	ck_assert_ptr_nonnull(list);
	/* PATH_MAX - 1 characters still fit with their terminator. */
	memset(list, 'y', PATH_MAX - 1);
	list[0] = '/';
	list[PATH_MAX - 1] = 0;
	s = split(list);
	ck_assert_int_eq(s->calls, 1);
	ck_assert_uint_eq(strlen(s->text), PATH_MAX - 1);
	memset(list, 'y', PATH_MAX);
	list[0] = '/';
	list[PATH_MAX] = 0;
	s = split(list);
	ck_assert_int_eq(s->calls, 0);
	free(list);
}
END_TEST

/* Many entries: no fixed limit in the splitter itself. */
START_TEST(test_split_many_entries)
{
	size_t cap = 1000 * 4 + 1, used = 0;
	char *list = malloc(cap);
	struct seen *s;

	ck_assert_ptr_nonnull(list);
	for (int i = 0; i < 1000; i++) {
		memcpy(list + used, "/d:", 3);
		used += 3;
	}
	list[used] = 0;
	s = split(list);
	ck_assert_int_eq(s->calls, 1000);
	free(list);
}
END_TEST

UNIT_SUITE(resolve_helpers)
{
	Suite *s = suite_create("resolve-helpers");
	TCase *tc;

	tc = unit_tcase(s, "dispatcher-name");
	tcase_add_loop_test(tc, test_dispatcher_names, 0, UNIT_COUNT(dispatchers));
	tcase_add_loop_test(tc, test_not_dispatcher_names, 0, UNIT_COUNT(not_dispatchers));
	tcase_add_test(tc, test_dispatcher_huge_names);

	tc = unit_tcase(s, "foreach-dir");
	tcase_add_loop_test(tc, test_split, 0, UNIT_COUNT(splits));
	tcase_add_test(tc, test_split_null);
	tcase_add_test(tc, test_split_leaves_list_alone);
	tcase_add_test(tc, test_split_huge_entry);
	tcase_add_test(tc, test_split_path_max_boundary);
	tcase_add_test(tc, test_split_many_entries);

	tcase_add_loop_test(tc, test_malformed_version_suffix, 0, UNIT_COUNT(malformed_versions));
	return s;
}
