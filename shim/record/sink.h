#ifndef SPY_SINK_H
#define SPY_SINK_H

#include "buf.h"
#include "recfmt.h"
#include "spy.h"

/* Opening the record file failed (sink.c); in this process when spy_sink_gave_up_here() says so (a child's is new). */
extern int spy_sink_gave_up;
int spy_sink_gave_up_here(void);
/* 1 when records go to a file (CUDNNSPY_OUTPUT set and usable so far). Inline: every traced call asks. */
static inline int
spy_sink_enabled(void)
{
	return spy_config.output[0] && !(__atomic_load_n(&spy_sink_gave_up, __ATOMIC_ACQUIRE) && spy_sink_gave_up_here());
}
/* Appends a finished line to the thread's buffer; writes it out when full or when `now`. */
void spy_sink_commit(struct spy_thread *th, struct spy_line *l, int now);
/*
 * Format 2: appends a binary frame (recfmt.h) to the thread's buffer. A
 * call (SPY_REC_CALL, SPY_REC_FAILURE) gets its time as a delta put before
 * `body`, and the buffer's chunk frame first when it is the buffer's first
 * call. A failure is written out at once. A call's body is read in words:
 * its buffer holds SPY_SINK_BODY_SLACK bytes past `n`. `count` (or NULL): a
 * traced call's counter, incremented with the frame written or dropped, as
 * spy_sink_call_close does (below).
 */
#define SPY_SINK_BODY_SLACK 8
void spy_sink_commit_frame(struct spy_thread *th, unsigned tag, const uint8_t *body, size_t n, uint64_t t_ns,
			   uint64_t *count);
/* A thread's buffer is its own but for the exit's flush of it: a lock held for a few stores, never a call. */
static inline void
spy_buf_lock(struct spy_buf *b)
{
	while (__atomic_exchange_n(&b->lock, 1, __ATOMIC_ACQUIRE))
		;
}

static inline void
spy_buf_unlock(struct spy_buf *b)
{
	__atomic_store_n(&b->lock, 0, __ATOMIC_RELEASE);
}

/* The frames written so far are the block's: a reader after any ending sees them. */
static inline void
spy_buf_publish(struct spy_buf *b)
{
	__atomic_store_n((uint32_t *)(void *)(b->blk + SPY_REC_BLOCK_COMMITTED), (uint32_t)b->len, __ATOMIC_RELEASE);
}

/* The exit handler has begun (sink.c's spy_sink_seal): blocks claimed before take no more frames. */
extern int spy_sink_sealed;
/*
 * The process has the kernel's expedited membarrier (Linux): the exit's seal makes every thread's stores seen
 * and its own seen by every thread at once, so that a thread entering its block needs no fence, a flag and a
 * compiler barrier (a locked instruction cost about 5 ns a traced call); else a fence after the flag.
 */
extern int spy_sink_asym;

/*
 * The thread's own block entered for a frame in place: a flag the seal waits on (the exit's the only other
 * thread that writes a thread's buffer), which the seal's store and this thread's look at it order (Dekker's).
 */
