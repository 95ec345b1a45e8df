/*
 * Format 2's packed calls (docs/record-format.md). A traced call that
 * succeeded goes out as its function id, the copy, the status, the
 * duration and one varint per argument (arrays and out-values with their
 * count, scaling factors as a double): no names, no keys, no decimal
 * digits. A handle or descriptor argument is the text the JSON record
 * would show for it ("tensor#1" and its shape), written once as a text
 * frame and named by its id after, for as long as the object's remembered
 * state does not change (objects.c's stamp). An id is a place in the
 * thread's cache of texts (its block's number times the cache's size, plus
 * the place), written again when the place gets another text: so the
 * reader holds as many texts as threads had places, however long the
 * process runs. The command turns the frames back into the JSON records of
 * format 1, byte for byte (cli/decode/records.c).
 */
#include "audit.h"
#include "core.h"
#include "backend.h"
#include "battr.h"
#include "modules.h"
#include "objects.h"
#include "recbin.h"
#include "recfmt.h"
#include "sink.h"
#include "stack.h"
#include "symtab.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* Per function: 1 packed by its parameters' kinds, SETATTR by setattr(), 0 not packed. */
static unsigned char packable[_SPY_FN_COUNT];
enum { SETATTR = 2, GETATTR };
/*
 * A backend descriptor's kind as the API tables name it: the text cache tells kinds apart by their address,
 * so that the texts written here and those of other backend calls' arguments are the same entries.
 */
#define BACKEND_KIND (spy_fn_info[_SPY_FN_cudnnBackendSetAttribute].params[0].desc_kind)
/* The most parameters a packed call has (the API's longest function has 33): more go out as JSON. */
#define PACK_PARAMS 40

static void plain_init(void);

void
spy_recbin_init(void)
{
	for (unsigned i = 0; i < _SPY_FN_COUNT; i++) {
		const struct spy_fn_info *f = &spy_fn_info[i];
		int ok = 1;

		/* What a pointer points to is packed as numbers or texts; structs, strings and scaling factors stay JSON. */
		for (int k = 0; ok && k < f->nparams; k++)
			ok = f->params[k].kind != SPY_ARG_PTR || spy_rec_ptr_shape(&f->params[k]) != SPY_REC_PTR_NO;
		packable[i] = (unsigned char)ok;
	}
	/* Their arrays are decoded by the attribute type, as backend.c decodes them. */
	packable[_SPY_FN_cudnnBackendSetAttribute] = SETATTR;
	packable[_SPY_FN_cudnnBackendGetAttribute] = GETATTR;
	plain_init();
}

#define PLACES ((unsigned)(sizeof(((struct spy_buf *)0)->texts) / sizeof(((struct spy_buf *)0)->texts[0])))
/* Where a text may be found: this many places from the object's own. */
#define WAYS 4

/*
 * An object's own place. Mixed, not the address's low bits: modules are named by their load address, which is
 * page-aligned, and a sanitizer's heap aligns its blocks widely, so that low bits put them all in one place,
 * where each text pushed the others out and every failure wrote its stack's module texts again.
 */
static unsigned
home_of(const void *ptr)
{
	return (unsigned)((((uint64_t)(uintptr_t)ptr >> 4) * 0x9E3779B97F4A7C15ull) >> 58) % PLACES;
}

/* The place of a text this thread wrote for (ptr, kind, stamp, state) and still holds; NULL when none. */
static inline __attribute__((always_inline)) struct spy_text_slot *
cached_slot(struct spy_buf *b, const void *ptr, const char *kind, uint64_t stamp, int state, uint64_t *used)
{
	unsigned home = home_of(ptr);

	for (unsigned w = 0; w < WAYS; w++) {
		struct spy_text_slot *t = &b->texts[(home + w) % PLACES];

		if (t->id && t->ptr == ptr && t->kind == kind && t->stamp == stamp && t->major == spy_names_major &&
		    t->state == state) {
			*used |= 1ull << ((home + w) % PLACES);
			return t;
		}
	}
	return NULL;
}

static inline __attribute__((always_inline)) long
cached(struct spy_buf *b, const void *ptr, const char *kind, uint64_t stamp, int state, uint64_t *used)
{
	struct spy_text_slot *t = cached_slot(b, ptr, kind, stamp, state, used);

	return t ? t->id : 0;
}

/*
 * Writes the text in b->line as a text frame, in a place of the cache no other argument of this call uses (the
 * reader knows an id by its latest text, and one call's arguments are read after all of their texts): its id, or
 * -1 when no place is left or the text is too long. `keep`: the cache may name it again.
 */
static long
define(struct spy_thread *th, struct spy_buf *b, const void *ptr, const char *kind, uint64_t stamp, int state,
       int keep, uint64_t *used)
{
	unsigned home = home_of(ptr), place = PLACES, empty = PLACES, open = 0, nopen = 0;
	struct spy_line *l = &b->line;
	struct spy_text_slot *t;
	uint8_t body[SPY_REC_TEXT_MAX];
	unsigned id;
	size_t n;

	/*
	 * Among the places a lookup searches, not named by this call: the object's older text, else one never
	 * used, else each in turn, so that objects whose places overlap do not push each other out at every call.
	 */
	for (unsigned w = 0; w < WAYS && place == PLACES; w++) {
		unsigned p = (home + w) % PLACES;

		if (*used & (1ull << p))
			continue;
		if (b->texts[p].kind == kind && b->texts[p].ptr == ptr)
			place = p;
		else if (!b->texts[p].kind && empty == PLACES)
			empty = p;
		open |= 1u << w;
		nopen++;
	}
	if (place == PLACES && empty < PLACES)
		place = empty;
	if (place == PLACES && nopen) {
		unsigned k = b->text_turn++ % nopen;

		for (unsigned w = 0; w < WAYS && place == PLACES; w++)
			if ((open & (1u << w)) && k-- == 0)
				place = (home + w) % PLACES;
	}
	/* Every place a lookup searches is this call's already: any other (found only by its id). */
	for (unsigned w = WAYS; w < PLACES && place == PLACES; w++)
		if (!(*used & (1ull << ((home + w) % PLACES))))
			place = (home + w) % PLACES;
	if (place == PLACES || l->overflow || l->len > sizeof(body) - 10)
		return -1;
	t = &b->texts[place];
	/* 0 is NULL. */
	id = th->index * PLACES + place + 1;
	n = spy_rec_put_uv(body, id);
	memcpy(body + n, l->data, l->len);
	spy_sink_commit_frame(th, SPY_REC_TEXT, body, n + l->len, 0, NULL);
	/* The place holds this text now; a state that cannot be kept leaves it to be written again next time. */
	t->ptr = ptr;
	t->kind = kind;
	t->stamp = stamp;
	t->major = spy_names_major;
	t->state = state;
	t->id = keep ? id : 0;
	*used |= 1ull << place;
	return id;
}

