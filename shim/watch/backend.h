/*
 * The graph (backend) API: what the program built with
 * cudnnBackendCreateDescriptor / SetAttribute / Finalize, remembered in a
 * fixed table (backend.c), decoded by attribute name and type.
 */
#ifndef SPY_BACKEND_H
#define SPY_BACKEND_H

#include "buf.h"
#include "spy.h"

/* slowpath.c: a watched backend call returned (any status). */
void spy_backend_call(struct spy_call *c, long status, const union spy_arg *args);
/* What the spy knows of a backend descriptor, inside its JSON object (or as [text]): objects.c's describer. */
void spy_backend_describe(struct spy_line *l, const void *ptr, unsigned mode);
/*
 * Argument `i` of cudnnBackendSetAttribute/GetAttribute when it is
 * the array of elements, decoded by the attribute type; 0 when not handled (args.c's decoder).
 */
int spy_backend_arg_json(struct spy_line *l, unsigned fn, const union spy_arg *args, int i, unsigned mode);
/*
 * slowpath.c: 1 when a failed call is the normal probing of a framework
 * (cudnn-frontend finalizing engine configs and plans until one works,
 * asking what a config does not answer): NOT_SUPPORTED from finalizing an
 * engine config, plan or heuristics, or from reading a config, engine or
 * heuristics attribute. `not_supported` is that status in the copy's numbering.
 */
int spy_backend_is_probe(unsigned fn, long status, long not_supported, const union spy_arg *args);
/*
 * Format 2 (recbin.c, objects.c's stamp): a number that changes with every
 * change a backend descriptor's JSON text shows (a finalized plan's: with
 * what it runs, too); 0 when the spy does not know the descriptor.
 */
int spy_backend_version(const void *ptr, uint64_t *version);
/*
 * 1 when this thread's last traced cudnnBackendSetAttribute was on ptr and
 * kept its attribute, taking the descriptor's version from `before` to
 * `after`, and nothing changed it since.
 */
int spy_backend_last_set(const void *ptr, uint64_t *before, uint64_t *after);
/* At exit: one `heuristics` record per results query. */
void spy_backend_records(void);
/* slowpath.c, once: flags the backend functions the spy watches (SPY_FN_WATCH), and keeps its locks across fork. */
void spy_backend_flags_init(void);


#endif
