/*
 * The record file. Opened at the first record (a process that records
 * nothing leaves no file), never through an existing file or a symlink,
 * reopened under the child's own pid after a fork. In format 2 each thread
 * writes its frames straight into a block of the file, mapped shared
 * (claim()): what a call wrote is in the page cache when it returns, and
 * survives any ending of the process (SIGKILL, the OOM killer, _exit, exec,
 * abort). Where nothing can be mapped (a FIFO, a file system without shared
 * mappings or fallocate, a file-size limit) and in format 1, threads fill
 * their own buffers and write whole lines, one writer at a time, on
 * O_APPEND, so lines never tear (put()): format 1 at once, format 2 at
 * least once a second. When the file cannot be written the spy says so
 * once, counts what it drops, and the program runs on.
 *
 * The descriptor is the program's business as much as the spy's: it is
 * never 0, 1 or 2, it sits far above the numbers programs use, and before
 * each write the spy checks that the number still names its file (a
 * program may close every descriptor and open its own under that number).
 */
#include "core.h"
#include "recfmt.h"
#include "sink.h"
#include "compact.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#if defined(__linux__) && __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#define SPY_HAVE_MEMBARRIER 1
#endif
#include <time.h>
#include <unistd.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* Writers take turns: whole lines must fit in the room there is (put()). */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;
static pid_t fd_pid;
static dev_t fd_dev;		/* what the file is, to know it from a file that took its number */
static ino_t fd_ino;
/* Opening failed in the process that fd_pid names: stop trying (sink.h's spy_sink_enabled reads it). */
int spy_sink_gave_up;
#define gave_up spy_sink_gave_up
static int full;		/* the file-size limit is reached: recording has ended */
static char path[PATH_MAX + 16];
/* Records that could not be written: here, or in the mapped file's process state (map_decide), for a reader after any ending. */
static uint64_t dropped_mem;
static uint64_t *dropped_at = &dropped_mem;
static int opened;		/* the file of this process was opened (or tried): commits need not look */
static int write_said, limit_said, lost_said;
/* The exit handler has begun: only its thread writes from now on (spy_sink_seal). sink.h's frames read it. */
int spy_sink_sealed;
#define sealed spy_sink_sealed
int spy_sink_asym;
static pthread_t sealer;

