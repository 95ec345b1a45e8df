#!/usr/bin/env python3
"""Print the directory of a real libcudnn.so.9 (or .so.8), or nothing.

Looks in CUDNN_ROOT, CUDA_HOME and /usr/local/cuda (lib64, lib), in that order.
"""
import os

for root in (os.environ.get("CUDNN_ROOT"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
    if not root:
        continue
    for sub in ("lib64", "lib", "lib/x86_64-linux-gnu", ""):
        d = os.path.join(root, sub) if sub else root
        for name in ("libcudnn.so.9", "libcudnn.so.8"):
            if os.path.exists(os.path.join(d, name)):
                print(os.path.realpath(d))
                raise SystemExit(0)
