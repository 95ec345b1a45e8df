/* `cudnnspy run --library`: is the named copy a cuDNN the spy can forward to? */
#ifndef CUDNNSPY_RUN_LIBRARY_H
#define CUDNNSPY_RUN_LIBRARY_H

#include <stddef.h>

/*
 * value: a file, or a directory holding libcudnn.so.9, .so.8 or .so (the
 * first found, as the spy looks). 0 when it is a cuDNN dispatcher for this
 * machine, with the file in `file` and its major (0 when its name tells
 * none); otherwise -1 after one line on stderr saying what it is instead.
 */
int cli_check_library(const char *value, char *file, size_t filelen, int *major);

#endif
