/* The command line's option table (cli-options.def) and the help printed from it. */
#ifndef CUDNNSPY_CLI_OPTIONS_H
#define CUDNNSPY_CLI_OPTIONS_H

#include <stdio.h>

/* An alias that the help leaves out (-h beside --help). */
#define CLI_HIDDEN 1

struct cli_option {
	const char *command;	/* "run", "report", ...; "cudnnspy" before a subcommand */
	const char *name;
	const char *arg;	/* the value's name in the help; NULL: no value */
	const char *values;	/* how the value is completed (cli-options.def) */
	int flags;
	const char *help;	/* "\n" breaks the line */
};

/* Every option, ending with one whose name is NULL. */
extern const struct cli_option cli_options[];

/*
 * COMMAND's options as its --help lists them: two spaces, the name and its
 * argument, the help from COLUMN on (a longer name gets two spaces after it).
 */
void cli_print_options(FILE *out, const char *command, int column);

#endif
