/*
 * The record file. Opened at the first record (a process that records
 * nothing leaves no file), never through an existing file or a symlink,
 * reopened under the child's own pid after a fork. Threads fill their own
 * buffers and write whole lines, one writer at a time, on O_APPEND, so
 * lines never tear (put()). When the file cannot be written the spy says
 * so once, counts what it drops, and the program runs on.
 *
 * The descriptor is the program's business as much as the spy's: it is
 * never 0, 1 or 2, it sits far above the numbers programs use, and before
 * each write the spy checks that the number still names its file (a
 * program may close every descriptor and open its own under that number).
 */
#include "core.h"
#include "recfmt.h"
#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* Writers take turns: whole lines must fit in the room there is (put()). */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static pid_t fd_pid;
static dev_t fd_dev;		/* what the file is, to know it from a file that took its number */
static ino_t fd_ino;
static int gave_up;		/* opening failed in this process: stop trying */
static int full;		/* the file-size limit is reached: recording has ended */
static char path[PATH_MAX + 16];
static unsigned long long dropped;
static int opened;		/* the file of this process was opened (or tried): commits need not look */
static int write_said, limit_said, lost_said;
/* The exit handler has begun: only its thread writes from now on (spy_sink_seal). */
static int sealed;
static pthread_t sealer;

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

		if (!v || !*v || strspn(v, "0123456789") != strlen(v))
			continue;
		/* RANK=007 is rank 7: JSON has no leading zeros, and the file name says the same. */
		while (v[0] == '0' && v[1])
			v++;
		if (strlen(v) < 10)
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
		append(out, size, &len, spy_config.format == SPY_FORMAT_BINARY ? ".cudnnspy.rec" : ".cudnnspy.jsonl");
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

/*
 * A name for a file name and a stderr line: control bytes and '/' become
 * '_' (a program named with a newline made the "records in" line two, and
 * repro --list's too: issue 27).
 */
static void
plain_name(char *out, size_t size, const char *s)
{
	size_t n = 0;

	for (; s && *s && n + 1 < size; s++)
		out[n++] = (unsigned char)*s < 0x20 || *s == 0x7f || *s == '/' ? '_' : *s;
	out[n] = 0;
}

/* Expands CUDNNSPY_OUTPUT for this process. Returns -1 when too long. */
static int
file_name(char *out, size_t size)
{
	const char *o = spy_config.output;
	char host[256] = "unknown", pid[16], prog[256], plain_host[256];
	struct stat st;

	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = 0;
	plain_name(prog, sizeof(prog), program_invocation_short_name);
	plain_name(plain_host, sizeof(plain_host), host);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return spy_sink_expand(o, stat(o, &st) == 0 && S_ISDIR(st.st_mode), prog, plain_host, pid,
			       rank(), out, size);
}

/*
 * The directory the record file goes in, opened once and never through
 * another user's symlink: the file is then created relative to it
 * (openat), so that no link swapped in later can redirect it. Refused: a
 * directory of another user (its owner could rename or delete the
 * records), a symlink of another user (in a sticky directory such as /tmp
 * anyone may plant one), and one that everyone may write to without the
 * sticky bit (anyone could swap the file for a link). One's own symlink,
 * or root's, is followed. Returns NULL with *dirfd and *base set, or why.
 */
static const char *
open_directory(const char *file, int *dirfd, const char **base, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	uid_t me = geteuid();
	struct stat st;
	int d;

	*dirfd = -1;
	*base = slash ? slash + 1 : file;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == file)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - file), file);
	d = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d < 0 && (errno == ELOOP || errno == ENOTDIR) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (st.st_uid != me && st.st_uid != 0) {
			snprintf(why, whylen, "its directory is a symbolic link of another user (uid %u)",
				 (unsigned)st.st_uid);
			return why;
		}
		d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (d < 0)
		return errno == ENOTDIR ? "not a directory" : strerror(errno);
	if (fstat(d, &st) != 0) {
		snprintf(why, whylen, "%s", strerror(errno));
		close(d);
		return why;
	}
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) {
		close(d);
		return "its directory is writable by everyone and not sticky";
	}
	if (st.st_uid != me && st.st_uid != 0) {
		snprintf(why, whylen, "its directory belongs to another user (uid %u), who could rename or delete "
			 "the records", (unsigned)st.st_uid);
		close(d);
		return why;
	}
	*dirfd = d;
	return NULL;
}

