/*
 * The ways a process ends or changes shape under the spy, one per mode:
 *   segv, segv-own-handler, abort   fatal signals (the crash handler chains)
 *   exit-thread                     exit() called from another thread
 *   _exit                           records flushed at the failure survive
 *   late-call                       cuDNN called from a destructor after the spy's exit handler
 *   dlclose LIB                     the library closed while the spy holds its functions
 *   fork-inside                     fork while other threads are inside cuDNN
 *   spawn PROGRAM                   posix_spawn and vfork+exec of a child
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "g_prototypes.h"

extern char **environ;

static void
some_calls(void)
{
	cudnnTensorDescriptor_t t;

	cudnnGetVersion();
	cudnnCreateTensorDescriptor(&t);
	cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
}

static void
own_handler(int sig)
{
	static const char msg[] = "own handler\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

static void *
exiting_thread(void *arg)
{
	(void)arg;
	some_calls();
	exit(0);
}

static void *
inside(void *arg)
{
	cudnnHandle_t h = arg;
	float one = 1;

	cudnnAddTensor(h, &one, NULL, NULL, &one, NULL, NULL);
	return NULL;
}

__attribute__((destructor)) static void
late(void)
{
	if (getenv("ENDINGS_LATE")) {
		cudnnHandle_t h;

		cudnnGetVersion();
		cudnnCreate(&h);
	}
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "segv-own-handler") == 0)
		signal(SIGSEGV, own_handler);
	if (strncmp(mode, "segv", 4) == 0) {
		some_calls();
		fflush(stdout);
		*(volatile int *)(uintptr_t)argc = 1;	/* argc is never a valid address */
	} else if (strcmp(mode, "abort") == 0) {
		some_calls();
		abort();
	} else if (strcmp(mode, "exit-thread") == 0) {
		pthread_t th;

		pthread_create(&th, NULL, exiting_thread, NULL);
		pause();
	} else if (strcmp(mode, "_exit") == 0) {
		cudnnHandle_t h;

		some_calls();
		cudnnCreate(&h);	/* fails (the test says so): flushed at once */
		_exit(0);
	} else if (strcmp(mode, "late-call") == 0) {
		setenv("ENDINGS_LATE", "1", 1);
		some_calls();
	} else if (strcmp(mode, "dlclose") == 0) {
		void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		size_t (*v)(void);

		if (!h)
			return 2;
		*(void **)&v = dlsym(h, "cudnnGetVersion");
		printf("before %zu\n", v());
		dlclose(h);
		h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
		*(void **)&v = h ? dlsym(h, "cudnnGetVersion") : NULL;
		printf("after %zu\n", v ? v() : 0);
		if (getenv("ENDINGS_STALE")) {
			/*
			 * Only under the spy: the pointer taken before the dlclose is the
			 * spy's wrapper, which finds the copy gone and answers NOT_INITIALIZED.
			 */
			dlclose(h);
			printf("stale %zu\n", v());
		}
	} else if (strcmp(mode, "fork-inside") == 0) {
		cudnnHandle_t h;
		pthread_t th[3];
		pid_t pid;
		int status;

		cudnnCreate(&h);
		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, inside, h);
		usleep(100000);	/* they now sleep inside cudnnAddTensor (FAKECUDNN_SLEEP_US) */
		pid = fork();
		if (pid == 0) {
			printf("child version %zu\n", cudnnGetVersion());
			exit(0);
		}
		waitpid(pid, &status, 0);
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		printf("parent done, child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (strcmp(mode, "spawn") == 0) {
		char *child[] = { argv[2], NULL };
		pid_t a, b;
		int sa, sb;

		some_calls();
		if (posix_spawn(&a, argv[2], NULL, NULL, child, environ) != 0)
			return 2;
		b = vfork();
		if (b == 0) {
			execve(argv[2], child, environ);
			_exit(127);
		}
		waitpid(a, &sa, 0);
		waitpid(b, &sb, 0);
		printf("children %d %d\n", WEXITSTATUS(sa), WEXITSTATUS(sb));
	} else {
		return 2;
	}
	return 0;
}
