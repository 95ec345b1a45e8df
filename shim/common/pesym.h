/* Function names of a PE32+ file (a Windows DLL or program) from its exports, for symtab.c (pesym.c). */
#ifndef SPY_PESYM_H
#define SPY_PESYM_H

#include <stddef.h>
#include <stdint.h>

struct spy_pe_sym {
	uint32_t rva;		/* the function's start, from the module's base */
	uint32_t size;		/* its length from the unwind table (.pdata); 1 when it has no entry there */
	uint32_t name;		/* offset of its name in the strings */
};

/*
 * The exported functions of the PE32+ file open as `fd` (`size` bytes): 1 with *syms (*n of them, unsorted)
 * and *strs (NUL-terminated names) malloc'ed; 0 when it is no PE32+ file or exports nothing readable.
 */
int spy_pe_exports(int fd, uint64_t size, struct spy_pe_sym **syms, size_t *n, char **strs, size_t *strs_size);

#endif