/* Format 2 (CUDNNSPY_FORMAT=binary): whole frames, which JSON lines are among. */
static int
binary(void)
{
	return spy_config.format == SPY_FORMAT_BINARY;
}

/* How many whole records `data` begins with in its first `room` bytes, and how many bytes they take. */
static size_t
whole_records(const char *data, size_t len, size_t room, unsigned long long *records)
{
	size_t pos = 0, n;

	*records = 0;
	if (!binary()) {
		for (size_t i = 0; i < len; i++)
			if (data[i] == '\n') {
				if (i < room)
					pos = i + 1;
				++*records;
			}
		return pos;
	}
	while (pos < len && spy_rec_frame((const uint8_t *)data, len, pos, &n) == SPY_REC_WHOLE && pos + n <= room) {
		pos += n;
		++*records;
	}
	return pos;
}

static unsigned long long
lines_in(const char *data, size_t len)
{
	unsigned long long lines;

	whole_records(data, len, len, &lines);
	return lines;
}

static void
drop(const char *data, size_t len)
{
	unsigned long long lines = lines_in(data, len);

	__atomic_add_fetch(&dropped, lines ? lines : 1, __ATOMIC_RELAXED);
}

/* 1 when the descriptor `f` still names the record file, with what fstat says; async-signal-safe. */
static int
is_ours(int f, struct stat *st)
{
	return f >= 0 && fstat(f, st) == 0 && st->st_dev == __atomic_load_n(&fd_dev, __ATOMIC_RELAXED) &&
	       st->st_ino == __atomic_load_n(&fd_ino, __ATOMIC_RELAXED);
}

/*
 * A new descriptor moved above the numbers programs use (512, or half the
 * descriptor limit), and never 0, 1 or 2: with its stdout closed, a
 * program's printf must not land in the records.
 */
static int
move_high(int f)
{
	struct rlimit rl;
	long want = 512;
	int g;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur / 2)
		want = (long)(rl.rlim_cur / 2);
	if (want < 3)
		want = 3;
	g = fcntl(f, F_DUPFD_CLOEXEC, (int)want);
	if (g < 0)
		g = fcntl(f, F_DUPFD_CLOEXEC, 3);
	if (g < 0 && f > 2)
		return f;
	close(f);
	if (g < 0)
		errno = EMFILE;
	return g;
}

/* The bytes `data` holds, written until done or an error; what fails is dropped and counted. */
static void
write_out(int f, const char *data, size_t n, int in_handler)
{
	for (size_t done = 0; done < n;) {
		ssize_t w = write(f, data + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			drop(data + done, n - done);
			if (!in_handler)
				spy_log_once(&write_said, "cannot write %s: %s; records are dropped and counted, the "
					     "summary still goes to stderr", path, w < 0 ? strerror(errno) : "short write");
			return;
		}
		done += (size_t)w;
	}
}

/*
 * Room reserved ahead in the file (fallocate), so that most writes need
 * neither a lock nor a system call of their own: a writer counts its bytes
 * in `inflight` first, then reads the file's size, and writes at once when
 * size and all bytes in flight fit below `reserved_end`.
 */
#define RESERVE_AHEAD ((uint64_t)1 << 20)
static uint64_t reserved_end;
static uint64_t inflight;

/* 1 when written; 0 when put() must decide (no room yet, the seal, a limit, `f` no longer the file). */
static int
put_fast(int f, const char *data, size_t len)
{
	uint64_t want;
	struct rlimit rl;
	int done = 0;

	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY)
		return 0;
	want = __atomic_add_fetch(&inflight, len, __ATOMIC_SEQ_CST);
	/* Seq-cst against spy_sink_seal(): it sees this writer in flight, or this writer sees the seal. */
	if (!__atomic_load_n(&sealed, __ATOMIC_SEQ_CST)) {
		struct stat st;

		/* The one fstat: the number still names the file, and its size. */
		if (is_ours(f, &st) && (uint64_t)st.st_size + want <= __atomic_load_n(&reserved_end, __ATOMIC_ACQUIRE)) {
			write_out(f, data, len, 0);
			done = 1;
		}
	}
	__atomic_sub_fetch(&inflight, len, __ATOMIC_SEQ_CST);
	return done;
}