int
spy_sink_gave_up_here(void)
{
	return __atomic_load_n(&fd_pid, __ATOMIC_ACQUIRE) == getpid();
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
	return __atomic_load_n(__atomic_load_n(&dropped_at, __ATOMIC_ACQUIRE), __ATOMIC_RELAXED);
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

	__atomic_add_fetch(dropped_at, lines ? lines : 1, __ATOMIC_RELAXED);
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
	f = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
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
spy_sink_crash_flush(int f, struct spy_thread *th)
{
	struct spy_buf *b = th ? th->buf : NULL;

	/* A block's frames are in the file already; `out` holds whole frames only, so no lock is needed to read it. */
	if (b && !b->blk && b->len <= sizeof(b->out))
		spy_sink_crash_write(f, b->out, b->len);
}

void
spy_sink_crash_write(int f, const char *data, size_t len)
{
	struct stat st;

	if (is_ours(f, &st))
		put(f, &st, data, len, PUT_IN_HANDLER);
}

static void header(int f);

/*
 * The mapped writer. The file grows by extents (fallocate, so that a full
 * disk is known before a page is written: a store to a page the file
 * system cannot back would raise SIGBUS), each mapped shared; a thread
 * claims a block of an extent under map_lock (4 KiB, then four times larger
 * each time up to 256 KiB), and writes into it with no system call. The reader
 * knows each block's frames by its committed length (recfmt.h).
 */
enum { MAP_UNDECIDED, MAP_ON, MAP_OFF };
#define BLOCK_SIZE ((size_t)16384)
#define BLOCK_FIRST ((size_t)4096)
#define BLOCK_MAX ((size_t)256 << 10)
#define EXTENT_FIRST ((uint64_t)256 << 10)
#define EXTENT_MAX ((uint64_t)16 << 20)
#define EXTENTS_MAX 2048
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static int map_state;
static struct extent {
	void *base;		/* as mmap gave it: from the page that holds the extent's first byte */
	size_t len;
} extents[EXTENTS_MAX];
static unsigned nextents;
static unsigned char *ext_at;	/* the current extent's first byte */
static uint64_t ext_off, ext_len, ext_used, ext_next = EXTENT_FIRST;
static int map_said;

/* 1 when format 2's frames go into the mapping. */
static int
mapping(void)
{
	return __atomic_load_n(&map_state, __ATOMIC_ACQUIRE) == MAP_ON;
}

/* Records of other threads made while the process exits come after its end: not written (spy_sink_seal). */
static int
sealed_out(void)
{
	return __atomic_load_n(&sealed, __ATOMIC_SEQ_CST) && !pthread_equal(sealer, pthread_self());
}

/*
 * A new extent of at least `size` bytes at the file's end (which a crash
 * record written with write(2) may have moved): 0, or -1 with errno. Under
 * map_lock.
 */
static int
grow(int f, size_t size)
{
	uint64_t len = ext_next > size ? ext_next : ((uint64_t)size + BLOCK_SIZE - 1) / BLOCK_SIZE * BLOCK_SIZE;
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	struct rlimit rl;
	uint64_t base, at;
	void *m;

	if (nextents == EXTENTS_MAX) {
		errno = EFBIG;
		return -1;
	}
	if (!is_ours(f, &st)) {
		errno = EBADF;
		return -1;
	}
	/* A write past a file-size limit raises SIGXFSZ: such a file is written by put(), which keeps inside it. */
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur != RLIM_INFINITY) {
		errno = EFBIG;
		return -1;
	}
	/*
	 * The extent begins on a page (the zeros before it are no frames), and so
	 * does each block: its counters are stored atomically, and a block left
	 * behind gives its pages back to the process's memory (claim()).
	 */
	at = ((uint64_t)st.st_size + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	if (fallocate(f, 0, st.st_size, (off_t)(at - (uint64_t)st.st_size + len)) != 0) {
		uint64_t least = size > BLOCK_SIZE ? size : BLOCK_SIZE;

		if ((errno != ENOSPC && errno != EDQUOT) || len <= least)
			return -1;
		/* What is left on the disk: the block asked for. */
		len = least;
		if (fallocate(f, 0, st.st_size, (off_t)(at - (uint64_t)st.st_size + len)) != 0)
			return -1;
	}
	base = at / (uint64_t)page * (uint64_t)page;
	m = mmap(NULL, (size_t)(at - base + len), PROT_READ | PROT_WRITE, MAP_SHARED, f, (off_t)base);
	if (m == MAP_FAILED) {
		int e = errno;

		/* The room taken back: the file ends where its records do. */
		if (ftruncate(f, st.st_size) != 0)
			e = errno;
		errno = e;
		return -1;
	}
	extents[nextents].base = m;
	extents[nextents++].len = (size_t)(at - base + len);
	ext_at = (unsigned char *)m + (at - base);
	ext_off = at;
	ext_len = len;
	ext_used = 0;
	if (ext_next < EXTENT_MAX)
		ext_next *= 2;
	return 0;
}

/* Gives the file system back the pages of [from, to) of the file, which hold no record. */
static void
punch(int f, uint64_t from, uint64_t to)
{
	from = (from + 4095) / 4096 * 4096;
	to = to / 4096 * 4096;
	if (to > from)
		fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from));
}

/*
 * A new block for the thread's frames, for a frame of `need` bytes: 1; 0
 * when the file is not mapped (put() writes it); -1 when the disk is full
 * (the frame is dropped and counted).
 */
