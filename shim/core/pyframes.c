/*
 * The calling thread's Python frames, read as CPython's faulthandler reads
 * them: without the GIL, without creating an object or touching a
 * reference count, from the thread state the GIL machinery keeps for the
 * thread (PyGILState_GetThisThreadState: a thread-specific key, set while
 * the thread has Python state, whether or not it holds the GIL now). Only
 * the caller's own thread is read, while it sits in a cuDNN call: its frames
 * cannot change under the reader. The frame and code object layouts are
 * those of CPython 3.8 to 3.13 (release builds, the GIL enabled), measured
 * from each version's headers; tests/python/pyoffsets.c measures them again
 * and tests/python compares what is read with Python's own traceback. Any
 * other interpreter (a debug or free-threaded build, another version) gets
 * no frames and one warning. The first walk in a process goes through
 * process_vm_readv, which fails instead of faulting on a bad address, so
 * that a layout this file has wrong turns Python frames off rather than
 * crash the program; so does every read of the thread state, which a
 * finalizing interpreter may free under the reader (top_frame). A leaf:
 * libc and the loader only.
 */
#include "core.h"
#include "pyframes.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Offsets in bytes, -1 where the version has no such field. */
struct layout {
	int minor;
	int ts_frame;		/* in the thread state: the frame (3.8-3.10, 3.13) or the CFrame (3.11, 3.12) */
	int cframe_frame;	/* in the CFrame: the current frame */
	int f_code, f_back;	/* in a frame: its code object (3.13: executable) and the frame that called it */
	int f_instr, f_owner;	/* 3.11+: the instruction pointer and who owns the frame */
	int co_filename, co_name, co_qualname;
	int co_code, co_firsttraceable;	/* 3.11+: the bytecode, and the first instruction a frame is complete at */
	int str_ascii, str_compact;	/* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
	int owner_cstack;	/* 3.12+: the entry frame the C stack owns */
};

static const struct layout layouts[] = {
	{ 8, 24, -1, 32, 24, -1, -1, 104, 112, -1, -1, -1, 48, 72, -1 },
	{ 9, 24, -1, 32, 24, -1, -1, 104, 112, -1, -1, -1, 48, 72, -1 },
	{ 10, 24, -1, 32, 24, -1, -1, 104, 112, -1, -1, -1, 48, 72, -1 },
	{ 11, 56, 8, 32, 48, 56, 69, 112, 120, 128, 184, 168, 48, 72, -1 },
	{ 12, 56, 0, 0, 8, 56, 70, 112, 120, 128, 192, 176, 40, 56, 3 },
	{ 13, 72, -1, 0, 8, 56, 70, 112, 120, 128, 200, 184, 40, 56, 3 },
};
#define OWNER_GENERATOR 1	/* FRAME_OWNED_BY_GENERATOR, 3.11 to 3.13 */
/* In PyObject's head: the type, after the reference count. */
#define OB_TYPE 8
/* In a str: its length, then (after the hash) its state bits: kind, compact, ascii. */
#define STR_LENGTH 16
#define STR_STATE 32
/* The most frames passed over (a C-stack entry frame, one not yet started) or read before giving up. */
#define WALK_MAX 64

enum { UNKNOWN, READY, ABSENT };

