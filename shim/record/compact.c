/*
 * A mapped record file made compact at a clean exit (sink.c): the same
 * frames, in the same order, without what only a process that does not
 * exit needs, the blocks' unused ends and the counters' state frames (its
 * summary now says what they said). Written beside it and renamed over it,
 * so that an ending in the middle leaves the file as it was.
 */
#include "compact.h"
#include "recfmt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct out {
	int fd;
	size_t len;
	int failed;
	unsigned char buf[65536];
};

static void write_out(struct out *o, const unsigned char *p, size_t n);

static void
flush_out(struct out *o)
{
	write_out(o, o->buf, o->len);
	o->len = 0;
}

/* `n` bytes from `p` written out at once, the mapped file's pages handed to the kernel without a copy here. */
static void
write_out(struct out *o, const unsigned char *p, size_t n)
{
	while (n && !o->failed) {
		ssize_t w = write(o->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->failed = 1;
		else
			p += w, n -= (size_t)w;
	}
}

static void
put(struct out *o, const unsigned char *p, size_t n)
{
	/* A block's frames (a run of many records): after what is buffered, as they are. */
	if (n >= sizeof(o->buf) / 16) {
		flush_out(o);
		write_out(o, p, n);
		return;
	}
	while (n && !o->failed) {
		size_t k = sizeof(o->buf) - o->len < n ? sizeof(o->buf) - o->len : n;

		memcpy(o->buf + o->len, p, k);
		o->len += k;
		p += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			flush_out(o);
	}
}

static uint32_t
u32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * The frames of the file's bytes `m` in order, blocks opened and state
 * dropped: 0, or -1 at anything the spy did not write.
 */
static int
walk(const unsigned char *m, size_t size, struct out *o)
{
	size_t pos = 0, n;

	while (pos < size && !o->failed) {
		/* Zeros between frames (an extent's end no block took): skipped a word at a time. */
		if (m[pos] == 0) {
			uint64_t w = 0;

			while (++pos < size && pos % 8)
				if (m[pos])
					break;
			while (pos % 8 == 0 && size - pos >= 8 && (memcpy(&w, m + pos, 8), w == 0))
				pos += 8;
			continue;
		}
		if (m[pos] == SPY_REC_BLOCK) {
			uint32_t c, cap;

			if (size - pos < SPY_REC_BLOCK_HEAD || m[pos + 1] != SPY_REC_BLOCK_HEAD - 2)
				return -1;
			c = u32_at(m + pos + SPY_REC_BLOCK_COMMITTED);
			cap = u32_at(m + pos + SPY_REC_BLOCK_CAPACITY);
			if (c > cap || cap > size - pos - SPY_REC_BLOCK_HEAD)
				return -1;
			pos += SPY_REC_BLOCK_HEAD;
			/*
			 * A block of records is whole frames up to its committed end, copied as they are; a block of
			 * state frames (sink.c keeps them apart) holds nothing the summary does not say now.
			 */
			if (c && m[pos] != SPY_REC_STATE)
				put(o, m + pos, c);
			pos += cap;
			continue;
		}
		/* Outside blocks: the file and header frames, a crash handler's records. */
		if (spy_rec_frame(m, size, pos, &n) != SPY_REC_WHOLE)
			return -1;
		put(o, m + pos, n);
		pos += n;
	}
	flush_out(o);
	return o->failed ? -1 : 0;
}

int
spy_compact(int f, size_t size, int dirfd, const char *base, int *compacted)
{
	static struct out o;
	char tmp[4096];
	unsigned char *m;
	int t, r;

	*compacted = -1;
	if (snprintf(tmp, sizeof(tmp), ".%s.%d.compact", base, (int)getpid()) >= (int)sizeof(tmp))
		return -1;
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, f, 0);
	if (m == MAP_FAILED)
		return -1;
	t = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
	if (t < 0) {
		munmap(m, size);
		return -1;
	}
	o.fd = t;
	o.len = 0;
	o.failed = 0;
	r = walk(m, size, &o);
	munmap(m, size);
	if (r == 0 && renameat(dirfd, tmp, dirfd, base) == 0) {
		*compacted = t;
		return 0;
	}
	unlinkat(dirfd, tmp, 0);
	close(t);
	return -1;
}
