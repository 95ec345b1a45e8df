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

/* Values an attribute keeps (a fraction is two), and elements a call's array shows, at most. */
#define SPY_BATTR_VALUES 16
/* Bytes of a CUDNN_TYPE_CHAR array a call's record shows, at most. */
#define SPY_BATTR_STRING_MAX 1024

/* How many values of `count` elements of type t the backend keeps in a descriptor's text. */
static inline int64_t
spy_battr_stored(const struct spy_battr_type *t, int64_t count)
{
	int64_t per = t->kind == SPY_BV_FRACTION ? 2 : 1;

	return count <= 0 ? 0 : count >= SPY_BATTR_VALUES || count * per >= SPY_BATTR_VALUES ? SPY_BATTR_VALUES
												 : count * per;
}

struct spy_line;

/*
 * How an element that names an object (a handle, a backend descriptor) is
 * shown: by the library from the object, by the command from the text its
 * record holds. `index`: the element's place in the attribute's list.
 */
struct spy_battr_show {
	void (*object)(struct spy_line *l, const struct spy_battr_type *t, int64_t v, int index, void *ctx);
	void *ctx;
};

/* One element as JSON (a float or double by its double's bits, an enum by its name). */
void spy_battr_value_json(struct spy_line *l, const struct spy_battr_type *t, int64_t v, int index,
			  const struct spy_battr_show *how);
/*
 * An attribute as a descriptor's text holds it: `count` elements, whose
 * first `stored` values are v; one element as itself, several as a list,
 * {"count":N,"values":[...]} when not all are kept.
 */
void spy_battr_kept_json(struct spy_line *l, const struct spy_battr_type *t, int64_t count, int64_t stored,
			 const int64_t *v, const struct spy_battr_show *how);
/*
 * A call's array of elements at `addr`: {"ptr":...,"values":[...]} with the
 * first SPY_BATTR_VALUES elements (v: their values, two a fraction) and
 * "count" past them; for CUDNN_TYPE_CHAR, `str` (len bytes, no NUL) as
 * {"ptr":...,"string":...}, "cut" when count says there was more.
 */
void spy_battr_array_json(struct spy_line *l, const struct spy_battr_type *t, uint64_t addr, int64_t count,
			  const int64_t *v, const char *str, size_t len, const struct spy_battr_show *how);

#endif