static struct {
	const struct layout *lay;
	int (*initialized)(void);
	int (*finalizing)(void);
	void *(*this_thread)(void);
	int (*frame_line)(void *);	/* 3.8-3.10: PyFrame_GetLineNumber; 3.12+: PyUnstable_InterpreterFrame_GetLine */
	int (*addr2line)(void *, int);
	const void *code_type, *str_type, *frame_type;
} py;
static int state = UNKNOWN, checked;	/* checked: the first walk went through process_vm_readv */
static int kernel_reads;	/* process_vm_readv reads this process's memory */
static int frames_may_go;	/* 3.8.0 to 3.8.2 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int warned;

static void *
sym(const char *name)
{
	return spy_dlsym(RTLD_DEFAULT, name);
}

/* The interpreter's minor version, or -1: Py_Version (3.11+), else Py_GetVersion()'s "3.N.". */
static int
minor_version(void)
{
	const unsigned long *hex = sym("Py_Version");
	const char *(*get)(void) = (const char *(*)(void))sym("Py_GetVersion");
	const char *v;
	char *end;
	long minor;

	if (hex)
		return (*hex >> 24) == 3 ? (int)((*hex >> 16) & 0xff) : -1;
	if (!get || !(v = get()) || strncmp(v, "3.", 2) != 0)
		return -1;
	minor = strtol(v + 2, &end, 10);
	return *end == '.' && minor > 0 && minor < 100 ? (int)minor : -1;
}

/* Looks for Python in the process's global scope (lock held). */
static int
resolve(void)
{
	const char *(*get)(void);
	int minor;

	py.initialized = (int (*)(void))sym("Py_IsInitialized");
	py.this_thread = (void *(*)(void))sym("PyGILState_GetThisThreadState");
	if (!py.initialized || !py.this_thread)
		return ABSENT;
	minor = minor_version();
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			py.lay = &layouts[i];
	get = (const char *(*)(void))sym("Py_GetVersion");
	/* A debug build's objects have two more pointers in front; a free-threaded one has another head. */
	if (!py.lay || sym("_Py_NegativeRefcount") || (get && strstr(get(), "free-threading"))) {
		spy_log_once(&warned, "Python %s%d here is not one whose frames the spy can read (3.8 to 3.13, a release "
				      "build with the GIL): failures name no Python line",
			     minor > 0 ? "3." : "", minor > 0 ? minor : 0);
		return ABSENT;
	}
	if (minor == 8 && get) {
		const char *v = get();

		frames_may_go = strncmp(v, "3.8.", 4) == 0 && v[4] >= '0' && v[4] <= '2' && (v[5] < '0' || v[5] > '9');
	}
	py.finalizing = (int (*)(void))sym("Py_IsFinalizing");
	if (!py.finalizing)
		py.finalizing = (int (*)(void))sym("_Py_IsFinalizing");
	py.addr2line = (int (*)(void *, int))sym("PyCode_Addr2Line");
	py.frame_line = (int (*)(void *))sym(py.lay->minor <= 10 ? "PyFrame_GetLineNumber"
								   : "PyUnstable_InterpreterFrame_GetLine");
	py.code_type = sym("PyCode_Type");
	py.str_type = sym("PyUnicode_Type");
	py.frame_type = sym("PyFrame_Type");
	if (!py.code_type || !py.str_type || !py.frame_type || !py.addr2line ||
	    (!py.frame_line && py.lay->minor != 11))
		return ABSENT;
	return READY;
}

void
spy_py_opened(const char *name)
{
	/* Python embedded later (dlopen of libpython with RTLD_GLOBAL): looked for again at the next capture. */
	if (name && strstr(name, "libpython") && __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ABSENT) {
		pthread_mutex_lock(&lock);
		if (!py.lay)
			__atomic_store_n(&state, UNKNOWN, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&lock);
	}
}

