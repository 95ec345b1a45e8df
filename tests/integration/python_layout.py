#!/usr/bin/env python3
"""The layouts shim/core/pyframes.c reads Python's frames by are the interpreters' own: for Debian's python3 and
every other CPython 3.8 to 3.13 installed, tests/python/pylayout.c is built against that interpreter's headers and
its offsets must be the row of pyframes.c's table for its version (and the constants it names the same).

usage: python_layout.py     (exit 77 when no interpreter has its headers installed)
"""
import os
import re
import subprocess
import sys
import sysconfig
import tempfile

import python_frames

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "shim", "core", "pyframes.c")
PROBE = os.path.join(HERE, "..", "python", "pylayout.c")


def table():
    text = open(SOURCE).read()
    body = text[text.index("layouts[] = {"):text.index("};", text.index("layouts[] = {"))]
    rows = {}
    for m in re.finditer(r"\{([-\d,\s]+)\}", body):
        row = [int(x) for x in m.group(1).split(",")]
        rows[row[0]] = row
    consts = {"generator": int(re.search(r"#define OWNER_GENERATOR (\d+)", text).group(1)),
              "str": [int(re.search(r"#define STR_LENGTH (\d+)", text).group(1)),
                      int(re.search(r"#define STR_STATE (\d+)", text).group(1))]}
    return rows, consts


def main():
    rows, consts = table()
    pythons = [python_frames.debian_python()] + python_frames.other_interpreters()
    checked, failed = [], []
    with tempfile.TemporaryDirectory() as d:
        for python in pythons:
            include = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                                     stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
            if not os.path.exists(os.path.join(include, "Python.h")):
                continue
            exe = os.path.join(d, "probe%d" % len(checked))
            b = subprocess.run([os.environ.get("CC", "cc"), "-I" + include, "-I" + os.path.join(include, "internal"),
                                PROBE, "-o", exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if b.returncode != 0:
                failed.append("%s: the probe does not build against %s:\n%s" % (python, include, b.stdout[-2000:]))
                continue
            out = subprocess.run([exe], stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split("\n")
            row = [int(x) for x in out[0].split()]
            gen = int(out[1].split()[1])
            strs = [int(x) for x in out[2].split()[1:]]
            want = rows.get(row[0])
            if want != row:
                failed.append("%s (3.%d): pyframes.c has %s, its headers say %s" % (python, row[0], want, row))
            if gen != consts["generator"] or strs != consts["str"]:
                failed.append("%s: constants %s %s, pyframes.c %s" % (python, gen, strs, consts))
            checked.append("%s (3.%d)" % (python, row[0]))
    if failed:
        print("FAIL: " + "\n".join(failed))
        return 1
    if not checked:
        print("no interpreter with its headers (python3-dev): skipped")
        return 77
    print("ok: " + ", ".join(checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
