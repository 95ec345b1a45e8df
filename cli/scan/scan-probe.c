/*
 * The version of a dispatcher whose file name does not carry one (pip
 * wheels and the CUDA toolkit ship only libcudnn.so.9): a forked helper
 * loads it and calls cudnnGetVersion(), and writes the answer down a
 * pipe. Loading runs the library's constructors, so the scan itself
 * never does it: whatever the file does, the helper crashes, hangs or
 * exits on its own, and the scan reports that.
 */
#include "scan-int.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
say(int fd, const char *kind, const char *text)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "%s %s", kind, text ? text : "");

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	/* One line: the parent stops at the first newline. */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(fd, line, (size_t)n) < 0)
		(void)0;
}

/*
 * Whom the helper runs as. Loading a library runs its constructors, so a
 * scan run as root loads only a file that nobody but root and the file's
 * owner could have changed: the file and every directory above it belong
 * to one of them, and none is writable by its group or by everyone (a
 * sticky directory excepted: there only an entry's owner may rename it).
 * Root's own files load as root, another user's as that user. Otherwise
 * -1 and why: the version is then not read.
 */
static int
loader_identity(const char *path, uid_t *uid, gid_t *gid, char *why, size_t whylen)
{
	char real[PATH_MAX];
	struct stat st;

	*uid = geteuid();
	*gid = getegid();
	if (*uid != 0)
		return 0;
	if (!realpath(path, real) || stat(real, &st) != 0) {
		snprintf(why, whylen, "not read: cannot resolve it (%s)", strerror(errno));
		return -1;
	}
	*uid = st.st_uid;
	*gid = st.st_gid;
	for (;;) {
		char *slash;

		if (stat(real, &st) != 0) {
			snprintf(why, whylen, "not read: cannot look at %.120s (%s)", real, strerror(errno));
			return -1;
		}
		if (st.st_uid != 0 && st.st_uid != *uid) {
			snprintf(why, whylen, "not read: the scan runs as root and does not load it, since %.120s "
				 "belongs to another user (uid %u)", real, (unsigned)st.st_uid);
			return -1;
		}
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))) {
			snprintf(why, whylen, "not read: the scan runs as root and does not load it, since %.120s "
				 "is writable by %s", real, st.st_mode & S_IWOTH ? "everyone" : "its group");
			return -1;
		}
		if (strcmp(real, "/") == 0)
			break;
		slash = strrchr(real, '/');
		if (!slash)
			break;
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return 0;
}

static int
become(uid_t uid, gid_t gid)
{
	if (geteuid() != 0 || uid == 0)
		return 0;
	if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
		return -1;
	return 0;
}

static void __attribute__((noreturn))
helper(const char *path, int fd, pid_t parent, uid_t uid, gid_t gid)
{
	struct rlimit no_core = { 0, 0 };
	size_t (*get_version)(void);
	char num[32];
	void *h;
	int null;

	/* Own process group, so that anything it starts is killed with it; and gone if the scan is. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(5);
	setrlimit(RLIMIT_CORE, &no_core);
	if (become(uid, gid) != 0) {
		say(fd, "E", "cannot take the file owner's identity to load it");
		_exit(6);
	}
	/* Whatever the library prints must not land in the scan's output. */
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		say(fd, "E", dlerror());
		_exit(3);
	}
	*(void **)&get_version = dlsym(h, "cudnnGetVersion");
	if (!get_version) {
		say(fd, "E", "it has no cudnnGetVersion");
		_exit(4);
	}
	snprintf(num, sizeof(num), "%zu", get_version());
	say(fd, "V", num);
	/* No destructors: they are the library's, and they could hang too. */
	_exit(0);
}

/* The children of this process now, from /proc; at most `max`. */
static size_t
children(pid_t *out, size_t max)
{
	pid_t me = getpid();
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		char file[300], line[512], *close_paren;
		long ppid;
		ssize_t len;
		int fd;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(file, sizeof(file), "/proc/%s/stat", e->d_name);
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, line, sizeof(line) - 1);
		close(fd);
		if (len <= 0)
			continue;
		line[len] = '\0';
		/* "pid (comm) state ppid ...": comm may hold anything, even ')'. */
		close_paren = strrchr(line, ')');
		if (close_paren && sscanf(close_paren + 1, " %*c %ld", &ppid) == 1 && ppid == me)
			out[n++] = (pid_t)atol(e->d_name);
	}
	closedir(d);
	return n;
}

