#!/usr/bin/env python3
"""What naming the Python line costs a failure (issue 29's budget: at most +5 us over a failure without it).

usage: python-bench.py BUILD_DIR [--real DIR] [--python PYTHON] [--calls N] [--reps N]

A Python program (the loop below, run by PYTHON, Debian's /usr/bin/python3 by default) makes N failing
cudnnSetTensor4dDescriptor calls (n=-1: BAD_PARAM) through ctypes, five Python frames deep, and measures its
thread CPU time per call. It runs under the spy with records on (CUDNNSPY_OUTPUT, as `cudnnspy run` has them,
CUDNNSPY_STDERR=none), with CUDNNSPY_PYTHON=off and =failures, alternating, REPS times each, each a fresh
process; and once without the spy, for the call itself. Prints each run's ns per call, the medians and the
difference, with PASS or OVER against the budget. A benchmark, not a test: the exit status is 0 whatever the
budget says, 1 when it could not run.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET_NS = 5000.0
LOOP = r'''
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])
d = ctypes.c_void_p()
assert lib.cudnnCreateTensorDescriptor(ctypes.byref(d)) == 0
f = lib.cudnnSetTensor4dDescriptor

def call():
    return f(d, 0, 0, -1, 1, 1, 1)

def loop(k):
    t = time.thread_time_ns()
    for _ in range(k):
        call()
    return time.thread_time_ns() - t

def a(k): return loop(k)
def b(k): return a(k)
def c(k): return b(k)

c(n // 10)                  # warm-up: the first failure resolves Python and checks its frames
print(c(n) / n)
'''


def real_dir(arg):
    if arg:
        return arg
    p = subprocess.run([sys.executable, os.path.join(HERE, "..", "tests", "find-real-cudnn.py")],
                       stdout=subprocess.PIPE, universal_newlines=True)
    return p.stdout.strip()


def one(python, lib, calls, env):
    d = tempfile.mkdtemp(prefix="cudnnspy-pybench-")
    try:
        e = {k: v for k, v in os.environ.items() if not k.startswith("CUDNNSPY_") and k != "LD_PRELOAD"}
        e.update(env)
        if "LD_PRELOAD" in e:
            e["CUDNNSPY_OUTPUT"] = d
        p = subprocess.run([python, "-c", LOOP, lib, str(calls)], env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
        if p.returncode != 0:
            raise SystemExit("the loop failed: %s" % p.stderr[-2000:])
        return float(p.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--real")
    ap.add_argument("--python", default="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    real = real_dir(a.real)
    lib = os.path.join(real, "libcudnn.so.9")
    spy = os.path.join(a.build, "shim", "libcudnnspy.so")
    if not os.path.exists(lib) or not os.path.exists(spy):
        print("no real cuDNN or no spy build (%s, %s)" % (lib, spy))
        return 1
    print("python %s, cuDNN %s, %d failing calls a run, %d runs each" % (a.python, lib, a.calls, a.reps))
    direct = one(a.python, lib, a.calls, {})
    print("no spy                          %10.1f ns per call" % direct)
    runs = {"off": [], "failures": []}
    for _ in range(a.reps):
        for mode in runs:
            runs[mode].append(one(a.python, lib, a.calls, {"LD_PRELOAD": spy, "CUDNNSPY_STDERR": "none",
                                                           "CUDNNSPY_PYTHON": mode}))
    for mode, v in runs.items():
        print("spy, recorded, CUDNNSPY_PYTHON=%-9s %10.1f ns per call (runs: %s)" %
              (mode, statistics.median(v), ", ".join("%.0f" % x for x in v)))
    diff = statistics.median(runs["failures"]) - statistics.median(runs["off"])
    print("Python frames add %+.1f ns to a recorded failure: %s (budget +%.0f ns)" %
          (diff, "PASS" if diff <= BUDGET_NS else "OVER", BUDGET_NS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
