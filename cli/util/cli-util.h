/* What the command's parts (run, scan, report) share. */
#ifndef CUDNNSPY_CLI_UTIL_H
#define CUDNNSPY_CLI_UTIL_H

/* One line on stderr, prefixed "cudnnspy: ". */
void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 1 when a file's name is a record file's, of either format (*.jsonl*, *.cudnnspy.rec). */
int cli_is_record_name(const char *name);

#endif
