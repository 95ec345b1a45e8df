"""errno around a process's first cuDNN calls, read through ctypes (issue 15, item 21): the GPU check runs it
with and without the spy and compares. usage: errno_first_call.py LIBCUDNN_PATH"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1], use_errno=True)
handle = ctypes.c_void_p()
for before, name in ((71, "cudnnCreate"), (72, "cudnnGetVersion"), (73, "cudnnDestroy")):
    ctypes.set_errno(before)
    if name == "cudnnCreate":
        status = lib.cudnnCreate(ctypes.byref(handle))
    elif name == "cudnnDestroy":
        status = lib.cudnnDestroy(handle)
    else:
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        status = lib.cudnnGetVersion()
    print("errno %s: %d before, %d after (returned %d)" % (name, before, ctypes.get_errno(), status))
