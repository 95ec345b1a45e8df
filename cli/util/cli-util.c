/* What the command's parts (run, scan, report) share. */
#include "cli-util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
complain(const char *fmt, ...)
{
	va_list ap;

	fputs("cudnnspy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
cli_is_record_name(const char *name)
{
	return strstr(name, ".jsonl") || strstr(name, ".cudnnspy.rec");
}