static int
claim(struct spy_buf *b, size_t need)
{
	/*
	 * A thread's first block small (a thread that records little leaves little unused), each next one four
	 * times larger up to BLOCK_MAX: a claim costs microseconds (the lock, the file's check, the old block's pages
	 * given back, page faults one by one), which 256 KiB share among some 13,000 traced Sets (about 6 ns a call
	 * at 16 KiB, bench/bench on this project's machines).
	 */
	size_t want = BLOCK_FIRST;
	for (unsigned i = 0; i < b->blocks && want < BLOCK_MAX; i++)
		want *= 4;
	size_t size = need + SPY_REC_BLOCK_HEAD <= want ? want : (need + SPY_REC_BLOCK_HEAD + 4095) / 4096 * 4096;
	unsigned char *p = NULL;
	uint64_t off = 0;
	int e = 0, r, f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	struct stat st;

	/* Before map_lock: reopen() takes open_lock, which sink_fd() holds while it takes map_lock. */
	if (!is_ours(f, &st))
		f = reopen(f);
	pthread_mutex_lock(&map_lock);
	if (map_state == MAP_ON && (ext_at == NULL || ext_used + size > ext_len) && grow(f, size) != 0) {
		e = errno;
		/* A full disk ends nothing but this block: the next may find room. */
		if (e != ENOSPC && e != EDQUOT)
			__atomic_store_n(&map_state, MAP_OFF, __ATOMIC_RELEASE);
	} else if (map_state == MAP_ON) {
		p = ext_at + ext_used;
		off = ext_off + ext_used;
		ext_used += size;
	}
	r = map_state == MAP_ON;
	pthread_mutex_unlock(&map_lock);
	/*
	 * The old block's frames are the file's, and nothing writes into it
	 * again: a large unused end goes back to the file system. What `out`
	 * holds is kept for put().
	 */
	if (p && b->blk && b->blk_cap - b->len >= 2 * 4096)
		punch(__atomic_load_n(&fd, __ATOMIC_ACQUIRE), b->blk_off + SPY_REC_BLOCK_HEAD + b->len,
		      b->blk_off + SPY_REC_BLOCK_HEAD + b->blk_cap);
	/*
	 * Its pages leave the process's resident memory (they stay in the page
	 * cache, the file's): a traced process's memory does not grow with its
	 * records. Shared file pages: nothing written is lost.
	 */
	if (p && b->blk)
		madvise(b->blk, SPY_REC_BLOCK_HEAD + b->blk_cap, MADV_DONTNEED);
	if (p || b->blk) {
		b->len = 0;
		b->chunk = 0;
	}
	b->blk = NULL;
	if (!p) {
		if (!r)
			return 0;
		spy_log_once(&write_said, "cannot write %s: %s; records are dropped and counted, the summary "
			     "still goes to stderr", path, strerror(e));
		return -1;
	}
	for (int i = 0; i < 4; i++)
		p[SPY_REC_BLOCK_CAPACITY + i] = (unsigned char)((size - SPY_REC_BLOCK_HEAD) >> (8 * i));
	p[1] = SPY_REC_BLOCK_HEAD - 2;
	__atomic_store_n(&p[0], (unsigned char)SPY_REC_BLOCK, __ATOMIC_RELEASE);
	b->blk = p;
	b->blk_off = off;
	b->blocks++;
	b->blk_cap = size - SPY_REC_BLOCK_HEAD;
	b->blk_late = (unsigned char)__atomic_load_n(&sealed, __ATOMIC_SEQ_CST);
	return 1;
}

/* State frames (recfmt.h): laid out in a block of their own, their data changed in place by the process. */
static unsigned char *state_blk;
static size_t state_len, state_cap;
static unsigned map_gen;
static uint64_t *probes_at;

/* A state frame of `size` bytes of data in the mapping, zeroed and 16-aligned; NULL when there is no room. Under map_lock. */
static void *
state_locked(int f, unsigned kind, unsigned copy, uint32_t a, uint32_t b, size_t size)
{
	size_t frame = SPY_REC_STATE_HEAD + (size + 15) / 16 * 16, plen = frame - 4;
	unsigned char *q;

	if (map_state != MAP_ON || plen >= (1u << 21))
		return NULL;
	if (!state_blk || state_len + frame > state_cap) {
		size_t bsize = frame + SPY_REC_BLOCK_HEAD <= BLOCK_SIZE ? BLOCK_SIZE :
			       (frame + SPY_REC_BLOCK_HEAD + 4095) / 4096 * 4096;

		if ((ext_at == NULL || ext_used + bsize > ext_len) && grow(f, bsize) != 0)
			return NULL;
		state_blk = ext_at + ext_used;
		ext_used += bsize;
		state_cap = bsize - SPY_REC_BLOCK_HEAD;
		state_len = 0;
		for (int i = 0; i < 4; i++)
			state_blk[SPY_REC_BLOCK_CAPACITY + i] = (unsigned char)(state_cap >> (8 * i));
		state_blk[1] = SPY_REC_BLOCK_HEAD - 2;
		__atomic_store_n(&state_blk[0], (unsigned char)SPY_REC_BLOCK, __ATOMIC_RELEASE);
	}
	q = state_blk + SPY_REC_BLOCK_HEAD + state_len;
	/* The length as a varint of three bytes whatever its value: the data stays aligned. */
	q[1] = (unsigned char)(0x80 | (plen & 0x7f));
	q[2] = (unsigned char)(0x80 | ((plen >> 7) & 0x7f));
	q[3] = (unsigned char)(plen >> 14);
	q[4] = (unsigned char)kind;
	q[5] = (unsigned char)copy;
	for (int i = 0; i < 4; i++) {
		q[8 + i] = (unsigned char)(a >> (8 * i));
		q[12 + i] = (unsigned char)(b >> (8 * i));
	}
	q[0] = SPY_REC_STATE;
	state_len += frame;
	__atomic_store_n((uint32_t *)(void *)(state_blk + SPY_REC_BLOCK_COMMITTED), (uint32_t)state_len, __ATOMIC_RELEASE);
	return q + SPY_REC_STATE_HEAD;
}