/*
 * What the helper started outside its process group (setsid, then fork)
 * outlives it. The scan is the child subreaper (scan_probe_version), so
 * such orphans become its children: each is killed and reaped, and theirs
 * after them, until none is left or two seconds have passed.
 */
static void
reap_orphans(void)
{
	long until = now_ms() + 2000;

	while (now_ms() < until) {
		pid_t kids[256];
		size_t n = children(kids, sizeof(kids) / sizeof(kids[0]));
		int status;

		for (size_t i = 0; i < n; i++)
			kill(kids[i], SIGKILL);
		while (waitpid(-1, &status, WNOHANG) > 0)
			;
		if (n == 0 && waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD)
			return;
		usleep(2000);
	}
}

void
scan_probe_version(const char *path, int timeout_ms, struct scan_probe *p)
{
	char buf[512];
	size_t len = 0;
	long deadline;
	int pipefd[2], status = 0, timed_out = 0, reaped;
	pid_t pid, parent;
	uid_t uid;
	gid_t gid;

	memset(p, 0, sizeof(*p));
	if (loader_identity(path, &uid, &gid, p->why, sizeof(p->why)) != 0)
		return;
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		snprintf(p->why, sizeof(p->why), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	parent = getpid();
	/* Orphans of the helper become this process's children, not init's: reap_orphans(). */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = fork();
	if (pid < 0) {
		snprintf(p->why, sizeof(p->why), "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return;
	}
	if (pid == 0) {
		close(pipefd[0]);
		helper(path, pipefd[1], parent, uid, gid);
	}
	/* Also from here, so that the kill below reaches the group even if the child has not run yet. */
	setpgid(pid, pid);
	close(pipefd[1]);
	deadline = now_ms() + timeout_ms;
	while (len < sizeof(buf) - 1 && !memchr(buf, '\n', len)) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		long left = deadline - now_ms();
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;
		ssize_t n;

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready == 0) {
			timed_out = 1;
			break;
		}
		if (ready < 0)
			break;
		n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(pipefd[0]);
	/*
	 * Waits a little for a natural end, so that a crash after the
	 * answer is still seen; then the group goes, whatever it does.
	 */
	reaped = 0;
	if (!timed_out) {
		long until = now_ms() + 1000;

		while (now_ms() < until) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			if (w == pid) {
				reaped = 1;
				break;
			}
			if (w < 0 && errno != EINTR)
				break;
			usleep(2000);
		}
	}
	kill(-pid, SIGKILL);
	if (!reaped) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	reap_orphans();
	if (strncmp(buf, "V ", 2) == 0 && memchr(buf, '\n', len)) {
		char *end;
		unsigned long long v;

		errno = 0;
		v = strtoull(buf + 2, &end, 10);
		if (errno == 0 && end != buf + 2 && *end == '\n') {
			p->ok = 1;
			p->version = (size_t)v;
			return;
		}
	}
	if (timed_out) {
		snprintf(p->why, sizeof(p->why), "the version helper did not answer within %d.%d s and was killed",
		    timeout_ms / 1000, timeout_ms % 1000 / 100);
	} else if (strncmp(buf, "E ", 2) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		/* dlerror() names the file again; the 200 bytes that matter come first. */
		snprintf(p->why, sizeof(p->why), "the version helper could not load it: %.200s", buf + 2);
	} else if (reaped && WIFSIGNALED(status)) {
		snprintf(p->why, sizeof(p->why), "the version helper crashed loading it (signal %d, %s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (reaped && WIFEXITED(status)) {
		snprintf(p->why, sizeof(p->why), "the version helper exited with status %d before answering",
		    WEXITSTATUS(status));
	} else {
		snprintf(p->why, sizeof(p->why), "the version helper gave no answer");
	}
}
