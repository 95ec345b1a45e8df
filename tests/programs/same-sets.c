/*
 * A framework's way with descriptors: the same Set made again before every
 * use, an Nd shape from arrays that lie elsewhere each time, and a Set the
 * library refuses again and again. usage: same-sets N. Format 2 names a
 * descriptor by a text written when what the spy remembers of it changes:
 * N alike calls must not write it N times.
 */
#include <stdio.h>
#include <stdlib.h>

#include "g_prototypes.h"

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10, bad = 0;
	int dims[2][4] = { { 2, 3, 8, 8 }, { 2, 3, 8, 8 } }, strides[2][4] = { { 192, 64, 8, 1 }, { 192, 64, 8, 1 } };
	cudnnTensorDescriptor_t nd = NULL, refused = NULL;

	cudnnCreateTensorDescriptor(&nd);
	cudnnCreateTensorDescriptor(&refused);
	for (int i = 0; i < n; i++) {
		/* The same values from another place each time. */
		bad += cudnnSetTensorNdDescriptor(nd, CUDNN_DATA_FLOAT, 4, dims[i % 2], strides[i % 2]) != 0;
		bad += cudnnSetTensor4dDescriptor(refused, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 8, 8) == 0;
	}
	printf("%d calls, %d unexpected\n", 2 * n, bad);
	cudnnDestroyTensorDescriptor(nd);
	cudnnDestroyTensorDescriptor(refused);
	return 0;
}
