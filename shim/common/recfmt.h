/*
 * The record file's binary frames (docs/record-format.md), shared by the
 * writer in the library and the reader in the command: nothing here does
 * I/O. A record file of format 2 is a sequence of frames. A frame that
 * begins with '{' is a JSON line, up to and with its newline, exactly as
 * format 1 writes it; any other frame is a tag byte, its payload's length
 * as a varint, and the payload. So the library's rare, rich records (the
 * header, failures, the summary, a crash written from a signal handler in
 * pieces) stay JSON, and the hot ones (a traced call) are packed words.
 */
#ifndef SPY_RECFMT_H
#define SPY_RECFMT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "spy-api.h"
#include "battr.h"
#include "counts.h"

#define SPY_REC_VERSION 8
/* The first frame of a file: tag, length, "cudnnspy", version, function count, the function table's hash. */
#define SPY_REC_MAGIC "cudnnspy"
enum spy_rec_tag {
	SPY_REC_FILE = 0x01,	/* magic[8] u16 version, u32 function count, u32 names hash, u32 layout hash (LE) */
	SPY_REC_CHUNK = 0x02,	/* a thread's buffer begins: varint tid, varint t_ns (the times after are deltas) */
	SPY_REC_TEXT = 0x03,	/* varint id, then the text: an argument's JSON, written once, named by id after */
	SPY_REC_CALL = 0x04,	/* a traced call that succeeded: see docs/record-format.md */
	SPY_REC_FAILURE = 0x05,	/* a failed call, with cuDNN's message, the recent calls and the stack (version 4) */
	SPY_REC_GPU = 0x06,	/* a call's GPU time: varint fn, copy, varint tid, t_ns, gpu_ns (version 5) */
	SPY_REC_BLOCK = 0x07,	/* a thread's block of the mapped file: u16 0, u32 committed, u32 capacity, u32 0 (version 6) */
	SPY_REC_STATE = 0x08,	/* counters the process keeps changing in place: kind, copy, u16 0, u32 a, u32 b, data (version 6) */
};
/* A state frame's kinds: what its data is, and what a and b say. */
enum spy_rec_state {
	SPY_STATE_COUNTS = 1,	/* a: functions, b: thread block; data: a struct spy_counts per function (counts.h) */
	SPY_STATE_TIMING = 2,	/* a: function, b: thread block; data: its struct spy_timing */
	SPY_STATE_PROCESS = 3,	/* a: functions; data: u64 records dropped, u64 0, then u64 probing failures per function */
	SPY_STATE_RECORD = 4,	/* a: the record's number (an algo choice's); data: struct spy_rec_kept */
};
/*
 * A record the process keeps up to date in place (SPY_STATE_RECORD), for a
 * reader after an ending without exit: its values, changed in place, and
 * its text, rendered again when something else in it changes, into the
 * text not in use, `which` stored last. In a text, byte SPY_KEPT_MARK and a
 * digit k stand for value k in decimal: never in JSON, which escapes
 * control bytes.
 */
#define SPY_KEPT_VALUES 8
#define SPY_KEPT_TEXT_MAX 65536	/* a text's room: more is damage */
#define SPY_KEPT_MARK '\x01'
struct spy_rec_kept {
	uint32_t which;		/* the text that is whole: 0 or 1 */
	uint32_t len[2];
	uint32_t cap;		/* each text's room: two texts of `cap` bytes follow the values */
	uint64_t v[SPY_KEPT_VALUES];
	char text[];
};
/* A state frame's tag and length (a varint always 3 bytes long) and its 12 bytes before the data: 16-aligned data. */
#define SPY_REC_STATE_HEAD 16
/*
 * A block (version 6): its frame is SPY_REC_BLOCK_HEAD bytes, and the
 * `capacity` bytes after it belong to it: whole frames up to `committed`,
 * then bytes that are no frames (zeros, or a frame being written when the
 * process ended). The writer stores `committed` after each frame, so that a
 * file read after any ending holds every frame committed.
 */
