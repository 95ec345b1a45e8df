/*
 * Fuzz target: cudnnspy repro (cli/repro), records in, a C program out.
 * Records travel in bug reports: a maintainer builds what repro writes, so
 * nothing read from them may become code (issue 27). Byte 0 of an input
 * picks the call (repro's default, --call 1 to 3, --failure 1 or 2), the
 * rest is a record file of either format. When repro writes a program, it
 * is lexed as C and must hold nothing but what repro writes: comments,
 * string and character literals closed on their line, and every identifier
 * a C keyword, a name of the cuDNN API description (repro_cudnn_word, or a
 * parameter's, after which repro names arrays), a variable of repro's own naming (tensor_3, backend_12, uid_5), or a word
 * of repro's own program text (`vocabulary` below: a change to what repro
 * writes that adds a word fails here until the word is added).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repro.h"
#include "spy-api.h"

/* The words of repro's own program text (repro-write.c, repro-graph.c, repro-desc.c), and of C's and CUDA's. */
static const char *const vocabulary[] = {
	/* C */
	"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
	"float", "for", "goto", "if", "int", "long", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "typedef", "union", "unsigned", "void", "volatile", "while", "include", "define", "NULL",
	"size_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintptr_t", "FILE",
	"stdout", "stderr", "printf", "fprintf", "snprintf", "puts", "putchar", "fputs", "exit", "memset", "memcpy",
	"strcmp", "strtol", "strtoul", "strtoll", "atoi", "malloc", "calloc", "free", "rand", "srand", "isnan",
	"fabs", "sqrt", "nan", "NAN", "INFINITY", "main", "argc", "argv", "abort", "stdio", "stdlib", "string",
	"stdint", "math", "h", "time", "clock_gettime", "timespec", "CLOCK_MONOTONIC", "tv_sec", "tv_nsec",
	/* CUDA */
	"cuda_runtime_api", "cudnn", "cudaError_t", "cudaSuccess", "cudaMalloc", "cudaFree", "cudaMemcpy",
	"cudaMemset", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost", "cudaDeviceSynchronize",
	"cudaGetErrorString", "cudaStream_t", "cudaStreamCreate", "cudaStreamDestroy", "cudaGetLastError",
	"cudaGetDeviceCount", "cudaEvent_t", "cudaEventCreate", "cudaEventRecord", "cudaEventSynchronize",
	"cudaEventElapsedTime", "cudaEventDestroy", "stdbool", "endif", "CUDNN_MAJOR",
	/* repro's program: its macros, functions and locals */
	"ELEM_BF16", "ELEM_F16", "ELEM_F32", "ELEM_F64", "ELEM_I32", "ELEM_I64", "ELEM_I8", "ELEM_U8", "FILL_NAN",
	"FILL_PATTERN", "FILL_RANDOM", "FILL_ZERO", "RECORDED_STATUS", "algo", "allocate_buffers", "b", "base",
	"buf_workspace", "buf_x", "buffer", "buffers", "bytes", "check_cuda", "check_cudnn", "count", "create_handle",
	"elem", "err", "exp", "f", "fflush", "fill", "fill_buffers", "fill_host", "fill_names", "fputc", "handle",
	"hash", "hi", "host", "i", "input", "k", "lo", "memory", "message", "more", "ms", "n", "name", "nans",
	"offset", "one", "p", "print_cudnn_error", "print_output", "print_results", "print_status", "ptr", "run_call",
	"run_search", "runs", "search_perf", "search_returned", "sign", "start", "state", "status", "step", "stop",
	"sum", "time_call", "timing", "to", "to_bf16", "to_half", "v", "values", "what", "x", "zero", "returned",
	"size", "perf", "search_size", "search_returned", "cuda_same", "pragma", "weak",
	/* repro-host.c's (issue 30) and the failed Set's check */
	"__attribute__", "unused", "check_failed", "check_recorded", "recorded", "main",
};

/* FUZZ_REPRO_LEARN=1: say the words that are not known, instead of failing (to extend `vocabulary`). */
static int learn = -1;

