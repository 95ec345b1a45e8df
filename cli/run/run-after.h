/* `cudnnspy run`: the analysis of the records after the program ends. */
#ifndef CUDNNSPY_RUN_AFTER_H
#define CUDNNSPY_RUN_AFTER_H

#include "run-check.h"

/*
 * Reads the record files the run's processes wrote and, when they show what
 * no process said itself (several processes, or one that ended without its
 * summary), prints the job in a few lines on stderr (unless CUDNNSPY_STDERR
 * leaves out the summary). Returns 1 when it printed. Without jansson (no
 * `report` in this build), nothing.
 */
int cli_run_after(const struct cli_run_files *files);

#endif
