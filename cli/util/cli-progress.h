/*
 * A progress line on the terminal for commands that read many records
 * (report, dump): files done of N, bytes done of the total, the rate and the
 * time left, redrawn in place on stderr and wiped at the end, so that the
 * terminal keeps nothing of it. Only when stderr is a terminal and the work
 * lasts (docs/cudnnspy.md); stdout never sees it.
 */
#ifndef CUDNNSPY_CLI_PROGRESS_H
#define CUDNNSPY_CLI_PROGRESS_H

#include <stddef.h>

struct cli_progress {
	const char *what;		/* the subcommand, in the line */
	int on;				/* stderr is a terminal and no --quiet */
	int shown;			/* columns of the line now on the terminal; 0 when none */
	size_t files, files_done;
	int sizes_known;		/* every input has a size (no pipe) */
	unsigned long long total;	/* bytes of all inputs */
	unsigned long long done;	/* bytes of the files done */
	unsigned long long at;		/* bytes read of the current file */
	unsigned long long next;	/* done + at that makes it look at the clock again */
	double start, last, after;	/* seconds: begun, last drawn, the quiet first stretch */
};

/*
 * Begins counting for WHAT; a line may show only when ALLOWED (the caller's
 * say: no --quiet, stdout not the same terminal) and stderr is a terminal.
 */
void cli_progress_begin(struct cli_progress *p, const char *what, int allowed);

/* One more input of SIZE bytes (KNOWN 0: a pipe, whose size nobody knows), while listing them. */
void cli_progress_add(struct cli_progress *p, unsigned long long size, int known);

/* The current file has been read up to POS. Cheap: the clock is read every 256 KiB at most. */
void cli_progress_tick(struct cli_progress *p);

static inline void
cli_progress_at(struct cli_progress *p, unsigned long long pos)
{
	if (!p || !p->on)
		return;
	p->at = pos;
	if (p->done + pos >= p->next)
		cli_progress_tick(p);
}

/* The current file is done (SIZE bytes, or what was read of it when not known). */
void cli_progress_file_done(struct cli_progress *p, unsigned long long size);

/* Wipes the line; the counts stay for nothing else. */
void cli_progress_end(struct cli_progress *p);

#endif
