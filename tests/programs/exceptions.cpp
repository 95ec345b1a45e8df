// A C++ program that throws and catches under the spy: a preloaded library
// that exported the unwinder's symbols would take over this unwinding.
#include <cstdio>
#include <stdexcept>

#include "g_prototypes.h"

static int
thrower(int i)
{
	if (i % 2 == 0)
		throw std::runtime_error("even");
	return i;
}

int
main()
{
	int caught = 0;

	for (int i = 0; i < 1000; i++) {
		try {
			thrower(i);
		} catch (const std::exception &e) {
			caught++;
		}
	}
	std::printf("caught %d version %zu\n", caught, cudnnGetVersion());
	return caught == 500 ? 0 : 1;
}
