/*
 * How the decoders name what they see: signature text ("fwd x=float:8x16x32x32:NCHW
 * ... pad=1x1 ..."), built in bounded buffers that never overflow, and the
 * backend ids and knob lists as the records write them. A leaf shared by
 * algo.c and backend.c.
 */
#include "core.h"
#include "objects.h"
#include "sigtext.h"
#include "layout.h"

#include <stdio.h>
#include <string.h>

/* ---- Text ---- */

void
spy_text_init(struct spy_text *t, char *buf, size_t cap)
{
	t->p = buf;
	t->len = 0;
	t->cap = cap;
	t->cut = 0;
	buf[0] = 0;
}

void
spy_text_add(struct spy_text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->len + n >= t->cap) {
		n = t->cap - 1 - t->len;
		t->cut = 1;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = 0;
}

void
spy_text_mark_cut(struct spy_text *t)
{
	if (t->cut && t->cap > 4 && t->len >= 3) {
		memcpy(t->p + t->len - 3, "...", 3);
		t->p[t->len] = 0;
	}
}

void
spy_text_i64(struct spy_text *t, int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%lld", (long long)v);
	spy_text_add(t, b);
}

void
spy_text_lower(struct spy_text *t, const char *s, const char *prefix)
{
	char b[96];
	size_t n = strlen(prefix), i;

	if (!s) {
		spy_text_add(t, "?");
		return;
	}
	if (strncmp(s, prefix, n) == 0)
		s += n;
	for (i = 0; s[i] && i < sizeof(b) - 1; i++)
		b[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	b[i] = 0;
	spy_text_add(t, b);
}

void
spy_text_dtype(struct spy_text *t, int64_t dtype)
{
	spy_text_lower(t, spy_enum_name(_SPY_ENUM_cudnnDataType_t, dtype, 0), "CUDNN_DATA_");
}

static void
text_dims(struct spy_text *t, int n, const int64_t *v)
{
	for (int i = 0; i < n; i++) {
		if (i)
			spy_text_add(t, "x");
		spy_text_i64(t, v[i]);
	}
}

void
spy_text_tensor(struct spy_text *t, int64_t dtype, int nd, const int64_t *dims, const int64_t *strides,
		const char *format)
{
	spy_text_dtype(t, dtype);
	spy_text_add(t, ":");
	text_dims(t, nd, dims);
	if (format) {
		spy_text_add(t, ":");
		spy_text_add(t, format);
	} else if (strides) {
		spy_text_add(t, ":");
		const char *layout = spy_layout_of(nd, dims, strides);

		if (layout) {
			spy_text_add(t, layout);
		} else {
			spy_text_add(t, "strides=");
			text_dims(t, nd, strides);
		}
	}
}

int
spy_same_i64(int n, const int64_t *a, const int64_t *b)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

void
spy_text_conv(struct spy_text *t, int nd, const int64_t *pre, const int64_t *post, const int64_t *stride,
	      const int64_t *dilation, int64_t mode, int64_t compute)
{
	spy_text_add(t, "pad=");
	text_dims(t, nd, pre);
	if (post && !spy_same_i64(nd, pre, post)) {
		spy_text_add(t, " post_pad=");
		text_dims(t, nd, post);
	}
	spy_text_add(t, " stride=");
	text_dims(t, nd, stride);
	spy_text_add(t, " dilation=");
	text_dims(t, nd, dilation);
	spy_text_add(t, " mode=");
	spy_text_lower(t, spy_enum_name(_SPY_ENUM_cudnnConvolutionMode_t, mode, 0), "CUDNN_");
	spy_text_add(t, " compute=");
	spy_text_dtype(t, compute);
}

const char *
spy_op_name(int op)
{
	static const char *const names[] = { "fwd", "bwd-data", "bwd-filter", "bias-act", "graph" };

	return op >= 0 && op < SPY_OP_COUNT ? names[op] : "?";
}

/* ---- Backend ids and knobs, as the records write them ---- */

void
spy_backend_id_json(struct spy_line *l, unsigned num)
{
	char b[32];

	if (!num) {
		spy_line_lit(l, "null");
		return;
	}
	snprintf(b, sizeof(b), "backend#%u", num);
	spy_line_name(l, b);
}

void
spy_backend_knobs_json(struct spy_line *l, const int64_t *kinds, const int64_t *values, int n)
{
	if (n < 0) {
		spy_line_lit(l, "null");
		return;
	}
	spy_line_char(l, '[');
	for (int k = 0; k < n; k++) {
		const char *name = spy_enum_name(_SPY_ENUM_cudnnBackendKnobType_t, kinds[k], 0);

		if (k)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"type\":");
		if (name)
			spy_line_name(l, name);
		else
			spy_line_i64(l, kinds[k]);
		spy_line_lit(l, ",\"value\":");
		spy_line_i64(l, values[k]);
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}
