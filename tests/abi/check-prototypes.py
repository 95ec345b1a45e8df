#!/usr/bin/env python3
"""Compile every generated prototype in one unit with the installed cudnn.h.

usage: check-prototypes.py GENERATED_DIR REAL_CUDNN_LIB_DIR CC...
A prototype that disagrees with the real header is a compile error. Exit 77
when no cudnn.h is found next to the real library.
"""
import os
import subprocess
import sys

gen_dir, lib_dir, cc = sys.argv[1], sys.argv[2], sys.argv[3:]
candidates = [os.path.join(os.path.dirname(lib_dir.rstrip("/")), "include"), "/usr/local/cuda/include",
              "/usr/include"]
inc = next((d for d in candidates if os.path.exists(os.path.join(d, "cudnn.h"))), None)
if not inc:
    print("no cudnn.h found in %s: skipped" % ", ".join(candidates))
    sys.exit(77)
src = '#include "g_prototypes.h"\n'
p = subprocess.run(cc + ["-fsyntax-only", "-Werror", "-DSPY_USE_CUDNN_H", "-I", gen_dir, "-I", inc,
                         "-x", "c", "-"], input=src, universal_newlines=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
print(p.stdout)
print("checked against %s/cudnn.h: %s" % (inc, "ok" if p.returncode == 0 else "MISMATCH"))
sys.exit(0 if p.returncode == 0 else 1)
