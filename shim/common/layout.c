/* Tensor layouts by name (layout.h). */
#include "layout.h"

#include <stddef.h>

const char *
spy_layout_name(int channels_last, int nd)
{
	static const char *const first[] = { "NC", "NCW", "NCHW", "NCDHW" };
	static const char *const last[] = { "NC", "NWC", "NHWC", "NDHWC" };

	if (nd < 2 || nd > 5)
		return channels_last ? "channels-last" : "packed";
	return channels_last ? last[nd - 2] : first[nd - 2];
}

/* Whether the strides describe a packed layout, channels first (NCHW) or last (NHWC). */
static int
packed(int nd, const int64_t *dims, const int64_t *strides, int channels_last)
{
	int64_t want[SPY_LAYOUT_MAX_DIMS], acc = 1;

	if (nd < 1 || nd > SPY_LAYOUT_MAX_DIMS)
		return 0;
	if (!channels_last || nd < 3) {
		if (channels_last)
			return 0;
		for (int i = nd - 1; i >= 0; i--) {
			want[i] = acc;
			acc *= dims[i];
		}
	} else {
		want[1] = 1;
		acc = dims[1];
		for (int i = nd - 1; i >= 2; i--) {
			want[i] = acc;
			acc *= dims[i];
		}
		want[0] = acc;
	}
	/* A dimension of size 1 may have any stride. */
	for (int i = 0; i < nd; i++)
		if (strides[i] != want[i] && dims[i] != 1)
			return 0;
	return 1;
}

const char *
spy_layout_of(int nd, const int64_t *dims, const int64_t *strides)
{
	if (packed(nd, dims, strides, 0))
		return spy_layout_name(0, nd);
	if (packed(nd, dims, strides, 1))
		return spy_layout_name(1, nd);
	return NULL;
}
