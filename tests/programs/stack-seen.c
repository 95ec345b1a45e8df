/*
 * Failures from stacks that look alike to the spy's cache of stacks seen
 * before (stack.c): each failure's stack must be its own. Prints one line
 * per failure, the function that made it; the test compares each record's
 * stack with that line.
 *   two paths alternating: path_a and path_b, fixed frames, called through
 *     one function pointer from one call site, so that only the return
 *     address between them differs;
 *   depths: the same leaf under 1, 2, 3 levels of recursion, then again;
 *   moved: pad_a and pad_b reach mid (which allocates) with the innermost
 *     stack pointer the same for both, while mid's own return address lies
 *     elsewhere: the word where it lay for pad_a is still there, stale, when
 *     pad_b calls;
 *   a signal handler failing on the program's stack.
 */
#include <alloca.h>
#include <signal.h>
#include <stdio.h>

#include "g_prototypes.h"

static cudnnTensorDescriptor_t t;
static volatile int sink;

static __attribute__((noinline)) cudnnStatus_t
leaf(void)
{
	cudnnStatus_t s = cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, -1, 3, 8, 8);

	sink = s;	/* no tail call: every frame stays on the stack */
	return s;
}

static __attribute__((noinline)) cudnnStatus_t
path_a(int n)
{
	cudnnStatus_t s = leaf();

	sink = s + n;
	return s;
}

static __attribute__((noinline)) cudnnStatus_t
path_b(int n)
{
	cudnnStatus_t s = leaf();

	sink = s - n;
	return s;
}

static __attribute__((noinline)) cudnnStatus_t
deep(int n)
{
	cudnnStatus_t s = n > 1 ? deep(n - 1) : leaf();

	sink = s;
	return s;
}

static __attribute__((noinline)) cudnnStatus_t
mid(int pad)
{
	volatile char *room = alloca((size_t)pad);
	cudnnStatus_t s;

	room[0] = 0;
	s = leaf();
	sink = s + room[0];
	return s;
}

/*
 * pad_a's 16 bytes and mid's 256 - 16, or pad_b's 48 and mid's 256 - 48: leaf's frame lands at one place. Two
 * functions of one body, so that only their return addresses tell them apart.
 */
#define PAD(name, bytes) \
	static __attribute__((noinline)) cudnnStatus_t \
	name(int n) \
	{ \
		volatile char *room = alloca(bytes); \
		cudnnStatus_t s; \
\
		room[0] = (char)n; \
		s = mid(256 - (bytes)); \
		sink = s + room[0]; \
		return s; \
	}
PAD(pad_a, 16)
PAD(pad_b, 48)

static void
on_alarm(int sig)
{
	sink = leaf() + sig;
}

static const char *const names[] = { "path_a", "path_b", "deep1", "deep2", "deep3", "pad_a", "pad_b", "on_alarm" };

int
main(void)
{
	cudnnStatus_t (*volatile step)(int);
	unsigned char said[64];
	int n = 0;

	cudnnCreateTensorDescriptor(&t);
	/* Printed at the end: any call between two failures would overwrite the stale words the moved case needs. */
	for (int i = 0; i < 6; i++) {
		step = i % 2 ? path_b : path_a;
		step(i);
		said[n++] = (unsigned char)(i % 2);
	}
	for (int i = 0; i < 6; i++) {
		deep(1 + i % 3);
		said[n++] = (unsigned char)(2 + i % 3);
	}
	for (int i = 0; i < 6; i++) {
		step = i % 2 ? pad_b : pad_a;
		step(i);
		said[n++] = (unsigned char)(5 + i % 2);
	}
	signal(SIGALRM, on_alarm);
	for (int i = 0; i < 2; i++) {
		raise(SIGALRM);
		said[n++] = 7;
		path_a(i);
		said[n++] = 0;
	}
	for (int i = 0; i < n; i++)
		puts(names[said[i]]);
	cudnnDestroyTensorDescriptor(t);
	return 0;
}
