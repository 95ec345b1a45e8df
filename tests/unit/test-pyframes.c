/*
 * pyframes.c against a fake CPython 3.12 that this runner exports (the
 * runner is linked with its symbols dynamic): what a finalizing interpreter
 * does to a thread sitting in a call with the GIL released, at the worst
 * moment, which a real interpreter gives only by chance. Each case runs in
 * a child of its own, so that the reader's once-per-process state starts
 * fresh and a fault is a failed case, with CK_FORK=no too.
 */
#include "unit.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "pyframes.h"

/* The fake interpreter: CPython 3.12's names, and the offsets pyframes.c reads 3.12 by. */
#define TS_CFRAME 56
#define FR_BACK 8
#define FR_INSTR 56
#define FR_OWNER 70
#define CO_FILENAME 112
#define CO_QUALNAME 128
#define CO_FIRST 176
#define CO_CODE 192
#define STR_DATA 40

/* What a real interpreter would declare in its headers; exported, as the reader looks them up by name. */
#define PY_API __attribute__((visibility("default")))
PY_API const char *Py_GetVersion(void);
PY_API int Py_IsInitialized(void);
PY_API int Py_IsFinalizing(void);
PY_API void *PyGILState_GetThisThreadState(void);
PY_API int PyCode_Addr2Line(void *co, int addr);
PY_API int PyUnstable_InterpreterFrame_GetLine(void *f);

PY_API const unsigned long Py_Version = 0x030c04f0;
PY_API char PyCode_Type[64], PyUnicode_Type[64], PyFrame_Type[64];

static _Alignas(16) char code[256], filename[64], qualname[64], frame[128], cframe[16];
static char *tstate;	/* a page of its own, which "finalization" may take away */
static int finalizing, initialized = 1;
static enum { QUIET, FREE_STATE, REUSE_STATE } at_check;

PY_API const char *
Py_GetVersion(void)
{
	return "3.12.4 (fake, for the unit tests)";
}

PY_API int
Py_IsInitialized(void)
{
	return initialized;
}

/*
 * The reader's check that the interpreter is not finalizing, with the
 * finalizer's next steps run the moment it has answered: the thread's state
 * freed (its page unmapped) or its memory reused (the frame field pointing
 * at nothing mapped).
 */
PY_API int
Py_IsFinalizing(void)
{
	int was = finalizing;

	if (at_check == FREE_STATE) {
		munmap(tstate, (size_t)sysconf(_SC_PAGESIZE));
	} else if (at_check == REUSE_STATE) {
		char *gone = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		munmap(gone, (size_t)sysconf(_SC_PAGESIZE));
		memcpy(tstate + TS_CFRAME, &gone, sizeof(gone));
	}
	if (at_check != QUIET)
		finalizing = 1;
	at_check = QUIET;
	return was;
}

PY_API void *
PyGILState_GetThisThreadState(void)
{
	return tstate;
}

PY_API int
PyCode_Addr2Line(void *co, int addr)
{
	(void)co;
	(void)addr;
	return 42;
}

PY_API int
PyUnstable_InterpreterFrame_GetLine(void *f)
{
	(void)f;
	return 42;
}

static void
put_ptr(char *at, const void *p)
{
	memcpy(at, &p, sizeof(p));
}

static void
make_str(char *obj, const char *text)
{
	int64_t len = (int64_t)strlen(text);
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6;	/* one byte a code point, compact, ASCII */

	put_ptr(obj + 8, PyUnicode_Type);
	memcpy(obj + 16, &len, sizeof(len));
	memcpy(obj + 32, &state, sizeof(state));
	memcpy(obj + STR_DATA, text, (size_t)len + 1);
}

/* One frame, Model.forward in model.py, running its fourth instruction; the thread inside it. */
static void
make_interpreter(void)
{
	tstate = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(tstate, MAP_FAILED);
	make_str(filename, "model.py");
	make_str(qualname, "Model.forward");
	put_ptr(code + 8, PyCode_Type);
	put_ptr(code + CO_FILENAME, filename);
	put_ptr(code + CO_QUALNAME, qualname);
	put_ptr(frame, code);
	put_ptr(frame + FR_BACK, NULL);
	put_ptr(frame + FR_INSTR, code + CO_CODE + 6);
	put_ptr(cframe, frame);
	put_ptr(tstate + TS_CFRAME, cframe);
}

/* The frames the reader finds after its first walk, with the finalizer acting as said at its check. */
static int
frames_when(int what, char *text, size_t size)
{
	struct spy_pystack st;
	static struct spy_line l;
	int n;

	make_interpreter();
	if (spy_py_capture(&st) != 1)
		return -1;
	at_check = what;
	n = spy_py_capture(&st);
	if (n > 0 && text) {
		spy_line_reset(&l);
		spy_py_text(&l, &st);
		snprintf(text, size, "%.*s", (int)l.len, l.data);
		spy_line_free(&l);
	}
	return n;
}

/* Runs BODY in a child; its exit status, or 128 + the signal that ended it. */
static int
in_child(int (*body)(void))
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(body());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static int
read_named(void)
{
	char text[128] = "";

	if (frames_when(QUIET, text, sizeof(text)) != 1)
		return 1;
	return strcmp(text, "Model.forward (model.py:42)") == 0 ? 0 : 2;
}

static int
already_finalizing(void)
{
	struct spy_pystack st;

	make_interpreter();
	finalizing = 1;
	return spy_py_capture(&st) == 0 ? 0 : 1;
}

static int
state_freed(void)
{
	return frames_when(FREE_STATE, NULL, 0) == 0 ? 0 : 1;
}

static int
state_reused(void)
{
	return frames_when(REUSE_STATE, NULL, 0) == 0 ? 0 : 1;
}

START_TEST(test_py_frames_named)
{
	ck_assert_int_eq(in_child(read_named), 0);
}
END_TEST

START_TEST(test_py_finalizing_before)
{
	ck_assert_int_eq(in_child(already_finalizing), 0);
}
END_TEST

/* Before the state was read through the kernel, both ended the program with SIGSEGV (139). */
START_TEST(test_py_state_freed_under_reader)
{
	ck_assert_int_eq(in_child(state_freed), 0);
}
END_TEST

START_TEST(test_py_state_reused_under_reader)
{
	ck_assert_int_eq(in_child(state_reused), 0);
}
END_TEST

UNIT_SUITE(pyframes)
{
	Suite *s = suite_create("pyframes");
	TCase *tc = unit_tcase(s, "finalizing");

	tcase_add_test(tc, test_py_frames_named);
	tcase_add_test(tc, test_py_finalizing_before);
	tcase_add_test(tc, test_py_state_freed_under_reader);
	tcase_add_test(tc, test_py_state_reused_under_reader);
	return s;
}
