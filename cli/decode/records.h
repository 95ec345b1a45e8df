/*
 * Reading record files of either format (docs/record-format.md): format 1
 * is JSON Lines; format 2 mixes JSON lines with binary frames, which this
 * reader turns back into the JSON records format 1 would have held, so that
 * `dump`, `report` and `repro` read one stream of lines.
 */
#ifndef CUDNNSPY_RECORDS_H
#define CUDNNSPY_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum { REC_CUT = 1, REC_DAMAGED = 2 };
/* Why a file was not read at all (rec_reader.refused): its first bytes are no record file's. */
enum {
	REC_NOT_RECORDS = 1,	/* neither a JSON line nor format 2's file frame */
	REC_FIRST_CUT = 2,	/* the start of a file frame, and then the end: cut inside its first frame */
	REC_FIRST_DAMAGED = 3,	/* a file frame's tag and magic, with a length no file frame has */
};
/* The formats, told apart by the first frame. */
enum { REC_FORMAT_JSON = 1, REC_FORMAT_FRAMES = 2 };

/* A handle's or descriptor's text (format 2): `json` bytes of JSON, then a stack module's file names after a NUL. */
struct rec_text {
	char *s;
	uint32_t len;
	uint32_t json : 31, listed : 1;	/* listed: in rec_reader.live */
};

struct rec_reader {
	int fd;
	uint8_t *buf;
	size_t cap, start, end;
	int eof, error, owned;
	unsigned long long offset;	/* of buf[0] in the file */
	struct rec_text **text_pages;	/* the texts by id, in pages made as ids come (records.c's text_at()) */
	size_t texts_seen;
	uint32_t *live;	/* the ids given a text since texts were last forgotten */
	size_t nlive, live_cap;
	unsigned long long scan_for, scan_at;	/* resync(): damage at scan_for has no place to go on before scan_at */
	uint64_t tid, t_prev;
	int chunk, have_file, mismatch;
	int format, refused;
	unsigned version;
	struct spy_line out;
	struct spy_line scratch;	/* a backend descriptor's text being changed */
	/* What was found, for the caller to say. */
	long long records, cut, damaged, missing_texts, unreadable_calls;
	unsigned long long cut_at, cut_bytes, damage_at, damage_bytes, unreadable_at, missing_at;
	unsigned long long frame_at;	/* of the frame being read */
	/* Inside a block of a mapped file (version 6): where its committed frames end, and where it ends. */
	int in_block;
	unsigned long long block_frames_end, block_end;
	/* The process's counters (state frames), and whether it wrote its own summary. */
	struct rec_state *state;
	int saw_summary;
	size_t kept_given;	/* of the state's kept records, given so far at the process's end */
	long long summaries_made;	/* summaries given from the counters, of processes that did not exit */
};

/*
 * The record files of a directory, regular files only, in name order, at
 * most `max`: an array of paths to free with each of them; NULL and a count
 * of 0 when there is none, or when the directory cannot be read (errno).
 */
char **rec_dir_files(const char *dir, size_t max, size_t *count);
/* 1 when these first bytes begin a format 2 file. */
int rec_is_binary(const void *data, size_t len);
/*
 * 1 when s[0..n) is one JSON value (RFC 8259) in UTF-8, white space around
 * it allowed: what the reader gives as a record, and what it pastes into one.
 */
int rec_json_valid(const char *s, size_t n);
void rec_open_fd(struct rec_reader *r, int fd);
/* The same with a first buffer of `first` bytes (it grows as frames need): for the fuzz target. */
void rec_open_fd_buffer(struct rec_reader *r, int fd, size_t first);
/* The same, after `len` bytes that were read from fd already (a pipe cannot go back): they come first. */
void rec_open_fd_after(struct rec_reader *r, int fd, const void *first, size_t len);
/* Over memory that outlives the reader. */
void rec_open_mem(struct rec_reader *r, const void *data, size_t len);
/*
 * The next record as one JSON line without its newline; 0 at the end.
 * REC_CUT: the file ends inside it (torn by an ending). REC_DAMAGED: bytes
 * that are no record (given up to the next newline, where reading goes on),
 * a line that is no JSON, or a text frame no spy writes. A line given
 * without flags is always valid JSON. 0 at once, with `refused` set, when
 * the first frame is neither format's.
 */
int rec_next(struct rec_reader *r, const char **line, size_t *len, int *flags);
void rec_close(struct rec_reader *r);
/* Why rec_next() refused the file, in words for a message after its name; NULL when it did not. */
const char *rec_refused_why(const struct rec_reader *r);

#endif
