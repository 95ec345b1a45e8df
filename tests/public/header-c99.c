/*
 * include/cudnnspy.h in strict ISO C99 with every warning an error: a
 * program that includes it must not need GNU C. Run without the spy, the
 * helpers must do nothing.
 */
#include <cudnnspy.h>
#include <cudnnspy.h>	/* twice: the include guard */

#include <stdio.h>

int
main(void)
{
	void (*mark)(const char *) = cudnnspy_mark;

	cudnnspy_mark_if_loaded("c99");
	cudnnspy_flush_if_loaded();
	if (cudnnspy_loaded() != (cudnnspy_is_loaded != NULL)) {
		fputs("cudnnspy_loaded() disagrees with the weak symbol\n", stderr);
		return 1;
	}
	printf("api %d, label max %d, loaded %d, mark %s\n", CUDNNSPY_API_VERSION, CUDNNSPY_LABEL_MAX,
	       cudnnspy_loaded(), mark ? "present" : "absent");
	return 0;
}
