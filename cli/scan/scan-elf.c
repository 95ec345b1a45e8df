/*
 * Reads what the loader would read from a file: the ELF header, the
 * program headers and the dynamic section. Every offset comes from the
 * file, so every one is checked against the file's size before it is
 * used; nothing is mapped or executed, and only a few small pieces of a
 * huge file are read.
 */
#include "scan-int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NATIVE_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define NATIVE_MACHINE EM_PPC64
#else
#define NATIVE_MACHINE (-1)	/* unknown here: any machine is accepted */
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

#define NATIVE_CLASS (sizeof(void *) == 8 ? 64 : 32)

/* More than any real object has; a hostile file claiming more is cut off here. */
#define MAX_PHNUM 4096
#define MAX_DYN 65536
#define MAX_NEEDED 1024

/* Program header and dynamic entry, whatever the file's class. */
struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz;
};

struct reader {
	int fd;
	uint64_t size;
	int is64;
};

const char *
scan_elf_status_name(enum scan_elf_status s)
{
	switch (s) {
	case SCAN_ELF_OK: return "ok";
	case SCAN_ELF_FOREIGN: return "foreign";
	case SCAN_ELF_INVALID: return "invalid";
	case SCAN_ELF_NOT_FILE: return "not-a-file";
	case SCAN_ELF_MISSING: return "missing";
	case SCAN_ELF_DENIED: return "denied";
	}
	return "?";
}

/* Reads exactly n bytes at off, or fails: a short file is a truncated file. */
static int
read_at(const struct reader *r, uint64_t off, void *buf, size_t n)
{
	size_t done = 0;

	if (off > r->size || n > r->size - off)
		return -1;
	while (done < n) {
		ssize_t got = pread(r->fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		done += (size_t)got;
	}
	return 0;
}

static void
set_status(struct scan_elf *e, enum scan_elf_status s, const char *why)
{
	e->status = s;
	snprintf(e->why, sizeof(e->why), "%s", why);
}

/* A NUL-terminated string at off, no longer than SCAN_STR_MAX, or NULL. */
static char *
read_string(const struct reader *r, uint64_t off, uint64_t limit)
{
	char buf[SCAN_STR_MAX];
	size_t n = sizeof(buf);

	if (off >= limit || off >= r->size)
		return NULL;
	if (n > limit - off)
		n = (size_t)(limit - off);
	if (n > r->size - off)
		n = (size_t)(r->size - off);
	if (read_at(r, off, buf, n) != 0)
		return NULL;
	if (!memchr(buf, '\0', n))
		return NULL;
	return scan_xstrdup(buf);
}

static uint16_t
get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The file offset of a virtual address, through the PT_LOAD segments. */
static int
vaddr_to_offset(const struct phdr *ph, size_t n, uint64_t vaddr, uint64_t *off, uint64_t *room)
{
	for (size_t i = 0; i < n; i++) {
		if (ph[i].type != PT_LOAD)
			continue;
		if (vaddr >= ph[i].vaddr && vaddr - ph[i].vaddr < ph[i].filesz) {
			*off = ph[i].offset + (vaddr - ph[i].vaddr);
			*room = ph[i].filesz - (vaddr - ph[i].vaddr);
			return 0;
		}
	}
	return -1;
}

static void
read_dynamic(const struct reader *r, const struct phdr *ph, size_t nph, const struct phdr *dyn,
	     struct scan_elf *e)
{
	size_t entsize = r->is64 ? 16 : 8;
	uint64_t count = dyn->filesz / entsize;
	uint64_t strtab = 0, strsz = 0, soname = 0, rpath = 0, runpath = 0;
	int has_strtab = 0, has_soname = 0, has_rpath = 0, has_runpath = 0;
	uint64_t needed[MAX_NEEDED];
	size_t nneeded = 0;
	unsigned char *buf;
	uint64_t str_off, str_room;

	if (count > MAX_DYN)
		count = MAX_DYN;
	if (count == 0)
		return;
	buf = scan_xmalloc((size_t)count * entsize);
	if (read_at(r, dyn->offset, buf, (size_t)count * entsize) != 0) {
		set_status(e, SCAN_ELF_INVALID, "truncated: the dynamic section is beyond the end of the file");
		free(buf);
		return;
	}
	e->has_dynamic = 1;
	for (uint64_t i = 0; i < count; i++) {
		const unsigned char *p = buf + i * entsize;
		int64_t tag = r->is64 ? (int64_t)get64(p) : (int32_t)get32(p);
		uint64_t val = r->is64 ? get64(p + 8) : get32(p + 4);

		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_STRTAB: strtab = val; has_strtab = 1; break;
		case DT_STRSZ: strsz = val; break;
		case DT_SONAME: soname = val; has_soname = 1; break;
		case DT_RPATH: rpath = val; has_rpath = 1; break;
		case DT_RUNPATH: runpath = val; has_runpath = 1; break;
		case DT_FLAGS_1:
			if (val & DF_1_NODEFLIB)
				e->nodeflib = 1;
			break;
		case DT_NEEDED:
			if (nneeded < MAX_NEEDED)
				needed[nneeded++] = val;
			break;
		default:
			break;
		}
	}
	free(buf);
	if (!has_strtab)
		return;
	if (vaddr_to_offset(ph, nph, strtab, &str_off, &str_room) != 0) {
		set_status(e, SCAN_ELF_INVALID, "inconsistent: the string table is outside every loaded segment");
		return;
	}
	/* The table ends at DT_STRSZ, at the segment's end, or at the file's end, whichever comes first. */
	if (strsz == 0 || strsz > str_room)
		strsz = str_room;
	if (has_soname)
		e->soname = read_string(r, str_off + soname, str_off + strsz);
	if (has_rpath)
		e->rpath = read_string(r, str_off + rpath, str_off + strsz);
	if (has_runpath)
		e->runpath = read_string(r, str_off + runpath, str_off + strsz);
	for (size_t i = 0; i < nneeded; i++) {
		char *s = read_string(r, str_off + needed[i], str_off + strsz);

		if (s) {
			scan_strv_add(&e->needed, s);
			free(s);
		}
	}
}

