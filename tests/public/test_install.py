#!/usr/bin/env python3
"""meson install into a temporary DESTDIR, then the installed copy at work, as a user would use it.

usage: test_install.py     (meson passes the build directory and the install layout in the environment)
Exit 0 pass, 1 fail, 77 skip (no meson command to install with).
`meson install --no-rebuild --destdir` only reads the build directory: it changes nothing there but its log.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

E = os.environ
BUILD = E.get("BUILD_ROOT", "")
MESON = E.get("MESON", "")
FAKE9 = E.get("FAKE9_DIR", "")
HOST_CALLS = E.get("HOST_CALLS", "")
sys.path.insert(0, E.get("SCHEMA_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                         "integration"))
import schema  # noqa: E402


class Failed(Exception):
    pass


def check(cond, what, *context):
    if not cond:
        raise Failed(what + "".join("\n--- %s" % c for c in context))


def under(root, option):
    """Where an install directory option lands inside DESTDIR."""
    d = E[option]
    if not os.path.isabs(d):
        d = os.path.join(E["PREFIX"], d)
    return os.path.join(root, d.lstrip("/"))


def run(argv, env=None, cwd=None):
    base = {k: v for k, v in E.items()
            if not k.startswith("CUDNNSPY_") and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH", "DESTDIR")}
    base.update(env or {})
    return subprocess.run(argv, env=base, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)


def test(root):
    p = run([MESON, "install", "--no-rebuild", "--quiet", "--destdir", root, "-C", BUILD])
    check(p.returncode == 0, "meson install exited %d" % p.returncode, p.stdout, p.stderr)
    bindir, libdir = under(root, "BINDIR"), under(root, "LIBDIR")
    includedir, datadir, mandir = under(root, "INCLUDEDIR"), under(root, "DATADIR"), under(root, "MANDIR")
    exe = os.path.join(bindir, "cudnnspy")
    lib = os.path.join(libdir, "libcudnnspy.so")
    expect = [exe, lib, os.path.join(libdir, "cudnnspy", "dropin9", "libcudnn.so.9"),
              os.path.join(libdir, "cudnnspy", "dropin8", "libcudnn.so.8"),
              os.path.join(includedir, "cudnnspy.h"), os.path.join(libdir, "pkgconfig", "cudnnspy.pc"),
              os.path.join(mandir, "man1", "cudnnspy.1"), os.path.join(mandir, "man3", "cudnnspy.3")]
    for page in ("README.md", "output-format.md", "usage.md", "troubleshooting.md", "examples/host-calls.c",
                 "examples/failures.c", "examples/pytorch_conv.py", "images/report-chrome-speedscope.png"):
        expect.append(os.path.join(datadir, "doc", "cudnnspy", page))
    missing = [f for f in expect if not os.path.exists(f)]
    check(not missing, "installed files missing", *missing)

    # The installed command runs the demo with the installed library against the fake cuDNN.
    p = run([exe, "run", "--", HOST_CALLS], {"LD_LIBRARY_PATH": FAKE9})
    check(p.returncode == 0, "installed cudnnspy run exited %d" % p.returncode, p.stdout, p.stderr)
    m = re.search(r"^cudnnspy: preload: cuDNN [0-9.]+ \(\d+\) from (\S+) \[", p.stderr, re.M)
    check(m and os.path.realpath(m.group(1)) == os.path.realpath(os.path.join(FAKE9, "libcudnn.so.9")),
          "the banner names the cuDNN that answered", p.stderr)
    p = run([exe, "run", "--", "cat", "/proc/self/maps"])
    check(p.returncode == 0 and os.path.realpath(lib) in p.stdout, "the installed libcudnnspy.so is the one loaded",
          p.stdout[-2000:], p.stderr)
    check(os.path.realpath(BUILD) not in p.stdout, "nothing from the build tree is loaded", p.stdout[-2000:])
    p = run([exe, "run", "--drop-in", "--", HOST_CALLS], {"CUDNNSPY_LIBRARY": FAKE9})
    check(p.returncode == 0 and re.search(r"^cudnnspy: drop-in: cuDNN ", p.stderr, re.M),
          "the installed drop-in answers", p.stdout, p.stderr)

    # A program built against the installed header with pkg-config's flags, run by the installed command.
    pc = {"PKG_CONFIG_PATH": os.path.join(libdir, "pkgconfig"), "PKG_CONFIG_SYSROOT_DIR": root}
    pkg = shutil.which("pkg-config")
    if pkg:
        p = run([pkg, "--cflags", "--libs", "cudnnspy"], pc)
        check(p.returncode == 0 and "-I%s" % includedir in p.stdout, "pkg-config --cflags", p.stdout, p.stderr)
        # Token by token: the temporary prefix's random name may hold "-l" ("cudnnspy-install-lw7...").
        check(not any(t.startswith("-l") for t in p.stdout.split()), "nothing to link: the API is weak references",
              p.stdout)
        flags = shlex.split(p.stdout)
        p = run([pkg, "--variable=preload", "cudnnspy"], pc)
        check(p.returncode == 0 and os.path.realpath(p.stdout.strip()) == os.path.realpath(lib),
              "pkg-config --variable=preload names the installed library", p.stdout, p.stderr)
    else:
        flags = ["-I" + includedir]
    prog = os.path.join(root, "uses-api")
    p = run(shlex.split(E["CC"]) + ["-std=c99", "-o", prog, E["HEADER_C99_SOURCE"]] + flags)
    check(p.returncode == 0, "a program built against the installed header", p.stdout, p.stderr)
    out = os.path.join(root, "records")
    os.mkdir(out)
    p = run([exe, "run", "--output", out, "--", prog])
    check(p.returncode == 0 and "loaded 1" in p.stdout, "it runs under the installed spy", p.stdout, p.stderr)
    files = os.listdir(out)
    check(len(files) == 1, "one record file", files)
    recs, errors = schema.read_file(os.path.join(out, files[0]), exe=exe)
    check(not errors, "the records follow the schema", *errors[:10])
    check([r["label"] for r in recs if r["event"] == "mark"] == ["c99"], "its mark", recs)
    p = run([prog])
    check(p.returncode == 0 and "loaded 0" in p.stdout, "and runs without it", p.stdout, p.stderr)


def main():
    if not BUILD:
        print("BUILD_ROOT is not set: run through meson test")
        return 2
    if not MESON or not os.path.exists(MESON):
        print("no meson command to install with: skipped")
        return 77
    root = tempfile.mkdtemp(prefix="cudnnspy-install-")
    try:
        test(root)
    except Failed as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