/*
 * Writes whole lines, or nothing. Under a file-size limit (ulimit -f) only
 * those that fit, since a write past it raises SIGXFSZ, which kills the
 * program: SIGXFSZ is blocked meanwhile and a signal the spy's write raised
 * is taken back, in case the limit shrank in between. On a disk that is
 * full, a write stops in the middle of a line: the room is reserved first
 * (fallocate, the file's size unchanged), and a chunk that finds none is
 * dropped whole. Inside room reserved before, a write goes straight out
 * (put_fast); otherwise writers take turns, so that two threads cannot both
 * fit in the same room. Not in a signal handler (PUT_IN_HANDLER), which
 * takes no lock, reserves nothing and says nothing.
 */
enum { PUT_IN_HANDLER = 1, PUT_HEADER = 2 };

static void
put(int f, const struct stat *st, const char *data, size_t len, int how)
{
	int in_handler = how & PUT_IN_HANDLER;
	static const struct timespec zero;
	struct rlimit rl;
	sigset_t xfsz, old, pending;
	int limited, had_xfsz = 0;
	struct stat now;
	uint64_t want, counted;
	size_t n = len;

	if (__atomic_load_n(&full, __ATOMIC_RELAXED)) {
		drop(data, len);
		return;
	}
	limited = getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	if (!in_handler) {
		pthread_mutex_lock(&write_lock);
		/* Its size now that this thread has its turn. */
		if (fstat(f, &now) == 0)
			st = &now;
	}
	/* Records of other threads made while the process exits come after its end: not written. */
	if (!(how & PUT_HEADER) && !in_handler && __atomic_load_n(&sealed, __ATOMIC_SEQ_CST) &&
	    !pthread_equal(sealer, pthread_self()))
		goto out;
	if (limited) {
		rlim_t room = (rlim_t)st->st_size >= rl.rlim_cur ? 0 : rl.rlim_cur - (rlim_t)st->st_size;

		sigemptyset(&xfsz);
		sigaddset(&xfsz, SIGXFSZ);
		pthread_sigmask(SIG_BLOCK, &xfsz, &old);
		had_xfsz = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ);
		if (len > room) {
			unsigned long long fit;

			n = whole_records(data, len, (size_t)room, &fit);
			drop(data + n, len - n);
			__atomic_store_n(&full, 1, __ATOMIC_RELAXED);
			if (!in_handler)
				spy_log_once(&limit_said, "cannot write %s: it reached the file-size limit (ulimit -f) "
					     "of %llu bytes; recording ends, the records dropped are counted, the summary "
					     "still goes to stderr", path, (unsigned long long)rl.rlim_cur);
		}
	}
	/* This writer's bytes and those of writers on the fast path now, then room ahead for the next ones. */
	counted = n;
	want = __atomic_add_fetch(&inflight, counted, __ATOMIC_SEQ_CST);
	if (!in_handler && n > 0 && (uint64_t)st->st_size + want > __atomic_load_n(&reserved_end, __ATOMIC_ACQUIRE)) {
		/* As much ahead as the file holds, up to 1 MiB: a small file takes little room it does not use. */
		uint64_t ahead = limited ? 0 : (uint64_t)st->st_size < RESERVE_AHEAD ? (uint64_t)st->st_size : RESERVE_AHEAD;
		int r = fallocate(f, FALLOC_FL_KEEP_SIZE, st->st_size, (off_t)(want + ahead));

		if (r != 0 && ahead && (errno == ENOSPC || errno == EDQUOT)) {
			ahead = 0;
			r = fallocate(f, FALLOC_FL_KEEP_SIZE, st->st_size, (off_t)want);
		}
		if (r == 0 && !limited) {
			uint64_t end = (uint64_t)st->st_size + want + ahead;

			/* Never lower: spy_sink_trim() gives back everything up to the furthest reservation. */
			if (end > __atomic_load_n(&reserved_end, __ATOMIC_RELAXED))
				__atomic_store_n(&reserved_end, end, __ATOMIC_RELEASE);
		} else if (r != 0 && (errno == ENOSPC || errno == EDQUOT)) {
			drop(data, n);
			spy_log_once(&write_said, "cannot write %s: %s; records are dropped and counted, the summary "
				     "still goes to stderr", path, strerror(errno));
			n = 0;
		} else if (r != 0 && !limited) {
			/* A file system that reserves nothing (EOPNOTSUPP): nothing to wait for, and nothing to gain. */
			__atomic_store_n(&reserved_end, UINT64_MAX, __ATOMIC_RELEASE);
		}
	}
	write_out(f, data, n, in_handler);
	__atomic_sub_fetch(&inflight, counted, __ATOMIC_SEQ_CST);
	if (limited) {
		if (!had_xfsz && sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ))
			sigtimedwait(&xfsz, NULL, &zero);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
