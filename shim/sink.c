/*
 * The record file. Opened at the first record (a process that records
 * nothing leaves no file), never through an existing file or a symlink,
 * reopened under the child's own pid after a fork. Threads fill their own
 * buffers and write whole lines with one write(2) each, on O_APPEND, so
 * lines never tear. When the file cannot be written the spy says so once,
 * counts what it drops, and the program runs on.
 */
#include "core.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static pid_t fd_pid;
static int gave_up;		/* opening failed in this process: stop trying */
static char path[PATH_MAX + 16];
static unsigned long long dropped;
static int opened;		/* the file of this process was opened (or tried): commits need not look */
static int write_said;

int
spy_sink_enabled(void)
{
	return spy_config.output[0] &&
	       !(__atomic_load_n(&gave_up, __ATOMIC_ACQUIRE) && __atomic_load_n(&fd_pid, __ATOMIC_ACQUIRE) == getpid());
}

int
spy_sink_crash_fd(void)
{
	int f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);

	return f >= 0 && __atomic_load_n(&fd_pid, __ATOMIC_ACQUIRE) == getpid() ? f : -1;
}

const char *
spy_sink_path(void)
{
	return fd >= 0 && fd_pid == getpid() ? path : NULL;
}

unsigned long long
spy_sink_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

static const char *
rank(void)
{
	static const char *vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 10)
			return v;
	}
	return NULL;
}

static void
append(char *out, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n >= size)
		n = size - 1 - *len;
	memcpy(out + *len, s, n);
	*len += n;
	out[*len] = 0;
}

int
spy_sink_expand(const char *o, int is_dir, const char *prog, const char *host, const char *pid, const char *r,
		char *out, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return -1;
	out[0] = 0;
	if (!o[0])
		return -1;
	if (is_dir || o[strlen(o) - 1] == '/') {
		append(out, size, &len, o);
		if (len > 0 && out[len - 1] != '/')
			append(out, size, &len, "/");
		append(out, size, &len, prog);
		append(out, size, &len, ".");
		append(out, size, &len, host);
		append(out, size, &len, ".");
		append(out, size, &len, pid);
		if (r) {
			append(out, size, &len, ".r");
			append(out, size, &len, r);
		}
		append(out, size, &len, ".cudnnspy.jsonl");
	} else {
		/* A pattern. */
		for (const char *p = o; *p; p++) {
			char c[2] = { *p, 0 };

			if (*p != '%' || !p[1]) {
				append(out, size, &len, c);
				continue;
			}
			p++;
			if (*p == 'p')
				append(out, size, &len, pid);
			else if (*p == 'h')
				append(out, size, &len, host);
			else if (*p == 'r')
				append(out, size, &len, r ? r : "norank");
			else if (*p == 'e')
				append(out, size, &len, prog);
			else if (*p == '%')
				append(out, size, &len, "%");
			else {
				c[0] = '%';
				append(out, size, &len, c);
				c[0] = *p;
				append(out, size, &len, c);
			}
		}
	}
	return len + 8 < size ? 0 : -1;
}

/* Expands CUDNNSPY_OUTPUT for this process. Returns -1 when too long. */
static int
file_name(char *out, size_t size)
{
	const char *o = spy_config.output;
	char host[256] = "unknown", pid[16];
	struct stat st;

	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return spy_sink_expand(o, stat(o, &st) == 0 && S_ISDIR(st.st_mode), program_invocation_short_name, host, pid,
			       rank(), out, size);
}

/*
 * A directory where another user could swap the file for a link: refused,
 * unless it is sticky (like /tmp), where only the owner may rename.
 */
static const char *
unsafe_directory(const char *file)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	struct stat st;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == file)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file);
	if (stat(dir, &st) != 0)
		return strerror(errno);
	if (!S_ISDIR(st.st_mode))
		return "not a directory";
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return "its directory is writable by everyone and not sticky";
	if (st.st_uid != geteuid() && st.st_uid != 0 && (st.st_mode & (S_IWGRP | S_IWOTH)))
		return "its directory belongs to another user who can write in it";
	return NULL;
}