void *
spy_sink_state(unsigned kind, unsigned copy, uint32_t a, uint32_t b, size_t size)
{
	int f = __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
	struct stat st;
	void *p;

	/* After the seal only the exiting thread writes: another's counters stay where they are. */
	if (!mapping() || sealed_out())
		return NULL;
	if (!is_ours(f, &st))
		f = reopen(f);
	pthread_mutex_lock(&map_lock);
	p = state_locked(f, kind, copy, a, b, size);
	pthread_mutex_unlock(&map_lock);
	return p;
}

unsigned
spy_sink_state_gen(void)
{
	/* A forked child has no mapping until its own file (spy_sink_fork_child): no pid to compare. */
	return mapping() ? __atomic_load_n(&map_gen, __ATOMIC_ACQUIRE) : 0;
}

uint64_t *
spy_sink_probes(void)
{
	return __atomic_load_n(&probes_at, __ATOMIC_ACQUIRE);
}

static int sink_fd(void);

void
spy_sink_open(void)
{
	if (spy_config.output[0] && !__atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_resolved())
		sink_fd();
}

static void flush_locked(struct spy_buf *b);

/*
 * Where the thread's next `need` bytes go: its block, a new block, or
 * `out` (flushed first when they do not fit). NULL: dropped (a full disk),
 * or, with *big, a line longer than `out` for the caller to write apart.
 */
static unsigned char *
room(struct spy_buf *b, size_t need, int *big)
{
	*big = 0;
	/* What the exit writes goes into blocks claimed after the seal, the file's last: the summary stays its last record. */
	if (b->blk && b->len + need <= b->blk_cap && (b->blk_late || !__atomic_load_n(&sealed, __ATOMIC_RELAXED)))
		return b->blk + SPY_REC_BLOCK_HEAD + b->len;
	if (mapping()) {
		size_t before = b->blk ? 0 : b->len;
		int chunk = b->chunk, r;

		/*
		 * What this thread buffered before the file was mapped goes first, in
		 * the same block: its texts must come before the calls that name them.
		 */
		r = claim(b, need + before);
		if (r > 0 && before) {
			memcpy(b->blk + SPY_REC_BLOCK_HEAD, b->out, before);
			b->len = before;
			b->chunk = chunk;
			spy_buf_publish(b);
		}
		if (r > 0)
			return b->blk + SPY_REC_BLOCK_HEAD + b->len;
		if (r < 0)
			return NULL;
	}
	b->blk = NULL;
	if (b->len + need > sizeof(b->out))
		flush_locked(b);
	if (need > sizeof(b->out)) {
		*big = 1;
		return NULL;
	}
	return (unsigned char *)b->out + b->len;
}

/*
 * The expedited membarrier registered for this process (the seal's, sink.h's spy_buf_enter), once per file
 * mapped: a forked child registers again. Where there is none (an old kernel, a seccomp filter, Windows), a
 * thread entering its block fences (sink.h's spy_buf_enter), and so does the seal.
 */
static void
asym_register(void)
{
#if defined(SPY_HAVE_MEMBARRIER) && defined(SYS_membarrier)
	int saved = errno;
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0);

	__atomic_store_n(&spy_sink_asym,
			 cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
				 syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0,
			 __ATOMIC_RELEASE);
	errno = saved;
#endif
}

/* Every other thread's stores seen here, and this thread's by every other (0), or -1 when there is no way. */
static int
asym_barrier(void)
{
#if defined(SPY_HAVE_MEMBARRIER) && defined(SYS_membarrier)
	if (__atomic_load_n(&spy_sink_asym, __ATOMIC_ACQUIRE))
		return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) == 0 ? 0 : -1;
#endif
	return -1;
}

