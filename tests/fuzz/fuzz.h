/*
 * What the fuzz targets share (tests/fuzz, docs/reliability.md). Each
 * fuzz-NAME.c defines LLVMFuzzerTestOneInput for one parser of the core.
 * Every target is built two ways from the same file:
 *   clang -fsanitize=fuzzer,address,undefined by build-and-run.sh, where
 *     libFuzzer's main drives the entry point (./dev.sh fuzz);
 *   gcc with -DFUZZ_REPLAY_MAIN by meson (tests/fuzz/meson.build), where
 *     fuzz-common.c's main feeds it every file of the seed corpus, once
 *     (suite `fuzz`, in every test run).
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The bytes as a NUL-terminated string in a heap block of exactly size + 1
 * bytes, so that AddressSanitizer sees any read past the end; an embedded
 * NUL ends the string early, as it would in the environment. Never NULL.
 */
char *fuzz_string(const uint8_t *data, size_t size);

/* Stops the run, so that the fuzzer keeps the input: a broken promise that is not a memory error. */
#define FUZZ_ASSERT(cond) \
	do { \
		if (!(cond)) \
			fuzz_failed(__FILE__, __LINE__, #cond); \
	} while (0)
void fuzz_failed(const char *file, int line, const char *what) __attribute__((noreturn));

#endif