static void
read_elf(struct reader *r, struct scan_elf *e)
{
	unsigned char eh[64];
	unsigned char *phbuf;
	struct phdr *ph;
	uint64_t phoff;
	size_t phentsize, phnum, ehsize;
	const struct phdr *dyn = NULL;
	uint16_t type;

	if (r->size < EI_NIDENT || read_at(r, 0, eh, EI_NIDENT) != 0) {
		set_status(e, SCAN_ELF_INVALID, "file too short to be ELF");
		return;
	}
	if (memcmp(eh, ELFMAG, SELFMAG) != 0) {
		set_status(e, SCAN_ELF_INVALID, "not an ELF file");
		return;
	}
	if (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) {
		set_status(e, SCAN_ELF_INVALID, "invalid ELF class");
		return;
	}
	r->is64 = eh[EI_CLASS] == ELFCLASS64;
	e->elf_class = r->is64 ? 64 : 32;
	if (eh[EI_DATA] != NATIVE_DATA) {
		set_status(e, SCAN_ELF_INVALID, "ELF data encoding of another byte order");
		return;
	}
	if (eh[EI_VERSION] != EV_CURRENT) {
		set_status(e, SCAN_ELF_INVALID, "invalid ELF version");
		return;
	}
	ehsize = r->is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (read_at(r, 0, eh, ehsize) != 0) {
		set_status(e, SCAN_ELF_INVALID, "truncated: file too short for its ELF header");
		return;
	}
	type = get16(eh + 16);
	e->machine = get16(eh + 18);
	if (r->is64) {
		phoff = get64(eh + 32);
		phentsize = get16(eh + 54);
		phnum = get16(eh + 56);
	} else {
		phoff = get32(eh + 28);
		phentsize = get16(eh + 42);
		phnum = get16(eh + 44);
	}
	if (type != ET_DYN && type != ET_EXEC) {
		set_status(e, SCAN_ELF_INVALID, "an ELF file that is neither a program nor a shared library");
		return;
	}
	e->is_program = type == ET_EXEC;
	if (phentsize < (r->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phentsize > 256 ||
	    phnum == 0 || phnum > MAX_PHNUM) {
		set_status(e, SCAN_ELF_INVALID, "invalid program headers");
		return;
	}
	phbuf = scan_xmalloc(phentsize * phnum);
	if (read_at(r, phoff, phbuf, phentsize * phnum) != 0) {
		free(phbuf);
		set_status(e, SCAN_ELF_INVALID, "truncated: program headers beyond the end of the file");
		return;
	}
	ph = scan_xmalloc(phnum * sizeof(*ph));
	for (size_t i = 0; i < phnum; i++) {
		const unsigned char *p = phbuf + i * phentsize;

		ph[i].type = get32(p);
		if (r->is64) {
			ph[i].offset = get64(p + 8);
			ph[i].vaddr = get64(p + 16);
			ph[i].filesz = get64(p + 32);
		} else {
			ph[i].offset = get32(p + 4);
			ph[i].vaddr = get32(p + 8);
			ph[i].filesz = get32(p + 16);
		}
		if (ph[i].type == PT_INTERP) {
			e->is_program = 1;
			if (!e->interp && ph[i].filesz > 1 && ph[i].filesz < SCAN_STR_MAX)
				e->interp = read_string(r, ph[i].offset, ph[i].offset + ph[i].filesz);
		}
		if (ph[i].type == PT_DYNAMIC && !dyn)
			dyn = &ph[i];
		/* The loader maps every segment: one past the end is a truncated file. */
		if (ph[i].type == PT_LOAD &&
		    (ph[i].offset > r->size || ph[i].filesz > r->size - ph[i].offset)) {
			set_status(e, SCAN_ELF_INVALID, "truncated: a loadable segment is beyond the end of the file");
			goto out;
		}
	}
	if (dyn)
		read_dynamic(r, ph, phnum, dyn, e);
out:
	free(ph);
	free(phbuf);
	if (e->status != SCAN_ELF_OK)
		return;
	if (e->elf_class != (int)NATIVE_CLASS)
		set_status(e, SCAN_ELF_FOREIGN, e->elf_class == 32 ? "a 32-bit ELF" : "a 64-bit ELF");
	else if (NATIVE_MACHINE >= 0 && e->machine != NATIVE_MACHINE) {
		char why[64];

		snprintf(why, sizeof(why), "an ELF for another machine (e_machine %d)", e->machine);
		set_status(e, SCAN_ELF_FOREIGN, why);
	}
}

static const char *
file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file";
}

