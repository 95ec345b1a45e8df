/*
 * The drop-in's answer to "which cuDNN would this program have loaded
 * without me": the loader's own search, repeated for the object that
 * needed libcudnn.so.N (docs/architecture.md, "The drop-in's requester").
 */
#ifndef SPY_REQUESTER_H
#define SPY_REQUESTER_H

#include <stddef.h>

/*
 * Finds the first loaded object whose DT_NEEDED names the drop-in, or else
 * the caller of the dlopen that loaded it by name, and repeats glibc's
 * search for that name as that object, skipping the drop-in and its
 * directory. Returns 0 with the file in `out` and a few words for the
 * banner in `why` ("what libfoo.so's RUNPATH finds"); 1 when a requester
 * was found but its search finds no other copy (`why` says so); -1 when
 * there is no requester (opened by path, or preloaded): the caller's own
 * search applies.
 */
int spy_requester_search(char *out, size_t outlen, char *why, size_t whylen);

/*
 * glibc's search for `name` (no slash) as the loaded object `caller` (its
 * path as dladdr gives it) would do it, without loading anything: 0 with the
 * file it would open in `out`, 1 when it would find none, -1 when the caller
 * is not a loaded object.
 */
int spy_loader_search_as(const char *caller, const char *name, char *out, size_t outlen);

#endif
