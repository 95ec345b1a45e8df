/*
 * The exports of a PE32+ file as function names, read from the file (the command names a Windows drop-in's
 * recorded frames offline, as it names an ELF module's from its symbol table): each exported function's
 * start, and its length from the exception directory (.pdata's RUNTIME_FUNCTION entries, which every x64
 * function that calls or has a frame has), so that an address past an exported function's end is named by
 * nothing rather than by the export before it. The file is untrusted (a record may name anything): every
 * offset and count is checked against the file, the tables read are bounded.
 */
#include "pesym.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTIONS_MAX 96
#define NAMES_MAX 65536
#define PDATA_MAX (1u << 20)	/* RUNTIME_FUNCTION entries */

struct section {
	uint32_t va, vsize, raw, rawsize;
};

/* N bytes at OFF, whole (symtab.c's spy_read_at, which calls this file: a file of its own keeps no circle). */
static int
read_at(int fd, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static uint32_t
u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t
u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* The file offset of `len` bytes at rva, inside one section's raw data: 0 when they are not there. */
static uint64_t
file_at(const struct section *s, int ns, uint32_t rva, uint64_t len, uint64_t size)
{
	for (int i = 0; i < ns; i++) {
		uint64_t end = (uint64_t)s[i].va + (s[i].rawsize < s[i].vsize || !s[i].vsize ? s[i].rawsize : s[i].vsize);

		if (rva >= s[i].va && (uint64_t)rva + len <= end) {
			uint64_t off = (uint64_t)s[i].raw + (rva - s[i].va);

			return off + len <= size ? off : 0;
		}
	}
	return 0;
}

static int
by_begin(const void *a, const void *b)
{
	uint32_t x = u32(a), y = u32(b);

	return x < y ? -1 : x > y;
}

/* The .pdata entry that begins at rva: its length, or 1 when none does. */
static uint32_t
length_of(const unsigned char *pd, size_t npd, uint32_t rva)
{
	size_t lo = 0, hi = npd;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t b = u32(pd + mid * 12);

		if (b == rva) {
			uint32_t e = u32(pd + mid * 12 + 4);

			return e > b ? e - b : 1;
		}
		if (b < rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 1;
}

int
spy_pe_exports(int fd, uint64_t size, struct spy_pe_sym **syms, size_t *n, char **strs, size_t *strs_size)
{
	unsigned char dos[64], nt[24 + 240], sh[40], ed[40];
	struct section sec[SECTIONS_MAX];
	unsigned char *pd = NULL, *names = NULL, *fns = NULL, *ords = NULL;
	uint32_t lfanew, edir, edsize, pdir, pdsize, nfns, nnames;
	uint64_t off, pdoff;
	size_t npd = 0, k = 0, used = 0;
	int ns, optsize, ok = 0;
	char *text = NULL;
	struct spy_pe_sym *out = NULL;

	*syms = NULL;
	*strs = NULL;
	*n = *strs_size = 0;
	if (read_at(fd, 0, dos, sizeof(dos)) != 0 || dos[0] != 'M' || dos[1] != 'Z')
		return 0;
	lfanew = u32(dos + 60);
	if ((uint64_t)lfanew + sizeof(nt) > size || read_at(fd, lfanew, nt, sizeof(nt)) != 0 ||
	    memcmp(nt, "PE\0\0", 4) != 0 || u16(nt + 24) != 0x20b /* PE32+ */)
		return 0;
	ns = u16(nt + 6);
	optsize = u16(nt + 20);
	/* The data directories: 0 export, 3 exception (.pdata); 16 bytes past NumberOfRvaAndSizes at 108. */
	if (ns <= 0 || ns > SECTIONS_MAX || optsize < 112 + 4 * 8 || u32(nt + 24 + 108) < 4)
		return 0;
	edir = u32(nt + 24 + 112);
	edsize = u32(nt + 24 + 116);
	pdir = u32(nt + 24 + 112 + 3 * 8);
	pdsize = u32(nt + 24 + 116 + 3 * 8);
	off = (uint64_t)lfanew + 24 + (uint64_t)optsize;
	for (int i = 0; i < ns; i++) {
		if (read_at(fd, off + (uint64_t)i * 40, sh, sizeof(sh)) != 0)
			return 0;
		sec[i].vsize = u32(sh + 8);
		sec[i].va = u32(sh + 12);
		sec[i].rawsize = u32(sh + 16);
		sec[i].raw = u32(sh + 20);
	}
	if (!edir || edsize < 40 || !(off = file_at(sec, ns, edir, 40, size)) || read_at(fd, off, ed, 40) != 0)
		return 0;
	nfns = u32(ed + 20);
	nnames = u32(ed + 24);
	if (!nnames || nnames > NAMES_MAX || nfns > NAMES_MAX)
		return 0;
	fns = malloc((size_t)nfns * 4);
	names = malloc((size_t)nnames * 4);
	ords = malloc((size_t)nnames * 2);
	out = calloc(nnames, sizeof(*out));
	text = malloc((size_t)nnames * 64 + 1);
	if (!fns || !names || !ords || !out || !text ||
	    !(off = file_at(sec, ns, u32(ed + 28), (uint64_t)nfns * 4, size)) || read_at(fd, off, fns, (size_t)nfns * 4) != 0 ||
	    !(off = file_at(sec, ns, u32(ed + 32), (uint64_t)nnames * 4, size)) || read_at(fd, off, names, (size_t)nnames * 4) != 0 ||
	    !(off = file_at(sec, ns, u32(ed + 36), (uint64_t)nnames * 2, size)) || read_at(fd, off, ords, (size_t)nnames * 2) != 0)
		goto out;
	if (pdir && pdsize >= 12 && pdsize / 12 <= PDATA_MAX && (pdoff = file_at(sec, ns, pdir, pdsize, size)) &&
	    (pd = malloc(pdsize)) && read_at(fd, pdoff, pd, pdsize) == 0) {
		npd = pdsize / 12;
		qsort(pd, npd, 12, by_begin);
	}
	for (uint32_t i = 0; i < nnames; i++) {
		uint16_t o = u16(ords + (size_t)i * 2);
		uint32_t rva;
		char name[64];
		uint64_t at;
		size_t len;

		if (o >= nfns)
			continue;
		rva = u32(fns + (size_t)o * 4);
		/* A forwarder's "rva" points into the export directory: a name, not code. */
		if (!rva || (rva >= edir && rva < edir + edsize))
			continue;
		at = file_at(sec, ns, u32(names + (size_t)i * 4), 1, size);
		if (!at)
			continue;
		/* Names end before the file does or are cut at 63 bytes: read what there is, once. */
		len = size - at < sizeof(name) - 1 ? (size_t)(size - at) : sizeof(name) - 1;
		if (read_at(fd, at, name, len) != 0)
			continue;
		name[len] = 0;
		len = strlen(name);
		if (!len)
			continue;
		out[k].rva = rva;
		out[k].size = length_of(pd, npd, rva);
		out[k].name = (uint32_t)used;
		memcpy(text + used, name, len + 1);
		used += len + 1;
		k++;
	}
	ok = k > 0;
out:
	free(fns);
	free(names);
	free(ords);
	free(pd);
	if (!ok) {
		free(out);
		free(text);
		return 0;
	}
	*syms = out;
	*n = k;
	*strs = text;
	*strs_size = used;
	return 1;
}