/* A text's kind of description: with what was set on the object; as a failure's record shows it (everything). */
enum { TEXT_STATE = 1, TEXT_FULL = 2 };

/* text_id's text written, when the cache does not hold it. */
static __attribute__((noinline)) long
text_written(struct spy_thread *th, struct spy_buf *b, const char *kind, int state, const void *ptr, int keep,
	     uint64_t stamp, uint64_t *used)
{
	int saved = errno;
	long id;

	spy_line_reset(&b->line);
	spy_obj_describe(&b->line, ptr, kind, state & TEXT_STATE,
			 state & TEXT_FULL ? 0 : SPY_ARGS_AFTER_SUCCESS | SPY_ARGS_BRIEF);
	id = define(th, b, ptr, kind, stamp, state, keep, used);
	errno = saved;
	return id;
}

/* text_id of a stamp taken: the cache's id, else the text written (out of line, so that a hit saves no registers). */
static inline __attribute__((always_inline)) long
text_id_stamped(struct spy_thread *th, struct spy_buf *b, const char *kind, int state, const void *ptr, int keep,
		uint64_t stamp, uint64_t *used)
{
	long id;

	if (keep && (id = cached(b, ptr, kind, stamp, state, used)))
		return id;
	return text_written(th, b, kind, state, ptr, keep, stamp, used);
}

/*
 * The text id of a handle or descriptor, writing its text first when this
 * thread has not; -1 when none. `state`: TEXT_STATE with what was set on it
 * (an argument), else its id alone (an element behind a pointer); TEXT_FULL
 * as a failure shows it. `used`: the places this call's arguments name already.
 */
static long
text_id(struct spy_thread *th, struct spy_buf *b, int handle, const char *desc_kind, int state, const void *ptr,
	uint64_t *used)
{
	const char *kind = handle ? "handle" : desc_kind ? desc_kind : "descriptor";
	uint64_t stamp;
	int keep;

	if (!ptr)
		return 0;
	/* An id alone changes less often than what was set on the object. */
	keep = state & TEXT_STATE ? spy_obj_stamp(ptr, &stamp) : spy_obj_id_stamp(ptr, &stamp);
	return text_id_stamped(th, b, kind, state, ptr, keep, stamp, used);
}

/*
 * A plain call: every parameter a number, a handle, a descriptor, an address
 * or an input int array whose count another parameter holds (most Set
 * calls, which a framework makes before every operation). Its packer is
 * generated from the API description (gen.py's g_plain.h: straight code, no
 * look at the API tables per call) and used only where each parameter's op
 * there is the one these tables give (plain_op): any other call, or one with
 * a stack or Python frames, takes pack()'s general way to the same frame.
 */
/* What a plain packer knows besides the arguments: the text places named, and a stamp just taken (a Set's). */
struct plain_ctx {
	uint64_t used;
	const void *known;
	uint64_t known_stamp;
	int known_keep;
};
/* The generated packers (spy_plain_fn): NULL where a function's calls are not plain. */
spy_plain_fn spy_recbin_plain_fn[_SPY_FN_COUNT];

/* A parameter's op as g_plain.h spells it: i, e (an int32 enum), u, d, h, o (a descriptor), a (an address), n. */
static char
plain_op(const struct spy_fn_info *f, const struct spy_param_info *p)
{
	switch (p->kind) {
	case SPY_ARG_INT:
		return 'i';
	case SPY_ARG_ENUM:
		return 'e';
	case SPY_ARG_UINT:
		return 'u';
	case SPY_ARG_DOUBLE:
		return 'd';
	case SPY_ARG_HANDLE:
		return 'h';
	case SPY_ARG_DESC:
		return 'o';
	case SPY_ARG_PTR:
		break;
	default:
		return 'a';
	}
	if (spy_rec_ptr_shape(p) == SPY_REC_PTR_ADDRESS)
		return 'a';
	/* Input int arrays counted by an int argument alone (its index is g_plain.h's too). */
	if (spy_rec_ptr_shape(p) != SPY_REC_PTR_VALUES || p->elem != SPY_ARG_INT || p->elem_size != 4 ||
	    spy_param_counted_by(f, (int)(p - f->params)) < 0)
		return 0;
	return 'n';
}

/* An input int array after its address: a count + 1 (0: none known) and its first SPY_REC_VALUES elements. */
static uint8_t *
plain_ints(const int32_t *at, int64_t count, uint8_t *o)
{
	if (!at)
		return o;
	if (count > SPY_REC_VALUES)
		count = SPY_REC_VALUES;
	o = spy_rec_put_uvp(o, count < 0 ? 0 : (uint64_t)count + 1);
	for (int64_t k = 0; k < count; k++) {
		int32_t e;

		memcpy(&e, at + k, 4);
		o = spy_rec_put_uvp(o, spy_rec_zigzag(e));
	}
	return o;
}

/* text_id, with the stamp the context knows. */
static inline __attribute__((always_inline)) long
plain_obj(struct spy_thread *th, struct spy_buf *b, struct plain_ctx *x, int handle, const char *desc_kind, int state,
	  const void *ptr)
{
	if (ptr && ptr == x->known)
		return text_id_stamped(th, b, handle ? "handle" : desc_kind ? desc_kind : "descriptor", state, ptr,
				       x->known_keep, x->known_stamp, &x->used);
	return text_id(th, b, handle, desc_kind, state, ptr, &x->used);
}

