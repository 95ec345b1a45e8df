/*
 * A program that uses include/cudnnspy.h the way a user would: marks
 * around cuDNN calls, a mark from a second thread, then a flush. It must
 * run the same without the spy. It says on stdout what it saw, so that
 * test_public.py can compare.
 *
 * usage: public-api exit|flush-kill|kill
 *   exit        the worker thread ends, the program exits normally
 *   flush-kill  cudnnspy_flush(), one more mark, then SIGKILL: only what the
 *               flush wrote can be in the file
 *   kill        SIGKILL without a flush
 */
#include <cudnnspy.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "g_prototypes.h"

static sem_t marked;
static int release[2];

static void *
worker(void *arg)
{
	char c;

	cudnnspy_mark_if_loaded("worker");
	sem_post(&marked);
	/* Alive until main says so: its buffer is not flushed by its exit. */
	while (read(release[0], &c, 1) < 0 && errno == EINTR)
		;
	return arg;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	char longer[400], cut[300];
	pthread_t t;
	int errno_kept;

	printf("loaded %d\n", cudnnspy_loaded());
	printf("mark %s\n", cudnnspy_mark ? "present" : "absent");
	cudnnspy_mark_if_loaded("start");
	printf("version %zu\n", cudnnGetVersion());
	cudnnspy_mark_if_loaded("step 1");
	cudnnGetVersion();
	cudnnspy_mark_if_loaded("step 2");
	errno = 1234;
	cudnnspy_mark_if_loaded("quote \" backslash \\ newline \n tab \t end");
	errno_kept = errno == 1234;
	printf("errno kept %d\n", errno_kept);
	/* 400 bytes: cut to 256. */
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	cudnnspy_mark_if_loaded(longer);
	/* 255 ASCII bytes, then a 2-byte character across the limit: it goes whole. */
	memset(cut, 'x', 255);
	strcpy(cut + 255, "\xc3\xa9 and more");
	cudnnspy_mark_if_loaded(cut);
	/* 254 bytes, then a 4-byte character across the limit. */
	memset(cut, 'y', 254);
	strcpy(cut + 254, "\xf0\x9f\x98\x80!");
	cudnnspy_mark_if_loaded(cut);
	cudnnspy_mark_if_loaded(NULL);

	if (pipe(release) != 0 || sem_init(&marked, 0, 0) != 0 || pthread_create(&t, NULL, worker, NULL) != 0) {
		perror("public-api");
		return 1;
	}
	while (sem_wait(&marked) != 0 && errno == EINTR)
		;
	if (strcmp(mode, "exit") == 0) {
		if (write(release[1], "x", 1) != 1)
			return 1;
		pthread_join(t, NULL);
		cudnnspy_mark_if_loaded("end");
		printf("done\n");
		return 0;
	}
	if (strcmp(mode, "flush-kill") == 0) {
		cudnnspy_flush_if_loaded();
		cudnnspy_mark_if_loaded("after flush");
		printf("flushed\n");
	}
	fflush(stdout);
	raise(SIGKILL);
	return 1;
}
