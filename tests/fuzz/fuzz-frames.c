/*
 * Fuzz target: the reader of record format 2 (cli/decode/records.c), which
 * `cudnnspy dump`, `report` and `repro` run over files that may be cut,
 * damaged or not records at all. Each input is read twice: from memory,
 * and from a file through a buffer that starts at a few bytes (byte 0 of
 * the input says how many) and grows, so that every frame straddles a
 * refill somewhere. Both must give the same lines, flags and counts, every
 * whole line must be valid JSON (rec_json_valid, an RFC 8259 check), and a
 * decoded call must end with '}'.
 *
 * The seeds are files the spy wrote. Their file frame names the function
 * table they were written with: it is set to this build's, so that the
 * packed calls are decoded rather than refused after each change of the
 * API description.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "records.h"
#include "recfmt.h"
#include "spy-api.h"

struct got {
	char *text;
	size_t len, cap;
};

static void
add(struct got *g, const char *line, size_t n, int flags)
{
	if (g->len + n + 16 > g->cap) {
		g->cap = (g->len + n + 16) * 2;
		g->text = realloc(g->text, g->cap);
		if (!g->text)
			abort();
	}
	g->len += (size_t)snprintf(g->text + g->len, 16, "%d:", flags);
	memcpy(g->text + g->len, line, n);
	g->len += n;
	g->text[g->len++] = '\n';
}

static void
read_all(struct rec_reader *r, struct got *g)
{
	const char *line;
	size_t n;
	int flags;

	while (rec_next(r, &line, &n, &flags)) {
		if (!flags) {
			FUZZ_ASSERT(n > 0 && line[0] == '{');
			/* Records are input from strangers: what is given out whole is JSON, whatever the file held. */
			FUZZ_ASSERT(rec_json_valid(line, n));
		}
		add(g, line, n, flags);
	}
}

static void
this_table(uint8_t *d, size_t size)
{
	uint32_t h = spy_rec_names_hash(), layout = spy_rec_layout_hash(), count = _SPY_FN_COUNT;

	if (size < 20 || !rec_is_binary(d, size) || d[1] < 18)
		return;
	for (int i = 0; i < 4; i++) {
		d[12 + i] = (uint8_t)(count >> (8 * i));
		d[16 + i] = (uint8_t)(h >> (8 * i));
		if (size >= 24 && d[1] >= 22)
			d[20 + i] = (uint8_t)(layout >> (8 * i));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_reader a, b;
	struct got ga = { 0 }, gb = { 0 };
	uint8_t *d;
	size_t first;
	int fd;

	if (size < 1)
		return 0;
	first = 1 + data[0] % 64;
	d = malloc(size - 1 ? size - 1 : 1);
	if (!d)
		abort();
	memcpy(d, data + 1, size - 1);
	this_table(d, size - 1);
	rec_open_mem(&a, d, size - 1);
	read_all(&a, &ga);
	fd = memfd_create("fuzz-frames", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, d, size - 1) == (ssize_t)(size - 1) && lseek(fd, 0, SEEK_SET) == 0) {
		rec_open_fd_buffer(&b, fd, first);
		read_all(&b, &gb);
		FUZZ_ASSERT(ga.len == gb.len && (ga.len == 0 || memcmp(ga.text, gb.text, ga.len) == 0));
		FUZZ_ASSERT(a.records == b.records && a.cut == b.cut && a.damaged == b.damaged &&
			    a.missing_texts == b.missing_texts && a.unreadable_calls == b.unreadable_calls);
		rec_close(&b);
	}
	if (fd >= 0)
		close(fd);
	rec_close(&a);
	free(ga.text);
	free(gb.text);
	free(d);
	return 0;
}
