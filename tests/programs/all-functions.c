/*
 * Calls every function of the API description once, as a program that uses
 * much of cuDNN does: first a legacy and a graph convolution (conv-legacy.c
 * and conv-graph.c, linked in), so that the exit writes `algo` and
 * `heuristics` records, then each function by name with zeroed arguments.
 * Zeroed arguments are NULL pointers, which the fake cuDNN's generated
 * functions never read. Prints each name it called ("stub" for those the
 * spy forwards uncounted), for the test to compare with the summary record.
 * usage: all-functions
 */
#include <dlfcn.h>
#include <stdio.h>

#include "g_prototypes.h"
#include "spy-api.h"

int conv_legacy_main(int argc, char **argv);
int conv_graph_main(int argc, char **argv);

/*
 * Any cuDNN function, called with every argument zero: the first eight
 * floating-point parameters come from xmm registers (v registers on
 * aarch64), the integer and pointer ones from general registers, the rest
 * from the stack, and all of those are zero whatever the real prototype:
 * 40 integer slots, more than the 33 parameters of the longest function
 * (fewer left stack words unset, which the callee read as junk).
 */
typedef long (*any_fn)(double, double, double, double, double, double, double, double,
		       long, long, long, long, long, long, long, long, long, long, long, long,
		       long, long, long, long, long, long, long, long, long, long, long, long,
		       long, long, long, long, long, long, long, long, long, long, long, long,
		       long, long, long, long);

int
main(void)
{
	char *argv[] = { "all-functions", NULL };
	int called = 0, missing = 0;
	void *lib = RTLD_DEFAULT;
	Dl_info di;

	conv_legacy_main(1, argv);
	conv_graph_main(1, argv);
	/*
	 * Every name is looked up in the object that answers cudnnGetVersion (the
	 * spy, preloaded): through RTLD_DEFAULT, names only cuDNN 8 has are
	 * missing in a process with cuDNN 9, as they are without the spy.
	 */
	if (dladdr(dlsym(RTLD_DEFAULT, "cudnnGetVersion"), &di) && di.dli_fname)
		lib = dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!lib)
		lib = RTLD_DEFAULT;
	for (int i = 0; i < _SPY_FN_COUNT; i++) {
		any_fn f;

		*(void **)&f = dlsym(lib, spy_fn_info[i].name);
		if (!f) {
			printf("missing %s\n", spy_fn_info[i].name);
			missing++;
			continue;
		}
		f(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
		/* Stubs (no known prototype) are forwarded by a jump, never counted. */
		printf("%s %s\n", spy_fn_info[i].ret == SPY_RET_UNKNOWN ? "stub" : "called", spy_fn_info[i].name);
		called++;
	}
	printf("%d functions called, %d missing\n", called, missing);
	return 0;
}