out:
	if (!in_handler)
		pthread_mutex_unlock(&write_lock);
}

/*
 * The program closed the record file, and the number may now name a file
 * of its own: open the record file again by its name, if it is still the
 * same file; otherwise recording ends here.
 */
static int
reopen(int was)
{
	struct stat st;
	int f;

	pthread_mutex_lock(&open_lock);
	f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	if (f != was || f < 0)
		goto out;	/* another thread did it */
	f = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (f >= 0)
		f = move_high(f);
	if (f >= 0 && !is_ours(f, &st)) {
		close(f);
		f = -1;
	}
	if (f < 0) {
		__atomic_store_n(&gave_up, 1, __ATOMIC_RELEASE);
		spy_log_once(&lost_said, "the program closed the record file %s and it cannot be opened again; "
			     "records are dropped and counted, the summary still goes to stderr", path);
	}
	__atomic_store_n(&fd, f, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&open_lock);
	return f;
}

static void
write_all(int f, const char *data, size_t len)
{
	struct stat st;

	if (put_fast(f, data, len))
		return;
	if (!is_ours(f, &st) && ((f = reopen(f)) < 0 || fstat(f, &st) != 0)) {
		drop(data, len);
		return;
	}
	put(f, &st, data, len, 0);
}

void
spy_sink_crash_write(int f, const char *data, size_t len)
{
	struct stat st;

	if (is_ours(f, &st))
		put(f, &st, data, len, PUT_IN_HANDLER);
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
		struct stat st;

		/*
		 * A forked child: the parent's file is the parent's. Closed only if
		 * the number still names it: the child may have closed what it
		 * inherited and opened a file of its own under that number.
		 */
		if (fd >= 0 && is_ours(fd, &st))
			close(fd);
		/* Atomic: spy_sink_enabled() and the fast path above read these without the lock. */
		__atomic_store_n(&fd, -1, __ATOMIC_RELEASE);
		__atomic_store_n(&gave_up, 0, __ATOMIC_RELEASE);
		write_said = 0;
		__atomic_store_n(&fd_pid, me, __ATOMIC_RELEASE);
	}
	if (fd < 0 && !gave_up && spy_config.output[0]) {
		char name[PATH_MAX], leaf[PATH_MAX + 16], whybuf[128];
		const char *why = NULL, *base = NULL;
		struct stat st;
		int dirfd = -1;

		if (file_name(name, sizeof(name) - 8) != 0)
			why = "the name is too long";
		else
			why = open_directory(name, &dirfd, &base, whybuf, sizeof(whybuf));
		if (!why && fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) &&
		    !S_ISLNK(st.st_mode))
			/* A device (/dev/full), FIFO or socket: no file of ours, not even beside it. */
			why = "it exists and is not a regular file";
		for (int i = 0; !why && i < 100; i++) {
			if (i) {
				snprintf(path, sizeof(path), "%s.%d", name, i);
				snprintf(leaf, sizeof(leaf), "%s.%d", base, i);
			} else {
				snprintf(path, sizeof(path), "%s", name);
				snprintf(leaf, sizeof(leaf), "%s", base);
			}
			f = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
			if (f >= 0)
				f = move_high(f);
			if (f >= 0 && fstat(f, &st) != 0) {
				close(f);
				f = -1;
			}
			if (f >= 0) {
				__atomic_store_n(&fd_dev, st.st_dev, __ATOMIC_RELAXED);
				__atomic_store_n(&fd_ino, st.st_ino, __ATOMIC_RELAXED);
				/* Published only after the header: other threads write as soon as they see it. */
				header(f);
				__atomic_store_n(&fd, f, __ATOMIC_RELEASE);
				/* cudnnspy run reads the files written, to say what they hold at the end. */
				spy_run_marker("records", path);
				break;
			}
			if (errno != EEXIST) {
				why = strerror(errno);
				break;
			}
		}
		if (dirfd >= 0)
			close(dirfd);
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
	struct spy_buf *b = th->buf;

	/* Only its thread allocates it; published with release for the exit flush of another thread. */
	if (!b) {
		/* A thread that buffers gets its buffer flushed when it ends. */
		spy_thread_set_exit_hook(spy_sink_flush);
		b = calloc(1, sizeof(*b));
		if (b)
			b->flush_at = __atomic_load_n(&sealed, __ATOMIC_SEQ_CST) ? 0 : sizeof(b->out) * 3 / 4;
		__atomic_store_n(&th->buf, b, __ATOMIC_RELEASE);
	}
	return b;
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
	if (f >= 0)
		write_all(f, b->out, b->len);
	else
		__atomic_add_fetch(&dropped, lines_in(b->out, b->len), __ATOMIC_RELAXED);
	b->len = 0;
	b->chunk = 0;
}

