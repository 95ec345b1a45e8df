/*
 * A library linked (DT_NEEDED) to one cuDNN major, as a framework's
 * extension module is: built twice, against the fake libcudnn.so.8 and the
 * fake libcudnn.so.9. Its calls go through its own linked references, which
 * the loader binds by their symbol version; major_lib_report() prints what
 * its copy answered, so that a run under the spy compares byte for byte with
 * a run without it.
 */
#include <stdio.h>

#include "g_prototypes.h"

/* Weak: a drop-in in front of the fake does not define it (then the count is not shown). */
__attribute__((weak)) unsigned long fakecudnn_calls(const char *name);

__attribute__((visibility("default"))) void major_lib_report(const char *label);

void
major_lib_report(const char *label)
{
	cudnnTensorDescriptor_t t = NULL;

	printf("%s %s: version %zu, %s", MAJOR_LIB, label, cudnnGetVersion(), cudnnGetErrorString((cudnnStatus_t)0));
	if (cudnnCreateTensorDescriptor(&t) == 0) {
		/* 8.x numbers BAD_PARAM 3, 9.x 2000: each copy answers in its own numbering. */
		printf(", set %d, set bad %d", (int)cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5),
		       (int)cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 4, 5));
		cudnnDestroyTensorDescriptor(t);
	}
	/* The fake counts its own calls: its internal cudnnSetTensor4dDescriptorEx must stay in this copy. */
	if (fakecudnn_calls)
		printf(", own Ex calls %lu", fakecudnn_calls("cudnnSetTensor4dDescriptorEx"));
	printf("\n");
}
