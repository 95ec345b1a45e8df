#!/usr/bin/env python3
"""Check what the spy's libraries export (nm -D).

usage: check-exports.py [--real REAL_LIBCUDNN] [--node NODE] [--versions API_FILE] LIBRARY...
Only cudnn* API names, cudnnspy_* and (preload only) dlsym, dlopen and dlclose may be defined;
never cuDNN's internal helpers, never a dependency's symbols. With --real,
every cudnn* name the real library exports must be exported too. With
--node, every cudnn* export must carry that symbol version. With --versions (the
preload), every function of the API description is exported under the versions
the real libraries give it (its default major, libcudnn.so.8 where cuDNN 8 has it,
its 9.x sub-library's), so that each linked caller binds as it would to a real copy,
and dlsym, dlopen and cudnnspy_* carry none, so that a reference of any version
binds to them.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shim", "gen"))

HELPERS = {"cudnnGetTime", "cudnnGetTimeDiffString", "cudnnSnprintf", "cudnnGetLibConfig",
           "cudnnGetModuleForDescriptor"}
ALLOWED = re.compile(r"^(cudnn[A-Z]\w*|cudnnspy_\w+|dlsym|dlopen|dlclose|_init|_fini)$")


def all_versions(lib):
    """{name: set of versions}: '' for none, '@@V' for the default, '@V' for another."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    names = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] in ("A",):
            continue
        m = re.match(r"^([^@]+)(@@?[^@]+)?$", parts[2])
        if m:
            names.setdefault(m.group(1), set()).add(m.group(2) or "")
    return names


def check_versions(lib, api_file, errors):
    import apimodel
    api = apimodel.parse(api_file)
    have = all_versions(lib)
    for fn in api.functions:
        default = "libcudnn.so.9" if 9 in fn.majors else "libcudnn.so.8"
        want = {"@@" + default}
        if not fn.stub:
            if 9 in fn.majors and 8 in fn.majors:
                want.add("@libcudnn.so.8")
            if 9 in fn.majors and fn.lib:
                want.add("@libcudnn_%s.so.9" % fn.lib)
        if have.get(fn.name) != want:
            errors.append("%s: %s exported as %s, not %s" % (lib, fn.name, sorted(have.get(fn.name, [])),
                                                              sorted(want)))
    for name, vers in have.items():
        if not name.startswith("cudnn") or name.startswith("cudnnspy_"):
            if vers != {""}:
                errors.append("%s: %s carries a version (%s): references of other versions would not bind"
                              % (lib, name, sorted(vers)))


def exports(lib):
    """{name: its version, or ''}: the last of a name's versions (nm -D), as before versions were checked."""
    return {name: sorted(vers)[-1].lstrip("@") for name, vers in all_versions(lib).items()}


def main(argv):
    real, node, api_file, libs, errors = None, None, None, [], []
    it = iter(argv)
    for a in it:
        if a == "--real":
            real = next(it)
        elif a == "--versions":
            api_file = next(it)
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
        if api_file:
            check_versions(lib, api_file, errors)
        print("%s: %d exports checked" % (lib, len(names)))
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
