/* What the command's parts (run, scan, report) share. */
#ifndef CUDNNSPY_CLI_UTIL_H
#define CUDNNSPY_CLI_UTIL_H

/* One line on stderr, prefixed "cudnnspy: ". */
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
