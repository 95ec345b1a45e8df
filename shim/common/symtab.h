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

/* N bytes at OFF of FD, whole (EINTR retried); 0, or -1 at a short read or an error. */
int spy_read_at(int fd, uint64_t off, void *buf, size_t n);

#endif
