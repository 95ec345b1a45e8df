#!/usr/bin/env python3
"""Check what the spy's libraries export (nm -D).

usage: check-exports.py [--real REAL_LIBCUDNN] [--node NODE] LIBRARY...
Only cudnn* API names, cudnnspy_* and (preload only) dlsym and dlopen may be defined;
never cuDNN's internal helpers, never a dependency's symbols. With --real,
every cudnn* name the real library exports must be exported too. With
--node, every cudnn* export must carry that symbol version.
"""
import re
import subprocess
import sys

HELPERS = {"cudnnGetTime", "cudnnGetTimeDiffString", "cudnnSnprintf", "cudnnGetLibConfig",
           "cudnnGetModuleForDescriptor"}
ALLOWED = re.compile(r"^(cudnn[A-Z]\w*|cudnnspy_\w+|dlsym|dlopen|_init|_fini)$")


def exports(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] in ("A",):
            continue
        name, _, version = parts[2].partition("@")
        names[name] = version.lstrip("@")
    return names


def main(argv):
    real, node, libs, errors = None, None, [], []
    it = iter(argv)
    for a in it:
        if a == "--real":
            real = next(it)
        elif a == "--node":
            node = next(it)
        else:
            libs.append(a)
    want = set(n for n in exports(real) if n.startswith("cudnn")) if real else set()
    for lib in libs:
        names = exports(lib)
        bad = sorted(n for n in names if not ALLOWED.match(n))
        if bad:
            errors.append("%s exports names outside the cuDNN API: %s" % (lib, " ".join(bad[:20])))
        helpers = sorted(HELPERS & set(names))
        if helpers:
            errors.append("%s defines cuDNN's internal helpers: %s" % (lib, " ".join(helpers)))
        missing = sorted(want - set(names))
        if missing:
            errors.append("%s lacks %d names the real library exports: %s" % (lib, len(missing),
                                                                              " ".join(missing[:20])))
        if node:
            wrong = sorted(n for n, v in names.items() if n.startswith("cudnn") and v != node)
            if wrong:
                errors.append("%s: not in version node %s: %s" % (lib, node, " ".join(wrong[:10])))
        print("%s: %d exports checked" % (lib, len(names)))
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
