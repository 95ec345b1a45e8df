/* What the command's parts (run, scan, report) share. */
#ifndef CUDNNSPY_CLI_UTIL_H
#define CUDNNSPY_CLI_UTIL_H

#include <sys/types.h>

/* One line on stderr, prefixed "cudnnspy: ". */
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* While BUF is set, the first complaint goes into it (NUL-terminated) and none to stderr; NULL: stderr again. */
void complain_into(char *buf, size_t cap);

/* Called before complain() writes, when set: a progress line (cli-progress.c) is wiped first. */
extern void (*cli_before_complain)(void);

/* 1 when a file's name is a record file's, of either format (*.jsonl*, *.cudnnspy.rec). */
int cli_is_record_name(const char *name);

/* The first n bytes of a file or a pipe (a pipe gives them in pieces), fewer at its end; -1 on an error. */
ssize_t cli_read_start(int fd, void *buf, size_t n);

#endif
