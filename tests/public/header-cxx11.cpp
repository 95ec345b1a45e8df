/*
 * include/cudnnspy.h from C++11 with every warning an error: the names
 * must keep C linkage, or the weak references would look for mangled
 * names that the spy does not define.
 */
#include <cudnnspy.h>

#include <cstdio>

int
main()
{
	cudnnspy_mark_if_loaded("c++11");
	cudnnspy_flush_if_loaded();
	std::printf("api %d, loaded %d, mark %s\n", CUDNNSPY_API_VERSION, cudnnspy_loaded(),
		    cudnnspy_mark ? "present" : "absent");
	return 0;
}