void
scan_elf_read(const char *path, struct scan_elf *e)
{
	struct reader r = { -1, 0, 0 };
	struct stat st;

	memset(e, 0, sizeof(*e));
	e->status = SCAN_ELF_OK;
	if (stat(path, &st) != 0) {
		e->err = errno;
		set_status(e, e->err == EACCES ? SCAN_ELF_DENIED : SCAN_ELF_MISSING,
		    e->err == ELOOP ? "a symlink loop" : strerror(e->err));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		set_status(e, SCAN_ELF_NOT_FILE, file_kind(st.st_mode));
		return;
	}
	/* O_NONBLOCK: should a FIFO replace the file after the stat, opening it must not wait. */
	r.fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (r.fd < 0) {
		e->err = errno;
		set_status(e, e->err == EACCES || e->err == EPERM ? SCAN_ELF_DENIED : SCAN_ELF_MISSING,
		    strerror(e->err));
		return;
	}
	if (fstat(r.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		set_status(e, SCAN_ELF_NOT_FILE, "not a regular file");
		goto out;
	}
	r.size = (uint64_t)st.st_size;
	read_elf(&r, e);
out:
	close(r.fd);
}

/*
 * The dynamic symbols whose names start with prefix, from the section
 * headers (SHT_DYNSYM and its string table): defined ones, and undefined
 * ones that are not weak (a weak one missing is no error for the loader).
 * -1 when the file or its tables cannot be read.
 */
int
scan_elf_symbols(const char *path, const char *prefix, struct scan_strv *defined, struct scan_strv *undefined)
{
	struct reader r = { -1, 0, 0 };
	unsigned char eh[64], sh[64], link[64];
	uint64_t shoff, sym_off, sym_size, sym_ent, str_off, str_size;
	size_t shentsize, shnum, plen = strlen(prefix);
	unsigned char *syms = NULL;
	char *strs = NULL;
	struct stat st;
	int rc = -1;

	r.fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (r.fd < 0)
		return -1;
	if (fstat(r.fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out;
	r.size = (uint64_t)st.st_size;
	if (read_at(&r, 0, eh, EI_NIDENT) != 0 || memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) || eh[EI_DATA] != NATIVE_DATA)
		goto out;
	r.is64 = eh[EI_CLASS] == ELFCLASS64;
	if (read_at(&r, 0, eh, r.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)) != 0)
		goto out;
	shoff = r.is64 ? get64(eh + 40) : get32(eh + 32);
	shentsize = get16(eh + (r.is64 ? 58 : 46));
	shnum = get16(eh + (r.is64 ? 60 : 48));
	if (shentsize < (r.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr)) || shentsize > sizeof(sh) || shnum > 65535)
		goto out;
	for (size_t i = 0; i < shnum; i++) {
		uint32_t type, lk;

		if (read_at(&r, shoff + i * shentsize, sh, shentsize) != 0)
			goto out;
		type = get32(sh + 4);
		if (type != SHT_DYNSYM)
			continue;
		sym_off = r.is64 ? get64(sh + 24) : get32(sh + 16);
		sym_size = r.is64 ? get64(sh + 32) : get32(sh + 20);
		lk = get32(sh + (r.is64 ? 40 : 24));
		sym_ent = r.is64 ? get64(sh + 56) : get32(sh + 36);
		if (sym_ent < (r.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym)) || sym_ent > 64 || lk >= shnum ||
		    sym_size > (64u << 20) || read_at(&r, shoff + lk * shentsize, link, shentsize) != 0)
			goto out;
		str_off = r.is64 ? get64(link + 24) : get32(link + 16);
		str_size = r.is64 ? get64(link + 32) : get32(link + 20);
		if (str_size == 0 || str_size > (64u << 20))
			goto out;
		syms = scan_xmalloc((size_t)sym_size);
		strs = scan_xmalloc((size_t)str_size + 1);
		if (read_at(&r, sym_off, syms, (size_t)sym_size) != 0 || read_at(&r, str_off, strs, (size_t)str_size) != 0)
			goto out;
		strs[str_size] = '\0';
		for (uint64_t k = 1; k < sym_size / sym_ent; k++) {
			const unsigned char *y = syms + k * sym_ent;
			uint32_t name = get32(y);
			unsigned char info = r.is64 ? y[4] : y[12];
			uint16_t shndx = get16(y + (r.is64 ? 6 : 14));
			const char *n;

			if (name >= str_size)
				continue;
			n = strs + name;
			if (strncmp(n, prefix, plen) != 0)
				continue;
			if (shndx != SHN_UNDEF)
				scan_strv_add_unique(defined, n);
			else if (ELF64_ST_BIND(info) != STB_WEAK)
				scan_strv_add_unique(undefined, n);
		}
		rc = 0;
		break;
	}
out:
	free(syms);
	free(strs);
	close(r.fd);
	return rc;
}

void
scan_elf_free(struct scan_elf *e)
{
	free(e->interp);
	free(e->soname);
	free(e->rpath);
	free(e->runpath);
	scan_strv_free(&e->needed);
	memset(e, 0, sizeof(*e));
}
