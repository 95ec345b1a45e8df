#!/usr/bin/env python3
"""Every caller answered by the copy it reaches without the spy (issue 26): libraries linked to different cuDNN
majors in RTLD_LOCAL scopes, more copies than the spy has slots, a copy closed and replaced, calls at exit.

usage: callers.py NAME     (meson passes the paths in the environment)
"""
import os
import re
import shutil
import sys
import tempfile

import spytest
from spytest import (DROPIN8, DROPIN9, FAKE9, PRELOAD, PROGS, check, copy_calls, fake_copy, findings,
                     libraries, prog, run, same_output)

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = {}
LIB8 = os.path.join(PROGS, "libmajor8.so")
LIB9 = os.path.join(PROGS, "libmajor9.so")


scenario = spytest.registry(SCENARIOS)


def under_spy(argv, what, env=None):
    """The program without the spy, preloaded and with both drop-ins first on the library path: the same
    output each time. Returns (plain, preloaded)."""
    env = env or {}
    # The fakes fail the Set with 3 (cuDNN 8's BAD_PARAM): each failure is then recorded with the copy that answered.
    env.setdefault("FAKECUDNN_STATUS", "cudnnSetTensor4dDescriptor=3")
    plain = run(argv, env)
    spied = run(argv, dict(env, LD_PRELOAD=PRELOAD, CUDNNSPY_TRACE="*"))
    same_output(plain, spied, "under preload (%s)" % what)
    dropin = run(argv, dict(env, LD_LIBRARY_PATH=DROPIN9 + ":" + DROPIN8))
    # The fake's own counter is behind the drop-in, out of the library's reach: the rest must be the same.
    check(re.sub(r", own Ex calls \d+", "", plain.stdout) == dropin.stdout and plain.returncode == dropin.returncode,
          "stdout changed under the drop-ins (%s)" % what, plain.stdout, dropin.stdout)
    return plain, spied


def check_two_majors(plain, spied, what):
    out = plain.stdout
    check("lib8 first: version 8907" in out and "lib9 first: version 91900" in out and
          "lib8 again: version 8907" in out and "lib9 again: version 91900" in out,
          "each library answered by its own major without the spy (%s)" % what, out)
    by_copy = copy_calls(spied)
    check(sorted(by_copy) == [0, 1], "two copies counted (%s)" % what, repr(by_copy))
    versions = {l["copy"]: l["version"] for l in libraries(spied) if l.get("copy") is not None}
    check(sorted(versions.values()) == [8907, 91900], "each copy declared with its version (%s)" % what,
          repr(versions))
    for k in (0, 1):
        check(by_copy[k].get("cudnnGetVersion") == (2, 0, 0) and
              by_copy[k].get("cudnnSetTensor4dDescriptor") == (4, 4, 0),
              "each copy's calls counted as its own (%s, copy %d)" % (what, k), repr(by_copy[k]))
    # Each failure names the copy that answered it, and its stack the library that called.
    fails = [r for r in spytest.only_file(spied) if r["event"] == "failure"]
    by_caller = {}
    for r in fails:
        by_caller.setdefault(os.path.basename(r["stack"][0]["module"]), set()).add(versions[r["copy"]])
    check(by_caller == {"libmajor8.so": {8907}, "libmajor9.so": {91900}},
          "each library's failures answered by its own major (%s)" % what, repr(by_caller))
    line9 = [l for l in spied.stderr.splitlines() if "libmajor9.so+" in l and "cudnnSetTensor4dDescriptor(" in l]
    k9 = [k for k, v in versions.items() if v == 91900][0]
    check(line9 and all(("| copy %d (91900) |" % k9) in l for l in line9[-2:]),
          "the failure lines say which copy answered (%s)" % what, spied.stderr)
    summary = [r for r in spytest.only_file(spied) if r["event"] == "summary"][-1]
    linked = [c for c in summary["copies"] if c["copy"] == 1]
    check(linked and linked[0]["how"] == "linked" and linked[0]["by"] in ("libmajor8.so", "libmajor9.so") and
          not linked[0]["closed"], "the summary says which library's own names reached copy 1 (%s)" % what,
          repr(summary["copies"]))
    check(("copy 1: %s" % linked[0]["path"]) in spied.stderr and (", linked by %s," % linked[0]["by"]) in spied.stderr,
          "so does the per-copy summary on stderr (%s)" % what, spied.stderr)
    callers = {c["copy"]: c["callers"] for c in summary["copies"]}
    versions_of = {c["copy"]: c["version"] for c in summary["copies"]}
    check(sorted((versions_of[k], tuple(v)) for k, v in callers.items()) ==
          [(8907, ("libmajor8.so",)), (91900, ("libmajor9.so",))],
          "each copy's callers by name: the library linked to its major (%s)" % what, repr(summary["copies"]))
    lines = [l for l in spied.stderr.splitlines() if "runtime-multiple-copies" in l]
    check(lines and "which links it" in lines[-1], "the finding says which library reached which copy (%s)" % what,
          spied.stderr)


