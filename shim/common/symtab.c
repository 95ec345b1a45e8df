/*
 * Function names from a module's own symbol table: .symtab, which names a
 * program's static functions and an unexported main too, else .dynsym (a
 * stripped library's exported functions, what dladdr would name). Each
 * module file is read once, at its first failure, and kept as a sorted
 * table; a file with neither, or an unreasonably large one, has none.
 * Plain file reads and libc: the command can use it too.
 */
#include "pesym.h"
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODULES 128
#define TABLE_MAX (32u << 20)	/* bytes of .symtab or its strings read, at most */

struct fsym {
	uint64_t value, size;
	uint32_t name;
	int quality;		/* among aliases at one address, the higher names it (sorted last) */
};

struct module {
	char *path;
	unsigned char build_id[SPY_BUILD_ID_MAX];	/* the GNU build-id note's bytes, build_id_len of them */
	size_t build_id_len;
	uint64_t first_vaddr;	/* of the first PT_LOAD: what the load base stands for */
	struct fsym *syms;
	size_t n;
	char *strs;
	size_t strs_size;
};

static struct module modules[MODULES];
static int nmodules;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int
spy_read_at(int fd, uint64_t off, void *buf, size_t n)
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

static int
by_value(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return (x->quality > y->quality) - (x->quality < y->quality);
}

/* Aliases at one address: a global name before a weak one before a local one, fewer leading underscores first. */
static int
name_quality(const ElfW(Sym) *sym, const char *name)
{
	int bind = ELF64_ST_BIND(sym->st_info), q = bind == STB_GLOBAL ? 32 : bind == STB_WEAK ? 16 : 0, u = 0;

	while (name[u] == '_' && u < 15)
		u++;
	return q - u;
}

/* A Windows module (the drop-in DLL's records): its exports, offsets from its base being RVAs. */
static int
pe_load(struct module *m, int fd, uint64_t size)
{
	struct spy_pe_sym *pe;
	size_t n;

	if (!spy_pe_exports(fd, size, &pe, &n, &m->strs, &m->strs_size))
		return 0;
	m->syms = malloc(n * sizeof(*m->syms));
	if (m->syms) {
		for (size_t i = 0; i < n; i++) {
			m->syms[i].value = pe[i].rva;
			m->syms[i].size = pe[i].size;
			m->syms[i].name = pe[i].name;
			m->syms[i].quality = 0;
		}
		qsort(m->syms, n, sizeof(*m->syms), by_value);
		m->n = n;
	}
	free(pe);
	return 1;
}

/* The function symbols of one file; an empty table when it has none or cannot be read. */
static void
load(struct module *m)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	ElfW(Sym) *raw = NULL;
	struct stat st;
	unsigned want;
	int fd;

	/* A path from a record may name anything: only a regular file is opened. */
	if (stat(m->path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && pe_load(m, fd, (uint64_t)st.st_size))
		goto out;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || spy_read_at(fd, 0, &eh, sizeof(eh)) != 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shnum == 0 || eh.e_shnum > 4096 ||
	    eh.e_shoff > (uint64_t)st.st_size || (uint64_t)eh.e_shnum * sizeof(ElfW(Shdr)) > (uint64_t)st.st_size - eh.e_shoff)
		goto out;
	if (eh.e_phentsize == sizeof(ElfW(Phdr)) && eh.e_phnum > 0 && eh.e_phnum < 256 &&
	    eh.e_phoff <= (uint64_t)st.st_size && (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr)) <= (uint64_t)st.st_size - eh.e_phoff) {
		for (int i = 0; i < eh.e_phnum; i++) {
			ElfW(Phdr) ph;

			if (spy_read_at(fd, eh.e_phoff + (uint64_t)i * sizeof(ph), &ph, sizeof(ph)) != 0)
				goto out;
			if (ph.p_type == PT_LOAD) {
				m->first_vaddr = ph.p_vaddr & ~(uint64_t)(ph.p_align > 1 ? ph.p_align - 1 : 0);
				break;
			}
		}
	}
	sh = malloc((size_t)eh.e_shnum * sizeof(*sh));
	if (!sh || spy_read_at(fd, eh.e_shoff, sh, (size_t)eh.e_shnum * sizeof(*sh)) != 0)
		goto out;
	/* Which build this file is: the command checks it against the one a record names. */
	for (int i = 0; i < eh.e_shnum && !m->build_id_len; i++) {
		unsigned char notes[4096];

		if (sh[i].sh_type != SHT_NOTE || sh[i].sh_size > sizeof(notes) || sh[i].sh_offset > (uint64_t)st.st_size ||
		    sh[i].sh_size > (uint64_t)st.st_size - sh[i].sh_offset ||
		    spy_read_at(fd, sh[i].sh_offset, notes, (size_t)sh[i].sh_size) != 0)
			continue;
		m->build_id_len = spy_note_build_id(notes, (size_t)sh[i].sh_size, m->build_id, sizeof(m->build_id));
	}
	/* .symtab when there is one (it holds what .dynsym holds, and more); .dynsym else. */
	want = SHT_SYMTAB;
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			break;
		else if (i == eh.e_shnum - 1)
			want = SHT_DYNSYM;
	for (int i = 0; i < eh.e_shnum; i++) {
		const ElfW(Shdr) *s = &sh[i], *strs;
		size_t count, k = 0;

		if (s->sh_type != want || s->sh_entsize != sizeof(ElfW(Sym)) || s->sh_link >= eh.e_shnum)
			continue;
		strs = &sh[s->sh_link];
		if (s->sh_size > TABLE_MAX || strs->sh_size > TABLE_MAX || s->sh_offset > (uint64_t)st.st_size ||
		    s->sh_size > (uint64_t)st.st_size - s->sh_offset || strs->sh_offset > (uint64_t)st.st_size ||
		    strs->sh_size > (uint64_t)st.st_size - strs->sh_offset)
			break;
		count = s->sh_size / sizeof(ElfW(Sym));
		raw = malloc(s->sh_size ? s->sh_size : 1);
		m->strs = malloc(strs->sh_size + 1);
		m->syms = malloc((count ? count : 1) * sizeof(*m->syms));
		if (!raw || !m->strs || !m->syms || spy_read_at(fd, s->sh_offset, raw, s->sh_size) != 0 ||
		    spy_read_at(fd, strs->sh_offset, m->strs, strs->sh_size) != 0)
			break;
		m->strs[strs->sh_size] = 0;
		m->strs_size = strs->sh_size;
		for (size_t j = 0; j < count; j++) {
			if (ELF64_ST_TYPE(raw[j].st_info) != STT_FUNC || raw[j].st_shndx == SHN_UNDEF ||
			    raw[j].st_name >= strs->sh_size || !m->strs[raw[j].st_name])
				continue;
			m->syms[k].value = raw[j].st_value;
			m->syms[k].size = raw[j].st_size;
			m->syms[k].name = raw[j].st_name;
			m->syms[k].quality = name_quality(&raw[j], m->strs + raw[j].st_name);
			k++;
		}
		qsort(m->syms, k, sizeof(*m->syms), by_value);
		m->n = k;
		break;
	}
