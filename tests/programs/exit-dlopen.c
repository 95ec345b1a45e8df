/*
 * Opens cuDNN late, as frameworks do, after registering an exit handler that
 * still calls it (cudnn-frontend's static device-properties descriptor is
 * destroyed that way): the library's own exit handlers, registered when it
 * was opened, run before that call.
 * usage: exit-dlopen [LIBRARY]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static size_t (*version)(void);

static void
at_end(void)
{
	printf("at exit: version %zu\n", version());
}

int
main(int argc, char **argv)
{
	void *h;

	atexit(at_end);
	h = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
	if (!h || !(*(void **)&version = dlsym(h, "cudnnGetVersion"))) {
		printf("cannot load\n");
		_exit(2);
	}
	printf("in main: version %zu\n", version());
	return 0;
}
