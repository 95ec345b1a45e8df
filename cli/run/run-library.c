/*
 * `cudnnspy run --library X`: X is checked before the program starts,
 * since the spy, once inside it, can only warn and return
 * CUDNN_STATUS_NOT_INITIALIZED to every call. The file is read, never
 * loaded: nothing of X runs in the command.
 */
#include "run-library.h"
#include "cli-util.h"
#include "scan-int.h"
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_MAX (64u << 20)	/* far more than any real symbol table */

/* A section's bytes, bounds checked against the file; NULL with why filled. */
static void *
section(int fd, uint64_t size, const ElfW(Shdr) *sh, char *why, size_t whylen)
{
	void *p;

	if (sh->sh_size > TABLE_MAX || sh->sh_offset > size || sh->sh_size > size - sh->sh_offset) {
		snprintf(why, whylen, "its dynamic symbol table lies beyond the end of the file");
		return NULL;
	}
	p = malloc(sh->sh_size ? sh->sh_size : 1);
	if (!p || spy_read_at(fd, sh->sh_offset, p, sh->sh_size) != 0) {
		snprintf(why, whylen, "its dynamic symbol table cannot be read");
		free(p);
		return NULL;
	}
	return p;
}

/*
 * Which names the file defines in its dynamic symbol table (the loader's
 * view: what dlsym finds), from the section headers. 0 when read.
 */
static int
defines(const char *path, int *version, int *spy, char *why, size_t whylen)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	ElfW(Sym) *syms = NULL;
	char *str = NULL;
	struct stat st;
	int fd, rc = -1;
	size_t dynsym = 0;

	*version = *spy = 0;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) != 0 || spy_read_at(fd, 0, &eh, sizeof(eh)) != 0) {
		snprintf(why, whylen, "it cannot be read: %s", strerror(errno));
		goto out;
	}
	if (eh.e_shoff == 0 || eh.e_shnum == 0 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh.e_shoff > (uint64_t)st.st_size || (uint64_t)eh.e_shnum * sizeof(ElfW(Shdr)) > (uint64_t)st.st_size - eh.e_shoff) {
		snprintf(why, whylen, "it has no section headers to find its dynamic symbols in");
		goto out;
	}
	sh = malloc(eh.e_shnum * sizeof(*sh));
	if (!sh || spy_read_at(fd, eh.e_shoff, sh, eh.e_shnum * sizeof(*sh)) != 0) {
		snprintf(why, whylen, "its section headers cannot be read");
		goto out;
	}
	while (dynsym < eh.e_shnum && sh[dynsym].sh_type != SHT_DYNSYM)
		dynsym++;
	if (dynsym == eh.e_shnum || sh[dynsym].sh_link >= eh.e_shnum || sh[dynsym].sh_entsize != sizeof(ElfW(Sym))) {
		snprintf(why, whylen, "it has no dynamic symbol table");
		goto out;
	}
	syms = section(fd, (uint64_t)st.st_size, &sh[dynsym], why, whylen);
	str = syms ? section(fd, (uint64_t)st.st_size, &sh[sh[dynsym].sh_link], why, whylen) : NULL;
	if (!str)
		goto out;
	for (size_t i = 0; i < sh[dynsym].sh_size / sizeof(ElfW(Sym)); i++) {
		const ElfW(Sym) *s = &syms[i];
		size_t strsz = sh[sh[dynsym].sh_link].sh_size;
		const char *name;

		if (s->st_shndx == SHN_UNDEF || s->st_name >= strsz || !memchr(str + s->st_name, 0, strsz - s->st_name))
			continue;
		name = str + s->st_name;
		*version |= strcmp(name, "cudnnGetVersion") == 0;
		*spy |= strncmp(name, "cudnnspy_", 9) == 0;
	}
	rc = 0;
out:
	free(syms);
	free(str);
	free(sh);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* 9 for libcudnn.so.9 (its SONAME, or else its file name), 0 when it says no major. */
