/*
 * A program that does what programs do to their file descriptors, signals
 * and process, one thing per mode (docs/reliability.md, issue 15). Each
 * mode prints what it saw, so that a run under the spy can be compared with
 * a run without it.
 *   stdout-closed     stdout closed before the first cuDNN call, then written to
 *   stderr-closed     stderr closed before failing calls
 *   closefrom         every fd above 2 closed after the first records, then a file of its own
 *   fork-own-file     a forked child closes what it inherited and opens a file of its own
 *   exec PROGRAM      traced calls, a failure, then exec without exit (cudnnspy_flush() first
 *                     when HOSTILE_FLUSH is set)
 *   exit-race         exit() while other threads keep calling
 *   exit-destructor   800 threads calling from a thread-exit destructor that runs after the spy's
 *   sa-mask           a SIGSEGV handler installed with sa_mask: is that mask in force?
 *   nodefer           a SIGSEGV handler with SA_NODEFER that faults once more inside itself
 *   segv-recover      a SIGSEGV handler that siglongjmps back, then more calls
 *   abort-ignored     SIGABRT ignored, raised, then more calls
 *   first-fd          the descriptor the program's first open() gets, after failing calls
 *   errno             errno after the first cuDNN call
 *   errno-kept        errno set by the program before each kind of call, read after it: a new Set, the
 *                     same Set again, another, a failing one, a Get, a Destroy
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "g_prototypes.h"

static void
some_calls(void)
{
	cudnnTensorDescriptor_t t;

	cudnnGetVersion();
	cudnnCreateTensorDescriptor(&t);
	cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
}

/* A failing call: the spy writes its record at once. */
static void
failing_call(void)
{
	cudnnHandle_t h;

	cudnnCreate(&h);
}

/* The file's contents on stdout, to compare. */
static int
show(const char *path)
{
	char buf[4096];
	int f = open(path, O_RDONLY);
	ssize_t n;

	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n < 0)
		return -1;
	buf[n] = 0;
	printf("%s holds [%s]\n", path, buf);
	return 0;
}

static int
own_file(const char *path, const char *text)
{
	int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (f < 0)
		return -1;
	printf("own file fd %d\n", f);
	fflush(stdout);
	failing_call();
	if (write(f, text, strlen(text)) < 0)
		return -1;
	failing_call();
	close(f);
	return show(path);
}

static volatile int stop;
/* Read through a volatile pointer: the compiler cannot see that it is NULL. */
static int *volatile nowhere;

static void
fault(void)
{
	*nowhere = 1;
}

static int made;	/* calls the callers made: exit-race exits once they are calling */

