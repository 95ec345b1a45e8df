/* Fails N times at the end of a chain of six libraries (chain-lib.c). usage: chain-call N */
#include <stdio.h>
#include <stdlib.h>

#include "g_prototypes.h"

int chain_1(cudnnTensorDescriptor_t t);

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20, bad = 0;
	cudnnTensorDescriptor_t t = NULL;

	cudnnCreateTensorDescriptor(&t);
	for (int i = 0; i < n; i++)
		bad += chain_1(t) == 0;
	printf("%d failures asked, %d calls succeeded\n", n, bad);
	cudnnDestroyTensorDescriptor(t);
	return 0;
}
