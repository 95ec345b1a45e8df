/* What the command's parts (run, scan, report) share. */
#include "cli-util.h"

#include <stdarg.h>
#include <stdio.h>

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
