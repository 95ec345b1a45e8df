/*
 * Calls functions that only cuDNN 9 has. Run against an 8.x library they
 * are missing: each returns NOT_INITIALIZED in the 8.x numbering (1) and
 * cudnnGetLastErrorString still fills the buffer.
 */
#include <stdio.h>

#include "g_prototypes.h"

int
main(void)
{
	char msg[256] = "untouched";
	cudnnStatus_t st;

	printf("version %zu\n", cudnnGetVersion());
	st = cudnnGraphVersionCheck();
	printf("graph version check %d\n", (int)st);
	st = cudnnGraphVersionCheck();
	printf("again %d\n", (int)st);
	cudnnGetLastErrorString(msg, sizeof(msg));
	printf("last error [%s]\n", msg);
	printf("error string %s\n", cudnnGetErrorString(st));
	return 0;
}
