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

struct rec_reader {
	int fd;
	uint8_t *buf;
	size_t cap, start, end;
	int eof, error, owned;
	unsigned long long offset;	/* of buf[0] in the file */
	char **texts;
	size_t *text_len, ntexts, texts_seen;
	uint64_t tid, t_prev;
	int chunk, have_file, mismatch;
	unsigned version;
	struct spy_line out;
	struct spy_line scratch;	/* a backend descriptor's text being changed */
	/* What was found, for the caller to say. */
	long long records, cut, damaged, missing_texts, unreadable_calls;
	unsigned long long cut_at, cut_bytes, damage_at, damage_bytes;
};

/*
 * The record files of a directory, regular files only, in name order, at
 * most `max`: an array of paths to free with each of them; NULL and a count
 * of 0 when there is none, or when the directory cannot be read (errno).
 */
char **rec_dir_files(const char *dir, size_t max, size_t *count);
/* 1 when these first bytes begin a format 2 file. */
int rec_is_binary(const void *data, size_t len);
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
 * that are no record (given up to the next newline, where reading goes on).
 */
int rec_next(struct rec_reader *r, const char **line, size_t *len, int *flags);
void rec_close(struct rec_reader *r);

#endif