/* The fixed fields of a call or failure frame: function, copy, the names' major, status and duration. */
#define PLAIN_HEAD_MAX 32
static inline __attribute__((always_inline)) uint8_t *
call_head_at(unsigned id, const struct spy_call *c, long status, uint8_t *o)
{
	o = spy_rec_put_uvp(o, id);
	o[0] = (uint8_t)c->copy;
	o[1] = (uint8_t)spy_names_major;
	/* A traced call's status is 0, one byte. */
	if (SPY_LIKELY(status == 0))
		o[2] = 0, o += 3;
	else
		o = spy_rec_put_uvp(o + 2, spy_rec_zigzag(status));
	return spy_rec_put_uvp(o, c->t0 ? c->t1 - c->t0 + 1 : 0);
}

static inline __attribute__((always_inline)) size_t
call_head(unsigned id, const struct spy_call *c, long status, uint8_t *body)
{
	return (size_t)(call_head_at(id, c, status, body) - body);
}

/* A call frame's end, plain or not. */
static inline __attribute__((always_inline)) int
call_commit(struct spy_thread *th, const struct spy_call *c, struct spy_buf *b, const uint8_t *body, size_t n,
	     unsigned drops)
{
	/* A text this call names was dropped (a full disk): the call is too, rather than name what is not there. */
	if (b->drops != drops) {
		spy_sink_drop();
		return 1;
	}
	spy_sink_commit_frame(th, SPY_REC_CALL, body, n, c->t0 ? c->t0 : spy_now_ns(), NULL);
	return 1;
}

/* A handle's or descriptor's text id, its text written first when the thread has not: 0 when it cannot be. */
#define SPY_PLAIN_TEXT(k, handle, state) \
	const long id_##k = plain_obj(th, b, x, handle, spy_fn_info[id].params[k].desc_kind, state, a[k].p); \
	if (id_##k < 0) \
		return c;
#define SPY_PLAIN_TEXT_H(k) SPY_PLAIN_TEXT(k, 1, 0)
#define SPY_PLAIN_TEXT_O(k) SPY_PLAIN_TEXT(k, 0, TEXT_STATE)
#define SPY_PLAIN_I(k) o = spy_rec_put_uvp(o, spy_rec_zigzag(a[k].i));
#define SPY_PLAIN_E(k) o = spy_rec_put_uvp(o, spy_rec_zigzag((int32_t)a[k].i));
#define SPY_PLAIN_U(k) o = spy_rec_put_uvp(o, a[k].u);
#define SPY_PLAIN_D(k) memcpy(o, &a[k].d, 8), o += 8;
#define SPY_PLAIN_H(k) o = spy_rec_put_uvp(o, (uint64_t)id_##k);
#define SPY_PLAIN_O(k) SPY_PLAIN_H(k)
#define SPY_PLAIN_A(k) o = spy_rec_put_uvp(o, (uintptr_t)a[k].p);
#define SPY_PLAIN_N(k, count) o = plain_ints(a[k].p, a[count].i, spy_rec_put_uvp(o, (uintptr_t)a[k].p));
/* Per parameter an address, a count and SPY_REC_VALUES elements of 5 bytes at most. */
#define PLAIN_PARAM_MAX (2 * 10 + SPY_REC_VALUES * 5)
/* A frame written in place (gen.py's PLAIN_IN_PLACE parameters, none an array): its head and 10 bytes each. */
#define PLAIN_IN_PLACE_MAX (PLAIN_HEAD_MAX + 8 * 10)
_Static_assert(PLAIN_IN_PLACE_MAX <= SPY_SINK_CALL_MAX, "a plain frame in place has a length of one byte");
/*
 * SPY_PLAIN_SET: the call is a Set of its first parameter, remembered here first with the stamp its text then
 * names (one lookup of the descriptor for both). The texts' frames go before the call's, which is written in
 * place in the thread's block when it is short (`in_place`) and the block has room, else built here and
 * committed. errno is kept by the ways that may set it (a new block, a text written). SPY_PLAIN_COUNT: the
 * call is counted as a traced call is, with its record written, before the sink lets the block or buffer go
 * (which the exit's seal waits for).
 */
#define SPY_PLAIN(fn, ops, in_place, texts, code) \
	static const struct spy_call *plain_##fn(struct spy_thread *th, const struct spy_call *c, long status, \
						 const union spy_arg *a, int mode) \
	{ \
		const unsigned id = _SPY_FN_##fn; \
		struct spy_buf *b = th->buf; \
		struct plain_ctx ctx, *x = &ctx; \
		uint8_t frame[PLAIN_HEAD_MAX + (sizeof(ops) - 1) * PLAIN_PARAM_MAX + SPY_SINK_BODY_SLACK], *body = NULL; \
		const unsigned drops = b->drops; \
		uint64_t t_ns, *count = mode & SPY_PLAIN_COUNT ? &spy_counts_of(th, c->copy, id)->calls : NULL; \
		uint8_t *o; \
		(void)a, (void)x; \
		/* The stamp is read only with `known` set. */ \
		ctx.used = 0, ctx.known = NULL; \
		spy_names_major = __atomic_load_n(&spy_copies[c->copy].major, __ATOMIC_RELAXED); \
		if (mode & SPY_PLAIN_SET) { \
			ctx.known = a[0].p; \
			ctx.known_keep = spy_obj_set_stamp(id, a, &ctx.known_stamp); \
		} \
		texts \
		/* A text this call names was dropped (a full disk): the call is too, rather than name what is not there. */ \
		if (b->drops != drops) { \
			spy_sink_drop(); \
			if (count) \
				SPY_INC(*count); \
			return NULL; \
		} \
		t_ns = c->t0 ? c->t0 : spy_now_ns(); \
		if (in_place) \
			body = spy_sink_call_open(th, PLAIN_IN_PLACE_MAX, t_ns); \
		if (!body) \
			body = frame; \
		o = call_head_at(id, c, status, body); \
		code \
		if (body != frame) { \
			spy_sink_call_close(th, o, count); \
			return NULL; \
		} \
		spy_sink_commit_frame(th, SPY_REC_CALL, frame, (size_t)(o - frame), t_ns, count); \
		return NULL; \
	}
