/* Function names from a module file's .symtab or .dynsym (symtab.c). */
#ifndef SPY_SYMTAB_H
#define SPY_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

/*
 * The function of the ELF file `path` that holds `offset` (from the module's
 * load base, as dladdr gives it), into `out`: 1 when found, 0 when the
 * file's symbol table has none there, -1 when there is no table to ask (no
 * .symtab or .dynsym, not readable, or too many files already). The file is
 * read once and kept; safe to call from any thread, not from a signal
 * handler.
 */
int spy_symtab_name(const char *path, uint64_t offset, char *out, size_t size);

/* The most bytes of a GNU build-id kept (ld writes 20: a SHA-1). */
#define SPY_BUILD_ID_MAX 64
/* The GNU build-id of the ELF file `path` (its .note.gnu.build-id) into out: its length, 0 when none. */
size_t spy_symtab_build_id(const char *path, unsigned char *out, size_t max);
/* The GNU build-id in `len` bytes of ELF notes (a PT_NOTE segment or SHT_NOTE section): its length, 0 when none. */
size_t spy_note_build_id(const void *notes, size_t len, unsigned char *out, size_t max);

/* N bytes at OFF of FD, whole (EINTR retried); 0, or -1 at a short read or an error. */
int spy_read_at(int fd, uint64_t off, void *buf, size_t n);

#endif
