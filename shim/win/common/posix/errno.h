#include_next <errno.h>
#include "spy_posix.h"
#define program_invocation_short_name (spy_program_short_name())
#ifndef EDQUOT
#define EDQUOT 122
#endif
