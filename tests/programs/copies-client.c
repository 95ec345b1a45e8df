/*
 * Several cuDNN copies in one process: linked to libcudnn.so.9, and opens
 * each library named on the command line by path (RTLD_LOCAL), calling it
 * through dlsym(handle) as a plugin or ctypes would. Every answer is
 * printed, so that a run under the spy can be compared byte for byte with a
 * run without it: a call answered by the wrong copy shows.
 * Built a second time as copies-dlopen (COPIES_NOT_LINKED), linked to none:
 * then each copy's own calls between its functions stay in that copy.
 * usage: copies-client [--no-tensors] LIBRARY...
 * --no-tensors: no descriptor calls through the copies. A fake copy beside the real
 * cuDNN would hand its own descriptors to the real one's functions (the fake calls
 * cudnnSetTensor4dDescriptorEx by name, which the loader binds to the linked copy),
 * and the real one would write past them, spy or not.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "g_prototypes.h"

typedef size_t (*version_fn)(void);
typedef const char *(*error_string_fn)(cudnnStatus_t);
typedef cudnnStatus_t (*create_tensor_fn)(cudnnTensorDescriptor_t *);
typedef cudnnStatus_t (*set4d_fn)(cudnnTensorDescriptor_t, cudnnTensorFormat_t, cudnnDataType_t, int, int, int, int);
typedef cudnnStatus_t (*destroy_tensor_fn)(cudnnTensorDescriptor_t);
typedef unsigned long (*fake_calls_fn)(const char *);

static int tensors = 1;

static void
use(void *h, const char *label)
{
	version_fn version = (version_fn)dlsym(h, "cudnnGetVersion");
	error_string_fn error_string = (error_string_fn)dlsym(h, "cudnnGetErrorString");
	create_tensor_fn create = (create_tensor_fn)dlsym(h, "cudnnCreateTensorDescriptor");
	set4d_fn set4d = (set4d_fn)dlsym(h, "cudnnSetTensor4dDescriptor");
	destroy_tensor_fn destroy = (destroy_tensor_fn)dlsym(h, "cudnnDestroyTensorDescriptor");
	fake_calls_fn fake_calls = (fake_calls_fn)dlsym(h, "fakecudnn_calls");
	cudnnTensorDescriptor_t t = NULL;

	if (!version || !error_string || !create || !set4d || !destroy) {
		printf("%s: a function is missing\n", label);
		return;
	}
	printf("%s: version %zu, %s", label, version(), error_string((cudnnStatus_t)0));
	if (tensors && create(&t) == 0) {
		/* 8.x numbers BAD_PARAM 3, 9.x 2000: each copy answers in its own. */
		printf(", set %d, set bad %d", (int)set4d(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 4, 5),
		       (int)set4d(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 4, 5));
		destroy(t);
	}
	/* The fake counts its own calls: its internal SetTensor4dDescriptorEx must reach this very copy. */
	if (fake_calls)
		printf(", own Ex calls %lu", fake_calls("cudnnSetTensor4dDescriptorEx"));
	printf("\n");
}

int
main(int argc, char **argv)
{
	int first = 1;

	if (argc > 1 && strcmp(argv[1], "--no-tensors") == 0) {
		tensors = 0;
		first = 2;
	}
#ifndef COPIES_NOT_LINKED
	printf("linked: version %zu, %s\n", cudnnGetVersion(), cudnnGetErrorString((cudnnStatus_t)0));
#endif
	for (int i = first; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		char label[32];

		if (!h) {
			printf("cannot load %s\n", argv[i]);
			return 2;
		}
		snprintf(label, sizeof(label), "copy %d", i - first + 1);
		use(h, label);
	}
#ifndef COPIES_NOT_LINKED
	/* Asked again through the linked names, after the others: still the linked copy. */
	printf("linked again: version %zu\n", cudnnGetVersion());
#endif
	return 0;
}
