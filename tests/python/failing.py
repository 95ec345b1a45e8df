"""A Python program whose cuDNN calls fail from nested functions, in the ways Python code reaches cuDNN.

usage: failing.py CASE LIBRARY [EXTENSION_DIR]

LIBRARY is the libcudnn.so.9 to open (ctypes, RTLD_LOCAL, as frameworks' loaders do). Each case makes one failing
cudnnSetTensor4dDescriptor (n=-1: BAD_PARAM) and prints, before it, the frames Python itself says the call is made
from (`expect` and a JSON list: file, line, function, innermost first), so that a test can hold the spy's record
against Python's own account. The call sits on the line that asks for the frames.

Cases: cdll (ctypes.CDLL, GIL released), pydll (ctypes.PyDLL, GIL held), ext (a C extension, GIL held),
ext-nogil (a C extension that releases the GIL), worker (a threading.Thread), cthread (a thread the extension
starts from C, which never runs Python: no frames), finalized (an exit function of the extension's, which calls after
Python finished, from Py_AtExit: no frames), c-exit (the same from the C library's atexit), daemon-finalized (a daemon
thread whose call comes once Python finalized and freed its state: no frames), daemon-exit (daemon threads failing
in a loop while the interpreter finalizes; the frames of the loop's line, once), atexit (an atexit function, during shutdown), fork (the child
of os.fork()), unicode (a function and class named outside ASCII), deep (more than 8 frames), generator (from
inside a generator and a coroutine), traced (three successful calls and one failure, for CUDNNSPY_PYTHON=traced),
conv (a convolution's workspace query without a handle, which `cudnnspy repro` can replay), conv-run (a
convolution run without a handle, twice from one line: its signature's first call names its frames with
CUDNNSPY_PYTHON=traced).
"""
import atexit
import ctypes
import json
import os
import sys
import threading

CASE, LIBRARY = sys.argv[1], sys.argv[2]
if len(sys.argv) > 3:
    sys.path.insert(0, sys.argv[3])

lib = ctypes.CDLL(LIBRARY)
held = ctypes.PyDLL(LIBRARY)
desc = ctypes.c_void_p()
assert lib.cudnnCreateTensorDescriptor(ctypes.byref(desc)) == 0


def where():
    """The caller's frames as Python names them, innermost first, as many as the spy keeps (8)."""
    f = sys._getframe(1)
    out = []
    while f is not None and len(out) < 8:
        code = f.f_code
        out.append({"file": code.co_filename, "line": f.f_lineno,
                    "function": getattr(code, "co_qualname", code.co_name)})
        f = f.f_back
    return out


def expect(frames):
    print("expect", json.dumps(frames), flush=True)


def bad(api):
    expect(where()); return api.cudnnSetTensor4dDescriptor(desc, 0, 0, -1, 1, 1, 1)  # noqa: E702


def show(status):
    print("status", status, flush=True)


class Model:
    def forward(self, api):
        return self.layer(api)

    def layer(self, api):
        return bad(api)


def cdll():
    show(Model().forward(lib))


def pydll():
    show(Model().forward(held))


def extension(nogil):
    import spyext
    fn = ctypes.cast(lib.cudnnSetTensor4dDescriptor, ctypes.c_void_p).value
    call = spyext.call_nogil if nogil else spyext.call

    def inner():
        expect(where()); return call(fn, desc.value)  # noqa: E702
    show(inner())


def cthread():
    import spyext
    fn = ctypes.cast(lib.cudnnSetTensor4dDescriptor, ctypes.c_void_p).value
    expect([])
    show(spyext.call_in_c_thread(fn, desc.value))


def finalized(c_exit):
    import spyext
    fn = ctypes.cast(lib.cudnnSetTensor4dDescriptor, ctypes.c_void_p).value
    expect([])
    spyext.call_after_finalize(fn, desc.value, c_exit)


def worker():
    result = []
    t = threading.Thread(target=lambda: result.append(Model().forward(lib)), name="worker")
    t.start()
    t.join()
    show(result[0])


