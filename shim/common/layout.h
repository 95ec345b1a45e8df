/*
 * Tensor layouts by name, from dimensions and strides: what the spy's
 * signatures and `cudnnspy repro --signature` both say of a tensor.
 */
#ifndef SPY_LAYOUT_H
#define SPY_LAYOUT_H

#include <stdint.h>

/* The most dimensions a layout is named for (cuDNN's tensors have at most 8). */
#define SPY_LAYOUT_MAX_DIMS 8

/* NCHW-like names for a packed layout of `nd` dimensions, channels first or last. */
const char *spy_layout_name(int channels_last, int nd);
/* The name of the packed layout these strides describe (channels first, else last); NULL when they describe none. */
const char *spy_layout_of(int nd, const int64_t *dims, const int64_t *strides);

#endif
