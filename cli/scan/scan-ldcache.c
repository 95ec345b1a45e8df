/*
 * The loader's cache, /etc/ld.so.cache, read the way glibc reads it
 * (format "glibc-ld.so.cache1.1", possibly behind the old "ld.so-1.7.0"
 * table), so that the answer does not depend on running anything. When
 * the file is missing or in a format we do not know, `ldconfig -p` is
 * asked instead, with a time limit.
 */
#include "scan-int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAX (256u << 20)	/* far more than any real cache */
#define MAGIC_OLD "ld.so-1.7.0"
#define MAGIC_NEW "glibc-ld.so.cache1.1"
#define HEADER_NEW 48		/* magic+version 20, nlibs, len_strings, flags+3, extension, 3 unused */
#define ENTRY_NEW 24		/* flags, key, value, osversion, hwcap (8) */
#define ENTRY_OLD 12

/* flags: the entry's type and the ABI it is for (glibc's dl-cache.h). */
#define FLAG_TYPE_MASK 0x00ff
#define FLAG_ELF_LIBC6 0x0003
#define FLAG_REQUIRED_MASK 0xff00
#if defined(__x86_64__)
#define FLAG_NATIVE 0x0300	/* FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define FLAG_NATIVE 0x0a00	/* FLAG_AARCH64_LIB64 */
#elif defined(__powerpc64__)
#define FLAG_NATIVE 0x0500	/* FLAG_POWERPC_LIB64 */
#else
#define FLAG_NATIVE (-1)	/* unknown here: any is accepted */
#endif

#define LDCONFIG_TIMEOUT_MS 10000

static void
add_entry(struct scan_cache *c, const char *name, const char *path)
{
	c->e = scan_xrealloc(c->e, (c->n + 1) * sizeof(*c->e));
	c->e[c->n].name = scan_xstrdup(name);
	c->e[c->n].path = scan_xstrdup(path);
	c->n++;
}

/* A string at off inside [0, size), or NULL when it does not end there. */
static const char *
string_at(const unsigned char *data, size_t size, uint32_t off)
{
	if (off >= size || !memchr(data + off, '\0', size - off))
		return NULL;
	return (const char *)data + off;
}

static int
flags_native(int32_t flags)
{
	if ((flags & FLAG_TYPE_MASK) != FLAG_ELF_LIBC6)
		return 0;
	return FLAG_NATIVE < 0 || (flags & FLAG_REQUIRED_MASK) == FLAG_NATIVE;
}

static int
parse(struct scan_cache *c, const unsigned char *data, size_t size)
{
	size_t base = 0, nlibs;

	if (size >= sizeof(MAGIC_OLD) - 1 + 5 && memcmp(data, MAGIC_OLD, sizeof(MAGIC_OLD) - 1) == 0) {
		/* The old table, then the new header aligned to 8. */
		size_t old = get32(data + 12);

		if (old > size / ENTRY_OLD) {
			snprintf(c->why, sizeof(c->why), "old-format table larger than the file");
			return -1;
		}
		base = (16 + old * ENTRY_OLD + 7) & ~(size_t)7;
	}
	if (base > size || size - base < HEADER_NEW ||
	    memcmp(data + base, MAGIC_NEW, sizeof(MAGIC_NEW) - 1) != 0) {
		snprintf(c->why, sizeof(c->why), "not in the glibc-ld.so.cache1.1 format");
		return -1;
	}
	/* Byte order: 2 little, 3 big, 0 unknown (older ldconfig). */
	if (data[base + 28] != 0 &&
	    data[base + 28] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3)) {
		snprintf(c->why, sizeof(c->why), "written for the other byte order");
		return -1;
	}
	nlibs = get32(data + base + 20);
	if (nlibs > (size - base - HEADER_NEW) / ENTRY_NEW) {
		snprintf(c->why, sizeof(c->why), "truncated: %zu entries announced", nlibs);
		return -1;
	}
	for (size_t i = 0; i < nlibs; i++) {
		const unsigned char *p = data + base + HEADER_NEW + i * ENTRY_NEW;
		int32_t flags = (int32_t)get32(p);
		/* Offsets count from the new header. */
		const char *key = string_at(data + base, size - base, get32(p + 4));
		const char *value = string_at(data + base, size - base, get32(p + 8));

		if (!key || !value || !flags_native(flags))
			continue;
		/*
		 * Entries for glibc-hwcaps subdirectories are taken only when
		 * the CPU qualifies; we cannot tell, so we leave them out
		 * (cuDNN does not install any).
		 */
		if (get64(p + 16) != 0)
			continue;
		add_entry(c, key, value);
	}
	return 0;
}

