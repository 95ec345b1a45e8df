/*
 * The backend API's attribute types (cudnnBackendAttributeType_t): the kind
 * and size of an element, and the enum its values name. backend.c decodes
 * what the program sets with it; the command reads format 2's packed
 * cudnnBackendSetAttribute calls with it.
 */
#ifndef SPY_BATTR_H
#define SPY_BATTR_H

#include <stdint.h>
#include <string.h>

#include "spy-api.h"
#include "g_cudnn_types.h"

enum spy_battr_kind { SPY_BV_INT, SPY_BV_BOOL, SPY_BV_FLOAT, SPY_BV_DOUBLE, SPY_BV_PTR, SPY_BV_HANDLE, SPY_BV_DESC,
	SPY_BV_ENUM, SPY_BV_CHAR, SPY_BV_FRACTION };

struct spy_battr_type {
	unsigned char kind, size;	/* spy_battr_kind; bytes an element takes (a fraction: two int64) */
	short enum_id;			/* SPY_BV_ENUM: the enum its values name */
};

/* One past the highest cudnnBackendAttributeType_t the table knows. */
#define SPY_BATTR_NTYPES (CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE + 1)
extern const struct spy_battr_type spy_battr_types[SPY_BATTR_NTYPES];

/* A float or double element as backend.c keeps it (the double's bits) and format 2 packs it. */
static inline double
spy_battr_double(int64_t bits)
{
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

#endif
