/*
 * Forks while other threads are inside cuDNN, then calls from 8 threads of
 * each child at once: every call must reach cuDNN (issue 15, item 10: some
 * children got NOT_INITIALIZED while the spy restored its tables).
 * usage: fork-race CHILDREN   (with FAKECUDNN_SLEEP_US set, the parent's
 * threads sleep inside cudnnAddTensor)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "g_prototypes.h"

static void *
inside(void *handle)
{
	float one = 1;

	cudnnAddTensor((cudnnHandle_t)handle, &one, NULL, NULL, &one, NULL, NULL);
	return NULL;
}

static size_t got[8];
static pthread_barrier_t start;

static void *
ask(void *p)
{
	/* All at once: the first call of the child is where the spy restores its tables. */
	pthread_barrier_wait(&start);
	got[(long)p] = cudnnGetVersion();
	return NULL;
}

int
main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 100, wrong = 0;
	cudnnHandle_t h;
	pthread_t th[2];
	size_t want;

	cudnnCreate(&h);
	want = cudnnGetVersion();
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, inside, h);
	usleep(100000);	/* they now sleep inside cudnnAddTensor */
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			pthread_t t[8];
			int bad = 0;

			pthread_barrier_init(&start, NULL, 8);
			for (long i = 0; i < 8; i++)
				pthread_create(&t[i], NULL, ask, (void *)i);
			for (int i = 0; i < 8; i++) {
				pthread_join(t[i], NULL);
				bad += got[i] != want;
			}
			_exit(bad ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			wrong++;
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("%d children, %d wrong\n", children, wrong);
	return 0;
}
