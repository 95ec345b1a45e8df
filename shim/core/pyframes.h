/* The calling thread's innermost Python frames, read without the GIL (pyframes.c). */
#ifndef SPY_PYFRAMES_H
#define SPY_PYFRAMES_H

#include <stdint.h>

#include "buf.h"

#define SPY_PY_FRAMES 8

/* Frames as captured: each a code object and the line it was running, innermost first. */
struct spy_pystack {
	int n;
	const void *code[SPY_PY_FRAMES];
	int line[SPY_PY_FRAMES];
};

/*
 * The calling thread's Python frames into S (s->n = 0 when it runs none, the
 * process has no Python, or its interpreter is one pyframes.c cannot read);
 * s->n. The first call in a process looks for Python; later ones cost a
 * branch where there is none.
 */
int spy_py_capture(struct spy_pystack *s);
/* Says a library was opened: one named libpython may bring Python into a process that had none. */
void spy_py_opened(const char *name);
/* Which stack this is, for a cache of texts written once: its code objects and lines. */
uint64_t spy_py_hash(const struct spy_pystack *s);
/* [{"file":...,"line":N,"function":...}, ...] */
void spy_py_json(struct spy_line *l, const struct spy_pystack *s);
/* "forward (model.py:42) < main (train.py:9)", for a failure's line on stderr */
void spy_py_text(struct spy_line *l, const struct spy_pystack *s);

#endif
