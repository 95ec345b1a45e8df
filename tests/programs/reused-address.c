/*
 * An object that names another (an RNN descriptor's dropout descriptor),
 * the other destroyed and a new one created at its address: records that
 * show the first then show the new number there. The allocator decides
 * whether the address comes back; the program says whether it did.
 */
#include <stdio.h>

#include "g_prototypes.h"

int
main(void)
{
	cudnnRNNDescriptor_t rnn = NULL;
	cudnnDropoutDescriptor_t first = NULL, d = NULL;
	int tries = 0;

	cudnnCreateRNNDescriptor(&rnn);
	cudnnCreateDropoutDescriptor(&first);
	cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_RNN_RELU, CUDNN_RNN_NO_BIAS, CUDNN_UNIDIRECTIONAL,
				 CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, 16, 32, 32, 1,
				 first, 0);
	cudnnDestroyDropoutDescriptor(first);
	for (; tries < 100; tries++) {
		cudnnCreateDropoutDescriptor(&d);
		if (d == first)
			break;
		cudnnDestroyDropoutDescriptor(d);
		d = NULL;
	}
	printf("address reused: %s\n", d == first ? "yes" : "no");
	/* Its record shows the RNN descriptor, and so the dropout descriptor at that address now. */
	cudnnDestroyRNNDescriptor(rnn);
	if (d)
		cudnnDestroyDropoutDescriptor(d);
	return 0;
}
