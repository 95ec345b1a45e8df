/*
 * Forks while other threads are inside cuDNN, then calls from 8 threads of
 * each child at once: every call must reach cuDNN (issue 15, item 10: some
 * children got NOT_INITIALIZED while the spy restored its tables).
 * usage: fork-race MAX_CHILDREN   (with FAKECUDNN_SLEEP_US set, the
 * parent's threads sleep inside cudnnAddTensor; children are forked until
 * they come back, or MAX_CHILDREN). stdout: "N wrong"; stderr: how many.
 *
 * The window was a few dozen nanoseconds wide (between clearing the flag
 * and copying the table back), so "at once" must mean it: a barrier wakes
 * its threads one futex call after another, microseconds apart, and never
 * showed it on two cores. Here each of the first threads is pinned to a CPU
 * of its own (round robin over those the process may use) and spins on one
 * flag; one of the first two then waits a number of loops that differs per
 * child, so that over the children they meet at every offset. The function
 * they call is near the end of the spy's table. On two cores the unfixed
 * spy (41bb671^) got 1 wrong child in 300 to 500 this way, 0 in 3,000 with
 * the barrier.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "g_prototypes.h"

#define THREADS 8

static int left;

static void *
inside(void *handle)
{
	float one = 1;

	cudnnAddTensor((cudnnHandle_t)handle, &one, NULL, NULL, &one, NULL, NULL);
	__atomic_store_n(&left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static size_t got[THREADS];
static cudnnHandle_t handle;

/*
 * Near the end of the spy's table of functions, which is copied back in
 * order: the longest window (cudnnGetVersion is in the middle). Not a GPU
 * function: those sleep in the fake too.
 */
static cudnnStatus_t
late(cudnnHandle_t h)
{
	return cudnnSetStream(h, NULL);
}
static int go, ready, child;
static int cpus[CPU_SETSIZE], ncpus;

static void
pause_loops(int n)
{
	for (volatile int i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

static void *
ask(void *p)
{
	long i = (long)p;
	int spinners = ncpus < 2 ? 1 : 2;
	cpu_set_t one;

	if (i < spinners) {
		CPU_ZERO(&one);
		CPU_SET(cpus[i], &one);
		sched_setaffinity(0, sizeof(one), &one);
		/*
		 * The first two spin, each on its CPU, and the last of them to
		 * arrive starts both: no other thread has to be scheduled for it.
		 */
		if (__atomic_add_fetch(&ready, 1, __ATOMIC_ACQ_REL) == spinners)
			__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
			sched_yield();	/* returns at once unless another thread wants the CPU */
		/* One of the two waits 0 to 93 loops, the other none: which, and how long, by child. */
		if (i != (child & 1))
			pause_loops((child >> 1) % 32 * 3);
	} else {
		/* The others come a little later. */
		while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
			usleep(20);
	}
	/* The first call of the child is where the spy restores its tables. */
	got[i] = (size_t)late(handle);
	return NULL;
}

int
main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 100, wrong = 0, forked = 0;
	pthread_t th[2];
	cpu_set_t mine;
	size_t want;

	CPU_ZERO(&mine);
	sched_getaffinity(0, sizeof(mine), &mine);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &mine))
			cpus[ncpus++] = c;
	if (ncpus == 0)
		cpus[ncpus++] = 0;
	cudnnCreate(&handle);
	want = (size_t)late(handle);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, inside, handle);
	usleep(100000);	/* they now sleep inside cudnnAddTensor */
	for (int c = 0; c < children && !__atomic_load_n(&left, __ATOMIC_ACQUIRE); c++) {
		pid_t pid;
		int status;

		child = c;
		forked++;
		pid = fork();
		if (pid == 0) {
			pthread_t t[THREADS];
			int bad = 0;

			for (long i = 0; i < THREADS; i++)
				pthread_create(&t[i], NULL, ask, (void *)i);
			for (int i = 0; i < THREADS; i++) {
				pthread_join(t[i], NULL);
				bad += got[i] != want;
			}
			_exit(bad ? 1 : 0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			wrong++, fprintf(stderr, "fork-race: child %d got a wrong answer\n", c);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("%d wrong\n", wrong);
	fprintf(stderr, "fork-race: %d children forked while threads were inside cuDNN\n", forked);
	return 0;
}
