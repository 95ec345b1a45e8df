#ifndef SPY_RECBIN_H
#define SPY_RECBIN_H

#include "pyframes.h"
#include "sink.h"
#include "spy.h"

/* Which functions' calls can be packed: set once from the API description. */
void spy_recbin_init(void);
/*
 * Format 2: writes a traced call that succeeded as a packed frame (recfmt.h),
 * its descriptors and handles as texts written once, and its stack (nips
 * return addresses, or none) as modules and offsets. 0 when it cannot (the
 * backend API, a struct, a text buffer or a padding fill behind a pointer; a
 * text too long; no buffer; a module map that cannot be used): the caller
 * writes the JSON record instead.
 */
int spy_recbin_call(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		    void *const *ips, int nips);
/*
 * spy_recbin_call of a Set that succeeded (its first parameter the descriptor, remembered here by spy_obj_set
 * first, whatever the answer), without a stack: the one lookup of the descriptor both need.
 */
int spy_recbin_call_set(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args);
/*
 * A plain call's packer, generated (recbin.c's g_plain.h): a function of plain parameters, written as one call
 * frame after the texts it names. `mode`: SPY_PLAIN_SET, a Set, remembered first as spy_recbin_call_set does;
 * SPY_PLAIN_COUNT, the call counted too, once its record is written (see recbin.c). NULL once it is written (or
 * dropped, as the sink drops what it cannot write); `c` itself when it cannot be (a text too long: nothing
 * counted), so that a caller with other ways to try keeps nothing in registers across the call.
 */
enum { SPY_PLAIN_SET = 1, SPY_PLAIN_COUNT = 2 };
typedef const struct spy_call *(*spy_plain_fn)(struct spy_thread *th, const struct spy_call *c, long status,
						const union spy_arg *args, int mode);
extern spy_plain_fn spy_recbin_plain_fn[_SPY_FN_COUNT];
/* A thread whose buffer has text places, without Python frames to name: a plain call's packer may write. */
static inline int
spy_recbin_is_plain(const struct spy_thread *th, const struct spy_call *c, const union spy_arg *args)
{
	return spy_recbin_plain_fn[c->id] && th->buf && th->buf->py_call == NULL && th->index != ~0u &&
	       (args || !spy_fn_info[c->id].nparams);
}
/*
 * Whether a traced call may take its lane (slowpath.c): the plain packer alone (spy_recbin_plain_fn, with
 * SPY_PLAIN_COUNT), format 2 written to a file. errno is the packer's to keep: only its slow parts can set it.
 * A file given up on, in this process or its parent, leaves the call to the general ways (spy_sink_enabled), so
 * that this test calls nothing and the lane saves no registers.
 */
static inline int
spy_recbin_plain_lane(const struct spy_thread *th, const struct spy_call *c, const union spy_arg *args)
{
	return spy_recbin_is_plain(th, c, args) && spy_config.pack_lane && spy_config.output[0] &&
	       !__atomic_load_n(&spy_sink_gave_up, __ATOMIC_ACQUIRE);
}
/* The same, with the calling thread's Python frames (CUDNNSPY_PYTHON=traced; at least one) as a text written once per stack. */
int spy_recbin_call_python(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
			   void *const *ips, int nips, const struct spy_pystack *py);

/* What a failure's record says besides the call itself (slowpath.c). */
struct spy_recbin_failure {
	const char *message;	/* cuDNN's, the injected one or the CUDA error's; NULL when none */
	const char *why;	/* what the spy can see about why; NULL or "" when nothing */
	int cuda_error;		/* found when synchronizing after the call; 0 */
	int injected, probing;
	int no_function;	/* the spy answered: the copy has no such function, or there is no real cuDNN */
	unsigned recent_from;	/* the recent calls: th->flight[(recent_from + i) % SPY_FLIGHT_MAX], oldest first */
	unsigned nrecent;
	const struct spy_pystack *py;	/* the calling thread's Python frames; NULL when none */
};
/*
 * Format 2: a failed call as a packed frame, its arguments as the JSON
 * failure record shows them (descriptors with their whole state, the input
 * arrays copied so that a bad pointer cannot fault, no out-values), written
 * out at once. 0 when it cannot (the reasons of spy_recbin_call, the
 * backend's attribute calls, a CUDA error, a message too long): the caller
 * writes JSON.
 */
int spy_recbin_failure(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		       void *const *ips, int nips, const struct spy_recbin_failure *fail);
/* Format 2: a call's GPU time (gpu.c) as a packed frame in th's buffer; 0 when it cannot. */
int spy_recbin_gpu(struct spy_thread *th, unsigned fn, unsigned copy, long tid, uint64_t t_ns, uint64_t gpu_ns);

#endif