static int
known(const char *w, size_t n)
{
	char word[160];

	if (n >= sizeof(word))
		return 0;
	memcpy(word, w, n);
	word[n] = '\0';
	for (size_t i = 0; i < sizeof(vocabulary) / sizeof(vocabulary[0]); i++)
		if (strcmp(vocabulary[i], word) == 0)
			return 1;
	if (repro_cudnn_word(word) || (strncmp(word, "cudnn", 5) == 0 && strlen(word) > 7 &&
				       strcmp(word + strlen(word) - 2, "_t") == 0))
		return 1;
	/* A parameter's name in the API description: repro names a call's arrays after them (dimA, padA, and
	 * repro-host.c's out_dimA for the call, s0_dimA for a Set call's). */
	if (strncmp(word, "out_", 4) == 0)
		memmove(word, word + 4, strlen(word + 4) + 1);
	else if (word[0] == 's' && strspn(word + 1, "0123456789") > 0 && word[1 + strspn(word + 1, "0123456789")] == '_')
		memmove(word, word + 2 + strspn(word + 1, "0123456789"), strlen(word + 2 + strspn(word + 1, "0123456789")) + 1);
	for (int f = 0; f < _SPY_FN_COUNT; f++)
		for (unsigned k = 0; k < spy_fn_info[f].nparams; k++)
			if (strcmp(spy_fn_info[f].params[k].name, word) == 0)
				return 1;
	/* Repro's variables: a lowercase kind, '_', a number (tensor_3, backend_12, uid_5). */
	{
		const char *u = strrchr(word, '_');

		if (u && u > word && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1) &&
		    strspn(word, "abcdefghijklmnopqrstuvwxyz_") >= (size_t)(u - word))
			return 1;
	}
	return 0;
}

/* Lexes the program; FUZZ_ASSERT on anything but what repro writes. */
static void
check_program(const char *t, size_t n)
{
	size_t i = 0;

	while (i < n) {
		char c = t[i];

		if (c == '/' && i + 1 < n && t[i + 1] == '*') {
			const char *end = NULL;

			for (size_t k = i + 2; k + 1 < n; k++)
				if (t[k] == '*' && t[k + 1] == '/') {
					end = t + k;
					break;
				}
			FUZZ_ASSERT(end != NULL);
			i = (size_t)(end - t) + 2;
		} else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
			while (i < n && t[i] != '\n')
				i++;
		} else if (c == '"' || c == '\'') {
			i++;
			while (i < n && t[i] != c) {
				FUZZ_ASSERT(t[i] != '\n');
				i += t[i] == '\\' ? 2 : 1;
			}
			FUZZ_ASSERT(i < n);
			i++;
		} else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_') {
			size_t s = i;

			while (i < n && ((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z') ||
					 (t[i] >= '0' && t[i] <= '9') || t[i] == '_'))
				i++;
			if (!known(t + s, i - s)) {
				fprintf(stderr, "fuzz-repro: a word repro does not write: %.*s\n", (int)(i - s), t + s);
				FUZZ_ASSERT(learn || !"an identifier from the records");
			}
		} else if (c >= '0' && c <= '9') {
			/* Numbers, with their suffixes and hex digits: 0x1f, 3LL, 1.5e-3f. */
			while (i < n && ((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'z') ||
					 (t[i] >= 'A' && t[i] <= 'Z') || t[i] == '.' ||
					 ((t[i] == '+' || t[i] == '-') && (t[i - 1] == 'e' || t[i - 1] == 'E'))))
				i++;
		} else {
			/* Code is printable ASCII, tabs and newlines. */
			FUZZ_ASSERT(c == '\n' || c == '\t' || (c >= 0x20 && c <= 0x7e));
			i++;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[64];
	char in[96], out[96], pick[8];
	char *argv[8];
	int argc = 0;
	FILE *f;

	if (learn < 0)
		learn = getenv("FUZZ_REPRO_LEARN") != NULL;
	if (size < 1)
		return 0;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-repro.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		/* repro prints the build command, or --list, on stdout: not wanted a million times. */
		if (!freopen("/dev/null", "w", stdout))
			abort();
	}
	snprintf(in, sizeof(in), "%s/in.cudnnspy.jsonl", dir);
	snprintf(out, sizeof(out), "%s/out.c", dir);
	f = fopen(in, "wb");
	if (!f)
		abort();
	if (fwrite(data + 1, 1, size - 1, f) != size - 1 || fclose(f) != 0)
		abort();
	unlink(out);
	argv[argc++] = "-o";
	argv[argc++] = out;
	switch (data[0] % 6) {
	case 1: case 2: case 3:
		argv[argc++] = "--call";
		snprintf(pick, sizeof(pick), "%d", data[0] % 6);
		argv[argc++] = pick;
		break;
	case 4: case 5:
		argv[argc++] = "--failure";
		snprintf(pick, sizeof(pick), "%d", data[0] % 6 - 3);
		argv[argc++] = pick;
		break;
	}
	argv[argc++] = in;
	argv[argc] = NULL;
	if (cudnnspy_repro_main(argc, argv) == 0) {
		char *text = NULL;
		size_t len = 0, cap = 0;

		f = fopen(out, "rb");
		FUZZ_ASSERT(f != NULL);
		for (;;) {
			if (len == cap) {
				cap = cap ? cap * 2 : 65536;
				text = realloc(text, cap);
				if (!text)
					abort();
			}
			size_t got = fread(text + len, 1, cap - len, f);

			if (got == 0)
				break;
			len += got;
		}
		fclose(f);
		check_program(text, len);
		free(text);
	}
	return 0;
}
