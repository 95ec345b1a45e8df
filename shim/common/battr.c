/*
 * The backend API's attribute types: how their elements are laid out and
 * named, and how they are shown as JSON, by the library (backend.c) and by
 * the command reading format 2 (cli/decode/records.c) alike (battr.h).
 */
#include "battr.h"
#include "buf.h"

const struct spy_battr_type spy_battr_types[SPY_BATTR_NTYPES] = {
	[CUDNN_TYPE_HANDLE] = { SPY_BV_HANDLE, 8, -1 },
	[CUDNN_TYPE_DATA_TYPE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnDataType_t },
	[CUDNN_TYPE_BOOLEAN] = { SPY_BV_BOOL, 1, -1 },
	[CUDNN_TYPE_INT64] = { SPY_BV_INT, 8, -1 },
	[CUDNN_TYPE_FLOAT] = { SPY_BV_FLOAT, 4, -1 },
	[CUDNN_TYPE_DOUBLE] = { SPY_BV_DOUBLE, 8, -1 },
	[CUDNN_TYPE_VOID_PTR] = { SPY_BV_PTR, 8, -1 },
	[CUDNN_TYPE_CONVOLUTION_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnConvolutionMode_t },
	[CUDNN_TYPE_HEUR_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendHeurMode_t },
	[CUDNN_TYPE_KNOB_TYPE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendKnobType_t },
	[CUDNN_TYPE_NAN_PROPOGATION] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnNanPropagation_t },
	[CUDNN_TYPE_NUMERICAL_NOTE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendNumericalNote_t },
	[CUDNN_TYPE_LAYOUT_TYPE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendLayoutType_t },
	[CUDNN_TYPE_ATTRIB_NAME] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendAttributeName_t },
	[CUDNN_TYPE_POINTWISE_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnPointwiseMode_t },
	[CUDNN_TYPE_BACKEND_DESCRIPTOR] = { SPY_BV_DESC, 8, -1 },
	[CUDNN_TYPE_GENSTATS_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnGenStatsMode_t },
	[CUDNN_TYPE_BN_FINALIZE_STATS_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBnFinalizeStatsMode_t },
	[CUDNN_TYPE_REDUCTION_OPERATOR_TYPE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnReduceTensorOp_t },
	[CUDNN_TYPE_BEHAVIOR_NOTE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendBehaviorNote_t },
	[CUDNN_TYPE_TENSOR_REORDERING_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendTensorReordering_t },
	[CUDNN_TYPE_RESAMPLE_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnResampleMode_t },
	[CUDNN_TYPE_PADDING_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnPaddingMode_t },
	[CUDNN_TYPE_INT32] = { SPY_BV_INT, 4, -1 },
	[CUDNN_TYPE_CHAR] = { SPY_BV_CHAR, 1, -1 },
	[CUDNN_TYPE_SIGNAL_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnSignalMode_t },
	[CUDNN_TYPE_FRACTION] = { SPY_BV_FRACTION, 16, -1 },
	[CUDNN_TYPE_NORM_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendNormMode_t },
	[CUDNN_TYPE_NORM_FWD_PHASE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnBackendNormFwdPhase_t },
	[CUDNN_TYPE_RNG_DISTRIBUTION] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnRngDistribution_t },
	[CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE] = { SPY_BV_ENUM, 4, _SPY_ENUM_cudnnMoeGroupedMatmulMode_t },
};

void
spy_battr_value_json(struct spy_line *l, const struct spy_battr_type *t, int64_t v, int index,
		     const struct spy_battr_show *how)
{
	const char *name;

	switch (t->kind) {
	case SPY_BV_BOOL:
		spy_line_raw(l, v ? "true" : "false");
		return;
	case SPY_BV_FLOAT:
	case SPY_BV_DOUBLE:
		spy_line_double(l, spy_battr_double(v));
		return;
	case SPY_BV_PTR:
		if (v)
			spy_line_hex(l, (uint64_t)v);
		else
			spy_line_lit(l, "null");
		return;
	case SPY_BV_HANDLE:
	case SPY_BV_DESC:
		how->object(l, t, v, index, how->ctx);
		return;
	case SPY_BV_ENUM:
		name = spy_enum_name(t->enum_id, v, 0);
		if (name)
			spy_line_name(l, name);
		else
			spy_line_i64(l, v);
		return;
	}
	spy_line_i64(l, v);
}

/* n elements (a fraction: a pair each) as a JSON list. */
static void
list_json(struct spy_line *l, const struct spy_battr_type *t, const int64_t *v, int64_t n,
	  const struct spy_battr_show *how)
{
	spy_line_char(l, '[');
	for (int64_t i = 0; i < n; i++) {
		if (i)
			spy_line_char(l, ',');
		if (t->kind == SPY_BV_FRACTION) {
			spy_line_char(l, '[');
			spy_line_i64(l, v[2 * i]);
			spy_line_char(l, ',');
			spy_line_i64(l, v[2 * i + 1]);
			spy_line_char(l, ']');
		} else {
			spy_battr_value_json(l, t, v[i], (int)i, how);
		}
	}
	spy_line_char(l, ']');
}

void
spy_battr_kept_json(struct spy_line *l, const struct spy_battr_type *t, int64_t count, int64_t stored,
		    const int64_t *v, const struct spy_battr_show *how)
{
	int64_t n = stored / (t->kind == SPY_BV_FRACTION ? 2 : 1);
	int cut = count > n;

	if (count == 1 && n == 1 && t->kind != SPY_BV_FRACTION) {
		spy_battr_value_json(l, t, v[0], 0, how);
		return;
	}
	if (cut) {
		spy_line_lit(l, "{\"count\":");
		spy_line_i64(l, count);
		spy_line_lit(l, ",\"values\":");
	}
	list_json(l, t, v, n, how);
	if (cut)
		spy_line_char(l, '}');
}

void
spy_battr_array_json(struct spy_line *l, const struct spy_battr_type *t, uint64_t addr, int64_t count,
		     const int64_t *v, const char *str, size_t len, const struct spy_battr_show *how)
{
	spy_line_lit(l, "{\"ptr\":");
	spy_line_hex(l, addr);
	if (t->kind == SPY_BV_CHAR) {
		char b[SPY_BATTR_STRING_MAX + 1];

		if (len > SPY_BATTR_STRING_MAX)
			len = SPY_BATTR_STRING_MAX;
		memcpy(b, str, len);
		b[len] = 0;
		spy_line_lit(l, ",\"string\":");
		spy_line_str(l, b);
		/* Cut where the record stopped, not where a NUL ended the text. */
		if (count > 0 && (uint64_t)count > len && strlen(b) == len)
			spy_line_lit(l, ",\"cut\":true");
		spy_line_char(l, '}');
		return;
	}
	spy_line_lit(l, ",\"values\":");
	list_json(l, t, v, count < 0 ? 0 : count < SPY_BATTR_VALUES ? count : SPY_BATTR_VALUES, how);
	if (count > SPY_BATTR_VALUES) {
		spy_line_lit(l, ",\"count\":");
		spy_line_i64(l, count);
	}
	spy_line_char(l, '}');
}