#define SPY_REC_BLOCK_HEAD 16
#define SPY_REC_BLOCK_COMMITTED 4	/* the u32's offset in the block (aligned: stored atomically) */
#define SPY_REC_BLOCK_CAPACITY 8
/* A failure frame's flags, after its stack. */
enum { SPY_REC_F_INJECTED = 1, SPY_REC_F_PROBING = 2, SPY_REC_F_MESSAGE = 4, SPY_REC_F_WHY = 8,
	SPY_REC_F_PYTHON = 16 /* version 7: the Python frames' text id, after the recent calls */,
	SPY_REC_F_NO_FUNCTION = 32 /* version 8: the spy answered, its copy has no such function (or no copy) */ };
/* A failure's texts (cuDNN's message, the spy's why) are never longer: a longer one is written as JSON. */
#define SPY_REC_MESSAGE_MAX 1024
/* A failure's recent calls are never more (SPY_FLIGHT_MAX, core/spy.h). */
#define SPY_REC_RECENT_MAX 256
/* At most this many elements of an array argument are shown (args.c's MAX_VALUES): the rest is not written. */
#define SPY_REC_VALUES 16
_Static_assert(SPY_REC_VALUES == SPY_BATTR_VALUES, "a packed attribute holds what the backend keeps");
/* At most this many bytes of a string attribute (CUDNN_TYPE_CHAR) are shown (backend.c's STRING_MAX). */
#define SPY_REC_STRING_MAX SPY_BATTR_STRING_MAX
/* The most frames a packed call's stack holds (SPY_STACK_MAX, core/stack.h). */
#define SPY_REC_STACK_MAX 32
/* A text frame's body (its id and the text) is built in this many bytes (recbin.c): a longer one is damage (records.c). */
#define SPY_REC_TEXT_MAX 4096

/*
 * How a parameter behind a pointer is shown, from the API description
 * alone (a call's arguments decide only the count): what the writer packs
 * and the reader expects. The rules are args.c's for a call that succeeded.
 */
enum spy_rec_ptr { SPY_REC_PTR_NO, SPY_REC_PTR_ADDRESS, SPY_REC_PTR_VALUES, SPY_REC_PTR_SCALING };
/* A scaling factor's value: how it was read, after its address. */
enum { SPY_REC_SCALING_NONE, SPY_REC_SCALING_FLOAT, SPY_REC_SCALING_DOUBLE };

static inline enum spy_rec_ptr
spy_rec_ptr_shape(const struct spy_param_info *p)
{
	int readable;

	/* A text buffer (an out char *) and a struct are JSON's. */
	if (!p->is_array && p->dir != SPY_DIR_IN && p->elem == SPY_ARG_INT && p->elem_size == 1)
		return SPY_REC_PTR_NO;
	if (p->elem == SPY_ARG_STRUCT)
		return SPY_REC_PTR_NO;
	readable = p->elem_size && p->elem != SPY_ARG_PTR && p->elem != SPY_ARG_CALLBACK && p->elem != SPY_ARG_OBJECT &&
		   p->elem != SPY_ARG_CUDA;
	if (!readable) {
		/* A scaling factor, shown by the data type of the call's output; a padding fill, JSON's. */
		if (p->dir == SPY_DIR_IN && (strncmp(p->name, "alpha", 5) == 0 || strncmp(p->name, "beta", 4) == 0))
			return SPY_REC_PTR_SCALING;
		if (strcmp(p->name, "paddingFill") == 0)
			return SPY_REC_PTR_NO;
		return SPY_REC_PTR_ADDRESS;
	}
	if (!p->is_array && p->dir == SPY_DIR_IN)
		return SPY_REC_PTR_ADDRESS;
	return SPY_REC_PTR_VALUES;
}

/* A frame's payload is never longer: a longer length is damage. */
#define SPY_REC_FRAME_MAX (1u << 20)

static inline size_t
spy_rec_put_uv(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* The same, where the field after it goes: the call path's packers keep one pointer, not a base and a count. */
static inline uint8_t *
spy_rec_put_uvp(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint64_t
spy_rec_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t
spy_rec_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Reads a varint at *pos below end; 0 when it does not end there (cut) or is over 10 bytes. */
static inline int
spy_rec_get_uv(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 70 && *pos < end; shift += 7) {
		uint8_t b = p[(*pos)++];

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 1;
		}
	}
	return 0;
}