/* N bytes at SRC: read directly, or (`safe`) through the kernel, which says EFAULT where a read would fault. */
static int
rd(void *dst, const void *src, size_t n, int safe)
{
	struct iovec local = { dst, n }, remote = { (void *)src, n };

	if (!src)
		return 0;
	if (!safe) {
		memcpy(dst, src, n);
		return 1;
	}
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static int
rd_ptr(const char *base, int off, const void **out, int safe)
{
	return rd(out, base + off, sizeof(*out), safe);
}

/* Whether OBJ's type is TYPE. */
static int
is_a(const void *obj, const void *type, int safe)
{
	const void *t;

	return obj && rd_ptr(obj, OB_TYPE, &t, safe) && t == type;
}

/* The frame's line: as the interpreter computes it for a traceback. */
static int
line_of(const struct layout *lay, const char *frame, const char *code, int safe)
{
	const char *instr;

	if (lay->minor != 11)
		return py.frame_line((void *)frame);
	if (!rd_ptr(frame, lay->f_instr, (const void **)&instr, safe))
		return -1;
	return py.addr2line((void *)code, (int)(instr - (code + lay->co_code)));
}

/*
 * One frame of a walk: its code object into *code, or NULL for a frame
 * that is not the user's (a C-stack entry frame, one not yet started);
 * 0 when the frame cannot be read.
 */
static int
frame_code(const struct layout *lay, const char *frame, const char **code, int safe)
{
	const char *instr;
	unsigned char owner = 0;
	int first;

	*code = NULL;
	if (lay->minor <= 10 && !is_a(frame, py.frame_type, safe))
		return 0;
	if (lay->f_owner >= 0 && !rd(&owner, frame + lay->f_owner, 1, safe))
		return 0;
	if (lay->owner_cstack >= 0 && owner == lay->owner_cstack)
		return 1;
	if (!rd_ptr(frame, lay->f_code, (const void **)code, safe))
		return 0;
	if (!is_a(*code, py.code_type, safe)) {
		/* 3.13: an executable that is not code; else the layout is wrong. */
		if (lay->minor >= 13 && *code) {
			*code = NULL;
			return 1;
		}
		return 0;
	}
	if (lay->f_instr >= 0 && owner != OWNER_GENERATOR) {
		/* Incomplete: its first instructions (copying free variables, making a generator) have not run. */
		if (!rd_ptr(frame, lay->f_instr, (const void **)&instr, safe) ||
		    !rd(&first, *code + lay->co_firsttraceable, sizeof(first), safe))
			return 0;
		if (instr < *code + lay->co_code + 2 * (long)first)
			*code = NULL;
	}
	return 1;
}

/* From the innermost frame: the frames read, or -1 when something read is not what the layout says. */
static int
walk(const struct layout *lay, const char *frame, struct spy_pystack *s, int safe)
{
	const char *code;
	int n = 0;

	for (int steps = 0; frame && n < SPY_PY_FRAMES && steps < WALK_MAX; steps++) {
		if (!frame_code(lay, frame, &code, safe))
			return -1;
		if (code) {
			s->code[n] = code;
			s->line[n] = line_of(lay, frame, code, safe);
			n++;
		}
		if (!rd_ptr(frame, lay->f_back, (const void **)&frame, safe))
			return -1;
	}
	return n;
}

/*
 * The thread's innermost frame into *FRAME: 1 when it may be walked, 0 when
 * not (the interpreter began to finalize, the state cannot be read), -1 when
 * what was read is not what the layout says. A finalizing interpreter frees
 * the states of the threads that sit in a call with the GIL released (daemon
 * threads, threads started from C) and leaves their frames as they are
 * (CPython 3.8.3 and later; bpo-20526): the state is what can go from under
 * the reader, freed or reused between the check before and this read. So
 * what leads from it to the frames is read through the kernel, and trusted
 * only if, once it was read, the interpreter was still not finalizing: it
 * says it is before it frees a thread's state.
 */
static int
top_frame(const struct layout *lay, const char *ts, const char **frame, int safe)
{
	const char *cframe;

	*frame = NULL;
	if (lay->cframe_frame < 0) {
		if (!rd_ptr(ts, lay->ts_frame, (const void **)frame, safe))
			return -1;
	} else {
		if (!rd_ptr(ts, lay->ts_frame, (const void **)&cframe, safe))
			return -1;
		/* 3.11, 3.12: a CFrame on this thread's C stack, or the one inside the state itself. */
		if (cframe && !rd_ptr(cframe, lay->cframe_frame, (const void **)frame, safe))
			return -1;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return py.initialized() && !(py.finalizing && py.finalizing());
}

int
spy_py_capture(struct spy_pystack *s)
{
	int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE), saved, n;
	const char *ts, *frame;

	s->n = 0;
	if (st == ABSENT)
		return 0;
	saved = errno;
	if (st == UNKNOWN) {
		pthread_mutex_lock(&lock);
		if ((st = __atomic_load_n(&state, __ATOMIC_ACQUIRE)) == UNKNOWN) {
			st = resolve();
			__atomic_store_n(&state, st, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&lock);
		if (st != READY)
			goto out;
	}
	/* Before Python started, and once it began to end: its thread states may be freed under the reader. */
	if (!py.initialized() || (py.finalizing && py.finalizing()))
		goto out;
	ts = py.this_thread();
	if (!ts)
		goto out;	/* a thread that never ran Python */
	if (!__atomic_load_n(&checked, __ATOMIC_ACQUIRE)) {
		int probe, ok;

		/* Where the kernel refuses to read (a seccomp filter, no such call), the layouts are trusted. */
		kernel_reads = rd(&probe, &state, sizeof(probe), 1);
		if (!kernel_reads) {
			n = 0;
		} else if ((ok = top_frame(py.lay, ts, &frame, 1)) <= 0) {
			n = ok;
		} else {
			n = walk(py.lay, frame, s, 1);
		}
		if (n < 0) {
			spy_log_once(&warned, "Python 3.%d's frames are not where the spy looks for them: failures name "
					      "no Python line", py.lay->minor);
			__atomic_store_n(&state, ABSENT, __ATOMIC_RELEASE);
			s->n = 0;
			goto out;
		}
		__atomic_store_n(&checked, 1, __ATOMIC_RELEASE);
	}
	if (top_frame(py.lay, ts, &frame, kernel_reads) <= 0)
		goto out;
	/* Before 3.8.3 a finalizing interpreter let go of the frames of the states it freed, too. */
	n = walk(py.lay, frame, s, frames_may_go && kernel_reads);
	s->n = n > 0 ? n : 0;
out:
	errno = saved;
	return s->n;
}

uint64_t
spy_py_hash(const struct spy_pystack *s)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < s->n; i++) {
		h = (h ^ (uintptr_t)s->code[i]) * 1099511628211ull;
		h = (h ^ (uint64_t)(unsigned)s->line[i]) * 1099511628211ull;
	}
	return h ^ (uint64_t)s->n;
}

