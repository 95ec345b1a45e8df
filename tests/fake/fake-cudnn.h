/*
 * The fake cuDNN: built from the same API description as the spy, in an
 * 8.x and a 9.x flavour (FAKE_MAJOR). Every function counts its calls and
 * returns the status a test chose (FAKECUDNN_STATUS="cudnnCreate=1001,..."
 * or fakecudnn_set_status()), SUCCESS otherwise.
 */
#ifndef FAKE_CUDNN_H
#define FAKE_CUDNN_H

#include "g_prototypes.h"
#include "spy-api.h"

#ifdef _WIN32
#define FAKE_EXPORT	/* the fake DLLs' exports are gen.py's def-fake8/def-fake9: its major's names only */
#else
#define FAKE_EXPORT __attribute__((visibility("default")))
#endif

cudnnStatus_t fake_enter(int id);
void *fake_new_object(void);

/* Control API for tests, exported as fakecudnn_*. */
FAKE_EXPORT void fakecudnn_set_status(const char *name, int status);
FAKE_EXPORT unsigned long fakecudnn_calls(const char *name);

#endif
