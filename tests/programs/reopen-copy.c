/*
 * A copy opened by path, closed, replaced on disk and opened again, as a
 * program that updates or switches its cuDNN at run time does: the second
 * open must load the new file. Before the second open, NEW is renamed over
 * LIB and NEW_VERSION over the fake's version file beside it.
 * usage: reopen-copy LIB NEW NEW_VERSION
 */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

static void
ask(const char *lib, const char *label)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	size_t (*v)(void);

	if (!h) {
		printf("%s: cannot load\n", label);
		return;
	}
	*(void **)&v = dlsym(h, "cudnnGetVersion");
	printf("%s: version %zu\n", label, v ? v() : 0);
	printf("%s: dlclose %d\n", label, dlclose(h));
}

int
main(int argc, char **argv)
{
	char dir[4096], version[4200];

	if (argc != 4)
		return 2;
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	snprintf(version, sizeof(version), "%s/fakecudnn-version", dirname(dir));
	ask(argv[1], "first");
	if (rename(argv[2], argv[1]) != 0 || rename(argv[3], version) != 0) {
		printf("cannot replace\n");
		return 2;
	}
	ask(argv[1], "replaced");
	return 0;
}