#include "g_plain.h"
#undef SPY_PLAIN

/* Each generated packer whose ops are the tables' (a function of no parameters has none to differ). */
static void
plain_init(void)
{
	static const struct {
		unsigned id;
		const char *ops;
		spy_plain_fn fn;
	} gen[] = {
#define SPY_PLAIN(fn, ops, in_place, texts, code) { _SPY_FN_##fn, ops, plain_##fn },
#include "g_plain.h"
#undef SPY_PLAIN
	};

	for (size_t g = 0; g < sizeof(gen) / sizeof(gen[0]); g++) {
		const struct spy_fn_info *f = &spy_fn_info[gen[g].id];
		int k = 0;

		if (packable[gen[g].id] != 1 || strlen(gen[g].ops) != (size_t)f->nparams)
			continue;
		while (k < f->nparams && plain_op(f, &f->params[k]) == gen[g].ops[k])
			k++;
		if (k == f->nparams)
			spy_recbin_plain_fn[gen[g].id] = gen[g].fn;
	}
}

_Static_assert(SPY_STACK_MAX <= SPY_REC_STACK_MAX, "the reader takes every frame the library captures");
_Static_assert(SPY_FLIGHT_MAX <= SPY_REC_RECENT_MAX, "the reader takes every recent call a failure shows");

static const char module_kind[] = "module";

/*
 * A stack frame's module as a text: its name as format 1 shows it (a JSON
 * string), a NUL, the file the command reads its symbols from, a NUL, and
 * its GNU build-id in hex (empty when it has none), so that the command names
 * no function from a file that was rebuilt since. Kept by its load address
 * and its name (the module map's names stay put).
 */
static long
module_id(struct spy_thread *th, struct spy_buf *b, const struct spy_module *m, uint64_t *used)
{
	char path[PATH_MAX];
	unsigned char bid[SPY_BUILD_ID_MAX];
	const char *file;
	size_t nbid;
	long id;

	if ((id = cached(b, (const void *)m->base, module_kind, (uintptr_t)m->name, 0, used)))
		return id;
	file = spy_stack_symbol_file(m->name, path, sizeof(path));
	nbid = spy_module_build_id(m->base, bid, sizeof(bid));
	spy_line_reset(&b->line);
	spy_line_str(&b->line, m->name);
	spy_line_char(&b->line, 0);
	spy_line_raw(&b->line, file);
	spy_line_char(&b->line, 0);
	for (size_t i = 0; i < nbid; i++) {
		spy_line_char(&b->line, "0123456789abcdef"[bid[i] >> 4]);
		spy_line_char(&b->line, "0123456789abcdef"[bid[i] & 15]);
	}
	return define(th, b, (const void *)m->base, module_kind, (uintptr_t)m->name, 0, 1, used);
}

static const char python_kind[] = "python";

/*
 * The text id of a Python stack: its frames as format 1's "python" shows
 * them, written once per distinct stack (its code objects and lines) and
 * named by its id after; -1 when it cannot be written.
 */
static long
python_id(struct spy_thread *th, struct spy_buf *b, const struct spy_pystack *py, uint64_t *used)
{
	const void *key = (const void *)(uintptr_t)spy_py_hash(py);
	long id;

	if ((id = cached(b, key, python_kind, (uintptr_t)py->code[0], 0, used)))
		return id;
	spy_line_reset(&b->line);
	spy_py_json(&b->line, py);
	return define(th, b, key, python_kind, (uintptr_t)py->code[0], 0, 1, used);
}

static size_t stack(struct spy_thread *th, struct spy_buf *b, void *const *ips, int nips, uint8_t *body, size_t n,
		    uint64_t *used, int audited);

/*
 * The stack, perhaps of no frames, then the Python frames' text id: after a
 * call's arguments (`call`: the id goes there too), or a failure's (its id
 * goes after the recent calls, from b->py_id). 0 when they cannot be written.
 */
static __attribute__((noinline)) size_t
python_tail(struct spy_thread *th, struct spy_buf *b, void *const *ips, int nips, uint8_t *body, size_t n,
	    uint64_t *used, int call)
{
	long id;

	if (!(n = stack(th, b, ips, nips, body, n, used, !call)) || (id = python_id(th, b, b->py_call, used)) < 0)
		return 0;
	b->py_id = (unsigned long)id;
	if (call)
		n += spy_rec_put_uv(body + n, (uint64_t)id);
	return n;
}

_Static_assert(SPY_STACK_MAX <= SPY_BUF_MEMO_FRAMES, "a thread keeps the modules of any stack");

/*
 * The modules of a stack: kept from the thread's last failure when it had these frames and the audit, which
 * a failure runs before its record (`audited`), has seen no object come or go since. 0, or -1 when the map
 * cannot be used.
 */
static int
modules(struct spy_buf *b, void *const *ips, int nips, struct spy_module *mods, int audited)
{
	unsigned gen = audited ? spy_audit_gen() + 1 : 0;

	if (gen && b->memo_gen == gen && b->memo_n == nips && memcmp(b->memo_ips, ips, (size_t)nips * sizeof(*ips)) == 0) {
		for (int i = 0; i < nips; i++) {
			mods[i].base = b->memo_base[i];
			mods[i].name = b->memo_name[i];
		}
		return 0;
	}
	b->memo_gen = 0;
	if (spy_modules_find(ips, nips, mods) != 0)
		return -1;
	if (gen) {
		for (int i = 0; i < nips; i++) {
			b->memo_ips[i] = ips[i];
			b->memo_base[i] = mods[i].base;
			b->memo_name[i] = mods[i].name;
		}
		b->memo_n = nips;
		b->memo_gen = gen;
	}
	return 0;
}