/*
 * After the header, before other threads see the file: format 2 goes
 * through the mapping from here on, if the file can be mapped. Decided
 * before any thread can write: a write(2) after the first extent would
 * land past it, after records written later.
 */
static void
map_decide(int f)
{
	pthread_mutex_lock(&map_lock);
	/* Atomic: threads that saw the file opened read it without the lock (mapping()). */
	__atomic_store_n(&map_state, binary() ? MAP_ON : MAP_OFF, __ATOMIC_RELEASE);
	/* A disk full now may have room later: the mapping stays, and what finds no room is dropped and counted. */
	if (map_state == MAP_ON && grow(f, 0) != 0 && errno != ENOSPC && errno != EDQUOT) {
		__atomic_store_n(&map_state, MAP_OFF, __ATOMIC_RELEASE);
		spy_log_once(&map_said, "%s cannot be mapped (%s): records are written in chunks, at least once a "
			     "second; a process killed loses its last second of records", path, strerror(errno));
	}
	if (map_state == MAP_ON) {
		uint64_t *p;

		asym_register();
		p = state_locked(f, SPY_STATE_PROCESS, 0, _SPY_FN_COUNT, 0, (2 + _SPY_FN_COUNT) * sizeof(uint64_t));

		if (p) {
			p[0] = __atomic_load_n(&dropped_mem, __ATOMIC_RELAXED);
			__atomic_store_n(&dropped_at, p, __ATOMIC_RELEASE);
			__atomic_store_n(&probes_at, p + 2, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&map_gen, map_gen + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&map_lock);
}

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
			/* Read too: a shared mapping needs it. */
			f = openat(dirfd, leaf, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
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
				map_decide(f);
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
			/* Format 1 is written a record at a time: lost with nothing, however the process ends. */
			b->flush_at = __atomic_load_n(&sealed, __ATOMIC_SEQ_CST) || !binary() ? 0 : sizeof(b->out) * 3 / 4;
		__atomic_store_n(&th->buf, b, __ATOMIC_RELEASE);
	}
	return b;
}

static void
flush_locked(struct spy_buf *b)
{
	int f;

	/* A block's frames are the file's already; the next frame begins a chunk (another thread may take the block). */
	if (b->blk) {
		b->chunk = 0;
		return;
	}
	b->flushed_ns = spy_now_ns();
	if (!b->len)
		return;
	f = sink_fd();
	/* What was buffered before the file was mapped goes into a block: a write would land past the extent. */
	if (f >= 0 && mapping()) {
		size_t len = b->len;

		if (claim(b, len) > 0) {
			memcpy(b->blk + SPY_REC_BLOCK_HEAD, b->out, len);
			b->len = len;
			spy_buf_publish(b);
			b->chunk = 0;
			return;
		}
	}
	if (f >= 0) {
		uint64_t before = spy_sink_dropped();

		write_all(f, b->out, b->len);
		/* The texts in what was dropped are written again when next named (recbin.c). */
		if (spy_sink_dropped() != before) {
			b->drops++;
			memset(b->texts, 0, sizeof(b->texts));
		}
	} else {
		__atomic_add_fetch(dropped_at, lines_in(b->out, b->len), __ATOMIC_RELAXED);
	}
	b->len = 0;
	b->chunk = 0;
}

void
spy_sink_drop(void)
{
	__atomic_add_fetch(__atomic_load_n(&dropped_at, __ATOMIC_ACQUIRE), 1, __ATOMIC_RELAXED);
}

void
spy_sink_commit_last(struct spy_thread *th, struct spy_line *l)
{
	struct spy_buf *b = th->buf;

	/*
	 * In the file's last block, whatever other threads' buffers the exit
	 * wrote before: this thread's own when that is the last, else one
	 * claimed now.
	 */
	pthread_mutex_lock(&map_lock);
	spy_buf_lock(b);
	b->blk_late = b->blk && b->blk_off + SPY_REC_BLOCK_HEAD + b->blk_cap == ext_off + ext_used;
	spy_buf_unlock(b);
	pthread_mutex_unlock(&map_lock);
	spy_sink_commit(th, l, 1);
}

void
spy_sink_flush(struct spy_thread *th)
{
	/* Acquire: the thread that made it may be another (the exit handler, cudnnspy_flush). */
	struct spy_buf *b = __atomic_load_n(&th->buf, __ATOMIC_ACQUIRE);

	if (!b)
		return;
	spy_buf_lock(b);
	flush_locked(b);
	spy_buf_unlock(b);
}

/* Where nothing is mapped: records wait in a thread's buffer for at most a second (a killed process loses no more). */
static int
stale(const struct spy_buf *b)
{
	/* Not before the file is open: the header names the library, known once resolved (spy_sink_commit). */
	return __atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_now_ns() - b->flushed_ns > 1000000000u;
}

void
spy_sink_commit(struct spy_thread *th, struct spy_line *l, int now)
{
	struct spy_buf *b = th->buf;
	unsigned char *o;
	int big = 0;

	if (l->overflow) {
		__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
		return;
	}
	spy_line_char(l, '\n');
	if (l->overflow) {
		__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
		return;
	}
	/*
	 * Open the file at the first record, so that a crash handler can write to
	 * it; but not before the real library is known, which the header names.
	 */
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_resolved())
		sink_fd();
	spy_buf_lock(b);
	o = mapping() && sealed_out() ? NULL : room(b, l->len, &big);
	if (o) {
		memcpy(o, l->data, l->len);
		b->len += l->len;
		if (b->blk)
			spy_buf_publish(b);
		else if (now || b->len > b->flush_at || stale(b))
			flush_locked(b);
	} else if (big) {
		/* Longer than the whole buffer: after what came before it, in one write of its own. */
		int f = sink_fd();

		if (f >= 0)
			write_all(f, l->data, l->len);
		else
			__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
	}
	spy_buf_unlock(b);
	/* A rare huge record does not keep its memory for the rest of the thread's life. */
	if (l->cap > 4 * SPY_OUT_SIZE)
		spy_line_free(l);
}

