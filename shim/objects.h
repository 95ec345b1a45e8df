/* Objects the program created (objects.c) and the argument encoder (args.c). */
#ifndef SPY_OBJECTS_H
#define SPY_OBJECTS_H

#include "buf.h"
#include "spy.h"

void spy_obj_created(const void *ptr, const char *kind);
void spy_obj_destroyed(const void *ptr);
/* Remembers a successful Set call on the descriptor `ptr`. */
void spy_obj_set(const void *ptr, const char *kind, unsigned fn, const union spy_arg *args);
/*
 * Writes the object's id ("tensor#3"): as a JSON string, or with `state`
 * as an object with what was set on it; `text` writes plain text instead.
 */
void spy_obj_describe(struct spy_line *l, const void *ptr, const char *kind, int state, unsigned mode);

enum spy_args_mode {
	SPY_ARGS_AFTER_SUCCESS = 1 << 0,	/* out-parameters hold values worth reading */
	SPY_ARGS_STORED = 1 << 1,		/* remembered arguments: never follow a pointer */
	SPY_ARGS_TEXT = 1 << 2,			/* name=value for stderr instead of JSON */
	SPY_ARGS_BRIEF = 1 << 3,		/* descriptors: id and summary, the Set call only without one */
};

/* All of a call's arguments: a JSON object, or name=value text. */
void spy_args_json(struct spy_line *l, unsigned fn, const union spy_arg *args, unsigned mode);
/* One argument; `count` is an array's element count, or -1 when unknown. */
void spy_arg_json(struct spy_line *l, const struct spy_param_info *p, const union spy_arg *a, int64_t count,
		  unsigned mode);

#endif
