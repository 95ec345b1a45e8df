/*
 * Records are built in a per-thread line buffer with these small
 * formatters (no printf on the recording path), then appended to the
 * thread's output buffer, which is written with write(2) in large chunks.
 */
#ifndef SPY_BUF_H
#define SPY_BUF_H

#include <stddef.h>
#include <stdint.h>

#define SPY_LINE_SIZE 16384
#define SPY_OUT_SIZE 65536
/* The frames of a stack whose modules a thread keeps (SPY_STACK_MAX, core/stack.h). */
#define SPY_BUF_MEMO_FRAMES 32
/* A record longer than this (never seen: the summary of every function is ~80 KB) is dropped and counted. */
#define SPY_LINE_MAX (64u << 20)

/*
 * One record being built. It starts in `first` and moves to the heap when
 * it outgrows it, so that no record depends on fitting a fixed size; a
 * line that may not allocate (a signal handler's) is written out to
 * `spill_fd` in pieces instead.
 */
struct spy_line {
	size_t len;
	size_t cap;		/* usable bytes at data; 0 until spy_line_reset() */
	char *data;		/* first, or a heap block */
	int overflow;		/* the record could not be built whole: it is dropped, never cut */
	int spill_fd;		/* > 0: a full line goes out to fd spill_fd - 1 (the line must not allocate) */
	char first[SPY_LINE_SIZE];
};

struct spy_pystack;

struct spy_buf {
	int lock;		/* the owner thread and the exit flush */
	int busy;		/* the owner writing a call frame in place without the lock (sink.h) */
	size_t len;		/* bytes in the block when `blk`, else in `out` */
	/*
	 * The record file's mapped writer (sink.c): the block of the file this
	 * thread writes its frames into, NULL while it writes into `out`
	 * (before the file is open, or where nothing can be mapped).
	 */
	unsigned char *blk;
	size_t blk_cap;
	uint64_t blk_off;	/* its place in the file */
	unsigned blocks;	/* claimed so far: the first is small */
	unsigned drops;		/* frames of this thread dropped (a full disk): a call whose text was is dropped too */
	unsigned char blk_late;	/* claimed after the exit began (sink.c's seal) */
	uint64_t flushed_ns;	/* `out` last written: the fallback's time-based flush */
	char out[SPY_OUT_SIZE];
	struct spy_line line;
	const struct spy_pystack *py_call;	/* recbin.c: the Python frames of the call it packs; NULL */
	/*
	 * recbin.c: the modules of the last failure's stack, while the audit (which ran just before) saw no
	 * object mapped or unmapped since: a loop failing from one place looks them up once. memo_gen is 1 +
	 * the audit's generation, 0 when none is kept.
	 */
	unsigned memo_gen;
	int memo_n;
	void *memo_ips[SPY_BUF_MEMO_FRAMES];
	uintptr_t memo_base[SPY_BUF_MEMO_FRAMES];
	const char *memo_name[SPY_BUF_MEMO_FRAMES];
	unsigned long py_id;			/* and their text's id, once written */
	char last_error[512];	/* cuDNN's message read at a failure, for the program */
	int last_error_pending;
	/* Format 2 (recbin.c, sink.c): the buffer holds a chunk frame; the time of its last call. */
	int chunk;
	uint64_t t_prev;
	/* Written out once it holds more: three quarters of `out`, and 0 for the exiting thread's once the file is sealed. */
	size_t flush_at;
	/* The argument texts this thread wrote to the file, by object and its state: written once, named by id after. */
	struct spy_text_slot {
		const void *ptr;
		const char *kind;
		uint64_t stamp;
		unsigned id;
		int major;
		int state;
	} texts[64];
	unsigned text_turn;	/* the next of a lookup's places to give a new text when none is free (recbin.c) */
	/*
	 * A failure's recent calls as format 2 packs them, kept for the next failure of this thread, whose list is
	 * mostly the same calls (recbin.c): the thread's flight entries from `from` on, `count` of them, entry k at
	 * bytes[off[k]]; `tid` the thread they are of (a forked child counts its calls from 0 again).
	 */
	struct spy_recent_packed {
		int tid;
		unsigned from, count;
		uint16_t off[2 * 256 + 1];
		uint8_t bytes[2 * 256 * 6];
	} recent;
};

#include <string.h>

void spy_line_reset(struct spy_line *l);
/* Appends what does not fit: grows the line, or spills it; marks it overflowed when neither can be done. */
void spy_line_mem_slow(struct spy_line *l, const char *s, size_t n);
/* Gives back a grown line's heap block. */
void spy_line_free(struct spy_line *l);
/* Writes a spilling line's rest out to its fd. */
void spy_line_spill(struct spy_line *l);

/* Inline: a record is dozens of these small appends. */
static inline void
spy_line_mem(struct spy_line *l, const char *s, size_t n)
{
	if (__builtin_expect(l->len + n >= l->cap, 0)) {
		spy_line_mem_slow(l, s, n);
		return;
	}
	memcpy(l->data + l->len, s, n);
	l->len += n;
}

static inline void
spy_line_char(struct spy_line *l, char c)
{
	if (__builtin_expect(l->len + 1 >= l->cap, 0)) {
		spy_line_mem_slow(l, &c, 1);
		return;
	}
	l->data[l->len++] = c;
}

static inline void
spy_line_raw(struct spy_line *l, const char *s)
{
	spy_line_mem(l, s, strlen(s));
}

/* Text for one line on a terminal: a byte under 0x20 or 0x7f becomes '?', so that a name cannot break the line. */
void spy_line_plain(struct spy_line *l, const char *s);

/* A string literal, without measuring it at run time. */
#define spy_line_lit(l, s) spy_line_mem((l), "" s, sizeof(s) - 1)
/* A JSON string known to need no escaping: the spy's own names (functions, parameters, enums). */
void spy_line_name(struct spy_line *l, const char *s);
void spy_line_str(struct spy_line *l, const char *s);	/* a JSON string, or null */
void spy_line_u64(struct spy_line *l, uint64_t v);
void spy_line_i64(struct spy_line *l, int64_t v);
void spy_line_hex(struct spy_line *l, uint64_t v);	/* "0x..." quoted in JSON */
void spy_line_xdigits(struct spy_line *l, uint64_t v);	/* 0x... bare, for text */
void spy_line_double(struct spy_line *l, double v);
/* A float's own shortest digits: 0.9, not 0.89999997615814209. */
void spy_line_float(struct spy_line *l, float v);
/* `"key":` */
void spy_line_key(struct spy_line *l, const char *key);

#endif
