/*
 * The one main for every unit suite. Check reads CK_FORK, CK_VERBOSITY,
 * CK_RUN_SUITE and CK_RUN_CASE from the environment by itself.
 */
#include "unit.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

/* The core expects each library to say what it is; tests act as a 9.x spy. */
const struct spy_flavor spy_flavor = { "test", 9 };

static struct unit_suite *suites;

void
unit_register(struct unit_suite *s)
{
	struct unit_suite **p = &suites;

	/* Constructors run in link order: sort, so that runs read the same. */
	while (*p && strcmp((*p)->name, s->name) < 0)
		p = &(*p)->next;
	s->next = *p;
	*p = s;
}


static int saved_fd2 = -1;
static FILE *capture_file;
static char capture_buf[64 * 1024];

/* Also the fixture's teardown: safe to call when nothing is captured. */
static void
capture_restore(void)
{
	if (saved_fd2 >= 0) {
		dup2(saved_fd2, STDERR_FILENO);
		close(saved_fd2);
		saved_fd2 = -1;
	}
	if (capture_file) {
		fclose(capture_file);
		capture_file = NULL;
	}
}

void
unit_capture_start(void)
{
	capture_restore();
	fflush(stderr);
	capture_file = tmpfile();
	ck_assert_msg(capture_file != NULL, "tmpfile: %s", strerror(errno));
	saved_fd2 = dup(STDERR_FILENO);
	ck_assert_msg(saved_fd2 >= 0, "dup: %s", strerror(errno));
	ck_assert_msg(dup2(fileno(capture_file), STDERR_FILENO) == STDERR_FILENO,
		"dup2: %s", strerror(errno));
}

const char *
unit_capture_stop(size_t *len)
{
	size_t n = 0;
	int fd;

	ck_assert_msg(capture_file != NULL, "unit_capture_stop without unit_capture_start");
	fd = fileno(capture_file);
	/* fd 2 shared the file offset: read back from the start. */
	ck_assert_msg(lseek(fd, 0, SEEK_SET) == 0, "lseek: %s", strerror(errno));
	while (n < sizeof(capture_buf) - 1) {
		ssize_t r = read(fd, capture_buf + n, sizeof(capture_buf) - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	capture_buf[n] = 0;
	capture_restore();
	if (len)
		*len = n;
	return capture_buf;
}

TCase *
unit_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, capture_restore);
	suite_add_tcase(s, tc);
	return tc;
}

int
main(void)
{
	SRunner *sr = NULL;
	int failed;

	for (struct unit_suite *u = suites; u; u = u->next) {
		Suite *s = u->make();

		if (!sr)
			sr = srunner_create(s);
		else
			srunner_add_suite(sr, s);
	}
	if (!sr) {
		fprintf(stderr, "unit-tests: no suite registered\n");
		return 1;
	}
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
