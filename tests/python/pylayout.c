/*
 * The frame, code object and str layouts that shim/core/pyframes.c reads,
 * measured from an interpreter's own headers (internal ones for 3.11 and
 * later: Py_BUILD_CORE). Prints one row in the order of pyframes.c's table:
 * minor, then each offset, -1 where the version has no such field.
 * Built by tests/integration/python_layout.py for every interpreter found.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include "internal/pycore_frame.h"
#else
#include "frameobject.h"
#endif

int
main(void)
{
	long row[15];
	int n = 0;

	row[n++] = PY_MINOR_VERSION;
#if PY_VERSION_HEX < 0x030B0000
	row[n++] = offsetof(PyThreadState, frame);
	row[n++] = -1;
	row[n++] = offsetof(PyFrameObject, f_code);
	row[n++] = offsetof(PyFrameObject, f_back);
	row[n++] = -1;
	row[n++] = -1;
#elif PY_VERSION_HEX < 0x030D0000
	row[n++] = offsetof(PyThreadState, cframe);
	row[n++] = offsetof(_PyCFrame, current_frame);
	row[n++] = offsetof(_PyInterpreterFrame, f_code);
	row[n++] = offsetof(_PyInterpreterFrame, previous);
	row[n++] = offsetof(_PyInterpreterFrame, prev_instr);
	row[n++] = offsetof(_PyInterpreterFrame, owner);
#else
	row[n++] = offsetof(PyThreadState, current_frame);
	row[n++] = -1;
	row[n++] = offsetof(_PyInterpreterFrame, f_executable);
	row[n++] = offsetof(_PyInterpreterFrame, previous);
	row[n++] = offsetof(_PyInterpreterFrame, instr_ptr);
	row[n++] = offsetof(_PyInterpreterFrame, owner);
#endif
	row[n++] = offsetof(PyCodeObject, co_filename);
	row[n++] = offsetof(PyCodeObject, co_name);
#if PY_VERSION_HEX >= 0x030B0000
	row[n++] = offsetof(PyCodeObject, co_qualname);
	row[n++] = offsetof(PyCodeObject, co_code_adaptive);
	row[n++] = offsetof(PyCodeObject, _co_firsttraceable);
#else
	row[n++] = -1;
	row[n++] = -1;
	row[n++] = -1;
#endif
	row[n++] = sizeof(PyASCIIObject);
	row[n++] = sizeof(PyCompactUnicodeObject);
#if PY_VERSION_HEX >= 0x030C0000
	row[n++] = FRAME_OWNED_BY_CSTACK;
#else
	row[n++] = -1;
#endif
	for (int i = 0; i < n; i++)
		printf("%s%ld", i ? " " : "", row[i]);
	printf("\n");
#if PY_VERSION_HEX >= 0x030B0000
	/* The constants pyframes.c names, and the str state bits it reads (kind 2-4, compact 5, ascii 6). */
	printf("generator %d\n", (int)FRAME_OWNED_BY_GENERATOR);
#else
	printf("generator 1\n");
#endif
	printf("str %zu %zu\n", offsetof(PyASCIIObject, length), offsetof(PyASCIIObject, state));
	return 0;
}
