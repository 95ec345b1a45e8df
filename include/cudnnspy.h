/*
 * cudnnspy.h: the optional API of the cuDNN spy.
 *
 * A program may mark regions of its run (an epoch, an iteration, a phase)
 * so that they appear in the spy's records between the cuDNN calls, and it
 * may ask for the buffered records to be written now. Nothing needs to be
 * linked: the functions are declared weak, so a program built with this
 * header runs the same without the spy, where their addresses are NULL.
 * Under the spy (LD_PRELOAD=libcudnnspy.so, or the drop-in libcudnn.so.N
 * that the program links) the dynamic linker binds them to the spy's
 * definitions.
 *
 * Call the functions through the *_if_loaded helpers below, or test the
 * address first yourself:
 *
 *	#include <cudnnspy.h>
 *
 *	for (int epoch = 0; epoch < 10; epoch++) {
 *		char label[32];
 *
 *		snprintf(label, sizeof(label), "epoch %d", epoch);
 *		cudnnspy_mark_if_loaded(label);
 *		train_one_epoch();
 *	}
 *	cudnnspy_flush_if_loaded();
 *
 * Weak references work in executables and shared libraries linked
 * dynamically; a statically linked program never sees the spy. Compilers
 * without weak references (neither GCC nor Clang) get plain declarations,
 * and such a program must then link -lcudnnspy.
 *
 * The functions are thread-safe, but not async-signal-safe: do not call
 * them from a signal handler. They never change errno.
 */
#ifndef CUDNNSPY_H
#define CUDNNSPY_H

/* The version of this API: goes up when a function is added. */
#define CUDNNSPY_API_VERSION 1

/* Longest label kept in a mark record, in bytes; a longer one is cut. */
#define CUDNNSPY_LABEL_MAX 256

/* CUDNNSPY_BUILDING: the spy's own definitions, which must be strong. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(CUDNNSPY_BUILDING)
#define CUDNNSPY_WEAK __attribute__((weak))
#else
#define CUDNNSPY_WEAK
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Marks a point in the run: writes a "mark" record, with the label, the
 * thread and the time, to the calling thread's record buffer, in order with
 * that thread's cuDNN call records. Does nothing unless records are enabled
 * (CUDNNSPY_OUTPUT). The record is in the file when this returns, as the
 * others are (the file is mapped), however the process ends after; where
 * the file cannot be mapped, at the next flush (at most a second later,
 * cudnnspy_flush, exit).
 *
 * @param label What to call this point, for example "epoch 3" or
 *        "step 1200". Copied at once; cut to CUDNNSPY_LABEL_MAX bytes. NULL
 *        is written as an empty label.
 */
CUDNNSPY_WEAK void cudnnspy_mark(const char *label);

/**
 * Writes every thread's buffered records to the record file now. Records
 * are the file's when their call returns (the file is mapped), so this is
 * needed only where the file cannot be mapped (a file system without
 * shared mappings, a file-size limit), for a process that may be killed or
 * another process watching the file. Opens the file if this is the first
 * record. Does nothing unless records are enabled.
 */
CUDNNSPY_WEAK void cudnnspy_flush(void);

/**
 * Says whether the spy is in the process. Its address is NULL when the spy
 * is not loaded; when it is, it returns 1.
 */
CUDNNSPY_WEAK int cudnnspy_is_loaded(void);

#ifndef CUDNNSPY_BUILDING
/* Helpers that are safe to call whether or not the spy is loaded. */

/**
 * 1 when the spy is in the process, 0 otherwise.
 */
static inline int
cudnnspy_loaded(void)
{
	return cudnnspy_is_loaded ? cudnnspy_is_loaded() : 0;
}

/**
 * cudnnspy_mark() when the spy is in the process; nothing otherwise.
 *
 * @param label As for cudnnspy_mark().
 */
static inline void
cudnnspy_mark_if_loaded(const char *label)
{
	if (cudnnspy_mark)
		cudnnspy_mark(label);
}

/**
 * cudnnspy_flush() when the spy is in the process; nothing otherwise.
 */
static inline void
cudnnspy_flush_if_loaded(void)
{
	if (cudnnspy_flush)
		cudnnspy_flush();
}
#endif

#ifdef __cplusplus
}
#endif

#endif