static int
major_of(const char *name)
{
	const char *b = strrchr(name, '/');

	b = b ? b + 1 : name;
	if (strncmp(b, "libcudnn.so.", 12) != 0 || b[12] < '1' || b[12] > '9')
		return 0;
	return atoi(b + 12);
}

int
cli_check_library(const char *value, char *file, size_t filelen, int *major)
{
	static const char *const names[] = { "libcudnn.so.9", "libcudnn.so.8", "libcudnn.so" };
	struct scan_elf e;
	struct stat st;
	char why[256];
	int version, spy, rc = -1;
	const char *what = "";

	*major = 0;
	if (stat(value, &st) != 0) {
		complain("--library %s: %s", value, strerror(errno));
		return -1;
	}
	/* A directory: the first of these, as the spy itself looks (CUDNNSPY_LIBRARY in docs/configuration.md). */
	if (S_ISDIR(st.st_mode)) {
		file[0] = 0;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !file[0]; i++) {
			snprintf(file, filelen, "%s%s%s", value, value[strlen(value) - 1] == '/' ? "" : "/", names[i]);
			if (access(file, F_OK) != 0)
				file[0] = 0;
		}
		if (!file[0]) {
			complain("--library %s: a directory without libcudnn.so.9, libcudnn.so.8 or libcudnn.so", value);
			return -1;
		}
		what = file;
	} else {
		snprintf(file, filelen, "%s", value);
	}
	scan_elf_read(file, &e);
	switch (e.status) {
	case SCAN_ELF_OK:
		break;
	case SCAN_ELF_NOT_FILE:
		complain("--library %s%s%s: %s, not a library", value, what[0] ? ": " : "", what, e.why);
		goto out;
	case SCAN_ELF_INVALID:
		complain("--library %s%s%s: not an ELF shared library (%s)", value, what[0] ? ": " : "", what, e.why);
		goto out;
	case SCAN_ELF_FOREIGN:
		complain("--library %s%s%s: %s, not a library for this machine", value, what[0] ? ": " : "", what,
			 e.why);
		goto out;
	case SCAN_ELF_MISSING:
	case SCAN_ELF_DENIED:
	default:
		complain("--library %s%s%s: cannot be read: %s", value, what[0] ? ": " : "", what, e.why);
		goto out;
	}
	/* A program, or a library with an interpreter (libc.so.6), is told apart by its symbols below. */
	if (!e.has_dynamic) {
		complain("--library %s%s%s: a static file, not a shared library", value, what[0] ? ": " : "", what);
		goto out;
	}
	if (defines(file, &version, &spy, why, sizeof(why)) != 0) {
		complain("--library %s%s%s: cannot tell whether it is a cuDNN: %s", value, what[0] ? ": " : "", what, why);
		goto out;
	}
	if (spy) {
		complain("--library %s%s%s: that is cudnnspy's own library, not a real cuDNN", value, what[0] ? ": " : "",
			 what);
		goto out;
	}
	if (!version) {
		complain("--library %s%s%s: not a cuDNN dispatcher: it defines no cudnnGetVersion%s%s", value,
			 what[0] ? ": " : "", what, e.soname ? "; its SONAME is " : "", e.soname ? e.soname : "");
		goto out;
	}
	/* libcudnn_graph.so.9 defines cudnnGetVersion too, but is not what a program links to. */
	if (e.soname && strncmp(e.soname, "libcudnn_", 9) == 0) {
		complain("--library %s%s%s: a cuDNN sub-library (SONAME %s), not the dispatcher libcudnn.so.N", value,
			 what[0] ? ": " : "", what, e.soname);
		goto out;
	}
	*major = e.soname ? major_of(e.soname) : 0;
	if (!*major)
		*major = major_of(file);
	rc = 0;
out:
	scan_elf_free(&e);
	return rc;
}
