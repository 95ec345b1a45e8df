"""Python importing two frameworks' extension modules: each library named is opened with ctypes.CDLL
(dlopen RTLD_LOCAL) and asked which cuDNN answers its own linked calls (tests/programs/major-lib.c)."""
import ctypes
import sys

libs = [ctypes.CDLL(path) for path in sys.argv[1:]]
for label in (b"first", b"again"):
    for lib in libs:
        lib.major_lib_report(label)