static void
write_all(int f, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(f, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			unsigned long long lines = 0;

			for (size_t i = 0; i < len; i++)
				lines += data[i] == '\n';
			__atomic_add_fetch(&dropped, lines ? lines : 1, __ATOMIC_RELAXED);
			spy_log_once(&write_said, "cannot write %s: %s; records are dropped and counted, the "
				     "summary still goes to stderr", path, n < 0 ? strerror(errno) : "short write");
			return;
		}
		data += n;
		len -= (size_t)n;
	}
}

static void header(int f);

/* The file for this process, opened on first use; -1 when there is none. */
static int
sink_fd(void)
{
	pid_t me = getpid();
	int f;

	f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&fd_pid, __ATOMIC_ACQUIRE) == me && f >= 0)
		return f;
	pthread_mutex_lock(&open_lock);
	if (fd_pid != me) {
		/* A forked child: the parent's file is the parent's. */
		if (fd >= 0)
			close(fd);
		/* Atomic: spy_sink_enabled() and the fast path above read these without the lock. */
		__atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
		__atomic_store_n(&gave_up, 0, __ATOMIC_RELEASE);
		write_said = 0;
		__atomic_store_n(&fd_pid, me, __ATOMIC_RELEASE);
	}
	if (fd < 0 && !gave_up && spy_config.output[0]) {
		char name[PATH_MAX];
		const char *why = NULL;
		struct stat st;

		if (file_name(name, sizeof(name) - 8) != 0)
			why = "the name is too long";
		else if (lstat(name, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			/* A device (/dev/full), FIFO or socket: no file of ours, not even beside it. */
			why = "it exists and is not a regular file";
		else
			why = unsafe_directory(name);
		for (int i = 0; !why && i < 100; i++) {
			if (i)
				snprintf(path, sizeof(path), "%s.%d", name, i);
			else
				snprintf(path, sizeof(path), "%s", name);
			f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
			if (f >= 0) {
				/* Published only after the header: other threads write as soon as they see it. */
				header(f);
				__atomic_store_n(&fd, f, __ATOMIC_RELEASE);
				break;
			}
			if (errno != EEXIST) {
				why = strerror(errno);
				break;
			}
		}
		if (fd < 0) {
			__atomic_store_n(&gave_up, 1, __ATOMIC_RELEASE);
			spy_log("cannot create a record file from CUDNNSPY_OUTPUT=%s (%s: %s); failures and the "
				"summary still go to stderr", spy_config.output, name,
				why ? why : "100 files of that name exist");
		}
	}
	f = fd;
	__atomic_store_n(&opened, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&open_lock);
	return f;
}

struct spy_buf *
spy_thread_buf(struct spy_thread *th)
{
	if (!th->buf)
		th->buf = calloc(1, sizeof(*th->buf));
	return th->buf;
}

static void
lock(struct spy_buf *b)
{
	while (__atomic_exchange_n(&b->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void
unlock(struct spy_buf *b)
{
	__atomic_store_n(&b->lock, 0, __ATOMIC_RELEASE);
}

static void
flush_locked(struct spy_buf *b)
{
	int f;

	if (!b->len)
		return;
	f = sink_fd();
	if (f >= 0) {
		write_all(f, b->out, b->len);
	} else {
		unsigned long long lines = 0;

		for (size_t i = 0; i < b->len; i++)
			lines += b->out[i] == '\n';
		__atomic_add_fetch(&dropped, lines, __ATOMIC_RELAXED);
	}
	b->len = 0;
}

void
spy_sink_flush(struct spy_thread *th)
{
	struct spy_buf *b = th->buf;

	if (!b)
		return;
	lock(b);
	flush_locked(b);
	unlock(b);
}

void
spy_sink_commit(struct spy_thread *th, struct spy_line *l, int now)
{
	struct spy_buf *b = th->buf;

	if (l->overflow) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	spy_line_char(l, '\n');
	if (l->overflow) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * Open the file at the first record, so that a crash handler can write to
	 * it; but not before the real library is known, which the header names.
	 */
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_resolved())
		sink_fd();
	lock(b);
	if (b->len + l->len > sizeof(b->out))
		flush_locked(b);
	if (l->len > sizeof(b->out)) {
		/* Longer than the whole buffer: after what came before it, in one write of its own. */
		int f = sink_fd();

		if (f >= 0)
			write_all(f, l->data, l->len);
		else
			__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	} else {
		memcpy(b->out + b->len, l->data, l->len);
		b->len += l->len;
	}
	if (now || b->len > sizeof(b->out) * 3 / 4)
		flush_locked(b);
	unlock(b);
	/* A rare huge record does not keep its memory for the rest of the thread's life. */
	if (l->cap > 4 * SPY_OUT_SIZE)
		spy_line_free(l);
}

void
spy_sink_fork_child(void)
{
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
		if (th->buf) {
			th->buf->len = 0;
			th->buf->lock = 0;
		}
	}
	pthread_mutex_init(&open_lock, NULL);
	opened = 0;
}

/* The first line: who, where, which cuDNN. */
static void
header(int f)
{
	struct spy_line *l = calloc(1, sizeof(*l));
	char host[256] = "unknown", cmdline[4096];
	struct timespec wall, mono;
	const char *r = rank();
	ssize_t n = -1;
	int cf;

	if (!l)
		return;
	spy_line_reset(l);
	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	cf = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (cf >= 0) {
		n = read(cf, cmdline, sizeof(cmdline) - 1);
		close(cf);
	}
	spy_line_lit(l, "{\"event\":\"header\",\"schema\":1,\"spy\":");
	spy_line_str(l, SPY_VERSION);
	spy_line_lit(l, ",\"mode\":");
	spy_line_str(l, spy_flavor.name);
	spy_line_lit(l, ",\"program\":");
	spy_line_str(l, program_invocation_short_name);
	spy_line_lit(l, ",\"argv\":[");
	for (ssize_t i = 0; i < n;) {
		if (i)
			spy_line_char(l, ',');
		cmdline[n] = 0;
		spy_line_str(l, cmdline + i);
		i += (ssize_t)strlen(cmdline + i) + 1;
	}
	spy_line_lit(l, "],\"pid\":");
	spy_line_i64(l, getpid());
	spy_line_lit(l, ",\"ppid\":");
	spy_line_i64(l, getppid());
	spy_line_lit(l, ",\"host\":");
	spy_line_str(l, host);
	spy_line_lit(l, ",\"rank\":");
	if (r)
		spy_line_raw(l, r);
	else
		spy_line_lit(l, "null");
	spy_line_lit(l, ",\"start_unix_ns\":");
	spy_line_u64(l, (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec);
	spy_line_lit(l, ",\"start_mono_ns\":");
	spy_line_u64(l, (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec);
	spy_line_lit(l, ",\"library\":");
	if (spy_lib.handle) {
		spy_line_lit(l, "{\"path\":");
		spy_line_str(l, spy_lib.path);
		spy_line_lit(l, ",\"version\":");
		spy_line_u64(l, spy_lib.version);
		spy_line_lit(l, ",\"cudart\":");
		spy_line_u64(l, spy_lib.cudart);
		spy_line_lit(l, ",\"how\":");
		spy_line_str(l, spy_lib.how);
		spy_line_char(l, '}');
	} else {
		spy_line_lit(l, "null");
	}
	spy_line_lit(l, "}\n");
	if (!l->overflow)
		write_all(f, l->data, l->len);
	spy_line_free(l);
	free(l);
}
