/*
 * A C extension module for failing.py: calls a cuDNN function it is given
 * (cudnnSetTensor4dDescriptor, by address) with the GIL held, with the GIL
 * released, and from a thread it starts itself, which never runs Python.
 * Built by the test against each interpreter's own headers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <semaphore.h>
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

/*
 * A daemon thread's call made while Python finalizes: the thread waits in C, the GIL released, until
 * Py_FinalizeEx has freed its thread state and runs its exit functions; then it calls, and never returns to
 * Python, which it could not (the process ends from under it).
 */
static struct job daemon_job;
static sem_t daemon_inside, daemon_go, daemon_done;

static void
daemon_release(void)
{
	sem_post(&daemon_go);
	while (sem_wait(&daemon_done) != 0)
		;
}

static PyObject *
call_when_finalized(PyObject *self, PyObject *a)
{
	(void)self;
	if (!args(a, &daemon_job))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	sem_post(&daemon_inside);
	while (sem_wait(&daemon_go) != 0)
		;
	bad(daemon_job.fn, daemon_job.desc);
	sem_post(&daemon_done);
	for (;;)
		pause();
	Py_END_ALLOW_THREADS
	Py_RETURN_NONE;
}

/* Arms the exit function and returns once the daemon thread is inside its call. */
static PyObject *
wait_daemon_inside(PyObject *self, PyObject *a)
{
	(void)self;
	(void)a;
	if (Py_AtExit(daemon_release) != 0)
		return PyErr_Format(PyExc_OSError, "no room for an exit function");
	Py_BEGIN_ALLOW_THREADS
	while (sem_wait(&daemon_inside) != 0)
		;
	Py_END_ALLOW_THREADS
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "call", call, METH_VARARGS, "the call, GIL held" },
	{ "call_nogil", call_nogil, METH_VARARGS, "the call, GIL released" },
	{ "call_in_c_thread", call_in_c_thread, METH_VARARGS, "the call from a thread without Python" },
	{ "call_after_finalize", call_after_finalize, METH_VARARGS, "the call after Python finalized" },
	{ "call_when_finalized", call_when_finalized, METH_VARARGS, "a daemon thread's call once Python finalized" },
	{ "wait_daemon_inside", wait_daemon_inside, METH_NOARGS, "waits for call_when_finalized's thread" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "spyext", NULL, -1, methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC
PyInit_spyext(void)
{
	sem_init(&daemon_inside, 0, 0);
	sem_init(&daemon_go, 0, 0);
	sem_init(&daemon_done, 0, 0);
	return PyModule_Create(&module);
}