/* The stack after the arguments: its frames, each a module's text id (0: in none) and the offset into it. */
static size_t
stack(struct spy_thread *th, struct spy_buf *b, void *const *ips, int nips, uint8_t *body, size_t n, uint64_t *used,
      int audited)
{
	struct spy_module mods[SPY_STACK_MAX];

	if (nips > SPY_STACK_MAX)
		nips = SPY_STACK_MAX;
	/* A failure without a stack (not captured, or probing) says so: its JSON record shows an empty one. */
	if (nips <= 0)
		return n + spy_rec_put_uv(body + n, 0);
	/* The map cannot be used (too many objects): the JSON record asks dladdr frame by frame. */
	if (modules(b, ips, nips, mods, audited) != 0)
		return 0;
	n += spy_rec_put_uv(body + n, (uint64_t)nips);
	for (int i = 0; i < nips; i++) {
		long id = mods[i].name ? module_id(th, b, &mods[i], used) : 0;

		if (id < 0)
			return 0;
		n += spy_rec_put_uv(body + n, (uint64_t)id);
		n += spy_rec_put_uv(body + n, (uintptr_t)ips[i] - (id ? mods[i].base : 0));
	}
	return n;
}

_Static_assert(SPY_FLIGHT_MAX == 256, "struct spy_recent_packed holds two flight recorders' worth");

/*
 * A failure's recent calls, the thread's flight entries [from, from + n), appended to b->line: a function id
 * and a signed status each. A thread failing again and again lists mostly the calls its last failure listed:
 * those are kept packed (b->recent) and only the calls since are packed now.
 */
static void
recent_calls(const struct spy_thread *th, struct spy_buf *b, unsigned from, unsigned n)
{
	struct spy_recent_packed *r = &b->recent;
	int tid = spy_tid();
	unsigned end = from + n;

	/*
	 * Kept for another thread, from before what is asked, or past its end: packed afresh. So is a whole
	 * recorder's worth, whose oldest entry the call itself has overwritten, as format 1 shows it.
	 */
	if (r->tid != tid || from - r->from > r->count || end - r->from < r->count || n >= SPY_FLIGHT_MAX) {
		r->tid = tid;
		r->from = from;
		r->count = 0;
		r->off[0] = 0;
	}
	/* Room for what is added: the entries before `from` go (the list only moves on). */
	if (end - r->from > 2 * SPY_FLIGHT_MAX) {
		unsigned k = from - r->from, base = r->off[k];

		memmove(r->bytes, r->bytes + base, (size_t)(r->off[r->count] - base));
		for (unsigned i = k; i <= r->count; i++)
			r->off[i - k] = (uint16_t)(r->off[i] - base);
		r->count -= k;
		r->from = from;
	}
	for (unsigned i = r->from + r->count; i != end; i++) {
		uint32_t e = th->flight[i % SPY_FLIGHT_MAX];
		unsigned at = r->off[r->count];

		at += (unsigned)spy_rec_put_uv(r->bytes + at, e & 0xffff);
		at += (unsigned)spy_rec_put_uv(r->bytes + at, spy_rec_zigzag((int16_t)(e >> 16)));
		r->off[++r->count] = (uint16_t)at;
	}
	spy_line_mem(&b->line, (const char *)r->bytes + r->off[from - r->from],
		     (size_t)(r->off[end - r->from] - r->off[from - r->from]));
}

static int64_t
load(const void *at, unsigned size, int is_signed)
{
	switch (size) {
	case 1:
		return is_signed ? *(const signed char *)at : *(const unsigned char *)at;
	case 2:
		return is_signed ? *(const short *)at : *(const unsigned short *)at;
	case 4:
		return is_signed ? *(const int32_t *)at : (int64_t) * (const uint32_t *)at;
	}
	return *(const int64_t *)at;
}

/* One element behind a pointer into body at n; the new n, or 0 when it cannot be packed. */
static size_t
element(struct spy_thread *th, struct spy_buf *b, const struct spy_param_info *p, const void *at, int full,
	uint8_t *body, size_t n, uint64_t *used)
{
	long id;
	double d;

	switch (p->elem) {
	case SPY_ARG_INT:
	case SPY_ARG_ENUM:
		return n + spy_rec_put_uv(body + n, spy_rec_zigzag(load(at, p->elem_size, 1)));
	case SPY_ARG_UINT:
		return n + spy_rec_put_uv(body + n, (uint64_t)load(at, p->elem_size, 0));
	case SPY_ARG_DOUBLE:
		d = p->elem_size == sizeof(float) ? *(const float *)at : *(const double *)at;
		memcpy(body + n, &d, 8);
		return n + 8;
	case SPY_ARG_HANDLE:
	case SPY_ARG_DESC:
		id = text_id(th, b, p->elem == SPY_ARG_HANDLE, p->desc_kind, full ? TEXT_FULL : 0, *(void *const *)at,
			     used);
		return id < 0 ? 0 : n + spy_rec_put_uv(body + n, (uint64_t)id);
	}
	return 0;
}

/*
 * A scaling factor after its address: a float, or a double when the call's
 * output is double, which cuDNN takes to be the last tensor or filter
 * descriptor (args.c's rule); SPY_REC_SCALING_NONE when no type is known.
 */
static size_t
scaling(const struct spy_fn_info *f, const union spy_arg *args, int i, uint8_t *body, size_t n)
{
	int64_t dt = -1;
	double d;
	float v;

	for (int k = f->nparams - 1; k >= 0; k--) {
		const struct spy_param_info *q = &f->params[k];

		if (q->kind == SPY_ARG_DESC && q->desc_kind &&
		    (strcmp(q->desc_kind, "tensor") == 0 || strcmp(q->desc_kind, "filter") == 0) &&
		    spy_obj_data_type(args[k].p, &dt))
			break;
	}
	if (dt < 0 || (dt == CUDNN_DATA_DOUBLE ? spy_safe_copy(&d, args[i].p, sizeof(d)) :
		       spy_safe_copy(&v, args[i].p, sizeof(v))) != 0) {
		body[n++] = SPY_REC_SCALING_NONE;
		return n;
	}
	if (dt != CUDNN_DATA_DOUBLE)
		d = v;
	body[n++] = dt == CUDNN_DATA_DOUBLE ? SPY_REC_SCALING_DOUBLE : SPY_REC_SCALING_FLOAT;
	memcpy(body + n, &d, 8);
	return n + 8;
}

