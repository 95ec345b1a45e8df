/* The spy's own messages: stderr only, one write(2) per line, errno kept. */
#include "core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

void
spy_log(const char *fmt, ...)
{
	char buf[1024];
	int saved = errno;
	va_list ap;
	int n;

	if (spy_quiet)
		return;
	n = snprintf(buf, sizeof(buf), "cudnnspy: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* A failed write of a diagnostic is not worth a second one. */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		(void)0;
	errno = saved;
}