void
spy_sink_flush(struct spy_thread *th)
{
	/* Acquire: the thread that made it may be another (the exit handler, cudnnspy_flush). */
	struct spy_buf *b = __atomic_load_n(&th->buf, __ATOMIC_ACQUIRE);

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
	if (now || b->len > b->flush_at)
		flush_locked(b);
	unlock(b);
	/* A rare huge record does not keep its memory for the rest of the thread's life. */
	if (l->cap > 4 * SPY_OUT_SIZE)
		spy_line_free(l);
}

void
spy_sink_commit_frame(struct spy_thread *th, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns)
{
	struct spy_buf *b = th->buf;
	uint8_t *o, when[10];
	size_t t = 0;

	if (n + 64 > sizeof(b->out)) {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_resolved())
		sink_fd();
	lock(b);
	/* The frame, a chunk frame before it, and their tags and lengths. */
	if (b->len + n + 64 > sizeof(b->out))
		flush_locked(b);
	o = (uint8_t *)b->out + b->len;
	if (tag == SPY_REC_CALL || tag == SPY_REC_FAILURE) {
		/* A call's time is a delta from the one before it in this buffer, which begins with the thread and a base. */
		if (!b->chunk) {
			uint8_t k[20];
			size_t kn = spy_rec_put_uv(k, (uint64_t)spy_tid());

			kn += spy_rec_put_uv(k + kn, t_ns);
			*o++ = SPY_REC_CHUNK;
			*o++ = (uint8_t)kn;	/* under 128 */
			for (size_t i = 0; i < kn; i++)
				*o++ = k[i];
			b->chunk = 1;
			b->t_prev = t_ns;
		}
		t = spy_rec_put_uv(when, spy_rec_zigzag((int64_t)(t_ns - b->t_prev)));
		b->t_prev = t_ns;
	}
	*o++ = (uint8_t)tag;
	o += spy_rec_put_uv(o, t + n);
	for (size_t i = 0; i < t; i++)
		*o++ = when[i];
	memcpy(o, body, n);
	b->len = (size_t)(o + n - (uint8_t *)b->out);
	/* A failure is written at once, as its JSON record is: it may be the last thing the process does. */
	if (tag == SPY_REC_FAILURE || b->len > b->flush_at)
		flush_locked(b);
	unlock(b);
}

