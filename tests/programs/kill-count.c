/*
 * Calls that a process completed before it ended, for the tests that end it
 * abruptly (tests/integration/endings_kill.py): every record of a completed
 * call must be in the file, however the process ends.
 *
 * usage: kill-count MODE THREADS [COUNTFILE]
 *
 * THREADS threads each create a tensor descriptor and call
 * cudnnSetTensor4dDescriptor on it in batches of 50. Before each batch a
 * thread writes the number of calls it has completed so far into COUNTFILE
 * (opened O_SYNC), at offset 32 * its index, as 31 decimal digits (space
 * padded) and a newline; the calls completed by the process are the sum.
 * The count written is never more than the calls completed. The threads
 * never end: those of the fixed-count modes block once done, so that the
 * process ends with every thread alive, as programs do (a thread that ends
 * has its records flushed by the spy).
 *
 * MODE:
 *   forever     call until killed, as fast as it can
 *   forever=R   the same, each thread at most R calls a second (it sleeps
 *               between batches when ahead), so that the file stays small
 *   slow        about 100 calls a second, in batches of 1, until killed
 *   calls=N     N calls in all (shared among the threads), then return 0 from main
 *   stop=N      N calls, then SIGSTOP to itself (the test copies the record file:
 *               what a killed process would leave), then, continued, return 0
 *   _exit=N     N calls, then _exit(0) (no exit handlers)
 *   exec=N      N calls, then execv("/bin/true")
 *   abort=N     N calls, then abort()
 *   oom=N       N calls, then malloc and touch memory until killed (the memory
 *               cgroup's OOM killer); stops with status 3 after 2 GiB
 *   fork        7 calls of cudnnGetVersion, then 3 children (fork), each calling
 *               forever with THREADS threads (at most 50000 calls a second
 *               each), counting into COUNTFILE.childK;
 *               prints "child K PID" for each, kills them with SIGKILL after
 *               0.8 s, waits for them, prints "child K signal S" and returns 0
 *
 * The fixed-count modes write "calls N\n" to stdout (with write(), so that
 * _exit keeps it) before they end. Nothing else goes to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "g_prototypes.h"

#define BATCH 50
#define MAX_THREADS 64
#define CHILDREN 3
#define CHILD_RATE 50000	/* calls a second per thread of a child of the fork mode */

struct worker {
	int index;
	int fd;			/* the count file, -1 for none */
	long limit;		/* calls to make, < 0 for forever */
	int batch;
	useconds_t pause_us;	/* between calls */
	long rate;		/* at most this many calls a second, 0 for no limit */
	long done;
	long fails;		/* calls that did not answer CUDNN_STATUS_SUCCESS (counted all the same) */
};

static pthread_mutex_t finish_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finish_cond = PTHREAD_COND_INITIALIZER;
static int finished;

static void
say(const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(5);
		s += w;
		n -= (size_t)w;
	}
}

static void
put_count(const struct worker *w)
{
	char buf[40];

	if (w->fd < 0)
		return;
	snprintf(buf, sizeof(buf), "%31ld\n", w->done);
	if (pwrite(w->fd, buf, 32, (off_t)32 * w->index) != 32) {
		perror("kill-count: pwrite");
		_exit(6);
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	cudnnTensorDescriptor_t t;
	double start = now_s();

	if (cudnnCreateTensorDescriptor(&t) != 0) {
		fprintf(stderr, "kill-count: cudnnCreateTensorDescriptor failed\n");
		_exit(7);
	}
	for (;;) {
		int n = w->batch;

		put_count(w);
		if (w->rate > 0) {
			double ahead = (double)w->done / (double)w->rate - (now_s() - start);

			if (ahead > 0)
				usleep((useconds_t)(ahead * 1e6));
		}
		if (w->limit >= 0) {
			if (w->done >= w->limit)
				break;
			if (w->limit - w->done < n)
				n = (int)(w->limit - w->done);
		}
		for (int i = 0; i < n; i++) {
			w->fails += cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4) != 0;
			w->done++;
			if (w->pause_us)
				usleep(w->pause_us);
		}
	}
	/*
	 * Done, but not ended: a thread that ends has its records flushed by the
	 * spy, and the process must end with its threads alive, as programs do.
	 */
	pthread_mutex_lock(&finish_lock);
	finished++;
	pthread_cond_signal(&finish_cond);
	pthread_mutex_unlock(&finish_lock);
	for (;;)
		pause();
	return NULL;
}

static int
open_count(const char *path)
{
	int f;

	if (!path)
		return -1;
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_SYNC | O_CLOEXEC, 0644);
	if (f < 0) {
		perror(path);
		exit(2);
	}
	return f;
}

