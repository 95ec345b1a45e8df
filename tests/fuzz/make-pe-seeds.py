#!/usr/bin/env python3
"""The seeds of fuzz-pe, written at build time into OUT (so that no Windows binary sits in the source,
which Debian's lintian rejects): tests/scan/pewriter.py's DLL, a program importing it, an x86 DLL, one
without a version resource, and each of pewriter's damaged variants.

  make-pe-seeds.py OUT"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scan"))
import pewriter  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-pe-seeds.py OUT")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def at(name):
        return os.path.join(out, name)
    pewriter.make_dll(at("cudnn64_8.dll"), "cudnn64_8.dll", ["cudnnCreate", "cudnnDestroy", "cudnnGetVersion"],
                      product_version="8.9.7", description="NVIDIA CUDA Deep Neural Network library")
    pewriter.make_dll(at("app.exe"), "app.exe", [], (1, 0, 0, 0), imports=["KERNEL32.dll", "cudnn64_8.dll"],
                      exe=True)
    pewriter.make_dll(at("x86.dll"), "cudnn64_9.dll", ["x"], (9, 1, 0, 70), machine=0x14C)
    pewriter.make_dll(at("no-version.dll"), "cudnn_ops64_9.dll", ["x"], with_version=False)
    for damage in pewriter.DAMAGES:
        pewriter.make_dll(at(damage + ".dll"), "cudnn64_8.dll", ["cudnnCreate"], damage=damage)


if __name__ == "__main__":
    main()