void
spy_sink_seal(void)
{
	/* Under the write lock: a write of another thread is then either whole in the file or not begun. */
	pthread_mutex_lock(&write_lock);
	sealer = pthread_self();
	__atomic_store_n(&sealed, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&write_lock);
	/*
	 * Calls after the exit handler (static destructors and exit handlers that
	 * run after it: every one, for a drop-in the program opened late) are
	 * written as they come, for nothing flushes after this.
	 */
	if (spy_tls.thread && spy_tls.thread->buf)
		spy_tls.thread->buf->flush_at = 0;
	/*
	 * A writer already past its check on the fast path (put_fast) finishes
	 * its lines first; a later one sees the seal. Bounded: the exit must
	 * not wait on a thread stuck in write(2).
	 */
	for (int i = 0; i < 10000 && __atomic_load_n(&inflight, __ATOMIC_SEQ_CST); i++)
		sched_yield();
}

void
spy_sink_trim(void)
{
	int f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	struct stat st;

	if (f < 0 || __atomic_load_n(&fd_pid, __ATOMIC_ACQUIRE) != getpid())
		return;
	/*
	 * Sealed (spy_sink_seal): nothing but this thread writes now. Truncating
	 * to the size the file has frees the blocks reserved past its end (a
	 * hole punched there would not, on ext4).
	 */
	pthread_mutex_lock(&write_lock);
	if (__atomic_load_n(&sealed, __ATOMIC_SEQ_CST) && is_ours(f, &st) && (uint64_t)st.st_size < reserved_end &&
	    reserved_end != UINT64_MAX && __atomic_load_n(&inflight, __ATOMIC_SEQ_CST) == 0 &&
	    ftruncate(f, st.st_size) == 0)
		__atomic_store_n(&reserved_end, (uint64_t)st.st_size, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&write_lock);
}

void
spy_sink_fork_child(void)
{
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
		if (th->buf) {
			th->buf->len = 0;
			th->buf->lock = 0;
			th->buf->chunk = 0;
			/* The child's file has none of the texts the parent's holds. */
			memset(th->buf->texts, 0, sizeof(th->buf->texts));
		}
	}
	pthread_mutex_init(&open_lock, NULL);
	pthread_mutex_init(&write_lock, NULL);
	opened = 0;
	full = 0;
	sealed = 0;
	reserved_end = 0;
	inflight = 0;
}

/* The first line: who, where, which cuDNN. */
static void
header(int f)
{
	struct spy_line *l = calloc(1, sizeof(*l));
	char host[256] = "unknown", cmdline[4096];
	struct timespec wall, mono;
	const char *r = rank();
	struct stat st;
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
	/*
	 * Other threads call while copy 0 is being resolved: its fields are
	 * whole only once the resolution is done (spy_resolved, acquire). A
	 * header written before says null; the library record says it all.
	 */
	if (spy_resolved() && spy_lib.handle) {
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
	if (binary() && fstat(f, &st) == 0) {
		/* Format 2 begins with what the function ids of its packed calls mean. */
		uint8_t m[2 + 8 + 2 + 4 + 4 + 4];
		uint32_t h = spy_rec_names_hash(), layout = spy_rec_layout_hash(), count = _SPY_FN_COUNT;
		uint16_t v = SPY_REC_VERSION;

		m[0] = SPY_REC_FILE;
		m[1] = sizeof(m) - 2;
		memcpy(m + 2, SPY_REC_MAGIC, 8);
		m[10] = (uint8_t)v;
		m[11] = (uint8_t)(v >> 8);
		for (int i = 0; i < 4; i++) {
			m[12 + i] = (uint8_t)(count >> (8 * i));
			m[16 + i] = (uint8_t)(h >> (8 * i));
			m[20 + i] = (uint8_t)(layout >> (8 * i));
		}
		put(f, &st, (const char *)m, sizeof(m), PUT_HEADER);
	}
	if (!l->overflow && fstat(f, &st) == 0)
		put(f, &st, l->data, l->len, PUT_HEADER);
	spy_line_free(l);
	free(l);
}