/* An attribute element as backend.c loads it (a float as its double, a bool as 0 or 1). */
static size_t
battr_element(struct spy_thread *th, struct spy_buf *b, const struct spy_battr_type *t, const char *at, uint8_t *body,
	      size_t n, uint64_t *used)
{
	double d;
	long id;

	switch (t->kind) {
	case SPY_BV_FLOAT:
		d = *(const float *)at;
		memcpy(body + n, &d, 8);
		return n + 8;
	case SPY_BV_DOUBLE:
		memcpy(body + n, at, 8);
		return n + 8;
	case SPY_BV_BOOL:
		body[n] = *(const unsigned char *)at != 0;
		return n + 1;
	case SPY_BV_PTR:
		return n + spy_rec_put_uv(body + n, (uintptr_t) * (void *const *)at);
	case SPY_BV_HANDLE:
	case SPY_BV_DESC:
		id = text_id(th, b, t->kind == SPY_BV_HANDLE, BACKEND_KIND, 0, *(void *const *)at, used);
		return id < 0 ? 0 : n + spy_rec_put_uv(body + n, (uint64_t)id);
	case SPY_BV_FRACTION:
		n += spy_rec_put_uv(body + n, spy_rec_zigzag(*(const int64_t *)at));
		return n + spy_rec_put_uv(body + n, spy_rec_zigzag(*(const int64_t *)(at + 8)));
	}
	return n + spy_rec_put_uv(body + n, spy_rec_zigzag(load(at, t->size, 1)));
}

/* An attribute's elements after their address: a string's bytes, or the first SPY_REC_VALUES elements. */
static size_t
battr_array(struct spy_thread *th, struct spy_buf *b, const struct spy_battr_type *t, const char *at, int64_t count,
	    uint8_t *body, size_t n, uint64_t *used)
{
	int64_t shown = count < 0 ? 0 : count < SPY_REC_VALUES ? count : SPY_REC_VALUES;

	if (t->kind == SPY_BV_CHAR) {
		size_t len = (size_t)(count < 0 ? 0 : count < SPY_REC_STRING_MAX ? count : SPY_REC_STRING_MAX);

		n += spy_rec_put_uv(body + n, len);
		memcpy(body + n, at, len);
		return n + len;
	}
	for (int64_t k = 0; k < shown; k++)
		if (!(n = battr_element(th, b, t, at + k * t->size, body, n, used)))
			return 0;
	return n;
}

/*
 * cudnnBackendGetAttribute's arrayOfElements when elementCount was given
 * (without it, it is an address, packed as one): the address, the count
 * shown (what cuDNN wrote, at most what was asked), and the elements cuDNN
 * wrote. 0 when it cannot be packed.
 */
static size_t
getattr_array(struct spy_thread *th, struct spy_buf *b, const union spy_arg *args, uint8_t *body, size_t n,
	      uint64_t *used)
{
	int64_t type = args[2].i, count = *(const int64_t *)args[4].p;

	if (!args[5].p || type < 0 || type >= SPY_BATTR_NTYPES)
		return 0;
	if (count > args[3].i)
		count = args[3].i;
	if (count < 0)
		count = 0;
	n += spy_rec_put_uv(body + n, (uintptr_t)args[5].p);
	n += spy_rec_put_uv(body + n, (uint64_t)count);
	return battr_array(th, b, &spy_battr_types[type], args[5].p, count, body, n, used);
}

/*
 * cudnnBackendSetAttribute: its descriptor as a text, and the attribute as
 * raw elements (at most SPY_REC_VALUES, or the bytes of a string), which the
 * command shows both as the call's arrayOfElements and inside the
 * descriptor's text. A descriptor this thread wrote the text of before, as
 * it was just before this call, is not written again: the frame says to add
 * this attribute to that text (a graph's attributes are set by the hundred,
 * and its text grows with each).
 */
static size_t
setattr(struct spy_thread *th, struct spy_buf *b, const union spy_arg *args, uint8_t *body, size_t n, uint64_t *used)
{
	int64_t type = args[2].i, count = args[3].i;
	const char *at = args[4].p;
	const struct spy_battr_type *t;
	uint64_t before, after, v;
	struct spy_text_slot *slot;
	long id;
	int keep;

	/* As args.c shows them without its decoder: an address, in JSON. */
	if (!args[0].p || !at || type < 0 || type >= SPY_BATTR_NTYPES)
		return 0;
	t = &spy_battr_types[type];
	if (spy_backend_last_set(args[0].p, &before, &after) &&
	    (slot = cached_slot(b, args[0].p, BACKEND_KIND, before, 1, used))) {
		/* The text the reader holds, with this attribute: kept as the descriptor's text after the call. */
		slot->stamp = after;
		n += spy_rec_put_uv(body + n, slot->id);
		body[n++] = 1;
	} else {
		keep = spy_backend_version(args[0].p, &v);
		if (!keep || !(id = cached(b, args[0].p, BACKEND_KIND, v, 1, used))) {
			spy_line_reset(&b->line);
			spy_obj_describe(&b->line, args[0].p, BACKEND_KIND, 1, SPY_ARGS_AFTER_SUCCESS | SPY_ARGS_BRIEF);
			/* Changed while it was written (another thread): written again next time. */
			keep = keep && spy_backend_version(args[0].p, &after) && after == v;
			id = define(th, b, args[0].p, BACKEND_KIND, v, 1, keep, used);
		}
		if (id <= 0)
			return 0;
		n += spy_rec_put_uv(body + n, (uint64_t)id);
		body[n++] = 0;
	}
	n += spy_rec_put_uv(body + n, spy_rec_zigzag((int32_t)args[1].i));
	n += spy_rec_put_uv(body + n, spy_rec_zigzag((int32_t)args[2].i));
	n += spy_rec_put_uv(body + n, spy_rec_zigzag(count));
	n += spy_rec_put_uv(body + n, (uintptr_t)at);
	return battr_array(th, b, t, at, count, body, n, used);
}