out:
	if (!m->n) {
		free(m->syms);
		free(m->strs);
		m->syms = NULL;
		m->strs = NULL;
	}
	free(raw);
	free(sh);
	close(fd);
}

static struct module *
module_of(const char *path)
{
	struct module *m;

	for (int i = 0; i < nmodules; i++)
		if (strcmp(modules[i].path, path) == 0)
			return &modules[i];
	if (nmodules >= MODULES)
		return NULL;
	m = &modules[nmodules];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return NULL;
	nmodules++;
	load(m);
	return m;
}

size_t
spy_note_build_id(const void *notes, size_t len, unsigned char *out, size_t max)
{
	const unsigned char *p = notes;
	size_t at = 0;

	while (len - at >= 12 && at < len) {
		uint32_t namesz, descsz, type;
		size_t name_at = at + 12, desc_at, next;

		memcpy(&namesz, p + at, 4);
		memcpy(&descsz, p + at + 4, 4);
		memcpy(&type, p + at + 8, 4);
		if (namesz > len || descsz > len)
			return 0;
		desc_at = name_at + (((size_t)namesz + 3) & ~(size_t)3);
		next = desc_at + (((size_t)descsz + 3) & ~(size_t)3);
		if (desc_at > len || desc_at + descsz > len)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name_at, "GNU", 4) == 0 && descsz > 0 &&
		    descsz <= max) {
			memcpy(out, p + desc_at, descsz);
			return descsz;
		}
		if (next > len)
			return 0;
		at = next;
	}
	return 0;
}

size_t
spy_symtab_build_id(const char *path, unsigned char *out, size_t max)
{
	struct module *m;
	size_t n = 0;
	int saved = errno;

	if (!path || !path[0])
		return 0;
	pthread_mutex_lock(&lock);
	m = module_of(path);
	if (m && m->build_id_len && m->build_id_len <= max) {
		memcpy(out, m->build_id, m->build_id_len);
		n = m->build_id_len;
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
	return n;
}

int
spy_symtab_name(const char *path, uint64_t offset, char *out, size_t size)
{
	struct module *m;
	int saved = errno, found = 0;

	if (!path || !path[0] || size == 0)
		return 0;
	pthread_mutex_lock(&lock);
	m = module_of(path);
	if (m && m->n) {
		uint64_t vaddr = m->first_vaddr + offset;
		size_t lo = 0, hi = m->n;

		/* The last symbol at or below the address, if the address lies inside it. */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (m->syms[mid].value <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0) {
			const struct fsym *s = &m->syms[lo - 1];

			if (vaddr < s->value + (s->size ? s->size : 1)) {
				size_t len = strlen(m->strs + s->name);

				if (len >= size)
					len = size - 1;
				memcpy(out, m->strs + s->name, len);
				out[len] = 0;
				found = 1;
			}
		}
	} else {
		found = -1;
	}
	pthread_mutex_unlock(&lock);
	errno = saved;
	return found;
}
