#ifndef SPY_AUDIT_H
#define SPY_AUDIT_H

#include <stddef.h>

struct spy_line;

/*
 * Which copies of cuDNN and CUDA the process has mapped, and the conflicts
 * between them. Cheap when nothing new was loaded since the last look.
 */
/* A copy the program closed is no longer mapped: the library at `base` is forgotten (dlclose, dlsym.c). */
void spy_audit_unmapped(void *base);
void spy_audit(void);
/* Changes whenever spy_audit finds an object mapped or unmapped since its last look. */
unsigned spy_audit_gen(void);
/* A finding from elsewhere (a failure message naming a library that did not load). */
void spy_audit_finding(const char *id, const char *severity, const char *message, const char *path);
/* A dlopen of a cuDNN library (dlsym.c): what was asked, by whom, and what came of it. */
enum spy_load_result { SPY_LOAD_PENDING, SPY_LOAD_LOADED, SPY_LOAD_FAILED };
void spy_audit_load(const char *name, int flags, const char *caller, enum spy_load_result result, const char *error);
/*
 * Why CUDA could not start, in words, from what the spy sees (the driver
 * library, device nodes, CUDA_VISIBLE_DEVICES, versions), for a
 * NOT_INITIALIZED from cudnnCreate of `copy`; "" and 0 when nothing explains it.
 */
size_t spy_audit_why_not_initialized(char *out, size_t size, unsigned copy);
/* A finding record's line, as spy_audit_finding writes it (kept records of findings made at exit: algo.c). */
void spy_audit_finding_json(struct spy_line *l, const char *id, const char *severity, const char *message,
			    const char *const *paths, int npaths);
/* In a forked child: report everything again, into the child's own file. */
void spy_audit_fork_child(void);

#endif