static inline void
spy_buf_enter(struct spy_buf *b)
{
	__atomic_store_n(&b->busy, 1, __ATOMIC_RELAXED);
	/* With membarrier, the seal's orders this flag before its load of it (sink.c): the compiler's alone here. */
	if (SPY_LIKELY(__atomic_load_n(&spy_sink_asym, __ATOMIC_RELAXED)))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void
spy_buf_leave(struct spy_buf *b)
{
	__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
}

/*
 * A short call frame written in place (recbin.c's plain packers): where its body goes in the thread's block,
 * which has room for `max` bytes of it (at most SPY_SINK_CALL_MAX, so that its length is one byte), with its tag
 * and the time's delta written and the block entered; NULL when the block cannot (none yet, full, sealed), for
 * spy_sink_commit_frame. spy_sink_call_close, with where the body ends, commits it: nothing else between.
 * `count` (or NULL) is incremented before the block is left: the exit's seal, which waits for every thread
 * out of its block, then finds the call both written and counted or neither. Inline: each traced call makes one.
 */
#define SPY_SINK_CALL_MAX 117
static inline uint8_t *
spy_sink_call_open(struct spy_thread *th, size_t max, uint64_t t_ns)
{
	struct spy_buf *b = th->buf;
	uint8_t *o;

	spy_buf_enter(b);
	/* The seal first: once it is seen, the exit may be flushing this buffer, whose fields are then its. */
	if (__atomic_load_n(&spy_sink_sealed, __ATOMIC_SEQ_CST) || !b->blk || !b->chunk || b->len + max + 32 > b->blk_cap) {
		spy_buf_leave(b);
		return NULL;
	}
	/* The tag, the length (close's), the time's delta. */
	o = b->blk + SPY_REC_BLOCK_HEAD + b->len;
	o[0] = SPY_REC_CALL;
	o = spy_rec_put_uvp(o + 2, spy_rec_zigzag((int64_t)(t_ns - b->t_prev)));
	b->t_prev = t_ns;
	return o;
}

static inline void
spy_sink_call_close(struct spy_thread *th, uint8_t *end, uint64_t *count)
{
	struct spy_buf *b = th->buf;
	uint8_t *o = b->blk + SPY_REC_BLOCK_HEAD + b->len;

	o[1] = (uint8_t)(end - o - 2);
	b->len = (size_t)(end - (b->blk + SPY_REC_BLOCK_HEAD));
	spy_buf_publish(b);
	if (count)
		SPY_INC(*count);
	spy_buf_leave(b);
}

/* The summary: committed as the file's last record (what the exiting thread writes after it follows it). */
void spy_sink_commit_last(struct spy_thread *th, struct spy_line *l);
/* A record that cannot be written, counted. */
void spy_sink_drop(void);
/* Writes out one thread's buffer. */
void spy_sink_flush(struct spy_thread *th);
/* The file's path, or NULL when there is none (yet). */
const char *spy_sink_path(void);
/* Records that could not be written. */
unsigned long long spy_sink_dropped(void);
/* The thread's buffers, allocated on first use; NULL when out of memory. */
struct spy_buf *spy_thread_buf(struct spy_thread *th);
/*
 * The record file's name: in the directory `pattern` (is_dir, or a trailing
 * '/'), or the pattern with %p %h %r %e %% expanded. -1 when it does not fit.
 */
int spy_sink_expand(const char *pattern, int is_dir, const char *prog, const char *host, const char *pid,
		    const char *rank, char *out, size_t size);
/* The record file of this process if it is open, for a signal handler (no lock); or -1. */
int spy_sink_crash_fd(void);
/* From a signal handler: what the thread buffered and has not written (nothing when its file is mapped). */
void spy_sink_crash_flush(int fd, struct spy_thread *th);
/* Writes whole lines to that file from a signal handler: only if `fd` still names it, only what fits. */
void spy_sink_crash_write(int fd, const char *data, size_t len);
/*
 * The exit handler begins: from now on only the calling thread writes (the
 * buffers it flushes, the summary, calls made after it), so that the summary
 * stays the last line and no other thread is cut off in the middle of one.
 */
void spy_sink_seal(void);
/* After the summary: gives back the room reserved past the end of the file. */
void spy_sink_trim(void);
/*
 * A state frame's data in the mapped record file (recfmt.h): `size` bytes,
 * zeroed and 16-aligned, which the process changes in place and a reader
 * of the file sees after any ending. NULL when the file is not mapped.
 */
void *spy_sink_state(unsigned kind, unsigned copy, uint32_t a, uint32_t b, size_t size);
/* Which mapped file state frames go to: new with each file (a forked child's), 0 while none is mapped. */
unsigned spy_sink_state_gen(void);
/* The probing failures per function in the mapped file's process state, or NULL. */
uint64_t *spy_sink_probes(void);
/* The record file opened now, when CUDNNSPY_OUTPUT is set and the library is known: its counters live there. */
void spy_sink_open(void);
/* In a forked child: forget the parent's file and buffered records. */
void spy_sink_fork_child(void);

#endif
