/*
 * A C extension module for failing.py: calls a cuDNN function it is given
 * (cudnnSetTensor4dDescriptor, by address) with the GIL held, with the GIL
 * released, and from a thread it starts itself, which never runs Python.
 * Built by the test against each interpreter's own headers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdlib.h>

typedef int (*set4d_fn)(void *, int, int, int, int, int, int);

struct job {
	set4d_fn fn;
	void *desc;
	int status;
};

static int
bad(set4d_fn fn, void *desc)
{
	return fn(desc, 0, 0, -1, 1, 1, 1);
}

static int
args(PyObject *a, struct job *j)
{
	unsigned long long fn, desc;

	if (!PyArg_ParseTuple(a, "KK", &fn, &desc))
		return 0;
	j->fn = (set4d_fn)(uintptr_t)fn;
	j->desc = (void *)(uintptr_t)desc;
	return 1;
}

static PyObject *
call(PyObject *self, PyObject *a)
{
	struct job j;

	(void)self;
	if (!args(a, &j))
		return NULL;
	return PyLong_FromLong(bad(j.fn, j.desc));
}

static PyObject *
call_nogil(PyObject *self, PyObject *a)
{
	struct job j;
	int st;

	(void)self;
	if (!args(a, &j))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	st = bad(j.fn, j.desc);
	Py_END_ALLOW_THREADS
	return PyLong_FromLong(st);
}

static void *
thread_main(void *p)
{
	struct job *j = p;

	j->status = bad(j->fn, j->desc);
	return NULL;
}

static PyObject *
call_in_c_thread(PyObject *self, PyObject *a)
{
	struct job j;
	pthread_t t;
	int rc;

	(void)self;
	if (!args(a, &j))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	rc = pthread_create(&t, NULL, thread_main, &j);
	if (rc == 0)
		pthread_join(t, NULL);
	Py_END_ALLOW_THREADS
	if (rc != 0)
		return PyErr_Format(PyExc_OSError, "pthread_create: %d", rc);
	return PyLong_FromLong(j.status);
}

/*
 * A call after Python finished: from Py_AtExit (the end of Py_FinalizeEx), or (`c`) from the C library's exit.
 * One of them a run: cuDNN 9.19 aborts on its second call after the interpreter finalized (without the spy too).
 */
static struct job late;

static void
late_call(void)
{
	bad(late.fn, late.desc);
}

static PyObject *
call_after_finalize(PyObject *self, PyObject *a)
{
	unsigned long long fn, desc;
	int c;

	(void)self;
	if (!PyArg_ParseTuple(a, "KKp", &fn, &desc, &c))
		return NULL;
	late.fn = (set4d_fn)(uintptr_t)fn;
	late.desc = (void *)(uintptr_t)desc;
	if ((c ? atexit(late_call) : Py_AtExit(late_call)) != 0)
		return PyErr_Format(PyExc_OSError, "no room for an exit function");
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "call", call, METH_VARARGS, "the call, GIL held" },
	{ "call_nogil", call_nogil, METH_VARARGS, "the call, GIL released" },
	{ "call_in_c_thread", call_in_c_thread, METH_VARARGS, "the call from a thread without Python" },
	{ "call_after_finalize", call_after_finalize, METH_VARARGS, "the call after Python finalized" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "spyext", NULL, -1, methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC
PyInit_spyext(void)
{
	return PyModule_Create(&module);
}
