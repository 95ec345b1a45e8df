/* `cudnnspy run`: what the spy left in its run directory, said after the program ends. */
#ifndef CUDNNSPY_RUN_CHECK_H
#define CUDNNSPY_RUN_CHECK_H

#include <stddef.h>

/* A fresh directory for the spy's markers (CUDNNSPY_RUN_DIR), or NULL. */
char *cli_run_dir_make(void);

/* The record files the run's processes wrote, as their markers name them (absolute paths). */
struct cli_run_files {
	char **paths;
	size_t n;
};
void cli_run_files_free(struct cli_run_files *f);

/*
 * Reads and removes the markers: one line on stderr when the spy was never
 * loaded (and why, from the program's file: set-uid, static, a DT_RPATH
 * that defeats the drop-in), or was loaded and no process called cuDNN.
 * dropin: the drop-in's major, 0 for the preload; signal: what killed the
 * command, 0 if it exited. Also says when a process died inside its first
 * cuDNN call, as a dispatcher without its sub-libraries makes it. Returns how many record
 * files the processes created, or -1 when no process called cuDNN; their paths in `files`.
 */
int cli_run_explain(const char *dir, const char *cmd, int dropin, int signal, struct cli_run_files *files);
/* The same, silently: the program never started. */
void cli_run_explain_discard(const char *dir);

#endif