/*
 * A pointer argument of a failed call, as args.c shows it then: an input
 * array's elements, copied so that a bad pointer cannot fault; else the
 * address alone (for an array, a count of 0). The new n, or 0.
 */
static size_t
failed_pointer(struct spy_thread *th, struct spy_buf *b, const struct spy_call *c, const union spy_arg *args, int i,
	       uint8_t *body, size_t n, uint64_t *used)
{
	const struct spy_param_info *p = &spy_fn_info[c->id].params[i];
	int64_t copy[SPY_REC_VALUES], count;

	if (!p->is_array) {
		/* An out-value is not read after a failure; an input that is no array is an address anyway. */
		return n;
	}
	count = p->dir == SPY_DIR_IN && p->elem_size <= 8 ? spy_arg_count(c->id, i, args, 0) : -1;
	if (count > SPY_REC_VALUES)
		count = SPY_REC_VALUES;
	if (count < 0 || spy_safe_copy(copy, args[i].p, (size_t)count * p->elem_size) != 0) {
		n += spy_rec_put_uv(body + n, 0);
		return n;
	}
	n += spy_rec_put_uv(body + n, (uint64_t)count + 1);
	for (int64_t k = 0; k < count; k++)
		if (!(n = element(th, b, p, (const char *)copy + k * p->elem_size, 1, body, n, used)))
			return 0;
	return n;
}

/* A string of a failure frame into the line: its length and bytes. */
static void
put_text(struct spy_line *l, const char *s, size_t len)
{
	uint8_t v[10];

	spy_line_mem(l, (const char *)v, spy_rec_put_uv(v, len));
	spy_line_mem(l, s, len);
}

/* A call frame (fail NULL) or a failure frame; 0 when it cannot be packed. Its frame is large: never inlined. */
static __attribute__((noinline)) int
pack(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args, void *const *ips,
     int nips, const struct spy_recbin_failure *fail)
{
	const struct spy_fn_info *f = &spy_fn_info[c->id];
	struct spy_buf *b = th->buf;
	/*
	 * The fixed fields; per parameter an address, a count and SPY_REC_VALUES elements of 10 bytes at most; one
	 * backend attribute's array, whose elements may be fractions (two varints) or a string; and a stack's
	 * frames. On the program's stack, which a framework's worker thread may have small: under 10 KiB.
	 */
	uint8_t body[64 + PACK_PARAMS * (3 * 10 + SPY_REC_VALUES * 10) + SPY_REC_VALUES * 20 + SPY_REC_STRING_MAX + 10 +
		     SPY_STACK_MAX * 20 + SPY_SINK_BODY_SLACK];
	size_t n = 0, mlen = 0, wlen = 0;
	uint64_t used = 0;	/* the text places this call's arguments name */
	struct spy_line *l;
	uint8_t v[10];
	unsigned drops;

	/* The block shared when no block could be made has no text places of its own. */
	if (!b || !packable[c->id] || f->nparams > PACK_PARAMS || (f->nparams && !args) || th->index == ~0u)
		return 0;
	drops = b->drops;
	if (fail) {
		/*
		 * A failed SetAttribute shows its elements as backend.c decodes them: JSON. A failed GetAttribute's
		 * are not read, so it is packed as any call.
		 */
		if (packable[c->id] == SETATTR)
			return 0;
		/* A CUDA error is named by the CUDA runtime in the process, which the command cannot ask: JSON. */
		if (fail->cuda_error)
			return 0;
		mlen = fail->message ? strlen(fail->message) : 0;
		wlen = fail->why ? strlen(fail->why) : 0;
		if (mlen > SPY_REC_MESSAGE_MAX || wlen > SPY_REC_MESSAGE_MAX)
			return 0;
	}
	n = call_head(c->id, c, status, body);
	if (packable[c->id] == SETATTR) {
		if (!(n = setattr(th, b, args, body, n, &used)))
			return 0;
		goto stack;
	}
	/* A successful GetAttribute's array (parameter 5) is packed apart; asked once, not at every parameter. */
	int array_at = packable[c->id] == GETATTR && args[4].p && !fail ? 5 : -1;

	for (int i = 0; i < f->nparams; i++) {
		const struct spy_param_info *p = &f->params[i];
		long id;

		if (i == array_at) {
			if (!(n = getattr_array(th, b, args, body, n, &used)))
				return 0;
			continue;
		}
		switch (p->kind) {
		case SPY_ARG_INT:
			n += spy_rec_put_uv(body + n, spy_rec_zigzag(args[i].i));
			break;
		case SPY_ARG_ENUM:
			/* As the JSON record reads it: an int in the C ABI (args.c). */
			n += spy_rec_put_uv(body + n, spy_rec_zigzag((int32_t)args[i].i));
			break;
		case SPY_ARG_UINT:
			n += spy_rec_put_uv(body + n, args[i].u);
			break;
		case SPY_ARG_DOUBLE:
			memcpy(body + n, &args[i].d, 8);
			n += 8;
			break;
		case SPY_ARG_HANDLE:
		case SPY_ARG_DESC:
			id = text_id(th, b, p->kind == SPY_ARG_HANDLE, p->desc_kind,
				     (p->kind == SPY_ARG_DESC ? TEXT_STATE : 0) | (fail ? TEXT_FULL : 0), args[i].p, &used);
			if (id < 0)
				return 0;
			n += spy_rec_put_uv(body + n, (uint64_t)id);
			break;
		case SPY_ARG_PTR:
			n += spy_rec_put_uv(body + n, (uintptr_t)args[i].p);
			if (args[i].p && spy_rec_ptr_shape(p) == SPY_REC_PTR_SCALING) {
				n = scaling(f, args, i, body, n);
				break;
			}
			if (!args[i].p || spy_rec_ptr_shape(p) != SPY_REC_PTR_VALUES)
				break;
			if (fail) {
				if (!(n = failed_pointer(th, b, c, args, i, body, n, &used)))
					return 0;
			} else if (p->is_array) {
				int64_t count = spy_arg_count(c->id, i, args, SPY_ARGS_AFTER_SUCCESS | SPY_ARGS_BRIEF);

				if (p->elem == SPY_ARG_INT && p->elem_size == 4) {
					/* Dimensions and strides, the usual array: element() for each costs four times this. */
					n = (size_t)(plain_ints(args[i].p, count, body + n) - body);
				} else {
					/* 0: no count known, the address alone. */
					n += spy_rec_put_uv(body + n, count < 0 ? 0 : (uint64_t)(count > SPY_REC_VALUES ?
												  SPY_REC_VALUES : count) + 1);
					for (int64_t k = 0; k < count && k < SPY_REC_VALUES; k++)
						if (!(n = element(th, b, p, (const char *)args[i].p + k * p->elem_size, 0,
								  body, n, &used)))
							return 0;
				}
			} else if (!(n = element(th, b, p, args[i].p, 0, body, n, &used))) {
				return 0;
			}
			break;
		default:
			n += spy_rec_put_uv(body + n, (uintptr_t)args[i].p);
			break;
		}
	}
stack:
	/*
	 * A call's stack, when it has one or Python frames follow it (then perhaps of no frames). The frames come
	 * through the buffer, and are packed apart: nothing more on the way of a traced call without them.
	 */
	if (__builtin_expect(b->py_call != NULL, 0)) {
		if (!(n = python_tail(th, b, ips, nips, body, n, &used, !fail)))
			return 0;
	} else if ((nips > 0 || fail) && !(n = stack(th, b, ips, nips, body, n, &used, fail && !fail->probing))) {
		return 0;
	}
	if (!fail || b->drops != drops)
		return call_commit(th, c, b, body, n, drops);
	/*
	 * After the stack, what only a failure has: in the thread's line (the texts are written), so that the
	 * program's stack holds no more than a call's frame does.
	 */
	l = &b->line;
	spy_line_reset(l);
	spy_line_mem(l, (const char *)body, n);
	spy_line_char(l, (char)((fail->injected ? SPY_REC_F_INJECTED : 0) | (fail->probing ? SPY_REC_F_PROBING : 0) |
				(fail->no_function ? SPY_REC_F_NO_FUNCTION : 0) |
				(fail->message ? SPY_REC_F_MESSAGE : 0) | (wlen ? SPY_REC_F_WHY : 0) |
				(b->py_call ? SPY_REC_F_PYTHON : 0)));
	if (fail->message)
		put_text(l, fail->message, mlen);
	if (wlen)
		put_text(l, fail->why, wlen);
	spy_line_mem(l, (const char *)v, spy_rec_put_uv(v, fail->nrecent));
	recent_calls(th, b, fail->recent_from, fail->nrecent);
	if (b->py_call)
		spy_line_mem(l, (const char *)v, spy_rec_put_uv(v, (uint64_t)b->py_id));
	if (l->overflow)
		return 0;
	spy_sink_commit_frame(th, SPY_REC_FAILURE, (const uint8_t *)l->data, l->len, c->t0 ? c->t0 : spy_now_ns(),
			      NULL);
	return 1;
}

