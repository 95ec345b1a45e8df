/*
 * How the decoders name what they see (sigtext.c): signature text, built in
 * bounded buffers, and the backend ids and knob lists as the records write
 * them. Pure: no state, no I/O, no call into any other part of the spy.
 */
#ifndef SPY_SIGTEXT_H
#define SPY_SIGTEXT_H

#include <stddef.h>
#include <stdint.h>

struct spy_line;

/* A signature's text is cut at this many bytes (the cut text is still a fine key). */
#define SPY_SIG_LEN 448
#define SPY_KNOBS_MAX 12

/* A bounded text being built: appends past the end are dropped, never overflow. */
struct spy_text {
	char *p;
	size_t len, cap;
	int cut;		/* something was dropped */
};

void spy_text_init(struct spy_text *t, char *buf, size_t cap);
void spy_text_add(struct spy_text *t, const char *s);
/* When something was dropped, the text ends in "..." instead, so that a cut signature says it is one. */
void spy_text_mark_cut(struct spy_text *t);
void spy_text_i64(struct spy_text *t, int64_t v);
/* "float", "half", "bfloat16": a cudnnDataType_t in lower case, without CUDNN_DATA_. */
void spy_text_dtype(struct spy_text *t, int64_t dtype);
/* A tensor in a signature: "float:8x16x32x32:NCHW". `format` names the layout; without one, it comes from the strides. */
void spy_text_tensor(struct spy_text *t, int64_t dtype, int nd, const int64_t *dims, const int64_t *strides,
		     const char *format);
/* The convolution part: "pad=1x1 stride=1x1 dilation=1x1 mode=cross_correlation compute=float". */
void spy_text_conv(struct spy_text *t, int nd, const int64_t *pre, const int64_t *post, const int64_t *stride,
		   const int64_t *dilation, int64_t mode, int64_t compute);

enum spy_conv_op { SPY_OP_FWD, SPY_OP_BWD_DATA, SPY_OP_BWD_FILTER, SPY_OP_BIAS_ACT, SPY_OP_GRAPH, SPY_OP_COUNT };
/* "fwd", "bwd-data", "bwd-filter", "bias-act", "graph". */
const char *spy_op_name(int op);
/* "CUDNN_CROSS_CORRELATION" with prefix "CUDNN_" -> "cross_correlation"; "?" for NULL. */
void spy_text_lower(struct spy_text *t, const char *s, const char *prefix);
/* Whether the first n of a and b are equal. */
int spy_same_i64(int n, const int64_t *a, const int64_t *b);

/* A backend descriptor's id as JSON ("backend#3"), or null for 0. */
void spy_backend_id_json(struct spy_line *l, unsigned num);
/* Knob choices as JSON: [{"type": name, "value": n}, ...], or null when n < 0. */
void spy_backend_knobs_json(struct spy_line *l, const int64_t *kinds, const int64_t *values, int n);

#endif