static void commit_frame(struct spy_buf *b, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns,
			 uint64_t *count);

void
spy_sink_commit_frame(struct spy_thread *th, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns,
		      uint64_t *count)
{
	uint8_t *o;

	/*
	 * The usual frame, a short call into the thread's block with its chunk begun: written in place
	 * (sink.h's spy_sink_call_open), its body copied in words: its buffer and the block's room both reach past
	 * its end (SPY_SINK_BODY_SLACK).
	 */
	if (tag == SPY_REC_CALL && n <= SPY_SINK_CALL_MAX && (o = spy_sink_call_open(th, n, t_ns))) {
		for (size_t i = 0; i < n; i += 8)
			memcpy(o + i, body + i, 8);
		spy_sink_call_close(th, o + n, count);
		return;
	}
	commit_frame(th->buf, tag, body, n, t_ns, count);
}

static void frame_out(struct spy_buf *b, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns);

/*
 * Any other frame (out of line: the usual one saves no registers for it). errno kept: a new block or a write
 * may set it, and the traced call's packer (recbin.c) leaves keeping it to the ways that can. `count` as
 * spy_sink_call_close's: incremented before the buffer's lock is let go, written or dropped.
 */
static __attribute__((noinline)) void
commit_frame(struct spy_buf *b, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns, uint64_t *count)
{
	int saved = errno;

	if (n + 64 > sizeof(b->out)) {
		__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
		if (count)
			SPY_INC(*count);
		return;
	}
	if (!__atomic_load_n(&opened, __ATOMIC_ACQUIRE) && spy_resolved())
		sink_fd();
	spy_buf_lock(b);
	frame_out(b, tag, body, n, t_ns);
	if (count)
		SPY_INC(*count);
	spy_buf_unlock(b);
	errno = saved;
}

/* The frame, under the buffer's lock: in the block, in `out`, or dropped and counted. */
static void
frame_out(struct spy_buf *b, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns)
{
	uint8_t *o, *base, when[10];
	size_t t = 0;
	int big = 0;

	/* The frame, a chunk frame before it, and their tags and lengths. */
	o = mapping() && sealed_out() ? NULL : room(b, n + 64, &big);
	if (!o) {
		__atomic_add_fetch(dropped_at, 1, __ATOMIC_RELAXED);
		/* The texts the file does not hold are written again when next named (recbin.c). */
		b->drops++;
		memset(b->texts, 0, sizeof(b->texts));
		return;
	}
	base = o - b->len;
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
	b->len = (size_t)(o + n - base);
	if (b->blk)
		spy_buf_publish(b);
	/* A failure is written at once, as its JSON record is: it may be the last thing the process does. */
	else if (tag == SPY_REC_FAILURE || b->len > b->flush_at || stale(b))
		flush_locked(b);
}