@scenario
def linked_two_majors():
    """Two libraries, one linked to libcudnn.so.8 and one to libcudnn.so.9, each opened RTLD_LOCAL by a program
    that links neither, both orders: each answered by its own copy, as without the spy."""
    for order in ([LIB8, LIB9], [LIB9, LIB8]):
        what = "order " + " ".join(os.path.basename(p) for p in order)
        plain, spied = under_spy([prog("two-majors")] + order, what)
        check_two_majors(plain, spied, what)


@scenario
def linked_two_majors_ctypes():
    """The same through Python's ctypes.CDLL, which is how Python imports two frameworks' extension modules."""
    script = os.path.join(HERE, "two_majors_client.py")
    for order in ([LIB8, LIB9], [LIB9, LIB8]):
        what = "ctypes, order " + " ".join(os.path.basename(p) for p in order)
        plain, spied = under_spy([sys.executable, script] + order, what)
        check_two_majors(plain, spied, what)


def many_copies(n):
    with tempfile.TemporaryDirectory() as d:
        paths = [fake_copy(os.path.join(d, "c%d" % i), 9, 90000 + i) for i in range(n)]
        argv = [prog("copies-dlopen")] + paths
        plain = run(argv)
        check(plain.stdout.count("own Ex calls 2") == n, "%d copies, each with its own internal calls" % n,
              plain.stdout)
        spied = run(argv, {"LD_PRELOAD": PRELOAD})
        same_output(plain, spied, "under preload, %d copies" % n)
        lines = [l for l in spied.stderr.splitlines() if "more than 8 cuDNN copies" in l]
        check(len(lines) == 1, "the copies past the table said once", spied.stderr)
        by_copy = copy_calls(spied)
        check(sorted(by_copy) == list(range(8)), "copies 0..7 watched", repr(sorted(by_copy)))
        check(all(by_copy[k].get("cudnnSetTensor4dDescriptorEx") == (0, 0, 2) for k in range(8)),
              "the watched copies' internal calls counted in them", repr(by_copy))
        dropin = run(argv, {"LD_LIBRARY_PATH": DROPIN9})
        same_output(plain, dropin, "with the drop-in on the path, %d copies" % n)


@scenario
def copies_past_table():
    """10 and 16 copies opened by path by a program linked to none: every copy's own internal calls
    (cudnnSetTensor4dDescriptor calling cudnnSetTensor4dDescriptorEx) stay in that copy, past the table too."""
    many_copies(10)
    many_copies(16)


@scenario
def copy_replaced():
    """A copy opened by path, closed, replaced on disk and opened again: the new file answers, as without the
    spy (the spy's own reference kept the old file mapped and it answered 90000 again)."""
    with tempfile.TemporaryDirectory() as d:
        def prepare():
            lib = fake_copy(os.path.join(d, "lib"), 9, 90000)
            new = os.path.join(d, "lib", "new.so")
            shutil.copy(os.path.join(FAKE9, "libcudnn.so.9"), new)
            with open(os.path.join(d, "lib", "new-version"), "w") as f:
                f.write("90500\n")
            return [prog("reopen-copy"), lib, new, os.path.join(d, "lib", "new-version")]

        plain = run(prepare())
        check(plain.stdout == "first: version 90000\nfirst: dlclose 0\nreplaced: version 90500\n"
              "replaced: dlclose 0\n", "the new file answers without the spy", plain.stdout)
        spied = run(prepare(), {"LD_PRELOAD": PRELOAD, "CUDNNSPY_TRACE": "*"})
        same_output(plain, spied, "under preload")
        versions = sorted(l["version"] for l in libraries(spied) if l.get("copy") is not None)
        check(versions == [90000, 90500], "both files declared, each with its version", repr(versions))
        by_copy = copy_calls(spied)
        check(sorted(by_copy) == [0, 1] and all(by_copy[k].get("cudnnGetVersion") == (1, 0, 0) for k in (0, 1)),
              "the second file is a copy of its own", repr(by_copy))


@scenario
def calls_at_exit():
    """A program that opens cuDNN late calls it from an exit handler registered before: the call is answered and
    recorded under preload and drop-in alike (the drop-in, opened late, had sealed its file first and the call's
    record stayed in its buffer: 5,273 of cudnn-frontend's 5,274 calls recorded)."""
    argv = [prog("exit-dlopen")]
    plain = run(argv, {"LD_LIBRARY_PATH": FAKE9})
    check(plain.stdout == "in main: version 91900\nat exit: version 91900\n", "without the spy", plain.stdout)
    for what, env in (("preload", {"LD_LIBRARY_PATH": FAKE9, "LD_PRELOAD": PRELOAD}),
                      ("drop-in", {"LD_LIBRARY_PATH": DROPIN9 + ":" + FAKE9})):
        for fmt in ("json", "binary"):
            spied = run(argv, dict(env, CUDNNSPY_TRACE="cudnnGetVersion", CUDNNSPY_FORMAT=fmt))
            same_output(plain, spied, "under the %s" % what)
            calls = [r for r in spytest.only_file(spied) if r["event"] == "call"]
            check([r["fn"] for r in calls] == ["cudnnGetVersion"] * 2, "%s, format %s: both calls recorded" %
                  (what, fmt), repr(calls))


def main():
    return spytest.main_of(SCENARIOS)


if __name__ == "__main__":
    sys.exit(main())