static void *
caller(void *arg)
{
	(void)arg;
	while (!stop) {
		cudnnGetVersion();
		__atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Calls made from a thread-exit destructor that runs after the spy's own. */
static pthread_key_t late_key;

static void
late_calls(void *arg)
{
	cudnnTensorDescriptor_t t = arg;

	for (int i = 0; i < 400; i++)
		cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
	cudnnDestroyTensorDescriptor(t);
}

static void *
exiting(void *arg)
{
	cudnnTensorDescriptor_t t;

	(void)arg;
	cudnnCreateTensorDescriptor(&t);
	pthread_setspecific(late_key, t);
	return NULL;
}

static sigjmp_buf jump;
static volatile int depth;

static void
mask_handler(int sig)
{
	sigset_t now;
	char msg[64];
	int n;

	(void)sig;
	pthread_sigmask(SIG_BLOCK, NULL, &now);
	n = snprintf(msg, sizeof(msg), "in handler: SIGUSR1 blocked %d, SIGSEGV blocked %d\n",
		     sigismember(&now, SIGUSR1), sigismember(&now, SIGSEGV));
	if (write(STDOUT_FILENO, msg, (size_t)n) < 0)
		_exit(4);
	_exit(5);
}

static void
nodefer_handler(int sig)
{
	(void)sig;
	if (depth++ == 0) {
		fault();	/* again, inside the handler */
		_exit(4);
	}
	if (write(STDOUT_FILENO, "nested\n", 7) < 0)
		_exit(4);
	_exit(6);
}

static void
jump_handler(int sig)
{
	(void)sig;
	siglongjmp(jump, 1);
}

static void
install(int sig, void (*fn)(int), int flags, int masked)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (masked)
		sigaddset(&sa.sa_mask, masked);
	sigaction(sig, &sa, NULL);
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "stdout-closed") == 0) {
		ssize_t w;

		close(STDOUT_FILENO);
		some_calls();
		failing_call();
		w = write(STDOUT_FILENO, "lost\n", 5);
		/* Without a stdout, the exit status says what happened. */
		return w < 0 ? 7 : 8;
	} else if (strcmp(mode, "stderr-closed") == 0) {
		close(STDERR_FILENO);
		some_calls();
		failing_call();
		failing_call();
		printf("done\n");
	} else if (strcmp(mode, "closefrom") == 0 && argc > 2) {
		some_calls();
		failing_call();
		for (int f = 3; f < 4096; f++)
			close(f);
		if (own_file(argv[2], "mine\n") != 0)
			return 2;
	} else if (strcmp(mode, "fork-own-file") == 0 && argc > 2) {
		pid_t pid;
		int status;

		some_calls();
		failing_call();
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			for (int f = 3; f < 4096; f++)
				close(f);
			int r = own_file(argv[2], "child\n");

			fflush(stdout);
			_exit(r != 0);
		}
		waitpid(pid, &status, 0);
		printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (strcmp(mode, "exec") == 0 && argc > 2) {
		char *child[] = { argv[2], NULL };

		void (*flush)(void);

		/* The failure first: it flushes what was buffered before it. */
		failing_call();
		for (int i = 0; i < 50; i++)
			cudnnGetVersion();
		some_calls();
		fflush(stdout);
		/* What docs/reliability.md advises before an exec: the spy cannot see one coming. */
		*(void **)&flush = dlsym(RTLD_DEFAULT, "cudnnspy_flush");
		if (getenv("HOSTILE_FLUSH") && flush)
			flush();
		execv(argv[2], child);
		return 2;
	} else if (strcmp(mode, "exit-race") == 0) {
		pthread_t th[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, caller, NULL);
		/* On a loaded machine the threads may not have begun after 5 ms: exit once they call (or after 5 s). */
		usleep(5000);
		for (int i = 0; i < 5000 && __atomic_load_n(&made, __ATOMIC_RELAXED) < 100; i++)
			usleep(1000);
		printf("exiting\n");
		exit(0);
	} else if (strcmp(mode, "exit-destructor") == 0) {
		/* The spy's key exists from the first call; the program's, made after it, runs after it. */
		cudnnGetVersion();
		pthread_key_create(&late_key, late_calls);
		for (int round = 0; round < 100; round++) {
			pthread_t th[8];

			for (int i = 0; i < 8; i++)
				pthread_create(&th[i], NULL, exiting, NULL);
			for (int i = 0; i < 8; i++)
				pthread_join(th[i], NULL);
		}
		printf("800 threads\n");
	} else if (strcmp(mode, "sa-mask") == 0) {
		install(SIGSEGV, mask_handler, 0, SIGUSR1);
		some_calls();
		fault();
		return 2;
	} else if (strcmp(mode, "nodefer") == 0) {
		install(SIGSEGV, nodefer_handler, SA_NODEFER, 0);
		some_calls();
		fault();
		return 2;
	} else if (strcmp(mode, "segv-recover") == 0) {
		install(SIGSEGV, jump_handler, 0, 0);
		some_calls();
		for (int i = 0; i < 3; i++) {
			if (sigsetjmp(jump, 1) == 0)
				fault();
			else
				printf("recovered %d\n", i);
		}
		some_calls();
	} else if (strcmp(mode, "abort-ignored") == 0) {
		signal(SIGABRT, SIG_IGN);
		some_calls();
		raise(SIGABRT);
		printf("survived\n");
		some_calls();
	} else if (strcmp(mode, "first-fd") == 0) {
		int f;

		some_calls();
		failing_call();
		failing_call();
		f = open("/dev/null", O_RDONLY);
		printf("first free fd %d\n", f);
	} else if (strcmp(mode, "errno") == 0) {
		size_t v;

		errno = 0;
		v = cudnnGetVersion();
		printf("version %zu errno %d\n", v, errno);
	} else if (strcmp(mode, "errno-kept") == 0) {
		cudnnTensorDescriptor_t t = NULL;
		cudnnDataType_t dt;
		int n, c, h, w, ns, cs, hs, ws, st;

		/* Each status and errno printed right after the call, before any other libc call can set errno. */
		errno = 71;
		st = cudnnCreateTensorDescriptor(&t);
		printf("create %d errno %d\n", st, errno);
		errno = 72;
		st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
		printf("set %d errno %d\n", st, errno);
		errno = 73;
		st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 3, 4);
		printf("same set %d errno %d\n", st, errno);
		errno = 74;
		st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, 2, 3, 4, 5);
		printf("other set %d errno %d\n", st, errno);
		errno = 75;
		st = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 0, 2, 3, 4);
		printf("failed set %d errno %d\n", st, errno);
		errno = 76;
		st = cudnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws);
		printf("get %d errno %d\n", st, errno);
		errno = 77;
		st = cudnnDestroyTensorDescriptor(t);
		printf("destroy %d errno %d\n", st, errno);
	} else {
		return 2;
	}
	return 0;
}