/* FNV-1a over the function names in table order, each with its NUL: what ids mean. */
static inline uint32_t
spy_rec_hash_step(uint32_t h, const char *s)
{
	for (;; s++) {
		h = (h ^ (uint8_t)*s) * 16777619u;
		if (!*s)
			return h;
	}
}

static inline uint32_t
spy_rec_hash_int(uint32_t h, long long v)
{
	for (int i = 0; i < 8; i++)
		h = (h ^ (uint8_t)((unsigned long long)v >> (8 * i))) * 16777619u;
	return h;
}

/* The file frame's function hash: the names of the writer's functions in table order (FNV-1a, each with its NUL). */
static inline uint32_t
spy_rec_names_hash(void)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < _SPY_FN_COUNT; i++)
		h = spy_rec_hash_step(h, spy_fn_info[i].name);
	return h;
}

/*
 * The file frame's layout hash (version 5): everything the packing of an
 * argument follows, so that a reader never parses packed calls by another
 * layout than the writer's: each parameter's name, kind, direction, count,
 * array-ness and element, the backend attribute types' kinds and sizes, and
 * the format's limits.
 */
static inline uint32_t
spy_rec_layout_hash(void)
{
	uint32_t h = 2166136261u;

	for (unsigned i = 0; i < _SPY_FN_COUNT; i++) {
		const struct spy_fn_info *f = &spy_fn_info[i];

		h = spy_rec_hash_int(h, f->nparams);
		for (int k = 0; k < f->nparams; k++) {
			const struct spy_param_info *p = &f->params[k];

			h = spy_rec_hash_step(h, p->name);
			h = spy_rec_hash_int(h, p->kind | p->dir << 8 | (long long)(unsigned char)p->count << 16 |
						    (long long)p->is_array << 24 | (long long)p->elem << 32 |
						    (long long)p->elem_size << 40 | (long long)(p->struct_id >= 0) << 48);
		}
	}
	for (unsigned t = 0; t < SPY_BATTR_NTYPES; t++)
		h = spy_rec_hash_int(h, spy_battr_types[t].kind | spy_battr_types[t].size << 8);
	h = spy_rec_hash_int(h, (long long)sizeof(struct spy_counts) | (long long)sizeof(struct spy_timing) << 16 |
				   (long long)SPY_HIST_BUCKETS << 32 | (long long)sizeof(struct spy_rec_kept) << 40 | (long long)SPY_KEPT_VALUES << 56);
	h = spy_rec_hash_int(h, SPY_REC_VALUES | SPY_REC_STRING_MAX << 8 | (long long)SPY_REC_STACK_MAX << 24 |
				   (long long)SPY_REC_MESSAGE_MAX << 32 | (long long)SPY_REC_RECENT_MAX << 48);
	return h;
}

enum spy_rec_walk { SPY_REC_WHOLE, SPY_REC_CUT, SPY_REC_DAMAGED };

/*
 * The frame at data[pos]: its length in *n. SPY_REC_CUT when it runs past
 * len (the end of a file that was being written), SPY_REC_DAMAGED when it
 * is no frame at all (*n is then the bytes up to the next newline).
 */
static inline enum spy_rec_walk
spy_rec_frame(const uint8_t *data, size_t len, size_t pos, size_t *n)
{
	size_t at = pos + 1;
	uint64_t plen;
	const uint8_t *nl;

	if (data[pos] == '{') {
		nl = memchr(data + pos, '\n', len - pos);
		*n = nl ? (size_t)(nl - (data + pos)) + 1 : len - pos;
		return nl ? SPY_REC_WHOLE : SPY_REC_CUT;
	}
	if (data[pos] >= SPY_REC_FILE && data[pos] <= SPY_REC_STATE) {
		if (!spy_rec_get_uv(data, len, &at, &plen)) {
			if (len - pos < 11) {
				*n = len - pos;
				return SPY_REC_CUT;
			}
		} else if (plen <= SPY_REC_FRAME_MAX) {
			if (plen > len - at) {
				*n = len - pos;
				return SPY_REC_CUT;
			}
			*n = at - pos + (size_t)plen;
			return SPY_REC_WHOLE;
		}
	}
	nl = memchr(data + pos, '\n', len - pos);
	*n = nl ? (size_t)(nl - (data + pos)) + 1 : len - pos;
	return SPY_REC_DAMAGED;
}

#endif
