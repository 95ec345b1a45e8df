"""Calls cuDNN, forks, and calls it in both processes: each counts its own calls."""
import ctypes
import os
import sys

lib = ctypes.CDLL(sys.argv[1])
lib.cudnnGetVersion.restype = ctypes.c_size_t
lib.cudnnGetVersion()
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    for _ in range(3):
        lib.cudnnGetCudartVersion()
    sys.exit(0)
os.waitpid(pid, 0)
lib.cudnnGetMaxDeviceVersion()
print("parent done")