/* The longest the exit waits, for all threads together, for records being written when it began. */
#define SEAL_WAIT_NS ((uint64_t)200 * 1000 * 1000)

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
	if (spy_tls.thread && spy_tls.thread->buf) {
		struct spy_buf *b = spy_tls.thread->buf;

		spy_buf_lock(b);
		b->flush_at = 0;
		spy_buf_unlock(b);
	}
	/*
	 * A thread writing into its block now finishes its frame first (its
	 * lock, or its flag, is held for a few stores, never across a system call
	 * but a new block's); one that takes it later sees the seal. So no record
	 * is in the file whose call the summary does not count. The flag is a
	 * plain store (sink.h's spy_buf_enter): the membarrier makes each thread's
	 * seen here, or the seal seen by that thread's next look.
	 */
	uint64_t until = spy_now_ns() + SEAL_WAIT_NS;

	/* Else both sides fence (Dekker's): the seal's store before its loads of the flags. */
	if (asym_barrier() != 0)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
		struct spy_buf *b = __atomic_load_n(&th->buf, __ATOMIC_ACQUIRE);

		if (b && th != spy_tls.thread) {
			spy_buf_lock(b);
			spy_buf_unlock(b);
			while (__atomic_load_n(&b->busy, __ATOMIC_ACQUIRE))
				sched_yield();
		}
		/*
		 * A traced call counts once its record is written (slowpath.c): one
		 * whose record is in the file is counted before the summary is taken.
		 * Bounded in time, not in turns (a thread the scheduler put aside between
		 * the two, under a sanitizer on a busy machine, outlasted 10,000 yields):
		 * the exit must not wait on a thread stuck in the file system.
		 */
		while (th != spy_tls.thread && __atomic_load_n(&th->recording, __ATOMIC_ACQUIRE) && spy_now_ns() < until)
			sched_yield();
	}
	/*
	 * A writer already past its check on the fast path (put_fast) finishes
	 * its lines first; a later one sees the seal. Bounded: the exit must
	 * not wait on a thread stuck in write(2).
	 */
	while (__atomic_load_n(&inflight, __ATOMIC_SEQ_CST) && spy_now_ns() < until)
		sched_yield();
}

/*
 * The mapped file after the summary (sealed: other threads write no more).
 * The unused ends of their blocks become holes; the file ends where this
 * thread's frames do, when its block is the file's last and nothing was
 * written after it (a crash record). What this thread writes after that
 * (calls from destructors) claims a new extent.
 */
static void
trim_mapped(int f)
{
	struct spy_buf *mine = spy_tls.thread ? spy_tls.thread->buf : NULL;
	struct stat st;

	for (struct spy_thread *th = spy_thread_list(); th; th = th->next) {
		struct spy_buf *b = __atomic_load_n(&th->buf, __ATOMIC_ACQUIRE);

		if (!b || b == mine)
			continue;
		spy_buf_lock(b);
		if (b->blk)
			punch(f, b->blk_off + SPY_REC_BLOCK_HEAD + b->len, b->blk_off + SPY_REC_BLOCK_HEAD + b->blk_cap);
		spy_buf_unlock(b);
	}
	pthread_mutex_lock(&map_lock);
	if (mine)
		spy_buf_lock(mine);
	if (ext_at && is_ours(f, &st) && (uint64_t)st.st_size == ext_off + ext_len) {
		uint64_t end = ext_off + ext_used;

		if (mine && mine->blk && mine->blk_off + SPY_REC_BLOCK_HEAD + mine->blk_cap == end) {
			end = mine->blk_off + SPY_REC_BLOCK_HEAD + mine->len;
			for (int i = 0; i < 4; i++)
				mine->blk[SPY_REC_BLOCK_CAPACITY + i] = (unsigned char)(mine->len >> (8 * i));
			mine->blk = NULL;
			mine->len = 0;
			mine->chunk = 0;
		}
		if (ftruncate(f, (off_t)end) == 0) {
			ext_at = NULL;
			ext_len = ext_used = 0;
		}
	}
	if (mine)
		spy_buf_unlock(mine);
	pthread_mutex_unlock(&map_lock);
}

/* Files up to this size are made compact at a clean exit: a few milliseconds of copying at most. */
#define COMPACT_MAX ((off_t)16 << 20)