/* A str's code points into OUT (at most MAX: the rest is cut); -1 when it is not a compact str. */
static long
str_points(const char *obj, uint32_t *out, long max)
{
	const struct layout *lay = py.lay;
	uint32_t bits;
	long len;
	unsigned kind;
	const char *data;

	if (!obj || !is_a(obj, py.str_type, 0))
		return -1;
	memcpy(&len, obj + STR_LENGTH, sizeof(len));
	memcpy(&bits, obj + STR_STATE, sizeof(bits));
	kind = (bits >> 2) & 7;
	if (!((bits >> 5) & 1) || len < 0 || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	data = obj + (((bits >> 6) & 1) ? lay->str_ascii : lay->str_compact);
	if (len > max)
		len = max;
	for (long i = 0; i < len; i++) {
		if (kind == 1) {
			out[i] = (unsigned char)data[i];
		} else if (kind == 2) {
			uint16_t u;

			memcpy(&u, data + 2 * i, 2);
			out[i] = u;
		} else {
			memcpy(&out[i], data + 4 * i, 4);
		}
	}
	return len;
}

#define STR_MAX 512	/* code points of a name or file shown: the rest is cut */

/* A code object's str field: its code points, or -1. */
static long
code_str(const char *code, int off, uint32_t *out)
{
	const char *obj;

	if (off < 0)
		return -1;
	memcpy(&obj, code + off, sizeof(obj));
	return str_points(obj, out, STR_MAX);
}

/* A frame's function: its qualified name where the version keeps one (Model.forward). */
static long
function_of(const char *code, uint32_t *out)
{
	return code_str(code, py.lay->co_qualname >= 0 ? py.lay->co_qualname : py.lay->co_name, out);
}

/* As a JSON string in ASCII, each code point outside it escaped: Python reads back the same str. */
static void
json_points(struct spy_line *l, const uint32_t *c, long n)
{
	static const char hex[] = "0123456789abcdef";

	if (n < 0) {
		spy_line_lit(l, "\"?\"");
		return;
	}
	spy_line_char(l, '"');
	for (long i = 0; i < n; i++) {
		uint32_t u = c[i];

		if (u >= 0x20 && u < 0x7f && u != '"' && u != '\\') {
			spy_line_char(l, (char)u);
			continue;
		}
		if (u == '"' || u == '\\') {
			spy_line_char(l, '\\');
			spy_line_char(l, (char)u);
			continue;
		}
		if (u > 0x10ffff)
			u = 0xfffd;
		for (int half = u > 0xffff ? 2 : 1; half > 0; half--) {
			uint32_t w = u > 0xffff ? (half == 2 ? 0xd800 + ((u - 0x10000) >> 10) : 0xdc00 + ((u - 0x10000) & 0x3ff))
						: u;
			char e[6] = { '\\', 'u', hex[w >> 12 & 15], hex[w >> 8 & 15], hex[w >> 4 & 15], hex[w & 15] };

			spy_line_mem(l, e, 6);
		}
	}
	spy_line_char(l, '"');
}

/* As UTF-8 for a line on stderr: controls (a newline would break the line) and lone surrogates as '?'. */
static void
text_points(struct spy_line *l, const uint32_t *c, long n)
{
	if (n < 0) {
		spy_line_char(l, '?');
		return;
	}
	for (long i = 0; i < n; i++) {
		uint32_t u = c[i];
		char b[4];

		if (u < 0x20 || u == 0x7f || (u >= 0xd800 && u < 0xe000) || u > 0x10ffff) {
			spy_line_char(l, '?');
		} else if (u < 0x80) {
			spy_line_char(l, (char)u);
		} else if (u < 0x800) {
			b[0] = (char)(0xc0 | u >> 6);
			b[1] = (char)(0x80 | (u & 0x3f));
			spy_line_mem(l, b, 2);
		} else if (u < 0x10000) {
			b[0] = (char)(0xe0 | u >> 12);
			b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
			b[2] = (char)(0x80 | (u & 0x3f));
			spy_line_mem(l, b, 3);
		} else {
			b[0] = (char)(0xf0 | u >> 18);
			b[1] = (char)(0x80 | ((u >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((u >> 6) & 0x3f));
			b[3] = (char)(0x80 | (u & 0x3f));
			spy_line_mem(l, b, 4);
		}
	}
}

void
spy_py_json(struct spy_line *l, const struct spy_pystack *s)
{
	uint32_t c[STR_MAX];

	spy_line_char(l, '[');
	for (int i = 0; i < s->n; i++) {
		const char *code = s->code[i];

		if (i)
			spy_line_char(l, ',');
		spy_line_lit(l, "{\"file\":");
		json_points(l, c, code_str(code, py.lay->co_filename, c));
		spy_line_lit(l, ",\"line\":");
		spy_line_i64(l, s->line[i]);
		spy_line_lit(l, ",\"function\":");
		json_points(l, c, function_of(code, c));
		spy_line_char(l, '}');
	}
	spy_line_char(l, ']');
}

void
spy_py_text(struct spy_line *l, const struct spy_pystack *s)
{
	uint32_t c[STR_MAX];

	for (int i = 0; i < s->n; i++) {
		const char *code = s->code[i];

		if (i)
			spy_line_lit(l, " < ");
		text_points(l, c, function_of(code, c));
		spy_line_lit(l, " (");
		text_points(l, c, code_str(code, py.lay->co_filename, c));
		spy_line_char(l, ':');
		spy_line_i64(l, s->line[i]);
		spy_line_char(l, ')');
	}
}
