/*
 * A Windows DLL's headers, export names and version resource, read
 * from the file with every offset, size and count checked against it:
 * the files come from other machines' disks and archives, and a damaged
 * or hostile one must give a message, never a crash or unbounded work.
 * Files are read in small pieces with pread, so a 700 MB cuDNN DLL
 * costs a few kilobytes of reads.
 */
#include "scan-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Export names kept per DLL, and the longest name read: cuDNN's largest have a few thousand. */
#define PE_MAX_EXPORTS 65536
#define PE_MAX_NAME 512
/* Sections the format allows (the loader refuses more), and the version resource's largest size. */
#define PE_MAX_SECTIONS 96
#define PE_MAX_VERSION_RES 65536
/* Entries looked at per resource directory: each is 8 bytes, so a real one never comes close. */
#define PE_MAX_RES_ENTRIES 4096
/* DLLs imported: real programs import tens. */
#define PE_MAX_IMPORTS 4096

struct pe_section {
	uint32_t va, vsize, raw, rawsize;
};

struct pe_file {
	int fd;
	uint64_t size;
	struct pe_section sec[PE_MAX_SECTIONS];
	unsigned nsec;
};

static uint16_t
get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
set_why(struct scan_pe *pe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_why(struct scan_pe *pe, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pe->why, sizeof(pe->why), fmt, ap);
	va_end(ap);
}

