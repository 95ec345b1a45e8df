#include_next <fcntl.h>
#ifndef SPY_WIN_FCNTL_H
#define SPY_WIN_FCNTL_H
#include "spy_posix.h"
#define FALLOC_FL_KEEP_SIZE 1
#define FALLOC_FL_PUNCH_HOLE 2
#ifndef SPY_POSIX_IMPL
#define open spy_open
#define openat spy_openat
#define fcntl spy_fcntl
#define fallocate spy_fallocate
#endif
#endif
