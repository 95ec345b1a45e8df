/* Prints the version that early-lib's constructor got, and one of its own. */
#include <stdio.h>

#include "g_prototypes.h"

extern size_t early_version;

int
main(void)
{
	size_t v = cudnnGetVersion();

	printf("early %zu main %zu\n", early_version, v);
	return early_version == v ? 0 : 1;
}