/*
 * After the summary, a file of a process that exits: the same frames
 * without the blocks' unused ends and the counters (compact.c), renamed
 * over it. What this thread writes after (calls from destructors) is then
 * written to the new file, as a file that cannot be mapped is. Returns the
 * record file's descriptor.
 */
static int
compact(int f)
{
	char whybuf[128];
	const char *base;
	struct stat st, dir;
	int dirfd = -1, g = -1;

	pthread_mutex_lock(&open_lock);
	pthread_mutex_lock(&map_lock);
	if (!is_ours(f, &st) || st.st_size > COMPACT_MAX || open_directory(path, &dirfd, &base, whybuf, sizeof(whybuf)))
		goto out;
	/* Only over the file this is: the name may now be another's. */
	if (fstatat(dirfd, base, &dir, AT_SYMLINK_NOFOLLOW) != 0 || dir.st_dev != st.st_dev || dir.st_ino != st.st_ino)
		goto out;
	if (spy_compact(f, (size_t)st.st_size, dirfd, base, &g) != 0)
		goto out;
	g = move_high(g);
	if (g < 0 || fstat(g, &st) != 0) {
		if (g >= 0)
			close(g);
		/* Renamed already: the old descriptor names a file no longer there, and nothing more is written. */
		__atomic_store_n(&gave_up, 1, __ATOMIC_RELEASE);
		goto out;
	}
	__atomic_store_n(&map_state, MAP_OFF, __ATOMIC_RELEASE);
	/* This thread's block is the old file's: what it writes now goes to the new one. */
	if (spy_tls.thread && spy_tls.thread->buf && spy_tls.thread->buf->blk) {
		struct spy_buf *b = spy_tls.thread->buf;

		spy_buf_lock(b);
		b->blk = NULL;
		b->len = 0;
		b->chunk = 0;
		spy_buf_unlock(b);
	}
	__atomic_store_n(&fd_dev, st.st_dev, __ATOMIC_RELAXED);
	__atomic_store_n(&fd_ino, st.st_ino, __ATOMIC_RELAXED);
	__atomic_store_n(&fd, g, __ATOMIC_RELEASE);
	/*
	 * The old descriptor stays open, unused: another thread may be asking
	 * fstat of it this moment (is_ours), and a number closed now could be
	 * the program's next file. Its mapping stays too (the counters).
	 */
	f = g;
	reserved_end = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	pthread_mutex_unlock(&map_lock);
	pthread_mutex_unlock(&open_lock);
	return f;
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
	if (__atomic_load_n(&sealed, __ATOMIC_SEQ_CST) && mapping()) {
		trim_mapped(f);
		f = compact(f);
	}
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
			th->buf->busy = 0;
			th->buf->chunk = 0;
			th->buf->blocks = 0;
			th->buf->blk = NULL;
			/* The child's file has none of the texts the parent's holds. */
			memset(th->buf->texts, 0, sizeof(th->buf->texts));
		}
	}
	/*
	 * The parent's file is mapped shared here too: each extent becomes
	 * private zeros in the child, so that nothing the child does reaches the
	 * parent's file, and nothing of it is written twice.
	 */
	for (unsigned i = 0; i < nextents; i++)
		mmap(extents[i].base, extents[i].len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	nextents = 0;
	ext_at = NULL;
	ext_off = ext_len = ext_used = 0;
	ext_next = EXTENT_FIRST;
	map_state = MAP_UNDECIDED;
	state_blk = NULL;
	state_len = state_cap = 0;
	dropped_mem = 0;
	dropped_at = &dropped_mem;
	probes_at = NULL;
	pthread_mutex_init(&map_lock, NULL);
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
#ifdef _WIN32
	/* No /proc (under Wine the path reaches the Unix one of another process): the arguments as Windows parsed them. */
	(void)cf;
	n = spy_win_cmdline(cmdline, sizeof(cmdline) - 1);
#else
	cf = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (cf >= 0) {
		n = read(cf, cmdline, sizeof(cmdline) - 1);
		close(cf);
	}
#endif
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
	 * Other threads call, and open the file, as soon as copy 0's functions
	 * are found, while the resolution goes on (its banner, the audit): its
	 * fields are whole once its major is (spy_copy_fill stores it after
	 * them, release; 0 where cuDNN gave no version) or the resolution is
	 * done (acquire). A header written before says null.
	 */
	if ((__atomic_load_n(&spy_lib.major, __ATOMIC_ACQUIRE) || spy_resolved()) && spy_lib.handle) {
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
