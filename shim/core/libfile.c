/*
 * A library file checked before dlopen (libfile.h). Only the ELF header
 * and the program headers are read, with pread on a descriptor opened
 * O_NONBLOCK, so the check itself cannot block or fault.
 */
#include "libfile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if UINTPTR_MAX == 0xffffffffffffffffu
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
#define OUR_CLASS ELFCLASS64
#else
typedef Elf32_Ehdr ehdr_t;
typedef Elf32_Phdr phdr_t;
#define OUR_CLASS ELFCLASS32
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OUR_DATA ELFDATA2LSB
#else
#define OUR_DATA ELFDATA2MSB
#endif

#if defined(__x86_64__)
#define OUR_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OUR_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define OUR_MACHINE EM_PPC64
#elif defined(__i386__)
#define OUR_MACHINE EM_386
#endif

/* Program headers read at a time; a library has a dozen. */
#define PHDR_CHUNK 64

static const char *
kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	return "not a regular file";
}

static int refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* 1 when [off, off + len) lies inside a file of `size` bytes. */
static int
inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int
check_fd(int fd, const struct stat *st, char *why, size_t whylen)
{
	uint64_t size = (uint64_t)st->st_size;
	unsigned char ident[EI_NIDENT];
	ehdr_t eh;
	phdr_t ph[PHDR_CHUNK];

	if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0)
		return refuse(why, whylen, "is not an ELF file");
	if (ident[EI_CLASS] != OUR_CLASS)
		return refuse(why, whylen, "is a %s ELF file, and this process is %d-bit",
			      ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : ident[EI_CLASS] == ELFCLASS64 ? "64-bit" :
			      "malformed", OUR_CLASS == ELFCLASS64 ? 64 : 32);
	if (ident[EI_DATA] != OUR_DATA)
		return refuse(why, whylen, "is an ELF file of the other byte order");
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		return refuse(why, whylen, "is truncated: its ELF header is cut short");
	if (eh.e_type != ET_DYN)
		return refuse(why, whylen, "is not a shared object (ELF type %u)", (unsigned)eh.e_type);
#ifdef OUR_MACHINE
	if (eh.e_machine != OUR_MACHINE)
		return refuse(why, whylen, "is built for another machine (ELF machine %u, this process is %u)",
			      (unsigned)eh.e_machine, (unsigned)OUR_MACHINE);
#endif
	if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(phdr_t))
		return refuse(why, whylen, "is a malformed ELF file: %u program headers of %u bytes",
			      (unsigned)eh.e_phnum, (unsigned)eh.e_phentsize);
	if (!inside(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(phdr_t), size))
		return refuse(why, whylen, "is truncated: its program headers end past its %llu bytes",
			      (unsigned long long)size);
	if (eh.e_shnum && (eh.e_shentsize == 0 || !inside(eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize, size)))
		return refuse(why, whylen, "is truncated: its section headers end past its %llu bytes",
			      (unsigned long long)size);
	for (unsigned i = 0; i < eh.e_phnum; i += PHDR_CHUNK) {
		unsigned n = eh.e_phnum - i < PHDR_CHUNK ? eh.e_phnum - i : PHDR_CHUNK;
		ssize_t want = (ssize_t)(n * sizeof(phdr_t));

		if (pread(fd, ph, (size_t)want, (off_t)(eh.e_phoff + (uint64_t)i * sizeof(phdr_t))) != want)
			return refuse(why, whylen, "cannot be read: its program headers are cut short");
		for (unsigned k = 0; k < n; k++) {
			/* The loader maps these: a page past the end of the file is a SIGBUS when touched. */
			if ((ph[k].p_type == PT_LOAD || ph[k].p_type == PT_DYNAMIC) &&
			    !inside(ph[k].p_offset, ph[k].p_filesz, size))
				return refuse(why, whylen, "is truncated: a segment ends at byte %llu, past its %llu bytes",
					      (unsigned long long)ph[k].p_offset + ph[k].p_filesz, (unsigned long long)size);
		}
	}
	return 0;
}

int
spy_library_file_check(const char *path, char *why, size_t whylen)
{
	struct stat st, fst;
	int fd, rc, saved = errno;

	if (stat(path, &st) != 0) {
		rc = refuse(why, whylen, "cannot be read: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = refuse(why, whylen, "is %s, not a library", kind_of(st.st_mode));
		goto out;
	}
	/* O_NONBLOCK: the path may have become a FIFO since the stat. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		rc = refuse(why, whylen, "cannot be read: %s", strerror(errno));
		goto out;
	}
	if (fstat(fd, &fst) != 0)
		rc = refuse(why, whylen, "cannot be read: %s", strerror(errno));
	else if (!S_ISREG(fst.st_mode))
		rc = refuse(why, whylen, "is %s, not a library", kind_of(fst.st_mode));
	else
		rc = check_fd(fd, &fst, why, whylen);
	close(fd);
out:
	errno = saved;
	return rc;
}