def daemon_finalized():
    import spyext
    fn = ctypes.cast(lib.cudnnSetTensor4dDescriptor, ctypes.c_void_p).value

    def inner():
        spyext.call_when_finalized(fn, desc.value)
    expect([])
    threading.Thread(target=lambda: inner(), name="daemon", daemon=True).start()
    spyext.wait_daemon_inside()


SAID = []


def forever(api, speak):
    # The first thread says its frames after its first failure, so the main thread ends only once one is recorded.
    while True:
        api.cudnnSetTensor4dDescriptor(desc, 0, 0, -1, 1, 1, 1); speak = speak and SAID.append(expect(where()))  # noqa: E501,E702


def daemon_exit():
    """Daemon threads failing in a loop while the main thread ends: some are inside the spy as Python finalizes."""
    for i in range(4):
        threading.Thread(target=forever, args=(lib, i == 0), daemon=True).start()
    while not SAID:
        pass
    print("exiting", flush=True)


def at_exit():
    def goodbye():
        show(bad(lib))
    atexit.register(goodbye)


def fork():
    pid = os.fork()
    if pid == 0:
        cdll()
        sys.stdout.flush()
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(st) if hasattr(os, "waitstatus_to_exitcode") else st, flush=True)


class Größe:
    def schätzen(self):
        return bad(lib)


def unicode():
    show(Größe().schätzen())


def deep(n=12):
    if n == 0:
        return bad(lib)
    return deep(n - 1)


def generator():
    def gen():
        yield bad(lib)

    async def coro():
        return bad(lib)
    show(next(gen()))
    c = coro()
    try:
        c.send(None)
    except StopIteration as e:
        show(e.value)


def traced():
    for rows in (1, 2, 3):
        expect(where()); show(lib.cudnnSetTensor4dDescriptor(desc, 0, 0, rows, 1, 1, 1))  # noqa: E702
    cdll()


def conv(run=False):
    c_p = ctypes.c_void_p
    x, y, w, cv = c_p(), c_p(), c_p(), c_p()
    for d in (x, y):
        assert lib.cudnnCreateTensorDescriptor(ctypes.byref(d)) == 0
    assert lib.cudnnCreateFilterDescriptor(ctypes.byref(w)) == 0
    assert lib.cudnnCreateConvolutionDescriptor(ctypes.byref(cv)) == 0
    assert lib.cudnnSetTensor4dDescriptor(x, 0, 0, 1, 3, 8, 8) == 0
    assert lib.cudnnSetTensor4dDescriptor(y, 0, 0, 1, 4, 8, 8) == 0
    assert lib.cudnnSetFilter4dDescriptor(w, 0, 0, 4, 3, 3, 3) == 0
    assert lib.cudnnSetConvolution2dDescriptor(cv, 1, 1, 1, 1, 1, 1, 1, 0) == 0
    size = ctypes.c_size_t()

    def workspace():
        expect(where()); return lib.cudnnGetConvolutionForwardWorkspaceSize(None, x, w, cv, y, 0, ctypes.byref(size))  # noqa: E702,E501

    def forward():
        one, data = ctypes.c_float(1), ctypes.c_void_p(4096)
        expect(where()); return lib.cudnnConvolutionForward(None, ctypes.byref(one), x, data, w, data, cv, 0, None, 0, ctypes.byref(one), y, data)  # noqa: E702,E501
    if not run:
        show(workspace())
        return
    for _ in range(2):
        show(forward())


CASES = {"cdll": cdll, "pydll": pydll, "ext": lambda: extension(False), "ext-nogil": lambda: extension(True),
         "worker": worker, "cthread": cthread, "finalized": lambda: finalized(False), "c-exit": lambda: finalized(True), "atexit": at_exit,
         "daemon-finalized": daemon_finalized, "daemon-exit": daemon_exit, "fork": fork, "unicode": unicode,
         "deep": lambda: show(deep()), "generator": generator, "traced": traced, "conv": conv,
         "conv-run": lambda: conv(True)}
CASES[CASE]()