static int
load_file(struct scan_cache *c, const char *path)
{
	struct stat st;
	unsigned char *data;
	size_t done = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(c->why, sizeof(c->why), "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > CACHE_MAX) {
		snprintf(c->why, sizeof(c->why), "%s: not a regular file of a usable size", path);
		close(fd);
		return -1;
	}
	data = scan_xmalloc((size_t)st.st_size);
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, data + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(fd);
	rc = parse(c, data, done);
	free(data);
	return rc;
}

/* "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/libcudnn.so.9" */
static void
parse_ldconfig_line(struct scan_cache *c, char *line)
{
	char *name, *arrow, *paren, *flags_end;

	name = line + strspn(line, " \t");
	arrow = strstr(name, " => ");
	paren = strstr(name, " (");
	if (!arrow || !paren || paren > arrow)
		return;
	flags_end = strchr(paren, ')');
	if (!flags_end || flags_end > arrow)
		return;
	*paren = '\0';
	*flags_end = '\0';
	/* Only this machine's ABI: on x86_64 "libc6,x86-64", on others the native word. */
#if defined(__x86_64__)
	if (strncmp(paren + 2, "libc6,x86-64", 12) != 0)
		return;
#elif defined(__aarch64__)
	if (strncmp(paren + 2, "libc6,AArch64", 13) != 0)
		return;
#endif
	/* hwcap entries carry ", hwcap: ..." and are left out, as in the file reader. */
	if (strstr(paren + 2, "hwcap"))
		return;
	arrow[strcspn(arrow, "\n")] = '\0';
	add_entry(c, name, arrow + 4);
}

static const char *
find_ldconfig(void)
{
	static const char *const cand[] = { "/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig", NULL };

	for (size_t i = 0; cand[i]; i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return NULL;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int
load_ldconfig(struct scan_cache *c)
{
	const char *exe = find_ldconfig();
	char *out = NULL, *line, *save = NULL;
	size_t len = 0, cap = 0;
	long deadline;
	int pipefd[2], status;
	pid_t pid;

	if (!exe)
		return -1;
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(pipefd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execl(exe, exe, "-p", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	deadline = now_ms() + LDCONFIG_TIMEOUT_MS;
	for (;;) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		long left = deadline - now_ms();
		ssize_t n;
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			break;
		if (len + 4097 > cap) {
			cap = cap ? cap * 2 : 65536;
			out = scan_xrealloc(out, cap);
		}
		n = read(pipefd[0], out + len, 4096);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len > CACHE_MAX)
			break;
	}
	close(pipefd[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!out)
		return -1;
	out[len] = '\0';
	/* The first line is a count ("N libs found in cache"); entries follow. */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[0] == '\t' || line[0] == ' ')
			parse_ldconfig_line(c, line);
	free(out);
	return 0;
}

void
scan_cache_load(struct scan_cache *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	if (load_file(c, path ? path : "/etc/ld.so.cache") == 0) {
		c->loaded = 1;
		c->how = path ? path : "/etc/ld.so.cache";
		return;
	}
	/* A file named by the user is theirs to fix; ldconfig would answer for this machine instead. */
	if (path)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].name);
		free(c->e[i].path);
	}
	c->n = 0;
	if (load_ldconfig(c) == 0) {
		c->loaded = 1;
		c->how = "ldconfig -p";
	}
}

const char *
scan_cache_lookup(const struct scan_cache *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->e[i].name, name) == 0)
			return c->e[i].path;
	return NULL;
}

void
scan_cache_free(struct scan_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].name);
		free(c->e[i].path);
	}
	free(c->e);
	memset(c, 0, sizeof(*c));
}
