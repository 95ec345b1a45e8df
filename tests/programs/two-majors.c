/*
 * Python importing two frameworks built against different cuDNN majors, in
 * C: each library named on the command line is opened RTLD_LOCAL (as
 * Python imports extension modules) and asked, in turn and then again,
 * which cuDNN answers its own linked calls (major-lib.c).
 * usage: two-majors LIBRARY...
 */
#include <dlfcn.h>
#include <stdio.h>

typedef void (*report_fn)(const char *);

int
main(int argc, char **argv)
{
	report_fn report[8];
	int n = argc - 1 < 8 ? argc - 1 : 8;

	for (int i = 0; i < n; i++) {
		void *h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);

		if (!h || !(report[i] = (report_fn)dlsym(h, "major_lib_report"))) {
			printf("cannot load %s\n", argv[i + 1]);
			return 2;
		}
		report[i]("first");
	}
	for (int i = 0; i < n; i++)
		report[i]("again");
	return 0;
}
