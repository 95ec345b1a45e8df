"""Loads cuDNN the way Python's ctypes does (dlopen RTLD_LOCAL) and calls it; several paths: several copies."""
import ctypes
import sys

for path in sys.argv[1:]:
    lib = ctypes.CDLL(path)
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    lib.cudnnGetErrorString.restype = ctypes.c_char_p
    handle = ctypes.c_void_p()
    print("version", lib.cudnnGetVersion())
    print("create", lib.cudnnCreate(ctypes.byref(handle)))
    print("error string", lib.cudnnGetErrorString(2000).decode())