int
spy_recbin_call(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		void *const *ips, int nips)
{
	if (nips <= 0 && spy_recbin_is_plain(th, c, args)) {
		int saved = errno, done = spy_recbin_plain_fn[c->id](th, c, status, args, 0) == NULL;

		errno = saved;
		return done;
	}
	return pack(th, c, status, args, ips, nips, NULL);
}

int
spy_recbin_call_set(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args)
{
	int saved, done;

	if (!spy_recbin_is_plain(th, c, args)) {
		spy_obj_set(args[0].p, spy_fn_info[c->id].params[0].desc_kind, c->id, args);
		return pack(th, c, status, args, NULL, 0, NULL);
	}
	saved = errno;
	done = spy_recbin_plain_fn[c->id](th, c, status, args, SPY_PLAIN_SET) == NULL;
	errno = saved;
	return done;
}

/* pack() with Python frames (NULL: none), which reach it through the thread's buffer. */
static int
pack_python(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
	    void *const *ips, int nips, const struct spy_pystack *py, const struct spy_recbin_failure *fail)
{
	int done;

	if (!th->buf)
		return 0;
	th->buf->py_call = py;
	done = pack(th, c, status, args, ips, nips, fail);
	th->buf->py_call = NULL;
	return done;
}

int
spy_recbin_call_python(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		       void *const *ips, int nips, const struct spy_pystack *py)
{
	return pack_python(th, c, status, args, ips, nips, py, NULL);
}

int
spy_recbin_failure(struct spy_thread *th, const struct spy_call *c, long status, const union spy_arg *args,
		   void *const *ips, int nips, const struct spy_recbin_failure *fail)
{
	return pack_python(th, c, status, args, ips, nips, fail->py, fail);
}

int
spy_recbin_gpu(struct spy_thread *th, unsigned fn, unsigned copy, long tid, uint64_t t_ns, uint64_t gpu_ns)
{
	uint8_t body[4 * 10 + 1];
	size_t n = 0;

	/* Not through a chunk: the thread that reads the time is not the one that called. */
	if (!th->buf || fn >= _SPY_FN_COUNT || tid < 0)
		return 0;
	n += spy_rec_put_uv(body + n, fn);
	body[n++] = (uint8_t)copy;
	n += spy_rec_put_uv(body + n, (uint64_t)tid);
	n += spy_rec_put_uv(body + n, t_ns);
	n += spy_rec_put_uv(body + n, gpu_ns);
	spy_sink_commit_frame(th, SPY_REC_GPU, body, n, 0, NULL);
	return 1;
}