/* Exactly len bytes at off, or 0 when the file is shorter. */
static int
read_at(const struct pe_file *f, uint64_t off, void *buf, size_t len)
{
	size_t got = 0;

	if (off > f->size || len > f->size - off)
		return 0;
	while (got < len) {
		ssize_t n = pread(f->fd, (char *)buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return 1;
}

/* The file offset of len bytes at rva, all inside one section's file data; 0 when they are not. */
static int
rva_to_off(const struct pe_file *f, uint32_t rva, uint32_t len, uint64_t *off)
{
	for (unsigned i = 0; i < f->nsec; i++) {
		const struct pe_section *s = &f->sec[i];
		uint32_t span = s->rawsize < s->vsize || s->vsize == 0 ? s->rawsize : s->vsize;

		if (rva >= s->va && rva - s->va < span && len <= span - (rva - s->va)) {
			*off = (uint64_t)s->raw + (rva - s->va);
			return *off + len <= f->size;
		}
	}
	return 0;
}

/* A NUL-terminated string at rva, at most PE_MAX_NAME bytes; NULL when out of range or unterminated. */
static char *
string_at(const struct pe_file *f, uint32_t rva)
{
	char buf[PE_MAX_NAME + 1];
	uint64_t off;
	uint32_t len = PE_MAX_NAME;

	/* Near a section's end the string may be short: shrink the read until it fits. */
	while (len > 0 && !rva_to_off(f, rva, len, &off))
		len = len > 64 ? len - 64 : len - 1;
	if (len == 0 || !read_at(f, off, buf, len))
		return NULL;
	buf[len] = '\0';
	/* A name longer than the longest read is kept cut; one cut by its section's end is not a name. */
	if (strlen(buf) == len && len < PE_MAX_NAME)
		return NULL;
	return scan_xstrdup(buf);
}

const char *
scan_pe_machine_name(unsigned machine)
{
	switch (machine) {
	case 0x8664: return "x64";
	case 0x14c: return "x86";
	case 0xaa64: return "arm64";
	case 0x1c4: return "arm";
	default: return "unknown machine";
	}
}

static void
read_exports(const struct pe_file *f, uint32_t rva, uint32_t size, struct scan_pe *pe)
{
	unsigned char d[40];
	uint64_t off;
	uint32_t nnames, names_rva;
	unsigned char *ptrs;

	if (size < 40 || !rva_to_off(f, rva, 40, &off) || !read_at(f, off, d, 40)) {
		set_why(pe, "export directory outside the file (RVA 0x%x)", rva);
		pe->export_problem = 1;
		return;
	}
	pe->dll_name = string_at(f, le32(d + 12));
	nnames = le32(d + 24);
	names_rva = le32(d + 32);
	pe->nexports = nnames;
	if (nnames == 0)
		return;
	if (nnames > PE_MAX_EXPORTS) {
		set_why(pe, "export directory claims %u names (more than %u)", nnames, PE_MAX_EXPORTS);
		pe->export_problem = 1;
		return;
	}
	if (!rva_to_off(f, names_rva, nnames * 4, &off)) {
		set_why(pe, "export name table outside the file (%u names at RVA 0x%x)", nnames, names_rva);
		pe->export_problem = 1;
		return;
	}
	ptrs = scan_xmalloc((size_t)nnames * 4);
	if (!read_at(f, off, ptrs, (size_t)nnames * 4)) {
		free(ptrs);
		set_why(pe, "export name table cut short");
		pe->export_problem = 1;
		return;
	}
	for (uint32_t i = 0; i < nnames; i++) {
		char *name = string_at(f, le32(ptrs + 4 * i));

		if (!name) {
			set_why(pe, "export name %u of %u outside the file or unterminated", i + 1, nnames);
			pe->export_problem = 1;
			break;
		}
		scan_strv_add(&pe->exports, name);
		free(name);
	}
	free(ptrs);
}

/*
 * The DLL names of the import directory (descriptors of 20 bytes, Name at
 * +12) or of the delay-load one (32 bytes, Name at +4): both end with a
 * zeroed descriptor, and a hostile file that has none ends at the limit.
 */
static void
read_imports(const struct pe_file *f, uint32_t rva, size_t entry, size_t name_at, struct scan_pe *pe)
{
	unsigned char d[32];
	uint64_t off;

	for (uint32_t i = 0; i < PE_MAX_IMPORTS; i++) {
		uint32_t at = rva + i * (uint32_t)entry;
		char *name;
		int zero = 1;

		if (!rva_to_off(f, at, (uint32_t)entry, &off) || !read_at(f, off, d, entry)) {
			set_why(pe, "import directory outside the file (entry %u at RVA 0x%x)", i + 1, at);
			pe->import_problem = 1;
			return;
		}
		for (size_t k = 0; k < entry; k++)
			zero &= d[k] == 0;
		if (zero)
			return;
		name = string_at(f, le32(d + name_at));
		if (!name) {
			set_why(pe, "import %u names no DLL inside the file", i + 1);
			pe->import_problem = 1;
			return;
		}
		scan_strv_add_unique(&pe->imports, name);
		free(name);
	}
	set_why(pe, "import directory with more than %u DLLs and no end", PE_MAX_IMPORTS);
	pe->import_problem = 1;
}

/* ---- the version resource ---- */

/* UTF-16LE (len code units) to UTF-8; unpaired surrogates become U+FFFD. */
static char *
utf16_to_utf8(const unsigned char *p, size_t len)
{
	char *out = scan_xmalloc(len * 3 + 1);
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		uint32_t c = get16(p + 2 * i);

		if (c == 0)
			break;
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < len && get16(p + 2 * i + 2) >= 0xdc00 &&
		    get16(p + 2 * i + 2) < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (get16(p + 2 * i + 2) - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			out[o++] = (char)c;
		} else if (c < 0x800) {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			/* Four bytes from two code units: still within len * 3. */
			out[o++] = (char)(0xf0 | c >> 18);
			out[o++] = (char)(0x80 | (c >> 12 & 0x3f));
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[o] = '\0';
	return out;
}

/* One block of VS_VERSIONINFO: wLength, wValueLength, wType, a key, padding, a value, padding, children. */
struct vblock {
	size_t start, end;	/* the block's bytes in the buffer */
	size_t key, keylen;	/* key offset and its length in code units */
	size_t value, valuelen;	/* value offset and its length in bytes */
	size_t children;	/* first child's offset (up to end) */
};

static size_t
align4(size_t x)
{
	return (x + 3) & ~(size_t)3;
}

/* The block at off, inside [.., limit); 0 when it does not fit. */
static int
vblock_at(const unsigned char *b, size_t limit, size_t off, struct vblock *v)
{
	size_t len, vlen, type, k;

	if (off + 6 > limit)
		return 0;
	len = get16(b + off);
	vlen = get16(b + off + 2);
	type = get16(b + off + 4);
	if (len < 6 || len > limit - off)
		return 0;
	v->start = off;
	v->end = off + len;
	v->key = off + 6;
	for (k = v->key; k + 1 < v->end && get16(b + k) != 0; k += 2)
		;
	if (k + 1 >= v->end)
		return 0;
	v->keylen = (k - v->key) / 2;
	v->value = align4(k + 2);
	/* wValueLength counts WCHARs in a text value (wType 1), bytes in a binary one. */
	v->valuelen = type == 1 ? vlen * 2 : vlen;
	if (v->value > v->end)
		return 0;
	/* Some writers count a text value's bytes, not its WCHARs: take what the block holds. */
	if (v->valuelen > v->end - v->value)
		v->valuelen = v->end - v->value;
	v->children = align4(v->value + v->valuelen);
	if (v->children > v->end)
		v->children = v->end;
	return 1;
}

static int
key_is(const unsigned char *b, const struct vblock *v, const char *want)
{
	size_t n = strlen(want);

	if (v->keylen != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (get16(b + v->key + 2 * i) != (unsigned char)want[i])
			return 0;
	return 1;
}

static void
read_strings(const unsigned char *b, const struct vblock *sfi, struct scan_pe *pe)
{
	struct vblock table, s;

	/* StringFileInfo holds one table per language; the first says it for cuDNN's DLLs. */
	for (size_t t = sfi->children; t < sfi->end && vblock_at(b, sfi->end, t, &table); t = align4(table.end)) {
		for (size_t o = table.children; o < table.end && vblock_at(b, table.end, o, &s); o = align4(s.end)) {
			char **slot = key_is(b, &s, "ProductVersion") ? &pe->product_version :
				      key_is(b, &s, "FileVersion") ? &pe->file_version_text :
				      key_is(b, &s, "FileDescription") ? &pe->description : NULL;

			if (slot && !*slot && s.valuelen >= 2)
				*slot = utf16_to_utf8(b + s.value, s.valuelen / 2);
		}
		if (pe->product_version || pe->description)
			break;
	}
}

static void
parse_version(const unsigned char *b, size_t len, struct scan_pe *pe)
{
	struct vblock root, child;

	if (!vblock_at(b, len, 0, &root) || !key_is(b, &root, "VS_VERSION_INFO")) {
		set_why(pe, "the version resource is not a VS_VERSIONINFO block");
		pe->version_problem = 1;
		return;
	}
	if (root.valuelen >= 52 && le32(b + root.value) == 0xfeef04bdu) {
		uint32_t ms = le32(b + root.value + 8), ls = le32(b + root.value + 12);
		uint32_t pms = le32(b + root.value + 16), pls = le32(b + root.value + 20);

		pe->has_version = 1;
		pe->file_version[0] = ms >> 16;
		pe->file_version[1] = ms & 0xffff;
		pe->file_version[2] = ls >> 16;
		pe->file_version[3] = ls & 0xffff;
		pe->product_version_fixed[0] = pms >> 16;
		pe->product_version_fixed[1] = pms & 0xffff;
		pe->product_version_fixed[2] = pls >> 16;
		pe->product_version_fixed[3] = pls & 0xffff;
	} else {
		set_why(pe, "the version resource has no VS_FIXEDFILEINFO");
		pe->version_problem = 1;
	}
	/* Each child is at least 6 bytes long, so the walk ends within len / 6 steps. */
	for (size_t o = root.children; o < root.end && vblock_at(b, root.end, o, &child); o = align4(child.end))
		if (key_is(b, &child, "StringFileInfo"))
			read_strings(b, &child, pe);
}

/* The first entry of a resource directory at dir (offset in the resource section), with id when id >= 0. */
static int
res_entry(const struct pe_file *f, uint64_t base, uint32_t rsize, uint32_t dir, long id, uint32_t *target,
	  struct scan_pe *pe)
{
	unsigned char h[16], e[8];
	unsigned n;

	if (dir > rsize || rsize - dir < 16 || !read_at(f, base + dir, h, 16)) {
		set_why(pe, "resource directory at 0x%x outside the resource section", dir);
		return 0;
	}
	n = (unsigned)get16(h + 12) + get16(h + 14);
	if (n > PE_MAX_RES_ENTRIES || (uint64_t)n * 8 > rsize - dir - 16) {
		set_why(pe, "resource directory at 0x%x claims %u entries", dir, n);
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!read_at(f, base + dir + 16 + 8 * i, e, 8))
			return 0;
		if (id >= 0 && (le32(e) & 0x80000000u || le32(e) != (uint32_t)id))
			continue;
		*target = le32(e + 4);
		return 1;
	}
	return -1;
}

static void
read_version(const struct pe_file *f, uint32_t rva, uint32_t size, struct scan_pe *pe)
{
	uint64_t base, off;
	uint32_t t, seen[3];
	int k;
	unsigned char d[16];
	unsigned char *buf;
	uint32_t drva, dsize;

	if (!rva_to_off(f, rva, 16, &base)) {
		set_why(pe, "resource section outside the file (RVA 0x%x)", rva);
		pe->version_problem = 1;
		return;
	}
	/* The bytes of the resource section in the file, from its start: the tree's offsets count from there. */
	for (unsigned i = 0; i < f->nsec; i++)
		if (rva >= f->sec[i].va && rva - f->sec[i].va < f->sec[i].rawsize)
			size = f->sec[i].rawsize - (rva - f->sec[i].va);
	/* Type RT_VERSION (16), then its first name, then its first language: three levels, no more. */
	t = 0;
	for (int level = 0; level < 3; level++) {
		seen[level] = t;
		for (int j = 0; j < level; j++)
			if (seen[j] == t) {
				set_why(pe, "the resource tree loops (directory 0x%x is its own descendant)", t);
				pe->version_problem = 1;
				return;
			}
		k = res_entry(f, base, size, t, level == 0 ? 16 : -1, &t, pe);
		if (k == 0) {
			pe->version_problem = 1;
			return;
		}
		if (k < 0)
			return;	/* no version resource: not a problem in itself */
		if (level < 2 && !(t & 0x80000000u)) {
			set_why(pe, "resource tree level %d holds data where a directory belongs", level + 1);
			pe->version_problem = 1;
			return;
		}
		if (level == 2 && (t & 0x80000000u)) {
			set_why(pe, "the resource tree goes deeper than three levels (a loop?)");
			pe->version_problem = 1;
			return;
		}
		t &= 0x7fffffffu;
	}
	if (t > size || size - t < 16 || !read_at(f, base + t, d, 16)) {
		set_why(pe, "version resource entry outside the resource section");
		pe->version_problem = 1;
		return;
	}
	drva = le32(d);
	dsize = le32(d + 4);
	if (dsize < 6 || dsize > PE_MAX_VERSION_RES || !rva_to_off(f, drva, dsize, &off)) {
		set_why(pe, "version resource data outside the file (%u bytes at RVA 0x%x)", dsize, drva);
		pe->version_problem = 1;
		return;
	}
	buf = scan_xmalloc(dsize);
	if (read_at(f, off, buf, dsize)) {
		parse_version(buf, dsize, pe);
	} else {
		set_why(pe, "version resource cut short");
		pe->version_problem = 1;
	}
	free(buf);
}

/* ---- the headers ---- */

static int
read_headers(struct pe_file *f, struct scan_pe *pe)
{
	unsigned char mz[64], coff[24], opt[240], sh[40];
	uint32_t peoff, nrva, ddoff;
	unsigned optsize, magic;
	uint32_t exp_rva, exp_size, res_rva, res_size, imp_rva, delay_rva;

	if (!read_at(f, 0, mz, 64) || mz[0] != 'M' || mz[1] != 'Z') {
		set_why(pe, f->size < 64 ? "file too short for a DOS header (%llu bytes)" : "no MZ header",
		    (unsigned long long)f->size);
		return 0;
	}
	peoff = le32(mz + 60);
	if (!read_at(f, peoff, coff, 24) || memcmp(coff, "PE\0\0", 4) != 0) {
		set_why(pe, "no PE signature at offset 0x%x", peoff);
		return 0;
	}
	pe->machine = get16(coff + 4);
	pe->nsections = get16(coff + 6);
	optsize = get16(coff + 20);
	pe->is_dll = (get16(coff + 22) & 0x2000) != 0;
	if (pe->nsections > PE_MAX_SECTIONS) {
		set_why(pe, "%u sections (the format allows %u)", pe->nsections, PE_MAX_SECTIONS);
		return 0;
	}
	if (optsize < 96 || optsize > sizeof(opt) || !read_at(f, (uint64_t)peoff + 24, opt, optsize)) {
		set_why(pe, "optional header cut short or of a bad size (%u bytes)", optsize);
		return 0;
	}
	magic = get16(opt);
	if (magic == 0x20b) {
		pe->pe32plus = 1;
		ddoff = 112;
	} else if (magic == 0x10b) {
		ddoff = 96;
	} else {
		set_why(pe, "unknown optional header magic 0x%x", magic);
		return 0;
	}
	nrva = le32(opt + ddoff - 4);
	exp_rva = exp_size = res_rva = res_size = imp_rva = delay_rva = 0;
	if (nrva >= 1 && ddoff + 8 <= optsize) {
		exp_rva = le32(opt + ddoff);
		exp_size = le32(opt + ddoff + 4);
	}
	if (nrva >= 2 && ddoff + 16 <= optsize && le32(opt + ddoff + 12))
		imp_rva = le32(opt + ddoff + 8);
	if (nrva >= 14 && ddoff + 112 <= optsize && le32(opt + ddoff + 108))
		delay_rva = le32(opt + ddoff + 104);
	if (nrva >= 3 && ddoff + 24 <= optsize) {
		res_rva = le32(opt + ddoff + 16);
		res_size = le32(opt + ddoff + 20);
	}
	f->nsec = 0;
	for (unsigned i = 0; i < pe->nsections; i++) {
		uint64_t o = (uint64_t)peoff + 24 + optsize + 40 * i;

		if (!read_at(f, o, sh, 40)) {
			set_why(pe, "section table cut short (section %u of %u)", i + 1, pe->nsections);
			return 0;
		}
		f->sec[f->nsec].vsize = le32(sh + 8);
		f->sec[f->nsec].va = le32(sh + 12);
		f->sec[f->nsec].rawsize = le32(sh + 16);
		f->sec[f->nsec].raw = le32(sh + 20);
		f->nsec++;
	}
	pe->status = SCAN_PE_OK;
	if (exp_rva && exp_size)
		read_exports(f, exp_rva, exp_size, pe);
	if (imp_rva)
		read_imports(f, imp_rva, 20, 12, pe);
	if (delay_rva)
		read_imports(f, delay_rva, 32, 4, pe);
	if (res_rva && res_size)
		read_version(f, res_rva, res_size, pe);
	return 1;
}

void
scan_pe_read(const char *path, struct scan_pe *pe)
{
	struct pe_file f;
	struct stat st;

	memset(pe, 0, sizeof(*pe));
	pe->status = SCAN_PE_INVALID;
	if (stat(path, &st) != 0) {
		pe->status = SCAN_PE_MISSING;
		set_why(pe, "%s", strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		pe->status = SCAN_PE_NOT_FILE;
		set_why(pe, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		return;
	}
	pe->size = (long long)st.st_size;
	f.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (f.fd < 0) {
		pe->status = SCAN_PE_DENIED;
		set_why(pe, "%s", strerror(errno));
		return;
	}
	f.size = (uint64_t)st.st_size;
	f.nsec = 0;
	if (!read_headers(&f, pe))
		pe->status = SCAN_PE_INVALID;
	close(f.fd);
}

void
scan_pe_free(struct scan_pe *pe)
{
	free(pe->dll_name);
	free(pe->product_version);
	free(pe->file_version_text);
	free(pe->description);
	scan_strv_free(&pe->exports);
	scan_strv_free(&pe->imports);
	memset(pe, 0, sizeof(*pe));
}
