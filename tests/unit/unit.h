/*
 * What the unit test files share: self-registering suites and a way to see
 * what the code under test writes on fd 2.
 */
#ifndef UNIT_H
#define UNIT_H

#include <check.h>
#include <stddef.h>

/* Entries of an array, as the int that tcase_add_loop_test() takes. */
#define UNIT_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct unit_suite {
	const char *name;
	Suite *(*make)(void);
	struct unit_suite *next;
};

void unit_register(struct unit_suite *s);

/*
 * UNIT_SUITE(config) { Suite *s = suite_create("config"); ...; return s; }
 * A constructor links the suite into the list before main runs, so a new
 * test file only has to be listed in meson.build.
 */
#define UNIT_SUITE(id) \
	static Suite *unit_make_##id(void); \
	static struct unit_suite unit_node_##id = { #id, unit_make_##id, NULL }; \
	__attribute__((constructor)) static void \
	unit_add_##id(void) \
	{ \
		unit_register(&unit_node_##id); \
	} \
	static Suite * \
	unit_make_##id(void)

/*
 * A test case whose fixture puts fd 2 back: with CK_FORK=no a failed
 * assertion jumps out of the test while fd 2 may still be redirected.
 */
TCase *unit_tcase(Suite *s, const char *name);

/* Sends fd 2 to a fresh temporary file until unit_capture_stop(). */
void unit_capture_start(void);
/*
 * Restores fd 2 and returns what was written meanwhile, NUL-terminated
 * (also in *len when len is not NULL); the buffer lives until the next call.
 */
const char *unit_capture_stop(size_t *len);


#endif
