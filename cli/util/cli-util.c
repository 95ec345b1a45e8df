/* What the command's parts (run, scan, report) share. */
#include "cli-util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *held;
static size_t held_cap;

void (*cli_before_complain)(void);

void
complain_into(char *buf, size_t cap)
{
	held = cap ? buf : NULL;
	held_cap = cap;
	if (held)
		held[0] = 0;
}

void
complain(const char *fmt, ...)
{
	va_list ap;

	if (held) {
		if (!held[0]) {
			va_start(ap, fmt);
			vsnprintf(held, held_cap, fmt, ap);
			va_end(ap);
		}
		return;
	}
	if (cli_before_complain)
		cli_before_complain();
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

ssize_t
cli_read_start(int fd, void *buf, size_t n)
{
	size_t have = 0;

	while (have < n) {
		ssize_t got = read(fd, (char *)buf + have, n - have);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return have ? (ssize_t)have : -1;
		if (got == 0)
			break;
		have += (size_t)got;
	}
	return (ssize_t)have;
}
