/* Which loaded object each address lies in, from a map kept of them (modules.c), without dladdr. */
#ifndef SPY_MODULES_H
#define SPY_MODULES_H

#include <stddef.h>
#include <stdint.h>

struct spy_module {
	uintptr_t base;		/* the object's first mapped address, as dladdr's dli_fbase */
	const char *name;	/* its file name as dladdr's dli_fname gives it; NULL when the address is in none */
};

/*
 * The objects of the N addresses IPS into OUT: the map is checked against
 * the loader's counts of objects added and removed once per call, and read
 * again when they changed. Names stay valid for the life of the process.
 * 0, or -1 when the map cannot be used (more objects or names than it has
 * room for): then the caller asks dladdr.
 */
int spy_modules_find(void *const *ips, int n, struct spy_module *out);
/* The GNU build-id of the object mapped from `base` (a spy_module's), read from its notes in memory; 0 when none. */
size_t spy_module_build_id(uintptr_t base, unsigned char *out, size_t max);

#endif
