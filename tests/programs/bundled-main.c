/* Linked to a library that brings its own cuDNN (bundled-lib.c); never to cuDNN itself. */
#include <stddef.h>
#include <stdio.h>

size_t bundled_version(void);
const char *bundled_error_string(int status);

int
main(void)
{
	printf("version %zu, %s\n", bundled_version(), bundled_error_string(0));
	return 0;
}
