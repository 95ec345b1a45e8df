/*
 * One link of a chain of libraries (built as libchain1.so to libchain6.so,
 * each with LINK its number and calling the next): a failure made at the
 * chain's end has a frame in each, so that its stack names six modules
 * beside the program's and libc. Format 2 writes each module's text once a
 * block, whatever the load addresses.
 */
#include "g_prototypes.h"

#define CAT(a, b) a##b
#define NAME(n) CAT(chain_, n)

int NAME(LINK)(cudnnTensorDescriptor_t t);
#if LINK < 6
int NAME(NEXT)(cudnnTensorDescriptor_t t);
#endif

__attribute__((visibility("default"), noinline)) int
NAME(LINK)(cudnnTensorDescriptor_t t)
{
#if LINK < 6
	int st = NAME(NEXT)(t);
#else
	int st = (int)cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 8, 8);
#endif

	/* Not a tail call: this frame stays on the stack. */
	__asm__ volatile("" ::: "memory");
	return st;
}
