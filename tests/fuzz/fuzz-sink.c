/*
 * Fuzz target: spy_sink_expand (shim/record/sink.c), the record file's name from
 * CUDNNSPY_OUTPUT and %p %h %r %e %%. Input layout:
 *   byte 0      bit 0: the pattern names a directory; bit 1: no rank
 *   bytes 1-2   the output buffer's size, little-endian, modulo FUZZ_SINK_MAX_SIZE + 1
 *   the rest    pattern, program, host, pid and rank, separated by '\n'
 *               (missing fields are empty)
 * The output buffer is a heap block of exactly that size, so AddressSanitizer
 * sees a write or read outside it. A return of 0 promises a NUL-terminated
 * name with 8 bytes to spare (room for ".N" suffixes); -1 is allowed at any
 * size.
 *
 * The real caller passes PATH_MAX + 16 bytes; smaller sizes are in range
 * because the function's contract (shim/record/sink.h) is any size.
 */
#include "fuzz.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "sink.h"

#define FUZZ_SINK_MAX_SIZE (PATH_MAX + 16)

/* Smallest buffer size tried; FUZZ_SINK_MIN_SIZE may raise it (see docs/reliability.md). */
static size_t
min_size(void)
{
	static long min = -1;

	if (min < 0) {
		const char *v = getenv("FUZZ_SINK_MIN_SIZE");

		min = v ? strtol(v, NULL, 10) : 0;
		if (min < 0 || min > FUZZ_SINK_MAX_SIZE)
			min = 0;
	}
	return (size_t)min;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *field[5] = { "", "", "", "", "" };
	char *out, *p;
	size_t out_size;
	int is_dir, rc;

	if (size < 3)
		return 0;
	is_dir = data[0] & 1;
	out_size = (size_t)(data[1] | data[2] << 8) % (FUZZ_SINK_MAX_SIZE + 1);
	if (out_size < min_size())
		return 0;
	text = fuzz_string(data + 3, size - 3);
	p = text;
	for (int i = 0; i < 5 && p; i++) {
		field[i] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = 0;
	}
	out = malloc(out_size ? out_size : 1);
	if (!out)
		abort();
	rc = spy_sink_expand(field[0], is_dir, field[1], field[2], field[3], (data[0] & 2) ? NULL : field[4], out,
			     out_size);
	FUZZ_ASSERT(rc == 0 || rc == -1);
	if (rc == 0) {
		size_t len = strnlen(out, out_size);

		FUZZ_ASSERT(len < out_size && len + 8 < out_size);
		FUZZ_ASSERT(field[0][0] != 0);
	}
	free(out);
	free(text);
	return 0;
}