/* THREADS workers, LIMIT calls in all (< 0: forever); returns the calls made. */
static long
calls(int threads, long limit, int batch, useconds_t pause_us, long rate, int fd)
{
	static struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	long total = 0;

	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){ .index = i, .fd = fd, .batch = batch, .pause_us = pause_us, .rate = rate,
				 .limit = -1 };
		if (limit >= 0)
			w[i].limit = limit / threads + (i < limit % threads);
		if (pthread_create(&th[i], NULL, work, &w[i]) != 0) {
			fprintf(stderr, "kill-count: pthread_create failed\n");
			exit(2);
		}
	}
	/* Forever: never finished. LIMIT calls: the workers stay, blocked (work()). */
	pthread_mutex_lock(&finish_lock);
	while (finished < threads)
		pthread_cond_wait(&finish_cond, &finish_lock);
	pthread_mutex_unlock(&finish_lock);
	for (int i = 0; i < threads; i++)
		total += w[i].done;
	return total;
}

static int
fork_mode(int threads, const char *countfile)
{
	pid_t pid[CHILDREN];
	char line[128];

	for (int i = 0; i < 7; i++)
		cudnnGetVersion();
	for (int k = 0; k < CHILDREN; k++) {
		pid[k] = fork();
		if (pid[k] < 0) {
			perror("fork");
			return 2;
		}
		if (pid[k] == 0) {
			char name[4096];

			snprintf(name, sizeof(name), "%s.child%d", countfile ? countfile : "/dev/null", k);
			calls(threads, -1, BATCH, 0, CHILD_RATE, countfile ? open_count(name) : -1);
			_exit(0);
		}
		snprintf(line, sizeof(line), "child %d %d\n", k, (int)pid[k]);
		say(line);
	}
	usleep(800000);
	for (int k = 0; k < CHILDREN; k++)
		kill(pid[k], SIGKILL);
	for (int k = 0; k < CHILDREN; k++) {
		int status = 0;

		while (waitpid(pid[k], &status, 0) < 0 && errno == EINTR)
			;
		snprintf(line, sizeof(line), "child %d signal %d\n", k, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
		say(line);
	}
	return 0;
}

/* Kept where the compiler cannot see that nothing reads it. */
void *volatile kill_count_eaten;

static void
eat_memory(void)
{
	const size_t chunk = 1 << 20;

	for (size_t eaten = 0; eaten < ((size_t)2 << 30); eaten += chunk) {
		char *p = malloc(chunk);

		if (!p)
			break;
		for (size_t i = 0; i < chunk; i += 4096)
			p[i] = (char)(i >> 12) | 1;
		*(void **)p = kill_count_eaten;
		kill_count_eaten = p;
	}
	fprintf(stderr, "kill-count: 2 GiB allocated and not killed\n");
	_exit(3);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	const char *countfile = argc > 3 ? argv[3] : NULL;
	const char *eq = strchr(mode, '=');
	long n = eq ? strtol(eq + 1, NULL, 10) : -1;
	size_t len = eq ? (size_t)(eq - mode) : strlen(mode);
	char line[64];
	long made;

	if (argc < 3 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: kill-count MODE THREADS [COUNTFILE]\n");
		return 2;
	}
	if (strcmp(mode, "fork") == 0)
		return fork_mode(threads, countfile);
	if (strncmp(mode, "forever", len) == 0 && len == 7) {
		calls(threads, -1, BATCH, 0, n > 0 ? n : 0, open_count(countfile));
		return 0;
	}
	if (strcmp(mode, "slow") == 0) {
		calls(threads, -1, 1, 10000, 0, open_count(countfile));
		return 0;
	}
	if (n < 0) {
		fprintf(stderr, "kill-count: unknown mode '%s'\n", mode);
		return 2;
	}
	made = calls(threads, n, BATCH, 0, 0, open_count(countfile));
	snprintf(line, sizeof(line), "calls %ld\n", made);
	say(line);
	if (strncmp(mode, "calls", len) == 0 && len == 5)
		return 0;
	if (strncmp(mode, "stop", len) == 0 && len == 4) {
		raise(SIGSTOP);
		return 0;
	}
	if (strncmp(mode, "_exit", len) == 0 && len == 5)
		_exit(0);
	if (strncmp(mode, "exec", len) == 0 && len == 4) {
		char *args[] = { "true", NULL };

		execv("/bin/true", args);
		perror("execv /bin/true");
		return 4;
	}
	if (strncmp(mode, "abort", len) == 0 && len == 5)
		abort();
	if (strncmp(mode, "oom", len) == 0 && len == 3)
		eat_memory();
	fprintf(stderr, "kill-count: unknown mode '%s'\n", mode);
	return 2;
}
