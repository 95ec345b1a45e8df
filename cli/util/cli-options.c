/*
 * The option table, made from cli-options.def, and each subcommand's list
 * of options in its --help, printed from it: the help cannot name an option
 * the table lacks, nor forget one it has.
 */
#include "cli-options.h"

#include <string.h>

#define CLI_COMMAND(name, operands)
#define CLI_OPTION(command, name, arg, values, flags, help) { command, name, arg, values, flags, help },
const struct cli_option cli_options[] = {
#include "cli-options.def"
	{ NULL, NULL, NULL, NULL, 0, NULL },
};
#undef CLI_OPTION
#undef CLI_COMMAND

void
cli_print_options(FILE *out, const char *command, int column)
{
	for (const struct cli_option *o = cli_options; o->name; o++) {
		const char *h = o->help;
		int n;

		if (strcmp(o->command, command) != 0 || (o->flags & CLI_HIDDEN))
			continue;
		/* --drop-in[=9|8]: an optional value is written on to the name. */
		n = fprintf(out, "  %s%s%s", o->name, o->arg && o->arg[0] != '[' ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "%*s", n + 2 > column ? 2 : column - n, "");
		for (;;) {
			size_t len = strcspn(h, "\n");

			fprintf(out, "%.*s\n", (int)len, h);
			if (!h[len])
				break;
			h += len + 1;
			fprintf(out, "%*s", column, "");
		}
	}
}
